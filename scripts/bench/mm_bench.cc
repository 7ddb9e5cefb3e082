// machinarium micro-benchmarks (not tests; they print figures and never fail
// on a timing). usage:
//   mm_bench switch [--backend B]           context switch cost
//   mm_bench channel [--backend B]          messages/s between two machines
//   mm_bench idle [--backend B] [--count N] resident bytes per idle coroutine
//   mm_bench echo-server PORT [--backend B] [--multishot-recv on|off]
//                                           TCP echo server on one machine
//   mm_bench echo-client PORT [--conns N] [--seconds S] [--size B]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "machinarium.h"

namespace {

mm::backend_kind backend = mm::backend_kind::Auto;
bool multishot_recv = true;  // io_uring: off measures recv + POLL_ADD (older kernels)

int64_t mono_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

mm::machine_config cfg(const char* name) {
  mm::machine_config c;
  c.name = name;
  c.backend = backend;
  c.uring_multishot_recv = multishot_recv;
  return c;
}

void run_machine(std::function<void()> fn) {
  mm::machine* m = mm::machine_create(cfg("bench"), [fn] {
    fn();
    mm::machine_stop(mm::machine_self());
  });
  if (!m) std::exit(1);
  mm::machine_join(m);
}

long rss_bytes() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

void bench_switch() {
  constexpr int kRounds = 5'000'000;
  run_machine([] {
    auto other = mm::coroutine_create("other", [] {
      for (int i = 0; i < kRounds; i++) mm::yield();
    });
    auto before = mm::machine_counters_get(mm::machine_self()).context_switches;
    int64_t t0 = mono_ns();
    for (int i = 0; i < kRounds; i++) mm::yield();
    int64_t t1 = mono_ns();
    auto after = mm::machine_counters_get(mm::machine_self()).context_switches;
    mm::coroutine_join(other, mm::kForever);
    double switches = static_cast<double>(after - before);
    // Each resume is two fiber switches (scheduler -> coroutine -> scheduler).
    std::printf("context switch: %.1f ns per switch (%.1f ns per coroutine resume round trip, %.0f resumes)\n",
                static_cast<double>(t1 - t0) / (2 * switches), static_cast<double>(t1 - t0) / switches, switches);
  });
}

void bench_channel() {
  constexpr int kCount = 2'000'000;
  mm::channel<int> ch(1024);
  std::atomic<int64_t> t0{0}, t1{0};
  mm::machine* reader = mm::machine_create(cfg("reader"), [&] {
    int v = 0;
    for (int i = 0; i < kCount; i++) ch.read(v, mm::kForever);
    t1 = mono_ns();
  });
  mm::machine* writer = mm::machine_create(cfg("writer"), [&] {
    t0 = mono_ns();
    for (int i = 0; i < kCount; i++) ch.write(i, mm::kForever);
  });
  for (mm::machine* m : {writer, reader}) {
    while (mm::machine_counters_get(m).coroutines_alive > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    mm::machine_stop(m);
  }
  auto rc = mm::machine_counters_get(reader);
  mm::machine_join(writer);
  mm::machine_join(reader);
  double secs = static_cast<double>(t1 - t0) / 1e9;
  std::printf("channel: %.2f M messages/s between two machines (%d messages, reader woken %lu times)\n",
              kCount / secs / 1e6, kCount, static_cast<unsigned long>(rc.messages_received));
}

void bench_idle(int count) {
  run_machine([count] {
    // Warm: one coroutine's stack and the allocator's first arenas.
    mm::cond never;
    auto warm = mm::coroutine_create("warm", [&] { never.wait(mm::kForever); });
    mm::yield();
    long before = rss_bytes();
    std::vector<mm::coroutine_id> ids;
    for (int i = 0; i < count; i++) ids.push_back(mm::coroutine_create("idle", [&] { never.wait(mm::kForever); }));
    mm::yield();
    long after = rss_bytes();
    std::printf("idle coroutines: %d waiting, %.0f bytes resident each\n", count,
                static_cast<double>(after - before) / count);
    for (auto id : ids) mm::coroutine_cancel(id);
    mm::coroutine_cancel(warm);
    for (auto id : ids) mm::coroutine_join(id, mm::kForever);
    mm::coroutine_join(warm, mm::kForever);
  });
}

void echo_server(int port) {
  mm::machine* m = mm::machine_create(cfg("echo"), [port] {
    mm::address addr;
    std::string err;
    mm::address::parse("127.0.0.1:" + std::to_string(port), addr, &err);
    auto l = mm::listen(addr, 1024, false, &err);
    if (!l) {
      std::fprintf(stderr, "listen: %s\n", err.c_str());
      std::exit(1);
    }
    std::fprintf(stderr, "echo server on %s (%s)\n", mm::machine_backend_name(mm::machine_self()),
                 mm::machine_backend_reason(mm::machine_self()).c_str());
    for (;;) {
      int fd = l->accept(mm::kForever);
      if (fd < 0) return;
      mm::coroutine_create("conn", [fd] {
        auto c = mm::io::attach(fd);
        mm::set_nodelay(fd, true);
        char buf[16384];
        for (;;) {
          ssize_t n = c->read(buf, sizeof(buf), mm::kForever);
          if (n <= 0 || c->write(buf, static_cast<size_t>(n), mm::kForever) != n) return;
        }
      });
    }
  });
  mm::machine_join(m);
}

// Plain epoll client: every connection keeps one message in flight.
void echo_client(int port, int conns, double seconds, size_t size) {
  int ep = epoll_create1(0);
  std::vector<int> fds;
  std::vector<size_t> got(static_cast<size_t>(conns), 0);
  std::string msg(size, 'x');
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < conns; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) < 0) {
      perror("connect");
      std::exit(1);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(i);
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    fds.push_back(fd);
    if (write(fd, msg.data(), size) != static_cast<ssize_t>(size)) std::exit(1);
  }
  uint64_t messages = 0;
  char buf[65536];
  epoll_event events[256];
  int64_t end = mono_ns() + static_cast<int64_t>(seconds * 1e9);
  int64_t start = mono_ns();
  while (mono_ns() < end) {
    int n = epoll_wait(ep, events, 256, 100);
    for (int i = 0; i < n; i++) {
      uint32_t c = events[i].data.u32;
      ssize_t r = read(fds[c], buf, sizeof(buf));
      if (r <= 0) std::exit(1);
      got[c] += static_cast<size_t>(r);
      while (got[c] >= size) {
        got[c] -= size;
        messages++;
        if (write(fds[c], msg.data(), size) != static_cast<ssize_t>(size)) std::exit(1);
      }
    }
  }
  double secs = static_cast<double>(mono_ns() - start) / 1e9;
  std::printf("%.0f\n", messages / secs);
  for (int fd : fds) close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mm_bench switch|channel|idle|echo-server PORT|echo-client PORT [options]\n");
    return 2;
  }
  std::string cmd = argv[1];
  int port = 0, conns = 50, count = 10000;
  double seconds = 3;
  size_t size = 64;
  int first_opt = 2;
  if (cmd == "echo-server" || cmd == "echo-client") {
    if (argc < 3) return 2;
    port = std::atoi(argv[2]);
    first_opt = 3;
  }
  for (int i = first_opt; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--backend")
      backend = v == "epoll"      ? mm::backend_kind::Epoll
                : v == "io_uring" ? mm::backend_kind::IoUring
                                  : mm::backend_kind::Auto;
    else if (k == "--conns")
      conns = std::atoi(v.c_str());
    else if (k == "--seconds")
      seconds = std::atof(v.c_str());
    else if (k == "--size")
      size = static_cast<size_t>(std::atol(v.c_str()));
    else if (k == "--count")
      count = std::atoi(v.c_str());
    else if (k == "--multishot-recv")
      multishot_recv = v != "off";
  }
  mm::set_log_handler([](mm::log_level l, std::string_view m) {
    if (l >= mm::log_level::Warn) std::fprintf(stderr, "%.*s\n", static_cast<int>(m.size()), m.data());
  });
  if (cmd == "switch")
    bench_switch();
  else if (cmd == "channel")
    bench_channel();
  else if (cmd == "idle")
    bench_idle(count);
  else if (cmd == "echo-server")
    echo_server(port);
  else if (cmd == "echo-client")
    echo_client(port, conns, seconds, size);
  else
    return 2;
  return 0;
}
