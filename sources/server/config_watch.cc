#include "config_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace ithaca::server {

namespace {

// How long each coroutine sleeps with nothing to do before it looks again
// (a wait needs a timeout; nothing is polled, a wake or an event ends it).
constexpr mm::millis kWatchIdleMs = 60000;

std::string watch_join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += separator;
    out += s;
  }
  return out;
}

// Milliseconds from now to `deadline_ns` (monotonic), rounded up; <= 0 once past.
mm::millis watch_left(int64_t deadline_ns) {
  const int64_t left = deadline_ns - mm::now_ns();
  return left <= 0 ? 0 : (left + 999999) / 1000000;
}

}  // namespace

config_watch::config_watch(std::function<void(const std::string&)> on_change) : on_change_(std::move(on_change)) {}

config_watch::~config_watch() = default;

void config_watch::set(std::vector<std::string> files, bool enabled, int64_t read_at_ns) {
  read_at_ns_ = read_at_ns;
  // Each file once, in order (an auth file may also be the config's import).
  std::vector<std::string> unique;
  for (std::string& f : files) {
    if (!f.empty() && std::find(unique.begin(), unique.end(), f) == unique.end()) unique.push_back(std::move(f));
  }
  // Said once the watches are in place (run()), so that the line means a
  // change from then on is seen.
  if (enabled != enabled_ || (enabled && unique != files_)) announce_ = true;
  files_ = std::move(unique);
  enabled_ = enabled;
  rearm_ = true;
  wake_.signal();
}

bool config_watch::open() {
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd >= 0) inotify_ = mm::io::attach(fd);
  if (!inotify_) {
    const int e = errno;
    if (fd >= 0) ::close(fd);
    // Logged once: the next set() tries again without repeating it.
    if (!open_failed_) {
      spdlog::error("config watch: cannot watch the config files (inotify: {}); SIGHUP still reloads",
                    std::strerror(e));
    }
    open_failed_ = true;
    return false;
  }
  reader_ = mm::coroutine_create("config events", [this] { read_events(); });
  return true;
}

// Whether an event may mean that a watched file changed. An event for a
// descriptor not (or no longer) known is taken as one: its watch may have
// been added by a walk whose result has not been applied yet. The kernel's
// IN_IGNORED for a watch a walk removed is not.
bool config_watch::relevant(int wd, uint32_t mask, const char* name) const {
  if (mask & IN_Q_OVERFLOW) return true;  // events were lost: look
  auto it = watches_.find(wd);
  if (it == watches_.end()) return (mask & IN_IGNORED) == 0;
  if (mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) return true;  // the watch must move
  if (it->second.file) return true;
  return name != nullptr && it->second.names.contains(name);
}

// Reads every event there is (the descriptor is non-blocking), then waits
// for more. [pooler machine, the "config events" coroutine]
void config_watch::read_events() {
  alignas(inotify_event) char buf[4096];
  for (;;) {
    bool any = false;
    for (;;) {
      const ssize_t n = ::read(inotify_->fd(), buf, sizeof buf);
      if (n <= 0) {
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
          spdlog::error("config watch: reading inotify: {}; SIGHUP still reloads", std::strerror(errno));
          return;
        }
        if (n < 0 && errno == EINTR) continue;
        break;
      }
      for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
        if (enabled_ && relevant(e->wd, e->mask, e->len > 0 ? e->name : nullptr)) any = true;
        at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      }
    }
    if (any) {
      if (!dirty_) first_event_ns_ = mm::now_ns();
      dirty_ = true;
      last_event_ns_ = mm::now_ns();
      wake_.signal();
    }
    if (inotify_->wait_readable(kWatchIdleMs) == mm::wait_status::Cancelled) return;
  }
}

bool config_watch::arm(bool compare) {
  const std::vector<std::string> files = enabled_ ? files_ : std::vector<std::string>{};
  std::vector<int> previous;
  for (const auto& [wd, w] : watches_) previous.push_back(wd);
  // The pool thread may outlive a wait that timed out, so it owns what it
  // touches: its own descriptor of the instance, copies, the shared result.
  const int fd = ::dup(inotify_->fd());
  if (fd < 0) {
    spdlog::error("config watch: dup: {}; watching as before", std::strerror(errno));
    return true;
  }
  std::shared_ptr<int> own(new int(fd), [](int* p) {
    ::close(*p);
    delete p;
  });
  auto result = std::make_shared<watch_set>();
  const mm::wait_status w = mm::blocking_call(
      [own, files, previous, result] { *result = arm_watches(*own, files, previous); }, kWatchArmTimeout);
  if (w == mm::wait_status::Cancelled) return false;
  if (w != mm::wait_status::Ok) {
    spdlog::error("config watch: the files were not looked at within {} s (a hung file system?); watching as before",
                  kWatchArmTimeout / 1000);
    return true;
  }
  for (const std::string& p : result->problems) spdlog::warn("config watch: cannot watch {}", p);
  watches_ = std::move(result->watches);
  std::vector<std::string> changes;
  std::map<std::string, file_identity> next;
  for (const std::string& file : files) {
    const file_identity& now = result->identities[file];
    auto before = identities_.find(file);
    if (before == identities_.end() && read_at_ns_ > 0 && now.error == 0 && now.mtime_ns > read_at_ns_) {
      changes.push_back(file + " was modified after it was read");  // between the read and this watch
      next[file] = now;
      continue;
    }
    if (before == identities_.end() || !compare) {
      next[file] = before == identities_.end() ? now : before->second;
      continue;
    }
    if (!(before->second == now)) changes.push_back(file + " " + describe_change(before->second, now));
    next[file] = now;
  }
  identities_ = std::move(next);
  read_at_ns_ = 0;
  if (!changes.empty()) {
    const std::string why = watch_join(changes, "; ");
    spdlog::info("config watch: {}; reloading", why);
    on_change_(why);
  }
  return true;
}

void config_watch::run() {
  for (;;) {
    if (mm::coroutine_cancelled()) break;
    if (rearm_) {
      rearm_ = false;
      if (enabled_ && !inotify_ && !open()) continue;
      if (inotify_ && !arm(/*compare=*/false)) break;
      if (announce_ && enabled_) {
        spdlog::info("config watch: reloading when any of these changes: {}", watch_join(files_, ", "));
      } else if (announce_ && inotify_) {
        spdlog::info("config watch: off (server.reload_on_change); SIGHUP still reloads");
      }
      announce_ = false;
      continue;
    }
    if (!dirty_) {
      if (wake_.wait(kWatchIdleMs) == mm::wait_status::Cancelled) break;
      continue;
    }
    // The burst: until kWatchQuietMs pass without an event, or
    // kWatchLongestWaitMs since its first.
    bool cancelled = false;
    for (;;) {
      const mm::millis left = std::min(watch_left(last_event_ns_ + kWatchQuietMs * 1000000),
                                       watch_left(first_event_ns_ + kWatchLongestWaitMs * 1000000));
      if (left <= 0) break;
      if (wake_.wait(left) == mm::wait_status::Cancelled) {
        cancelled = true;
        break;
      }
    }
    if (cancelled) break;
    dirty_ = false;
    if (!arm(/*compare=*/true)) break;
  }
  if (reader_ != 0) mm::coroutine_finish(reader_, 5000);
  inotify_.reset();
}

}  // namespace ithaca::server
