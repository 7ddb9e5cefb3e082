#include "prober.h"

#include <cerrno>
#include <algorithm>
#include <cstdint>
#include <random>

#include <spdlog/spdlog.h>

#include "backend_connect.h"
#include "delete_spool.h"
#include "line_exchange.h"

namespace ithaca::proxy {

namespace {

constexpr std::size_t kMaxVersionLine = 1024;  // memcached's is some 20 bytes
// How long one probe round waits for the server's spooled deletes to be
// replayed before it gives up for this round (the replay goes on; the next
// round waits for it again).
constexpr mm::millis kReplayWait = 5000;

enum class probe_outcome : uint8_t {
  Answered,  // VERSION came back: the server is up
  Refused,   // nothing listens there (a server restarting): cost it nothing
  Failed,    // a timeout, a close, an unexpected answer: the server may be struggling
};

// One probe: connect (and the TLS handshake for a TLS pool), "version", a
// "VERSION ..." line back, within the pool's timeouts. A failed connect
// leaves its reason for `stats servers`.
probe_outcome probe(backend_server& s) {
  const server_settings& st = s.settings();
  if (!s.address_ok()) return probe_outcome::Failed;
  backend_link link = connect_backend(s, mm::deadline_after(static_cast<mm::millis>(st.connect_timeout_ms)));
  if (!link) {
    s.set_last_error(link.error);
    if (link.err == -ECONNREFUSED || link.err == -ENOENT) return probe_outcome::Refused;
    return probe_outcome::Failed;
  }
  std::string line;
  const bool ok = exchange_line(link, "version\r\n", mm::deadline_after(static_cast<mm::millis>(st.timeout_ms)),
                                kMaxVersionLine, line) == 1;
  link.close();
  return ok && line.starts_with("VERSION ") ? probe_outcome::Answered : probe_outcome::Failed;
}

}  // namespace

void start_prober(std::shared_ptr<backend_server> server) {
  const std::string name = "prober " + server->pool() + "/" + server->address();
  mm::coroutine_create(name, [server = std::move(server)] {
    thread_local std::minstd_rand rng{std::random_device{}()};
    const server_settings& st = server->settings();
    uint64_t interval = st.retry_interval_ms;
    while (!server->up() && !server->retired()) {
      std::uniform_real_distribution<double> jitter(0.8, 1.2);
      const auto wait = static_cast<mm::millis>(static_cast<double>(interval) * jitter(rng));
      if (mm::sleep(wait) == mm::wait_status::Cancelled) return;
      const probe_outcome got = probe(*server);
      // A probe that fails is one more failure in mcrouter's count (`stats
      // suspect_servers`), as its probes' error replies are.
      if (got != probe_outcome::Answered) server->add_failures(1);
      switch (got) {
        case probe_outcome::Answered:
          // Reliable deletes: the deletes spooled while it was away reach
          // it before any later request does (delete_spool.h, Order).
          if (delete_spool* spool = delete_spool::current();
              spool != nullptr && !spool->replay_before_up(server, mm::deadline_after(kReplayWait))) {
            interval = st.retry_interval_ms;
            break;
          }
          server->mark_up();
          return;
        case probe_outcome::Refused:
          // A refused connect is the kernel's answer: the host is there and
          // the server is not (yet) listening, typically being restarted.
          // Asking again costs it nothing, so the interval stays at
          // retry_interval: backing off here left a server restarted on the
          // same port unused for up to retry_interval_max (4.4 s seen with
          // retry_interval 500 ms, after the interval had doubled to 4 s
          // while it was away).
          interval = st.retry_interval_ms;
          break;
        case probe_outcome::Failed:
          // Silent, slow or confused: back off.
          interval = std::min(interval * 2, st.retry_interval_max_ms);
          break;
      }
    }
  });
}

}  // namespace ithaca::proxy
