// The replication fan-out machine (the design notes' "router thread"; named for
// what it does, so "router" means only the router role): a machine of its
// own, started only on a replication master, that owns the slave list and
// the slave sockets. Workers never touch a slave: their store
// changes reach it through the hand-off ring (mm::byte_queue), filled by the
// store's change observer under each key's bucket lock; this machine drains
// the ring into the stream log (stream_log.h), one copy shared by every
// slave, and each slave's writer sends from its own position in it
// (outbox.h; a slave's initial-sync items and confirmation requests are its
// own, placed at the position the drain had reached).
//
// Coroutines, all on this machine (so the slave list needs no lock):
//   main     binds replication.listen:port, accepts slaves (with
//            replication.tls after a mutual-TLS handshake, in a coroutine of
//            its own per peer; a peer outside
//            replication.allow, or past the slot limit, is closed at once
//            and counted in repl_peers_refused: it is sent nothing and holds
//            no slot and no buffer)
//   drain    ring -> stream log (stream records) and outboxes (sync records
//            of the slave being synced), in steps; after each step it wakes
//            the writers, drops the slaves over send_buffer, and yields
//   per slave: writer (outbox -> socket, bounded writes, each within
//            slave_timeout), heartbeat reader (drops a slave silent for
//            slave_timeout), initial-sync scan
//   (fanout.cc: start, accept, attach, drop; fanout_drain.cc: the drain;
//   fanout_slave.cc: the per-slave coroutines)
//
// With `replication.ack: slave` (ack_state.h): while client writes wait, the
// drain asks every synced slave, after each step, to confirm the position it
// reached (a Noop, record.h); the heartbeat reader reads the confirmations
// (ack_reader.h) and publishes them (ack_state::confirm). A slave still in
// its initial sync is never asked: its confirmation would not cover the
// items its scan has yet to copy.
//
// Policy for a slave that cannot keep up: once its backlog (what it has yet
// to be sent) passes send_buffer it is dropped alone (counted; it must
// resync), as is one whose write does not end within slave_timeout. The
// drain never waits on a slow slave: it moves records out of the ring while
// the *fastest* slave is less than half of send_buffer behind, so the ring
// drains at the pace of the fastest slave, and a burst the drain was late for
// waits in the ring rather than dropping every slave. A ring overflow (a
// stream record refused) drops every slave: a stream with a hole cannot be
// repaired. No worker ever waits on a slave.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "machinarium.h"
#include "ack_state.h"
#include "cidr.h"
#include "observer.h"
#include "repl_counters.h"
#include "store.h"
#include "stream_log.h"
#include "tls_conn.h"
#include "tls_setup.h"

namespace ithaca::replication {

struct fanout_settings {
  std::string listen;  // "host:port" (port 0: any free port, logged); "": no listener (takeover only)
  // The peers that may be slaves (replication.allow); empty: any peer.
  // Another is closed at accept, before a byte is sent, and counted.
  std::vector<config::cidr> allow;
  uint64_t slave_timeout_ms = 10000;
  uint64_t send_buffer = 32 << 20;
  uint64_t queue_size = 64 << 20;
  // replication.tls: the mutual-TLS server context (net/tls_setup.h); null:
  // plaintext (yrmcds's stream as is). With it, a peer is a slave only after
  // a handshake in which it showed a certificate that chains to the CA; any
  // other is closed having been sent nothing, logged and counted
  // (repl_peers_refused and repl_tls_refused).
  net::ssl_ctx_ptr tls_ctx;
};

// Takeover (server/takeover_server.h): the one slave an old process streams
// its store to, the new process on the other end of a unix socket pair. The
// flags are written on the fan-out machine and read by the pooler's takeover
// coroutine, which polls them.
struct takeover_link {
  std::atomic<uint32_t> id{0};       // the slave's id once attached
  std::atomic<bool> synced{false};   // its initial sync is in its outbox (SyncDone met)
  std::atomic<bool> dropped{false};  // dropped (the reason is logged)
};

class fanout {
 public:
  // `ack`: the semi-synchronous state shared with the workers (every master
  // has one, so a reload can turn `ack: slave` on); null: never asks. Stream
  // positions start above ack->confirmed(), so a later fan-out (a role
  // change) never counts an old confirmation for a new write.
  fanout(fanout_settings settings, store::store& st, std::function<store::store_now()> now, int64_t wall_base,
         repl_counters& counters, ack_state* ack = nullptr);
  ~fanout();
  fanout(const fanout&) = delete;
  fanout& operator=(const fanout&) = delete;

  // Install before the store is shared (store::set_observer).
  store::change_observer* observer() { return &observer_; }
  // Starts the machine and binds the listener; false (logged) on failure.
  // Blocks the caller until the bind is done. After stop() and join() it may
  // be started again (a node whose role follows a virtual IP starts it at
  // each promotion and stops it at each demotion); the ring and the
  // observer stay, installed in the store once.
  bool start(const mm::machine_config& base);
  void stop();  // any thread
  void join();  // not from the fan-out machine
  bool running() const { return machine_ != nullptr; }

  // Takeover: attaches `fd` (a connected unix socket, taken over) as a slave
  // on the fan-out machine: initial sync, then the stream. [any thread,
  // while running()]
  void attach_takeover(int fd, std::shared_ptr<takeover_link> link);
  // Takeover: the end mark for that slave, behind every record already in
  // the ring (the workers have stopped, so every acknowledged write is
  // there). False if the ring refused it. [any thread]
  bool end_takeover(const takeover_link& link) { return observer_.handover_mark(link.id.load()); }

 private:
  struct slave;
  using slave_ptr = std::shared_ptr<slave>;

  void main(std::promise<bool>* bound);
  bool allowed(const sockaddr_storage& peer) const;
  void refuse(int fd, const std::string& peer, const std::string& why);
  // replication.tls: the handshake of an accepted peer, in a coroutine of
  // its own (the accept loop goes on); attaches it as a slave if it passes.
  void handshake(int fd, std::string peer);
  void attach(std::unique_ptr<mm::io> io, std::unique_ptr<net::tls_conn> tls, const std::string& peer,
              std::shared_ptr<takeover_link> link = nullptr);
  void discard_stale();
  void drain();
  size_t drain_steps();
  void deliver(std::string_view record);
  void publish();
  uint64_t fastest_backlog() const;
  void writer(slave_ptr s);
  void heartbeats(slave_ptr s);
  void initial_sync(slave_ptr s);
  void drop(slave_ptr s, const std::string& why);  // by value: s may be an element of slaves_
  void update_lag();
  void ask_confirmations();
  // Derived from send_buffer (fanout_drain.cc).
  uint64_t pace_limit() const { return settings_.send_buffer / 2; }
  size_t step_bytes() const;
  size_t write_bytes() const;

  fanout_settings settings_;
  store::store& store_;
  std::function<store::store_now()> now_;  // the server clock's now()
  repl_counters& counters_;
  ack_state* ack_;
  mm::byte_queue queue_;
  stream_observer observer_;
  mm::machine* machine_ = nullptr;
  // Fan-out machine only.
  std::vector<slave_ptr> slaves_;
  std::vector<slave_ptr> targets_;  // deliver's, kept to spare an allocation per record
  stream_log log_;                  // the stream records every attached slave has yet to be sent
  // The drain stopped taking records: the fastest slave is pace_limit()
  // behind. Writers signal `room_` after each write, drop() and attach() too.
  bool paced_ = false;
  mm::cond room_;
  uint32_t next_id_ = 0;
  unsigned handshaking_ = 0;        // replication.tls: handshakes in progress (at most kMaxSlaves)
  int64_t refusal_logged_ns_ = 0;   // the last "peer refused" line (one per 10 s)
  uint64_t refusals_unlogged_ = 0;  // refused since that line
};

}  // namespace ithaca::replication
