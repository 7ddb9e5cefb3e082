#include "pooler.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <spdlog/spdlog.h>

#include "auth_store.h"
#include "memory_trim.h"
#include "runtime_vars_file.h"
#include "takeover_spawn.h"
#include "unix_listener.h"

namespace ithaca::server {

namespace {
// memcached's words for a connection over the limit.
constexpr std::string_view kTooManyConnections = "ERROR Too many open connections\r\n";

std::string peer_text(const sockaddr_storage& ss, bool is_unix) {
  if (is_unix) return "unix:";
  mm::address a;
  a.storage = ss;
  a.length = sizeof(ss);
  return "tcp:" + a.to_string();
}
}  // namespace

pooler::pooler(pooler_settings settings, std::vector<worker*> workers, conn_registry& conns, store::store& st,
               const server_clock& clock, gc_counters& gc)
    : settings_(std::move(settings)),
      workers_(std::move(workers)),
      conns_(conns),
      store_(st),
      clock_(clock),
      gc_(gc),
      live_(*settings_.reload.live) {}

bool pooler::start(const mm::machine_config& base) {
  mm::machine_config cfg = base;
  cfg.name = "pooler";
  machine_ = mm::machine_create(cfg, [this] { main(); });
  return machine_ != nullptr;
}

void pooler::join() {
  if (machine_) mm::machine_join(machine_);
  machine_ = nullptr;
}

void pooler::request_shutdown() {
  if (machine_) mm::machine_spawn(machine_, "shutdown", [this] { shutdown(); });
}

// The pooler machine's main coroutine: binds every listener (a failure stops
// the server: one line, shutdown()), reports the first tcp port and
// readiness (sd_notify), then runs one accept coroutine per listener, the
// signals coroutine and the cron, and sleeps until the shutdown cancels it;
// its children are then finished (5 s each at most) before the listeners
// they use are closed. [the pooler thread; no lock]
void pooler::main() {
  std::vector<std::unique_ptr<mm::io>>& listeners = listeners_;
  bool reported_port = false;
  uint16_t previous_port = 0;  // the port the last tcp listener bound
  // A tcp listener's bound port: the next "port 0" entry takes it, and the
  // first is reported (on_tcp_port).
  auto note_port = [&](const mm::address& bound) {
    previous_port =
        ntohs(bound.storage.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6&>(bound.storage).sin6_port
                                                  : reinterpret_cast<const sockaddr_in&>(bound.storage).sin_port);
    if (!reported_port && settings_.on_tcp_port) settings_.on_tcp_port(previous_port);
    reported_port = true;
  };
  for (size_t index = 0; index < settings_.listen.size(); index++) {
    const listen_entry& entry = settings_.listen[index];
    const std::string& text = entry.address;
    mm::address addr;
    std::string error;
    if (index < settings_.adopted.size() && settings_.adopted[index] >= 0) {
      // A takeover handed this listener over (takeover_client.h): bound and
      // listening already, with connections perhaps queued on it.
      auto l = mm::adopt_listener(settings_.adopted[index], &error);
      if (!l) {
        spdlog::error("listen {} (taken over): {}", text, error);
        failed_ = true;
        break;
      }
      const bool is_unix = text.starts_with("unix:");
      const mm::address bound = mm::local_address(l->fd());
      spdlog::warn("listening on {} {} (taken over)", is_unix ? "unix" : "tcp", is_unix ? text : bound.to_string());
      if (!is_unix && !text.starts_with("fd:")) {
        note_port(bound);
      }
      listeners.push_back(std::move(l));
      clients_.push_back(entry.max_clients > 0 ? conns_.new_listener_counter() : nullptr);
      continue;
    }
    if (text.starts_with("fd:")) {
      // An inherited listening socket (mcrouter's --listen-sock-fd): adopted
      // as it is, already bound and listening.
      auto l = mm::adopt_listener(std::atoi(text.c_str() + 3), &error);
      if (!l) {
        spdlog::error("listen {}: {}", text, error);
        failed_ = true;
        break;
      }
      const mm::address bound = mm::local_address(l->fd());
      spdlog::warn("listening on tcp {} (inherited {})", bound.to_string(), text);
      listeners.push_back(std::move(l));
      clients_.push_back(entry.max_clients > 0 ? conns_.new_listener_counter() : nullptr);
      continue;
    }
    if (!mm::address::parse(text, addr, &error)) {
      spdlog::error("listen {}: {}", text, error);
      failed_ = true;
      break;
    }
    if (entry.port_of_previous && addr.storage.ss_family == AF_INET6) {
      reinterpret_cast<sockaddr_in6&>(addr.storage).sin6_port = htons(previous_port);
    }
    const bool is_unix = addr.storage.ss_family == AF_UNIX;
    const int backlog = entry.backlog > 0 ? entry.backlog : settings_.backlog;
    auto l = is_unix ? listen_unix(text.substr(5), backlog, settings_.unix_mode, &error)
                     : mm::listen(addr, backlog, false, &error);
    if (!l) {
      spdlog::error("listen {}: {}", text, error);
      failed_ = true;
      break;
    }
    const mm::address bound = is_unix ? addr : mm::local_address(l->fd());
    std::string local = is_unix ? text : bound.to_string();
    // The functional tests read this line to learn the port bound for port 0,
    // so it must pass the default threshold (warn, like memcached without -v).
    // A listener with a tree of its own says which (route_tree.h).
    const char* tls = !entry.tls                                       ? ""
                      : entry.tls_peer == config::peer_check::None     ? " (TLS, no client certificate)"
                      : entry.tls_peer == config::peer_check::Required ? " (TLS, client certificate required)"
                                                                       : " (TLS)";
    const char* only = entry.protocol == kinds::binding_protocol::Ascii    ? " (ascii only)"
                       : entry.protocol == kinds::binding_protocol::Binary ? " (binary only)"
                                                                           : "";
    if (entry.root == 0) {
      spdlog::warn("listening on {} {}{}{}", is_unix ? "unix" : "tcp", local, tls, only);
    } else {
      spdlog::warn("listening on {} {}{}{} (its own route: listeners[{}])", is_unix ? "unix" : "tcp", local, tls, only,
                   entry.root - 1);
    }
    if (!is_unix) {
      note_port(bound);
    }
    listeners.push_back(std::move(l));
    clients_.push_back(entry.max_clients > 0 ? conns_.new_listener_counter() : nullptr);
  }
  if (failed_) {
    shutdown();
    return;
  }
  std::vector<mm::coroutine_id> children;
  start_takeover(children);
  if (settings_.on_ready && !settings_.on_ready()) {
    failed_ = true;
    shutdown();
    for (auto id : children) mm::coroutine_finish(id, 5000);
    return;
  }
  start_accepting();
  children.push_back(mm::coroutine_create("signals", [this] { signal_loop(); }));
  // A config file, or a runtime vars file (--runtime-vars-file) beside a
  // config given inline (--config-str): each is watched.
  if (!settings_.reload.cli->config_path.empty() || !settings_.reload.cli->runtime_vars_file.empty()) {
    // Started off or on as the config says; a reload may flip it.
    watch_ = std::make_unique<config_watch>([this](const std::string&) { request_reload("config change"); });
    std::vector<std::string> files = settings_.reload.started->sources;
    files.insert(files.end(), settings_.watch_also.begin(), settings_.watch_also.end());
    watch_->set(std::move(files), settings_.reload.started->server.reload_on_change,
                settings_.reload.started->read_at_ns);
    children.push_back(mm::coroutine_create("config watch", [this] { watch_->run(); }));
  }
  children.push_back(mm::coroutine_create("memory trim", [this] { memory_trim_main(conns_); }));
  if (!settings_.stats_files.root.empty() && settings_.stats != nullptr) {
    children.push_back(mm::coroutine_create(
        "stats files", [this] { stats_files_main(settings_.stats_files, *settings_.stats, *settings_.reload.live); }));
  }
  children.push_back(mm::coroutine_create(
      "cron", [this] { cron_main(store_, clock_, gc_, *settings_.reload.live, cron_reloaded_, settings_.cron); }));
  // Wait for the shutdown (which cancels everything on this machine), then
  // let the children end before the listeners they use go away.
  mm::sleep(mm::kForever);
  // The accept coroutines apart: a takeover that failed late starts them anew.
  for (auto id : accepting_) mm::coroutine_finish(id, 5000);
  for (auto id : children) mm::coroutine_finish(id, 5000);
  if (reloading_) mm::coroutine_finish(reload_, 5000);
  watch_.reset();  // its inotify descriptor is this machine's to close
  takeover_listener_.reset();
  listeners_.clear();
}

// The takeover socket (takeover_server.h): the one a takeover handed over,
// else bound now; a failure is a warning (this process cannot be taken over,
// it serves all the same). Before on_ready, so a user switch (-u) comes after
// the bind. [pooler machine, start-up]
void pooler::start_takeover(std::vector<mm::coroutine_id>& children) {
  const std::string& path = settings_.takeover_path;
  if (path.empty()) return;
  std::string error;
  takeover_listener_ = settings_.takeover_listener_fd >= 0 ? mm::adopt_listener(settings_.takeover_listener_fd, &error)
                                                           : listen_unix(path, 16, 0600, &error);
  if (!takeover_listener_) {
    spdlog::warn("takeover socket {}: {}; `ithaca --takeover` cannot take this process's place", path, error);
    return;
  }
  spdlog::info("takeover: a new process may take this one's place through {}", path);
  settings_.takeover.descriptors = [this] { return handed_descriptors(); };
  settings_.takeover.stop_serving = [this] { return stop_serving(); };
  settings_.takeover.resume_serving = [this] { resume_serving(); };
  settings_.takeover.finish = [this] {
    // Handed over: our descriptors of the listeners go (the new process
    // holds its own; nothing of ours is armed on them since stop_serving).
    for (const auto& l : listeners_) l->close();
    if (takeover_listener_) takeover_listener_->close();
    if (settings_.on_handed_over) settings_.on_handed_over();
    shutdown();
  };
  children.push_back(mm::coroutine_create(
      "takeover", [this, path] { takeover_serve(*takeover_listener_, path, settings_.takeover); }));
}

// Every listener and UDP socket, to send to a new process (each stays this
// process's until it exits; the new one gets its own descriptors).
std::vector<handed_fd> pooler::handed_descriptors() const {
  std::vector<handed_fd> out;
  for (size_t i = 0; i < listeners_.size(); i++)
    out.push_back(handed_fd{"listener", settings_.listen[i].address, i, listeners_[i]->fd()});
  for (const udp_socket& u : settings_.udp) out.push_back(handed_fd{"udp", u.local, 0, u.fd});
  return out;
}

// One accept coroutine per listener. [pooler machine]
void pooler::start_accepting() {
  accepting_.clear();
  for (size_t i = 0; i < listeners_.size(); i++) {
    mm::io* l = listeners_[i].get();
    accepting_.push_back(
        mm::coroutine_create("listen " + settings_.listen[i].address, [this, l, i] { accept_loop(*l, i); }));
  }
}

// A takeover's step 3: no more accepts, every worker paused (worker::pause):
// each session finishes its batch and closes its connection, the parked ones
// are closed, the UDP coroutines end. The listeners stay open, ours as well
// as the new process's: the kernel queues connections on them, and if the
// new process fails before DONE, resume_serving() accepts them here. Waits
// for the workers through a channel, within the takeover's timeout, so the
// pooler's other coroutines (signals, cron) go on. [the takeover coroutine]
bool pooler::stop_serving() {
  for (mm::coroutine_id id : accepting_) mm::coroutine_cancel(id);
  for (mm::coroutine_id id : accepting_) mm::coroutine_finish(id, 1000);
  // A cancelled accept asks the kernel to stop accepting for us (io_uring's
  // multishot accept outlives its coroutine); once it has, every new
  // connection waits in the listen queue for whichever process accepts
  // next. Those it took before are ours: they go to the workers as the
  // connections already open do (closed after their batch by the pause).
  for (size_t i = 0; i < listeners_.size(); i++) {
    std::vector<int> late;
    const int rc = listeners_[i]->stop_accepting(1000, &late);
    if (rc < 0) spdlog::error("takeover: stop accepting on {}: {}", settings_.listen[i].address, std::strerror(-rc));
    const bool is_unix = settings_.listen[i].address.starts_with("unix:");
    for (int fd : late) {
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) len = 0;
      feed(fd, peer_text(peer, is_unix), i);
    }
  }
  if (takeover_listener_) {
    // Another process asking meanwhile is turned away (closed unanswered);
    // it says so and exits.
    std::vector<int> late;
    (void)takeover_listener_->stop_accepting(1000, &late);
    for (int fd : late) ::close(fd);
  }
  auto done = std::make_shared<mm::channel<int>>(workers_.size() + 1);
  for (worker* w : workers_) w->pause(done);
  const int64_t deadline = mm::deadline_after(static_cast<mm::millis>(settings_.takeover.timeout_ms));
  for (size_t paused = 0; paused < workers_.size(); paused++) {
    int index = 0;
    if (done->read(index, mm::millis_until(deadline)) != mm::wait_status::Ok) return false;
  }
  return true;
}

// A takeover failed after stop_serving (the new process died or timed out
// before DONE): the workers serve again, the accept coroutines take what
// the kernel queued meanwhile, and systemd is told this process is still
// the main one. [the takeover coroutine]
void pooler::resume_serving() {
  for (worker* w : workers_) w->resume();
  start_accepting();
  if (settings_.on_resumed) settings_.on_resumed();
}

void pooler::accept_loop(mm::io& listener, std::size_t index) {
  const std::string& local = settings_.listen[index].address;
  bool is_unix = local.starts_with("unix:");
  for (;;) {
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof(peer);
    int fd = listener.accept(mm::kForever, &peer, &peer_len);
    if (fd == -ECANCELED) return;
    if (fd == -EMFILE || fd == -ENFILE) {
      // Out of descriptors: refuse what waits with the spare (fd_reserve.h),
      // then back off a little so a table that stays full does not spin us.
      const auto refused = fd_reserve_.refuse_pending(listener.fd(), local, -fd, mm::now_ns() / 1000000);
      conns_.rejected.fetch_add(refused);
      if (mm::sleep(refused ? 1 : 10) == mm::wait_status::Cancelled) return;
      continue;
    }
    if (fd < 0) {
      spdlog::warn("accept on {}: {}", local, std::strerror(-fd));
      if (mm::sleep(10) == mm::wait_status::Cancelled) return;  // do not spin on a persistent error
      continue;
    }
    if (!fd_reserve_.keep_spare_before(fd)) {
      conns_.rejected.fetch_add(1);
      continue;
    }
    // A replication slave that does not serve reads (yrmcds closes them too);
    // the role may change at run time, so the snapshot says.
    live_.refresh();
    if (live_->close_clients) {
      ::close(fd);
      continue;
    }
    feed(fd, peer_text(peer, is_unix), index);
  }
}

// Hands the socket to the next worker; refuses it (memcached's words) when
// the server is at max_connections, its listener at its own client limit
// (a nutcracker pool's client_connections), or every worker's queue is full.
void pooler::feed(int fd, std::string peer, std::size_t index) {
  const listen_entry& entry = settings_.listen[index];
  std::atomic<uint64_t>* clients = clients_[index];
  live_.refresh();
  uint64_t in_use = conns_.current() + conns_.reserved.load();
  // A lowered limit refuses new sockets only; those already open stay.
  if (in_use >= live_->max_connections || (clients && clients->load() >= entry.max_clients)) {
    conns_.rejected.fetch_add(1);
    ssize_t r = ::send(fd, kTooManyConnections.data(), kTooManyConnections.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)r;
    ::close(fd);
    return;
  }
  conns_.reserved.fetch_add(1);
  if (clients) clients->fetch_add(1);
  for (size_t tries = 0; tries < workers_.size(); tries++) {
    worker* w = workers_[next_worker_];
    next_worker_ = (next_worker_ + 1) % workers_.size();
    if (w->inbox().try_write(
            accepted_socket{fd, peer, entry.address, entry.root, clients, entry.tls, entry.tls_peer, entry.protocol}))
      return;
  }
  conns_.reserved.fetch_sub(1);
  if (clients) clients->fetch_sub(1);
  conns_.rejected.fetch_add(1);
  spdlog::warn("every worker's queue is full; refusing {}", peer);
  ::close(fd);
}

void pooler::signal_loop() {
  for (;;) {
    int sig = mm::signal_wait(mm::kForever);
    if (sig == -ECANCELED) return;
    if (sig < 0) {
      spdlog::error("signal_wait: {}", std::strerror(-sig));
      return;
    }
    if (sig == SIGHUP) {
      request_reload("SIGHUP");
      continue;
    }
    if (sig == SIGUSR1) {
      // memcached's graceful stop: the same drain as SIGTERM, and then (instance.cc) the
      // memory file, if any, is written clean for the next start.
      stopped_by_usr1_.store(true);
      spdlog::info("SIGUSR1: stopping gracefully");
      shutdown();
      return;
    }
    if (sig == SIGUSR2) {
      upgrade();
      continue;
    }
    spdlog::info("{}: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    shutdown();
    return;
  }
}

// SIGUSR2: a new process from the same binary path takes this one's place
// (takeover_spawn.h); a coroutine reaps it if it exits first, and logs how.
void pooler::upgrade() {
  if (takeover_listener_ == nullptr) {
    spdlog::warn("SIGUSR2: no takeover socket (takeover.socket); not upgrading");
    return;
  }
  const pid_t pid = takeover_spawn();
  if (pid <= 0) return;
  mm::coroutine_create("takeover child", [pid] {
    for (;;) {
      int status = 0;
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
          spdlog::info("SIGUSR2: the new process (pid {}) exited with status 0", pid);
        } else if (WIFEXITED(status)) {
          spdlog::error("SIGUSR2: the new process (pid {}) exited with status {}; still serving", pid,
                        WEXITSTATUS(status));
        } else {
          spdlog::error("SIGUSR2: the new process (pid {}) was killed by signal {}; still serving", pid,
                        WTERMSIG(status));
        }
        return;
      }
      if (r < 0 || mm::sleep(100) == mm::wait_status::Cancelled) return;
    }
  });
}

// The reload runs in a coroutine of its own (it waits for the files on the
// blocking pool), so the signal loop keeps taking signals (a SIGTERM during
// a slow read is acted on at once) and the watch keeps reading events.
// Requests that come during a reload make one more reload after it.
void pooler::request_reload(std::string trigger) {
  reload_trigger_ = std::move(trigger);
  if (reloading_) {
    reload_again_ = true;
    return;
  }
  reloading_ = true;
  reload_ = mm::coroutine_create("reload", [this] { reload_loop(); });
}

// One reload for SIGHUP and a config change alike: the config, the
// certificates, the password files; then the watch follows the files the
// applied config was read from.
void pooler::reload_loop() {
  do {
    reload_again_ = false;
    const std::string trigger = reload_trigger_;
    reload_outcome applied;
    if (reload_config(settings_.reload, trigger, &applied)) {
      cron_reloaded_.signal();
      if (watch_) {
        applied.sources.insert(applied.sources.end(), settings_.watch_also.begin(), settings_.watch_also.end());
        watch_->set(std::move(applied.sources), applied.reload_on_change, applied.read_at_ns);
      }
    }
    reload_certificates(settings_.reload, trigger);
    if (!settings_.reload.cli->runtime_vars_file.empty()) runtime_vars_reload(settings_.reload.cli->runtime_vars_file, trigger);
    if (settings_.reload.auth) settings_.reload.auth->reload(kReloadReadTimeout, trigger);
  } while (reload_again_ && !mm::coroutine_cancelled());
  reloading_ = false;
}

// Stops accepting, stops every worker (their client coroutines are cancelled:
// each finishes its current batch and closes its socket) and then this machine.
// io_uring's multishot accept holds a reference to its listener until it
// completes; closing our descriptor alone leaves the socket listening until
// the kernel tears the ring down, which it does after the process exits, in
// its own time (5 of 10 stops left the port in LISTEN for a moment): a
// restart right after could not bind the port ("Address already in use",
// seen in test_config_dump_root). So each accept is cancelled and its last
// completion waited for (stop_accepting, half a second at most), then the
// listener is closed: the port is free before the process exits.
// Connections the kernel accepted meanwhile are closed: the server stops.
// [pooler machine, a coroutine: shutdown]
void pooler::close_listeners() {
  for (mm::coroutine_id id : accepting_) mm::coroutine_cancel(id);
  for (mm::coroutine_id id : accepting_) mm::coroutine_finish(id, 1000);
  auto release = [](mm::io& l) {
    if (l.fd() < 0) return;  // closed already (a takeover handed it over)
    std::vector<int> late;
    // Busy: a coroutine other than the accept loops waits on it (the
    // takeover's): it is closed at the end of run(), once that one ended.
    if (l.stop_accepting(500, &late) == -EBUSY) return;
    for (int fd : late) ::close(fd);
    l.close();
  };
  for (const auto& l : listeners_) release(*l);
  if (takeover_listener_) release(*takeover_listener_);
}

void pooler::shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  close_listeners();
  for (worker* w : workers_) w->stop();
  mm::machine_stop(mm::machine_self());
}

}  // namespace ithaca::server
