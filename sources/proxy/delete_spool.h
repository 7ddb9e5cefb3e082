// Reliable deletes (mcrouter's asynclog; the memcache paper's invalidation
// stream): a delete that a server of a `reliable_deletes` pool could not take
// (no reply: down, timeout, connection error, queue full; or its
// SERVER_ERROR, as mcrouter spools it) is appended to that
// server's spool file and replayed to it, in order, when it answers again.
//
// Threads: one dedicated machine, "spool", owns every file and does every
// disk write and every replay. Workers never touch the disk: submit() is a
// bounded channel's try_write; the machine appends the record (one write(2),
// and an fdatasync with `fsync`) and only then answers the worker through
// its mailbox (spool_mailbox below), which wakes the worker's coroutine
// that holds the client's request (spool_waits.h): a delete is answered as
// spooled only once its record is in the file. A prober asks for a replay
// before it marks its server up (replay_before_up(): a message, then a wait
// of its own coroutine with a deadline). The spool machine never waits on a
// worker or a prober (it only posts wakes), so there is no cycle.
//
// Files: `<dir>/<pool>_<address>.spool` (bytes other than [A-Za-z0-9.-] as
// `_`), one key and a newline per delete, appended in the order the spool
// machine receives them (per worker, the order of the failures). A file
// fully replayed is deleted; one left at exit is replayed at the next start
// for a server of the config (adopt()). A write that fails is cut back off
// the file (ftruncate), so no partial record is left before the next one.
//
// Bounds: per server `max_bytes` of spooled, unreplayed records (a record is
// key + 1 bytes), reserved by the worker before it enqueues; over it, or
// with the channel full (kQueue records), the delete is dropped and counted.
// A record the machine reaches after its deadline (the worker has answered
// the failure by then) is not written: dropped and counted.
//
// Order (what is guaranteed): one server's deletes are replayed in the order
// they were spooled, one at a time, each reply checked (DELETED or NOT_FOUND;
// anything else stops the replay and keeps the rest for the next try). A
// server that was marked down is not marked up before its spool is replayed
// (the prober's gate), so no request of a later client reaches it before the
// deletes spooled while it was away: a set after the failed delete is not
// undone. A server that failed a delete without being marked down (a timeout
// below failure_limit) is replayed by the spool machine at once, while it
// takes traffic: a replayed delete may then remove a value set after the
// failed delete (one more miss, never a stale value).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "asynclog_file.h"
#include "backend_server.h"
#include "machinarium.h"

namespace ithaca::proxy {

struct spool_settings {
  std::string dir;                           // made and proved at start (config/spool_dir.h); made again if removed
  uint64_t max_bytes = 16ull * 1024 * 1024;  // per server
  bool fsync = false;                        // fdatasync a batch of records before answering them
  // The start made `dir`: stop() removes it if it is empty then, so a router
  // that never spooled leaves nothing behind (a pid-named default is never
  // found again).
  bool remove_dir_if_empty = false;
  // mcrouter's -a: each record written is also written to mcrouter's
  // asynclog there (asynclog_file.h); off without a directory.
  asynclog_settings asynclog;
};

// Where the spool machine answers one worker: each record's outcome, by the
// number the worker gave it, and a wake for the worker's coroutine if it
// waits (spool_waits.h). The wake is posted under `mu`, and the waiter takes
// itself off under `mu` before its coroutine may end, so no wake is ever
// posted to a machine that has stopped. [mu] both sides; a leaf lock: only a
// wake's post (the machine inbox's own mutex) happens under it.
struct spool_mailbox {
  struct outcome {
    uint64_t seq = 0;
    bool written = false;  // in the file (and synced, with fsync); else not in it at all
  };
  std::mutex mu;
  std::vector<outcome> done;                // not yet taken by the worker
  std::optional<mm::remote_waiter> waiter;  // the worker coroutine's current wait, if it waits

  // Adds an outcome and wakes the waiter (once: it is taken off). [spool machine]
  void post(uint64_t seq, bool written);
};

// Process-wide totals (all servers, never reset), for `stats`.
struct spool_totals {
  std::atomic<uint64_t> spooled{0};
  std::atomic<uint64_t> replayed{0};
  std::atomic<uint64_t> dropped{0};
};
const spool_totals& spool_counters();
// A delete that could not be spooled at all (no spool running). [any thread]
void count_spool_drop(backend_server& server);

class delete_spool {
 public:
  // Records waiting for the spool machine; past it a delete is dropped.
  static constexpr std::size_t kQueue = 65536;

  explicit delete_spool(spool_settings settings);
  ~delete_spool();
  delete_spool(const delete_spool&) = delete;
  delete_spool& operator=(const delete_spool&) = delete;

  // Starts the machine; false (logged) if it fails. Publishes this spool as current(). [main thread]
  bool start(const mm::machine_config& base);
  // Stops the machine (records still queued are written first) and
  // unpublishes it; removes the directory if it made it and it is empty.
  // [main thread, after the workers stopped]
  void stop();

  // The running spool, or null (no spool started). [any thread]
  static delete_spool* current();

  // A server's spool left by an earlier run, if any, is counted and will be
  // replayed (before the server's first up-marking if it is down, else as
  // soon as the machine gets to it). [main thread, after start]
  void adopt(std::shared_ptr<backend_server> server);

  // Hands a delete of `key` for `server` to the machine, which appends it
  // and posts {seq, written} to `reply` (null: nobody waits), or posts
  // written = false without writing it if it reaches the record at or after
  // `deadline_ns` (mm::deadline_after's clock; -1: no deadline) or the write
  // fails. Counted spooled
  // (per server and in total) once written, dropped otherwise. False (and
  // counted as dropped; nothing is posted) if the bound or the queue is
  // full, or the key cannot be replayed in the text protocol (a space, a
  // control byte). [any worker; never waits]
  bool submit(const std::shared_ptr<backend_server>& server, std::string_view key, std::shared_ptr<spool_mailbox> reply,
              uint64_t seq, int64_t deadline_ns);

  // [prober coroutine] Replays `server`'s spool, if it has one, and waits
  // for the outcome until `deadline_ns`: true when nothing is left (the
  // server may be marked up), false if a delete failed or time ran out.
  bool replay_before_up(const std::shared_ptr<backend_server>& server, int64_t deadline_ns);

  const spool_settings& settings() const { return settings_; }

 private:
  struct message;
  struct ticket;
  struct file_state;
  class machine_side;

  spool_settings settings_;
  mm::machine* machine_ = nullptr;
  std::unique_ptr<mm::channel<message>> inbox_;
  std::unique_ptr<machine_side> side_;
};

// The spool's file name for a server (no directory).
std::string spool_file_name(const backend_server& server);

}  // namespace ithaca::proxy
