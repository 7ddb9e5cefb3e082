#pragma once
// One client request's conversation with ONE backend server (router role):
// it encodes the request in the backend's protocol (ascii or meta), takes the
// reply piece by piece, and leaves the outcome in a routed_result. A request
// may need several steps (a binary incr with an initial value over an ascii
// backend: incr -> NOT_FOUND -> add -> NOT_STORED -> incr), each one request
// and its reply on the same connection, in order.
//
// Driving it (the integrator's backend connection):
//   p = call.start(req, proto, result, keys);
//   while (p == NextStep) {
//       shape = call.encode(wbuf);          // queue the bytes, send
//       do { parser.next(rbuf, shape, piece, n) ... p = call.on_piece(piece); consume(n); }
//       while (p == More);
//   }
//   Done: the result is complete. BadReply: the reply made no sense for the
//   request (the result is filled as fail(BadReply)); recycle the connection.
//   On a timeout, a down server or a broken connection: call.fail(why).
//
// No allocation per call beyond the owned value bytes in the result and the
// encoded bytes appended to the caller's string; start() fully resets, so
// objects can live in a free list. Thread: the client's worker; no locks.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend_protocol.h"
#include "backend_reply_parser.h"
#include "reply_result.h"
#include "request.h"
#include "routed_result.h"

namespace ithaca::protocol {

// The pool's `protocol:` enum (kinds/backend_protocol.h), by the codec's
// name. A call is started with Ascii or Meta, never Auto: the connection
// learns which first (proxy/protocol_probe.h).
using kinds::backend_protocol;

class backend_call {
 public:
  enum class progress : std::uint8_t {
    More,      // feed the next piece of this reply
    Done,      // the result is complete
    NextStep,  // call encode() for the next request and feed its reply
    BadReply,  // the reply does not fit the request: result says so; recycle the connection
    Passed,    // the result is complete, and the piece is the next call's: this call's
               // keys share its get line (join_line), so offer it there, unconsumed
  };

  // req: the client's request; its views stay valid until the call is done
  // (the client pins its input). keys: the indexes into req.keys this
  // server serves, in request order (empty: all of them); the span must
  // stay valid until the call is done. result must have been prepared.
  // Returns NextStep, or Done when no backend request is needed (the codec
  // refused the request: result holds the reason).
  progress start(const request& req, backend_protocol proto, routed_result& result,
                 std::span<const std::uint32_t> keys = {});

  // Appends the next step's request bytes; returns how its reply is framed.
  reply_shape encode(std::string& out);

  progress on_piece(const reply_piece& piece);

  // The server could not answer: single-key commands get a clear error, a
  // multi-key get's keys are misses (counted in result.failed_keys).
  // `down_cause`: with Down, what marked the server down; `connect_errno`:
  // with ConnectionError, the failed connect's errno (routed_result's).
  void fail(call_failure why, call_failure down_cause = call_failure::ConnectionError, int connect_errno = 0);

  bool done() const { return step_ == step::Done; }

  // What the backend's answer said (reply_result.h), for the server's
  // counters: once the call is done and was answered (not failed, not
  // orphaned).
  reply_tally tally() const;

  // Get coalescing (ascii backends): single-key client gets that meet on
  // one connection in one loop turn share one `get k1 k2 ...` line, so the
  // backend answers them with one reply (memcached writes each pipelined
  // `get`'s reply with a syscall of its own; a multi-key line's in one).
  // line_open(): this call's last bytes in `out` are a get line that may
  // take more keys. join_line(prev, out): instead of encode(), add this
  // call's keys to prev's line at the end of `out`; false (nothing
  // written) if the verbs differ or the line would grow past its limit.
  // VALUE pieces still come in key order, so each call of the line takes
  // those that match its keys and passes the rest on (progress::Passed);
  // the END ends them all.
  bool line_open() const { return step_ == step::AsciiGet && line_verb_ != line_verb::Touch; }
  bool join_line(backend_call& prev, std::string& out);

  // Whether the request only reads (a get, an mg that changes nothing:
  // command_class.h's can_fetch_again), so a call whose client is gone
  // before it was sent need not be sent at all. Set by start().
  bool only_reads() const { return only_reads_; }

  // The reply to an orphaned call (its client is gone, and of its request
  // only its keys and value are left: request_slot::orphan): frames it by this
  // call's own state and its keys; never a next step.
  progress on_orphan_piece(const reply_piece& piece);

  // The client stops waiting for this call (its deadline passed) while its
  // reply is still due on the connection: mcrouter keeps the connection and
  // reads and drops the late reply, so the calls behind still get theirs.
  // `fail_client`: first leave fail(why, down_cause)'s failure in the
  // client's result (not for an orphan, whose request may no longer be
  // read). Then the call keeps in itself what frames the reply (its step,
  // its lines, the keys of an ascii get) and forgets the request, the keys
  // span and the result: their slot is the client's again from now on.
  // The reply is then fed to on_orphan_piece, which stores nothing.
  // [the backend connection's reader; allocates only for an ascii get's keys]
  void abandon(bool fail_client, call_failure why, call_failure down_cause);
  bool abandoned() const { return abandoned_; }

 private:
  // What the client asked, whatever its protocol (chosen at start()).
  enum class op : std::uint8_t { Retrieve, Store, Arith, Delete, Touch, Flush, LeaseGet, LeaseSet, Metaget, Meta };

  // One request on the wire and what its reply means. Driven by one switch
  // in on_piece() (and one in encode()).
  enum class step : std::uint8_t {
    Done,              // finished (or not started)
    AsciiGet,          // get/gets/gat/gats lines over this call's keys, each up to END
    MetaGet,           // one mg per key, one meta reply each (also lease-get)
    Single,            // one command with a one-piece reply (store, delete, touch, incr, flush)
    Passthrough,       // meta client, meta backend: the reply goes to the client as is
    QuietPassthrough,  // the same with q: the backend's reply (if any), then MN
    IncrAdd,           // binary incr/decr over ascii, key missing: add the initial value
    IncrRetry,         // ... the add lost a race: incr again
    FetchCas,          // binary store/incr over ascii succeeded: gets for the new CAS
  };

  std::size_t key_count() const {
    if (abandoned_) return own_key_count_;
    return keys_.empty() ? req_->keys.size() : keys_.size();
  }
  // Key i of this call's keys (from the request, or abandon()'s copy).
  std::string_view key_name(std::size_t i) const;
  std::size_t key_index(std::size_t i) const { return keys_.empty() ? i : keys_[i]; }

  progress start_meta_client();
  progress refuse(std::string_view text, binary_status bstatus);
  progress finish();
  progress pass();
  progress bad_reply();
  progress on_ascii_get(const reply_piece& piece);
  std::string_view lease_error(std::string_view line) const;
  progress on_meta_get(const reply_piece& piece);
  progress on_single(const reply_piece& piece);
  progress after_single();
  progress on_incr_add(const reply_piece& piece);
  progress on_fetch_cas(const reply_piece& piece);
  bool outcome_of_line(std::string_view line);
  bool outcome_of_meta(const reply_piece& piece);

  void encode_get_lines(std::string& out);
  void encode_mg_lines(std::string& out);
  reply_shape encode_single(std::string& out);
  void encode_ascii_single(std::string& out);
  void encode_meta_single(std::string& out);

  enum class line_verb : std::uint8_t { Get, Gets, Touch };
  line_verb request_verb() const;  // the verb encode_get_lines writes for this request
  bool with_cas() const;           // a cas verb (gets/gats) for this request

  const request* req_ = nullptr;
  bool only_reads_ = false;
  routed_result* result_ = nullptr;
  std::span<const std::uint32_t> keys_;
  backend_protocol proto_ = backend_protocol::Ascii;
  op op_ = op::Retrieve;
  step step_ = step::Done;
  bool binary_ = false;        // the client speaks binary (replies need CAS values)
  std::size_t match_key_ = 0;  // AsciiGet: next key a VALUE may answer; MetaGet: next reply's key
  std::size_t lines_ = 0;      // AsciiGet: lines sent whose END has not come
  unsigned rounds_ = 0;        // IncrAdd/IncrRetry rounds
  // AsciiGet: the verb of this call's lines, where its last line starts in
  // the encode buffer, whether the next call's keys continue that line
  // (then the line's END is the next call's too).
  line_verb line_verb_ = line_verb::Get;
  std::size_t last_line_start_ = 0;
  bool joined_next_ = false;
  // For tally(): keys found and not found (meta gets count misses as they
  // come; an ascii get line's misses are its keys without a VALUE), error
  // replies, and a passthrough meta reply's result.
  std::uint32_t hits_ = 0;
  std::uint32_t misses_ = 0;
  std::uint32_t errors_ = 0;
  bool has_passthrough_result_ = false;
  reply_result passthrough_result_ = reply_result::Ok;
  void note_passthrough(const reply_piece& piece);
  // abandon(): the request and result are gone; the framing is here. The
  // key bytes are kept only for an ascii get (VALUE pieces name their key),
  // end to end in own_keys_ (kept with their capacity in the free list).
  bool abandoned_ = false;
  std::size_t own_key_count_ = 0;
  std::string own_keys_;
  std::vector<std::uint32_t> own_key_ends_;
};

}  // namespace ithaca::protocol
