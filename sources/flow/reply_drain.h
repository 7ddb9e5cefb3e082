// Where a batch's replies go when they outgrow kReplyHighWater before the
// batch is done: the TCP client writes them out (waiting for a slow reader,
// which is back-pressure on that one client); the UDP loop refuses (its reply
// cap is fixed by the frame's 16-bit datagram count). Role-neutral: the local
// store's executor and the in-order reply queue of routed requests both drain.
#pragma once

#include <cstddef>

#include "out_buffer.h"

namespace ithaca::flow {

// A batch's replies are held to about this much before they are drained: a
// client cannot make the server copy "get k k k ..." (one value, a million
// times) into memory it never reads.
inline constexpr std::size_t kReplyHighWater = 1024 * 1024;

class reply_drain {
 public:
  virtual ~reply_drain() = default;
  // Returns false to stop the batch: the connection is then closed (TCP) or
  // the reply dropped (UDP).
  virtual bool drain(protocol::out_buffer& out) = 0;
  // Whether the peer the replies are for is gone for good (its connection
  // was reset or has failed): a client waiting for replies from a slow
  // server stops waiting and lets its requests go (orphaned) at once. A peer
  // that only half-closed (FIN) still gets its replies, as memcached sends
  // them for what it had read.
  virtual bool peer_gone() const { return false; }
};

// Drains `out` through `drain` once it holds kReplyHighWater bytes. False if
// the drain refused or failed: stop executing and close. A null drain never
// drains early.
inline bool drain_if_full(protocol::out_buffer& out, reply_drain* drain) {
  if (out.size() < kReplyHighWater || !drain) return true;
  return drain->drain(out);
}

}  // namespace ithaca::flow
