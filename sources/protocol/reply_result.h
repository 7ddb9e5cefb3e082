#pragma once
// What a backend's answer said, for the router's per-server counters
// (`stats servers` replies_<result>, ithaca_server_reply_results_total). The
// names are mcrouter's result names, so dashboards read the same words.
//
// A retrieval counts each of its keys, found or notfound (mcrouter splits a
// multi-get into one request per key, so its counts are per key too); every
// other answered call counts one result. Failures (timeouts, refused
// connects, garbage) are not replies: failure_kind counts them.

#include <array>
#include <cstdint>
#include <string_view>

namespace ithaca::protocol {

enum class reply_result : std::uint8_t {
  Found,     // a retrieval's key with a value
  NotFound,  // a retrieval's key without one; a delete/touch/incr/cas of a missing key
  Stored,
  NotStored,
  Exists,  // cas mismatch
  Deleted,
  Touched,
  Ok,           // flush_all
  Number,       // incr/decr's new value
  Error,        // the backend's ERROR
  ClientError,  // its CLIENT_ERROR line (a non-numeric incr too: mcrouter's client_error)
  RemoteError,  // its SERVER_ERROR line (mcrouter's remote_error)
};
inline constexpr std::size_t kReplyResultCount = 12;

inline constexpr std::array<std::string_view, kReplyResultCount> kReplyResultNames = {
    "found",   "notfound", "stored", "notstored", "exists",       "deleted",
    "touched", "ok",       "number", "error",     "client_error", "remote_error",
};

// Which error a backend's error line is (ERROR, CLIENT_ERROR ..., SERVER_ERROR ...).
inline reply_result error_result(std::string_view line) {
  if (line.starts_with("CLIENT_ERROR")) return reply_result::ClientError;
  if (line.starts_with("SERVER_ERROR")) return reply_result::RemoteError;
  return reply_result::Error;
}

inline std::string_view to_string(reply_result r) { return kReplyResultNames[static_cast<std::size_t>(r)]; }

// One answered call's results, counted by reply_result.
using reply_tally = std::array<std::uint32_t, kReplyResultCount>;

}  // namespace ithaca::protocol
