#pragma once
// What one client request has gathered from its backend call(s), in a form
// that does not depend on the backend's protocol, and the renderer that turns
// it into the client's reply (in the CLIENT's protocol, byte for byte what a
// memcached 1.6.18 would have sent).
//
// Life: the integrator calls prepare(req) once per client request, then
// starts one backend_call per server with this result (a multi-key get split
// over servers: each call fills the hits of its own key indexes), and calls
// render_routed_reply once every call is done. Values are OWNED (copied out
// of the backend connection's read buffer) into one byte arena; objects kept
// in a free list reuse their capacity (prepare does not free).
//
// Thread: the client's worker; never shared.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "out_buffer.h"
#include "parse_result.h"
#include "request.h"

namespace ithaca::protocol {

// Why a backend call could not be answered by its server.
enum class call_failure : std::uint8_t {
  Down,             // the server is marked down (fail fast)
  Timeout,          // no reply within the request timeout
  ConnectionError,  // connect refused, reset, closed mid-reply
  BadReply,         // the server sent garbage (the connection is recycled)
  QueueFull,        // more requests waiting for the server than its pool allows
};

enum class routed_outcome : std::uint8_t {
  Pending,  // nothing gathered yet
  Hits,     // retrieval (any number of keys, hit or miss): see hit()
  Stored,
  NotStored,
  Exists,
  NotFound,
  Deleted,
  Touched,
  Ok,
  Number,      // incr/decr: number (cas for binary clients)
  NonNumeric,  // incr/decr on a value that is not a number
  LeaseToken,  // lease-get miss: number is the token (1: wait); hit(0) may hold stale data
  ErrorLine,   // the backend's own ERROR / CLIENT_ERROR / SERVER_ERROR line: text
  Refused,     // the codec cannot serve this request here: text (text clients) / bstatus
  Failed,      // no reply from the backend: failure
  Raw,         // same-protocol passthrough: raw is the client's reply as is (may be empty)
};

class routed_result {
 public:
  // One retrieved key. data is in the arena: use routed_result::data().
  struct key_hit {
    bool found = false;
    std::uint32_t flags = 0;
    std::uint64_t cas = 0;
    std::size_t offset = 0;
    std::size_t length = 0;
    // A hit from a classic ascii backend keeps its whole VALUE piece
    // (header line, data, CRLF) before and after the data: header is the
    // header line's length with its CRLF (0: not kept), raw_has_cas
    // whether that line carries a cas. An ascii client asking the same
    // way gets those bytes as they are (render_routed_reply).
    std::size_t header = 0;
    bool raw_has_cas = false;
    // Its server failed (a multi-key get answers it as a miss, counted in
    // failed_keys): a failover route asks the next child for it alone.
    bool failed = false;
  };

  // Resets everything for `req` (sizes the per-key slots to req.keys).
  void prepare(const request& req);

  routed_outcome outcome = routed_outcome::Pending;
  std::uint64_t number = 0;                        // Number, LeaseToken
  std::uint64_t cas = 0;                           // CAS of the item after the command (binary replies), Touched
  std::uint32_t flags = 0;                         // Touched (binary touch answers with the flags)
  std::string text;                                // ErrorLine, Refused: the line without "\r\n"
  binary_status bstatus = binary_status::NoError;  // Refused, for binary clients
  call_failure failure = call_failure::Down;       // Failed
  // Failed with Down: what marked the server down (its failure streak's
  // last failure: Timeout or ConnectionError), for the reply's reason.
  call_failure down_cause = call_failure::ConnectionError;
  // Failed with ConnectionError because the connect failed: its errno (0:
  // the connection broke, or the connect failed otherwise, e.g. TLS). A
  // refused connect is answered in mcrouter's words, which name it.
  int connect_errno = 0;
  std::string raw;  // Raw
  // Keys of a multi-key get whose server failed (answered as misses), for stats.
  std::uint32_t failed_keys = 0;

  // Retrievals: record a hit for key index i (copies data; replaces one).
  void set_hit(std::size_t i, std::uint32_t hit_flags, std::uint64_t hit_cas, std::string_view bytes);
  // Key index i is a miss after all (a route found its hit unusable).
  void clear_hit(std::size_t i);
  // The same from a whole ascii VALUE piece: `raw` is every byte of it,
  // `bytes` (the data) lies inside it, followed by CRLF.
  void set_hit_raw(std::size_t i, std::uint32_t hit_flags, std::uint64_t hit_cas, bool has_cas, std::string_view bytes,
                   std::string_view raw);
  // Keeps no VALUE piece: the keys the servers saw were not the client's (a
  // routing prefix taken off, a failover tag), so every hit's line is
  // written anew.
  void forget_raw_pieces() {
    for (key_hit& h : hits_) h.header = 0;
  }
  // The kept VALUE piece of h (empty if none).
  std::string_view raw_piece(const key_hit& h) const {
    return h.header == 0 ? std::string_view()
                         : std::string_view(values_).substr(h.offset - h.header, h.header + h.length + 2);
  }
  const key_hit& hit(std::size_t i) const { return hits_[i]; }
  // Key i's server failed; and, once it is asked elsewhere, no longer.
  void set_failed(std::size_t i, bool failed) { hits_[i].failed = failed; }
  std::size_t key_count() const { return hits_.size(); }
  std::string_view data(const key_hit& h) const { return std::string_view(values_).substr(h.offset, h.length); }

  // Reply bytes this result holds (values and a passthrough reply).
  std::size_t bytes_held() const { return values_.size() + raw.size(); }
  // Forgets the values and the passthrough reply and gives back their
  // memory when it is large (a pooled result must not keep a big value's
  // capacity for the next request). The hits are no longer renderable: the
  // caller prepares the result again before it is used.
  void release_values();

  // Sets a single-key outcome (helpers for the call).
  void set_text(routed_outcome o, std::string_view line) {
    outcome = o;
    text.assign(line);
  }

 private:
  std::vector<key_hit> hits_;
  std::string values_;  // every hit's bytes, back to back
};

// Appends the client's reply for `req` (its protocol; noreply, binary quiet
// opcodes and meta q / O / k / b as memcached does) once every call of the
// request is done. Requests ithaca answers itself (version, stats, mn, ...)
// never get here.
// `ends_reply` false: a text get's reply continues in the next request's
// (a long get sent in parts): its VALUEs without the END.
void render_routed_reply(const request& req, const routed_result& result, out_buffer& out, bool ends_reply = true);

}  // namespace ithaca::protocol
