// The wire conventions a backend_call's three parts share (backend_call.cc starts and
// fails a call, backend_call_encode.cc writes its requests, backend_call_reply.cc reads the
// replies): the lease token's tag bit, binary incr's "do not create", binary quiet gets.
#pragma once

#include <cstdint>
#include <string_view>

#include "request.h"

namespace ithaca::protocol::call_detail {

// Binary incr/decr expiration that means "do not create a missing item".
inline constexpr std::uint32_t kNoVivify = 0xffffffff;
// A lease token over meta is the placeholder's CAS with this bit set: a fresh
// memcached hands out CAS 1 and 2, which mcrouter reserves (1: wait), so the
// bare CAS cannot be the token. lease-set takes the bit off again; a token
// without it was not handed out here and is refused.
inline constexpr std::uint64_t kLeaseTokenTag = std::uint64_t{1} << 62;

// Leases are served with meta commands (mg N, ms C) whatever the pool's
// protocol: memcached 1.6 and later speaks them on its ascii port beside the
// classic ones. A server that does not answers ERROR, which the client sees
// as this line instead.
inline constexpr std::string_view kLeaseNeedsMeta =
    "SERVER_ERROR lease-get and lease-set need a backend that speaks meta commands (memcached 1.6 or later)";

inline constexpr std::string_view kMetagetNeedsMeta =
    "SERVER_ERROR metaget needs a backend that speaks meta commands (memcached 1.6 or later)";

inline bool is_binary_quiet_get(const request& req) {
  return req.proto == protocol_kind::Binary && req.noreply && (req.cmd == command::Get || req.cmd == command::Gat);
}

}  // namespace ithaca::protocol::call_detail
