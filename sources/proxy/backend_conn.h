// One connection from one worker to one backend server: many client requests
// pipelined on it, replies matched to them in order.
//
// Thread: everything runs on the owning worker machine, in three kinds of
// coroutine: the clients that submit calls, this connection's writer (connect,
// then one write per loop turn for everything the clients queued during the
// turn) and its reader (parse the replies piece by piece and complete the
// calls in order). No locks: they share the state below by running on one
// machine and never suspending in the middle of an update.
//
// A request that gets no reply within the pool's timeout fails with
// `SERVER_ERROR` at once, and the connection stays (mcrouter's behaviour):
// its entry stays in inflight_, abandoned (its slot given back to the
// client, its call keeping what frames the reply), so the late reply is read
// and dropped when it comes and every request behind it still gets its own.
// Bounds: the connection closes, failing what is in flight (Connection), when
// the abandoned entries fill the in-flight cap or the head of inflight_ is
// abandoned and late_reply_timeout past its deadline (a server that stopped
// answering); a bad reply closes it at once. Requests still waiting behind
// the in-flight cap were never sent: they go out on the next connection.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend_call.h"
#include "backend_connect.h"
#include "backend_reply_parser.h"
#include "backend_server.h"
#include "gauged_queue.h"
#include "machinarium.h"
#include "request_slot.h"

namespace ithaca::proxy {

class worker_backends;

class backend_conn {
 public:
  // The connection's life, driven by one switch in writer_main().
  enum class state : uint8_t {
    Idle,        // no socket; the first queued call makes the writer connect
    Connecting,  // the writer is connecting; calls queue behind
    Ready,       // connected: the writer sends, the reader matches replies
    Broken,      // a failure: the calls in flight have failed; the writer closes the socket
    Closed,      // ended: the server left the config and nothing was left, or the worker stops
  };

  backend_conn(std::shared_ptr<backend_server> server, unsigned worker, worker_backends& owner);
  ~backend_conn();
  backend_conn(const backend_conn&) = delete;
  backend_conn& operator=(const backend_conn&) = delete;

  // Starts `req`'s call for the keys `keys` (indexes into req.keys; empty =
  // all) on this server; the slot's call_done() runs when it is answered or
  // failed. Never suspends. A full queue or a down server fails it at once.
  // `pool_group`: the sending pool's mcrouter pool-stats group
  // (pool_group_stats.h; -1: none), which the call counts in.
  void submit(flow::request_slot& slot, std::span<const uint32_t> keys, int pool_group = -1);

  // Connects now, with nothing to send (twemproxy's preconnect). Once: a
  // failed connect is logged and counted as any, and the next one waits for
  // a request. Never suspends.
  void connect_now();

  // The server left the configuration: finish what is queued, then end.
  void close_when_idle();
  bool finished() const { return state_ == state::Closed && writer_done_ && reader_done_; }
  // Whether a request submitted now would be sent: not once the writer has
  // decided to close for good (a retired server's connection gone idle)
  // while its reader is still winding down. worker_backends::conn() hands
  // out another connection then.
  bool accepting() const { return state_ != state::Closed && !(coroutines_started_ && writer_done_); }
  state current_state() const { return state_; }
  backend_server& server() { return *server_; }

 private:
  struct entry {
    protocol::backend_call* call = nullptr;
    // Null once abandoned (abandon()): the client was answered with the
    // timeout; only the call (which owns the reply's framing) is left.
    flow::request_slot* slot = nullptr;
    protocol::reply_shape shape = protocol::reply_shape::Line;
    int64_t deadline_ns = 0;  // submitted + timeout
    int64_t started_ns = 0;
    std::span<const uint32_t> keys;  // this server's keys of the request (empty: all)
    // The call was started (backend_call::start) for `proto`. With
    // `protocol: auto` a call submitted before the connection learned what
    // the server speaks waits unstarted.
    bool started = false;
    bool shadow = false;           // counted in shadow_outstanding until finished
    std::int16_t pool_group = -1;  // submit()'s
    protocol::backend_protocol proto = protocol::backend_protocol::Ascii;
  };

  void start_coroutines();
  void writer_main();
  // writer_main's step in each state; each returns true when its wait was
  // cancelled (backend_conn.cc).
  bool writer_idle();
  bool writer_connect();
  bool learn_protocol(backend_link& link, failure_kind& why, std::string& error);
  // `err`: the connect's -errno (0: it connected, the handshake or probe failed).
  void connect_failed(failure_kind why, const std::string& error, int err);
  // A failed connect's log line, last_error, failure record (which may mark
  // the server down and start its prober) and counter: connect_failed's and
  // closed_unused's common part.
  void note_connect_failure(failure_kind why, const std::string& error);
  bool writer_send();
  bool writer_close();
  void reader_main();
  // Encodes as many waiting calls as the in-flight cap allows (after
  // failing those whose deadline passed while they waited).
  void admit_waiting();
  // Fails the waiting calls whose deadline has passed (never sent).
  void expire_waiting();
  // A connection is ready: the waiting calls get `timeout_ns` from now at
  // least (their time waiting for it does not count; the connect's own
  // deadline bounded it). Keeps waiting_ in deadline order.
  void restart_waiting_deadlines(int64_t timeout_ns);
  // Drops the waiting reads whose client is gone; returns how many.
  std::size_t drop_orphaned_reads();
  // Whether a waiting entry only reads (its client gone, it is not sent).
  static bool orphan_read(const entry& e);
  void encode(entry& e);
  // Starts e's call in what the server speaks (proto_); false if the codec
  // answered it without the server (then it is finished).
  bool start_call(entry& e);
  // Appends e's (next) request to out_, on the open get line if it can join it.
  void encode_step(entry& e);
  // Parses what has been read; false if the backend sent garbage.
  bool process_input();
  // The head call is answered (or failed): counts, frees, completes its slot.
  void finish(entry& e, bool answered);
  // finish()'s parts: the counts and the pool group's, before call_done;
  // the call back to the free list.
  void count_done(entry& e, bool answered);
  void release_call(entry& e);
  // The entry's deadline passed with its reply due: its client gets the
  // timeout now, the entry stays in inflight_ to frame the late reply.
  void abandon(entry& e);
  // An abandoned entry's reply was read (or the connection ended).
  void drop_abandoned(entry& e, bool read);
  // [reader] Abandons the calls in flight whose deadline passed, then
  // closes the connection if the abandoned ones are past their bound.
  void check_deadlines();
  void abandon_expired();
  bool late_bound_passed() const;
  // When the reader must look at the deadlines next (its read's bound).
  int64_t next_check_ns() const;
  void fail_entry(entry& e, failure_kind why);  // counts the failure, then fail_call
  // The call's error (not for an orphaned slot), done; `connect_errno`: a
  // failed connect's errno, for the reply's text.
  void fail_call(entry& e, failure_kind why, int connect_errno = 0);
  // Fails every call in flight (the head with `why`, the rest with
  // Connection), marks the socket broken and wakes the writer to close it.
  void break_connection(failure_kind why);
  void fail_waiting(failure_kind why);
  // The server closed the connection with nothing in flight: close, no
  // failure counted, and reconnect (peer_closed).
  void recycle_idle();
  // The server closed (or reset) a connection that carried nothing within
  // kUnusedCloseMs of its connect: a failed connect, not an idle close. A
  // server that is going away does this to the reconnect peer_closed()
  // makes when the kernel (or the server) accepts it before its listener
  // closes; counted as a refused connect would be (the server marked down,
  // its prober started), so the next request fails fast either way.
  void closed_unused();
  // The server closed (or reset) a connection that carried requests: the
  // writer reconnects at once, with nothing to send, instead of waiting for
  // the next request. A server that went away then refuses it and is marked
  // down now (a refused connect does that), so the next request fails fast
  // as mcrouter's does (it marks a server TKO when an open connection goes
  // down); a server that closed an idle connection and still listens gets
  // a fresh connection and loses nothing. Only a connection that carried a
  // request does it, so a server that accepts and closes at once is not
  // reconnected to in a loop.
  void peer_closed();
  void close_if_last();
  void connections_changed(int delta);
  protocol::backend_call* acquire_call();
  server_counters& counters() { return server_->counters(worker_); }

  std::shared_ptr<backend_server> server_;
  unsigned worker_;
  worker_backends& owner_;
  state state_ = state::Idle;
  // What this connection speaks to the server: the pool's protocol, or with
  // `protocol: auto` what the last connect's probe learned (proto_known_).
  protocol::backend_protocol proto_ = protocol::backend_protocol::Ascii;
  bool proto_known_ = false;
  std::unique_ptr<mm::io> io_;
  // A TLS pool's session on io_, used by the writer (writes) and the reader
  // (reads) at once: net/tls_conn.h says how their waits never miss a
  // wake-up. Freed with the socket, after both have left it.
  std::unique_ptr<net::tls_conn> tls_;
  bool coroutines_started_ = false;
  bool writer_done_ = true;
  bool reader_done_ = true;
  bool reader_parked_ = true;  // the reader is not inside a socket read
  bool closing_ = false;       // close_when_idle() was called
  bool connect_idle_ = false;  // connect_now() or peer_closed(): leave Idle with nothing queued
  bool carried_ = false;       // this socket carried a request (peer_closed reconnects)
  int64_t connected_ns_ = 0;   // when this socket connected (closed_unused)

  std::deque<entry> inflight_;  // encoded (maybe not yet written), in wire order
  // Of inflight_, the abandoned entries (timed out, their reply still due).
  std::size_t abandoned_ = 0;
  // No live entry of inflight_ has an earlier deadline (it may be earlier
  // than any: lowered as entries are encoded, recomputed by the scan that
  // abandon_expired() makes once it has passed). kNever: none in flight.
  static constexpr int64_t kNever = INT64_MAX;
  int64_t next_deadline_ns_ = kNever;
  // Over the in-flight cap (or before the connection is up): not encoded
  // yet; counted in the worker's pending gauge (mcrouter's pending_reqs).
  gauged_queue<entry> waiting_{server_->counters(worker_).pending};
  std::string out_;      // encoded requests not yet written (clients append)
  std::string sending_;  // what the writer is writing now (clients never touch it)
  // The call whose get line ends out_ and may take the next get's keys
  // (backend_call::join_line); null once out_ is handed to the writer.
  protocol::backend_call* open_line_ = nullptr;
  // Read buffer: bytes [in_start_, in_len_) are read and not yet parsed.
  // Sized once and grown only for a large value, never zero-filled per read.
  std::string in_;
  std::size_t in_start_ = 0;
  std::size_t in_len_ = 0;
  protocol::backend_reply_parser parser_;
  std::vector<std::unique_ptr<protocol::backend_call>> free_calls_;

  mm::cond writer_wake_;
  mm::cond reader_wake_;
};

}  // namespace ithaca::proxy
