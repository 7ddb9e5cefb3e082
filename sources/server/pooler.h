// The pooler machine: one listen coroutine per address (TCP and unix), each
// accepting and feeding sockets round-robin to the workers over their
// channels; the signal coroutine (SIGTERM/SIGINT shutdown; SIGHUP starts
// the reload coroutine); the config watch (config_watch.h: a changed config
// file starts the same reload); the cron coroutine; and the takeover
// coroutine (takeover_server.h: a new process asks for this one's place;
// SIGUSR2 starts one, takeover_spawn.h).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "config_watch.h"
#include "conn_registry.h"
#include "cron.h"
#include "fd_reserve.h"
#include "live_settings.h"
#include "stats_files.h"
#include "machinarium.h"
#include "reload.h"
#include "takeover_server.h"
#include "worker.h"

namespace ithaca::server {

// One address to listen on.
struct listen_entry {
  std::string address;       // "127.0.0.1:11211", "unix:/path", "fd:N" (inherited, listening)
  std::size_t root = 0;      // the route tree's root its clients use (route_tree.h; 0: `listen:`'s)
  int backlog = 0;           // 0: pooler_settings::backlog
  uint64_t max_clients = 0;  // open clients at most (a nutcracker pool's client_connections); 0: none
  bool tls = false;          // clients handshake TLS first (-Z; not a notls: one, never unix)
  config::peer_check tls_peer = config::peer_check::Default;                // btls: / mtls:
  kinds::binding_protocol protocol = kinds::binding_protocol::Negotiating;  // -l proto[...]:
  // Its address says port 0 and it is the second half of "*" ([::] after
  // 0.0.0.0): it binds the port the listener before it got.
  bool port_of_previous = false;
};

struct pooler_settings {
  std::vector<listen_entry> listen;
  int backlog = 1024;
  unsigned unix_mode = 0700;  // permission bits of each unix socket (listen.unix_mode, -a)
  cron_settings cron;
  // SIGHUP: what to re-read and where to apply it. max_connections and the
  // cron's period are read from reload.live, which the reload publishes.
  reload_target reload;
  // Watched with the config's own files when it says reload_on_change: the
  // files the reload re-reads besides the config (-Y's, the SASL database,
  // the TLS certificates), fixed at start.
  std::vector<std::string> watch_also;
  // Called on the pooler thread with the port the first TCP listener bound
  // (the real one when the config says port 0), for `stats settings`.
  std::function<void(uint16_t)> on_tcp_port;
  // Called on the pooler thread once every listener is bound (not if one
  // failed): the server is ready (the pid file, the user switch, systemd's
  // READY=1, -d's parent; process_setup.h). False: the start fails.
  std::function<bool()> on_ready;
  // Takeover (takeover_server.h): the socket a new process asks on ("":
  // none), the old process's one when this process took over, and what the
  // "takeover" coroutine needs (the pooler fills in descriptors, stop_serving
  // and finish). `adopted`: per listen entry, the listener a takeover handed
  // this process (-1: bind it). `udp`: the workers' UDP sockets, to hand on.
  std::string takeover_path;
  int takeover_listener_fd = -1;
  std::vector<int> adopted;
  std::vector<udp_socket> udp;
  takeover_host takeover;
  std::function<void()> on_handed_over;  // before the shutdown that follows a handover
  std::function<void()> on_resumed;      // a takeover failed after stop_serving; this process serves on
  // mcrouter's --stats-root files (stats_files.h; off unless set), from
  // these stats.
  stats_files_settings stats_files;
  stats::stats_provider* stats = nullptr;
};

class pooler {
 public:
  pooler(pooler_settings settings, std::vector<worker*> workers, conn_registry& conns, store::store& st,
         const server_clock& clock, gc_counters& gc);
  bool start(const mm::machine_config& base);
  void join();
  void request_shutdown();  // any thread
  bool failed() const { return failed_.load(); }
  // Whether SIGUSR1 stopped it (memcached's graceful stop): the caller then saves the
  // memory file (-e) once every machine has stopped. [any thread, after join()]
  bool stopped_by_usr1() const { return stopped_by_usr1_.load(); }

 private:
  void main();
  void accept_loop(mm::io& listener, std::size_t index);
  void signal_loop();
  // Starts the "reload" coroutine, or asks the running one for one more
  // round; `trigger` names the cause in its log lines. [pooler machine;
  // does not suspend]
  void request_reload(std::string trigger);
  void reload_loop();
  void upgrade();  // SIGUSR2
  void feed(int fd, std::string peer, std::size_t index);
  void shutdown();
  // Closes the listeners at a stop, the accept armed on each ended first.
  void close_listeners();
  // The listener of entry `index`: adopted from a takeover or bound. Null
  // (logged) on failure. [pooler machine, start-up]
  std::unique_ptr<mm::io> open_listener(const listen_entry& entry, size_t index, uint16_t previous_port,
                                        std::string* local);
  void start_takeover(std::vector<mm::coroutine_id>& children);
  std::vector<handed_fd> handed_descriptors() const;
  bool stop_serving();
  void resume_serving();
  void start_accepting();

  pooler_settings settings_;
  std::vector<worker*> workers_;
  conn_registry& conns_;
  store::store& store_;
  const server_clock& clock_;
  gc_counters& gc_;
  mm::machine* machine_ = nullptr;
  size_t next_worker_ = 0;
  // [pooler machine] per listen entry: its client count when it has a limit
  // of its own (conn_registry.h), else null.
  std::vector<std::atomic<uint64_t>*> clients_;
  live_reader live_;        // [pooler machine] max_connections at each accept
  fd_reserve fd_reserve_;   // [pooler machine] the spare descriptor for a full table
  mm::cond cron_reloaded_;  // [pooler machine] the cron's period may have changed
  std::atomic<bool> failed_{false};
  std::atomic<bool> stopped_by_usr1_{false};
  bool shutting_down_ = false;
  // [pooler machine] the "reload" coroutine (SIGHUP or a config change), a
  // request that came while it ran, and the latest request's trigger
  bool reloading_ = false;
  bool reload_again_ = false;
  mm::coroutine_id reload_ = 0;
  std::string reload_trigger_;
  // [pooler machine] the config watch, while main() runs (with --config)
  std::unique_ptr<config_watch> watch_;
  // [pooler machine] the listeners (main() owns them until it returns), the
  // accept coroutines, the takeover socket
  std::vector<std::unique_ptr<mm::io>> listeners_;
  std::vector<mm::coroutine_id> accepting_;
  std::unique_ptr<mm::io> takeover_listener_;
};

}  // namespace ithaca::server
