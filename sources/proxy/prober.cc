#include "prober.h"

#include <random>

#include <spdlog/spdlog.h>

namespace ithaca::proxy {

namespace {

// One probe: connect, "version", a "VERSION ..." line back, within the pool's
// timeouts.
bool probe(const backend_server& s) {
  const server_settings& st = s.settings();
  if (!s.address_ok()) return false;
  int err = 0;
  auto io = mm::connect(s.sockaddr(), static_cast<mm::millis>(st.connect_timeout_ms), &err);
  if (!io) return false;
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
  return ok && line.starts_with("VERSION ");
}

}  // namespace

void start_prober(std::shared_ptr<backend_server> server) {
  const std::string name = "prober " + server->pool() + "/" + server->address();
  mm::coroutine_create(name, [server = std::move(server)] {
    thread_local std::minstd_rand rng{std::random_device{}()};
    uint64_t interval = server->settings().retry_interval_ms;
    while (!server->up() && !server->retired()) {
      std::uniform_real_distribution<double> jitter(0.8, 1.2);
      const auto wait = static_cast<mm::millis>(static_cast<double>(interval) * jitter(rng));
      if (mm::sleep(wait) == mm::wait_status::Cancelled) return;
      if (probe(*server)) {
        server->mark_up();
        return;
      }
      interval = std::min(interval * 2, server->settings().retry_interval_max_ms);
    }
  });
}

}  // namespace ithaca::proxy
