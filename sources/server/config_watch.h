// Reload on change (mcrouter's behaviour: it watches its config file with
// inotify): the config file, the files it imports (config::config::sources)
// and the auth and TLS files a SIGHUP re-reads are watched, and a change
// starts the very reload a SIGHUP starts (pooler::request_reload), once the
// files have been quiet for a while.
//
// Two coroutines on the pooler machine, which owns the signals and the
// reload already (a worker never waits on any of this):
//  - "config events" reads the inotify descriptor (non-blocking, attached to
//    the machine's loop), keeps the events that name a watched entry and
//    wakes the other;
//  - "config watch" waits for the burst to end (kWatchQuietMs), then, on the
//    blocking pool, walks every path again, moves the watches to where the
//    paths lead now and compares each file's identity (watch_paths.h) with
//    the last one: only a real change reloads (an event for a neighbour in a
//    watched directory does not).
// Every wait has a timeout and ends when the coroutine is cancelled
// (shutdown). The watching starts only once a config turns it on
// (server.reload_on_change), so a server that does not watch holds no
// inotify instance (the kernel allows 128 per user by default).
//
// Limits: the first identities are taken when the first watches are in
// place, a moment after the start read the file; a change made in that
// moment is caught by the file's mtime (later than the read: set()), unless
// it fell in the same tick of the kernel's coarse clock as the read, then
// it waits for the next one (or a SIGHUP). Without inotify (the kernel
// refuses an instance) nothing is polled: mcrouter then compares the file's
// md5 every 60 s; here the log says so and SIGHUP still reloads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "machinarium.h"
#include "watch_paths.h"

namespace ithaca::server {

// How long the files must be quiet before the reload. A save is rarely one
// event (a truncating write is a modify per write(2) and a close; vim
// renames, writes and renames back; a ConfigMap update is a create, a
// rename and a removal), and reading between them could load a half-written
// file (refused, and the next event would reload again) or flap between
// configurations. mcrouter waits a fixed second after it sees a change
// (reconfiguration_delay_ms, 1000); here the second counts from the last
// event, so a burst of any length is one reload.
inline constexpr mm::millis kWatchQuietMs = 1000;
// A file written without pause is still reloaded this long after its first
// event (whatever it holds then: a bad file keeps the running config).
inline constexpr mm::millis kWatchLongestWaitMs = 10000;
// One walk of the paths on the blocking pool, at most (as a reload's read).
inline constexpr mm::millis kWatchArmTimeout = 5000;

class config_watch {
 public:
  // `on_change` is called on the pooler machine with the reason ("/etc/x.json
  // was modified"); it must not suspend (it starts the reload coroutine).
  explicit config_watch(std::function<void(const std::string& why)> on_change);
  ~config_watch();  // on the pooler machine, once both coroutines have ended
  config_watch(const config_watch&) = delete;
  config_watch& operator=(const config_watch&) = delete;

  // The files to watch and whether to: at start, and after each reload that
  // applied a file (its sources and its reload_on_change). Files kept from
  // the previous list keep their last identity, so a change made while the
  // reload ran is still seen. A file new to the list whose mtime is later
  // than `read_at_ns` (CLOCK_REALTIME when the config was read, 0: unknown)
  // was changed between that read and these watches: it reloads too, so a
  // change made in the moment after the start (or a reload) read the file
  // is not lost. [pooler machine; does not suspend]
  void set(std::vector<std::string> files, bool enabled, int64_t read_at_ns = 0);

  // The "config watch" coroutine's body; returns when cancelled, after
  // finishing the "config events" coroutine it started. [pooler machine]
  void run();

 private:
  void read_events();  // the "config events" coroutine
  bool open();
  bool relevant(int wd, uint32_t mask, const char* name) const;
  // Walks the paths and moves the watches on the blocking pool; `compare`:
  // reports the files whose identity changed. False when cancelled.
  bool arm(bool compare);

  std::function<void(const std::string&)> on_change_;
  // [pooler machine] what set() asked for, and whether run() has applied it
  std::vector<std::string> files_;
  bool enabled_ = false;
  bool rearm_ = false;
  bool announce_ = false;  // the list or the switch changed: log it once armed
  int64_t read_at_ns_ = 0;  // set()'s, for the next arm's new files
  // [pooler machine] the inotify instance, once opened, and its reader
  std::unique_ptr<mm::io> inotify_;
  mm::coroutine_id reader_ = 0;
  bool open_failed_ = false;
  // [pooler machine] what the last walk left: the watches, the identities
  std::map<int, watch_set::watch> watches_;
  std::map<std::string, file_identity> identities_;
  // [pooler machine] an event came (read_events): when the burst's first
  // and its last did (monotonic ns)
  bool dirty_ = false;
  int64_t first_event_ns_ = 0;
  int64_t last_event_ns_ = 0;
  mm::cond wake_;  // read_events and set() -> run()
};

}  // namespace ithaca::server
