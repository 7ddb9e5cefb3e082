#include "prober.h"

#include <cerrno>
#include <cstdint>
#include <random>

#include <spdlog/spdlog.h>

namespace ithaca::proxy {

namespace {

enum class probe_outcome : uint8_t {
  Answered,  // VERSION came back: the server is up
  Refused,   // nothing listens there (a server restarting): cost it nothing
  Failed,    // a timeout, a close, an unexpected answer: the server may be struggling
};

// One probe: connect, "version", a "VERSION ..." line back, within the pool's
// timeouts.
probe_outcome probe(const backend_server& s) {
  const server_settings& st = s.settings();
  if (!s.address_ok()) return probe_outcome::Failed;
  int err = 0;
  auto io = mm::connect(s.sockaddr(), static_cast<mm::millis>(st.connect_timeout_ms), &err);
  if (!io) return err == -ECONNREFUSED || err == -ENOENT ? probe_outcome::Refused : probe_outcome::Failed;
  static constexpr std::string_view kVersion = "version\r\n";
  bool ok = io->write(kVersion.data(), kVersion.size(), static_cast<mm::millis>(st.timeout_ms)) > 0;
  std::string line;
  const int64_t deadline = mm::deadline_after(static_cast<mm::millis>(st.timeout_ms));
  char buf[256];
  while (ok && line.find('\n') == std::string::npos && line.size() < 1024) {
    ssize_t n = io->read(buf, sizeof(buf), mm::millis_until(deadline));
    if (n <= 0) {
      ok = false;
      break;
    }
    line.append(buf, static_cast<size_t>(n));
  }
  io->close();
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
      switch (probe(*server)) {
        case probe_outcome::Answered:
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
