// A client connection after `watch`: it only receives log lines from its slot
// in the watch hub (flow/watch_hub.h) until it closes, the server stops, or a
// write fails. What it sends is read and ignored, as memcached does.
//
// Thread: the client's coroutine on its worker machine. It waits on its queue
// (a byte_queue reader: an eventfd on this machine, woken by a producer only
// when the queue was empty and this coroutine said it would sleep) or on the
// socket becoming writable, each wait at most kWatcherPollMs, so a peer that
// went away is noticed within that time and server shutdown (cancellation)
// ends it at once. No lock is held here.
#pragma once

#include <cstdint>

#include "counters.h"
#include "machinarium.h"
#include "stream.h"

namespace ithaca::server {

inline constexpr mm::millis kWatcherPollMs = 100;

// Writes "OK", then streams slot `slot`'s lines for `kinds` until the
// connection ends (plain or TLS: stream.h). The caller removes the slot
// afterwards. A TLS watcher's peer_gone check reads raw bytes off the socket;
// what a watcher sends is ignored anyway.
void serve_watcher(stream& conn, int slot, uint32_t kinds, stats::command_counters& counters);

}  // namespace ithaca::server
