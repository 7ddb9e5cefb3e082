// What composite routes share: how bad a reply is, which replies fail over,
// the exptime a route sets or caps, where a key falls in [0, 1) (shadow's
// key fraction), the default reply of a route that sends nowhere, and the
// merge of a multi-key get's hits gathered by several children.
// [a worker: client coroutines, backend readers, the async runner]
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "request.h"
#include "route.h"
#include "routed_result.h"

namespace ithaca::route {

// mcrouter's order of results, best first: a success, then a miss or a
// refusal by the data (NOT_FOUND, NOT_STORED, EXISTS, NON_NUMERIC), then an
// error the server sent (SERVER_ERROR, CLIENT_ERROR, a request the codec
// refused), then no reply at all (down, timeout, connection error). A
// multi-key get with a failed server counts as a failure.
enum class severity : std::uint8_t { Success, Miss, Error, Failure };
severity severity_of(const protocol::routed_result& r, const protocol::request& req);

// Which results a failover route moves on from, by mcrouter's result names
// (config failover_errors): "tko" (the server is marked down), "timeout",
// "connect_timeout" and "deadline_exceeded" (no reply in time),
// "connect_error" (refused, reset, closed), "remote_error" (a SERVER_ERROR
// line, or garbage), "busy" (the server's queue is full), "local_error"
// (ithaca cannot send this request to that server); "try_again" and
// "shutdown" are accepted and never happen. No names: all of them.
using failover_mask = std::uint32_t;
inline constexpr failover_mask kFailoverAll = 0x3f;
// False and *bad (the unknown name) if a name is not one of the above.
bool parse_failover_errors(const std::vector<std::string>& names, failover_mask& out, std::string* bad);
bool fails_over(const protocol::routed_result& r, failover_mask mask);

// The exptime a write or touch carries (classic exptime, or meta T), and
// setting it (meta: T is added if the request had none).
bool carries_exptime(const protocol::request& req);
std::int64_t exptime_of(const protocol::request& req);
void set_exptime(protocol::request& req, std::int64_t exptime);
// Caps a write's or touch's TTL at `cap` seconds: none (0) or a longer one,
// relative or absolute (past 30 days memcached reads a unix time), becomes
// `cap`. `now_unix` turns an absolute time into what is left.
void cap_exptime(protocol::request& req, std::uint32_t cap, std::int64_t now_unix);

// Where `key` falls in [0, 1): its CRC32 over 2^32 (stable across processes
// and versions: the same keys are shadowed by every router).
double key_fraction(std::string_view key);

// This host's id as the host_id route picks a child by it (host_id_route.cc:
// the CRC-32 of the host's first address that is not loopback or link-local,
// with `salt` appended; 0 without one). Stable for the process's life.
// [the thread building the tree]
std::uint32_t host_id_of(std::string_view salt);

// Fills `result` with what a route that reaches no server answers: a get
// misses, a store is NOT_STORED, a delete/incr/touch NOT_FOUND, flush OK
// (mcrouter's NullRoute and AllAsyncRoute's immediate reply).
void default_reply(const protocol::request& req, protocol::routed_result& result);

// Answers `req` with an error line in `result` (`text`: the whole line,
// "SERVER_ERROR ..."; `bstatus` for binary clients), as a route that sends
// nowhere does (error, rate_limit without a fallback).
void refuse(const protocol::request& req, protocol::routed_result& result, std::string_view text,
            protocol::binary_status bstatus);

// Copies the hits `from` gathered for a child request whose key i was the
// parent's key map[i], into `into` (prepared for the parent's request). A
// child that failed or was refused counts its keys as failed misses; keys
// marked failed in `from` are marked failed in `into` (key_hit::failed).
// A multi-key get as one child slot per key, each a get of its own sent
// through `self` (which pushed its frame first and merges them in resume()).
// [the slot's worker]
void dispatch_each_key(const route& self, request_slot& slot, dispatch_env& env);

void merge_hits(protocol::routed_result& into, const protocol::routed_result& from, std::span<const std::uint32_t> map);

// The pieces of a meta `VA` reply to `mg KEY t v f` (Raw passthrough):
// false when it is not a hit (EN, an error) or does not parse. ttl: seconds
// left, -1 for none.
bool parse_meta_value(std::string_view raw, std::string_view& value, std::uint32_t& flags, std::int64_t& ttl);

}  // namespace ithaca::route
