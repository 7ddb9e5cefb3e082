// park_set: sockets waiting for input without a coroutine each, on both
// backends (meson runs this file once per backend).
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "harness.h"

using namespace mm_test;

namespace {

// Loopback TCP connections: the peers' ends (plain blocking fds, written from
// the test) and the server ends attached to the machine.
struct park_fixture {
  std::unique_ptr<mm::io> listener;
  std::vector<int> peers;
  std::vector<std::unique_ptr<mm::io>> servers;
  std::vector<mm::park_set::entry> entries;

  explicit park_fixture(size_t n) : entries(n) {
    std::string err;
    mm::address any;
    REQUIRE(mm::address::parse("127.0.0.1:0", any, &err));
    listener = mm::listen(any, 1024, false, &err);
    REQUIRE_MESSAGE(listener, err);
    mm::address bound = mm::local_address(listener->fd());
    for (size_t i = 0; i < n; i++) {
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      REQUIRE(fd >= 0);
      REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&bound.storage), bound.length) == 0);
      peers.push_back(fd);
      auto s = mm::io::attach(listener->accept(5000));
      REQUIRE(s);
      entries[i].conn = s.get();
      servers.push_back(std::move(s));
    }
  }
  ~park_fixture() {
    for (int fd : peers) ::close(fd);
  }
  // Reads until -EAGAIN (what park() asks for), then parks.
  void park(mm::park_set& set, size_t i, mm::millis timeout) {
    char buf[64];
    ssize_t r;
    while ((r = servers[i]->try_read(buf, sizeof buf)) > 0) {}
    REQUIRE(r == -EAGAIN);
    set.park(entries[i], timeout);
  }
  size_t index_of(const mm::park_set::entry* e) const { return static_cast<size_t>(e - entries.data()); }
};

// Takes the next queued entry, waiting up to `timeout`.
mm::park_set::entry* take_within(mm::park_set& set, mm::millis timeout) {
  const int64_t deadline = mm::deadline_after(timeout);
  for (;;) {
    if (mm::park_set::entry* e = set.take()) return e;
    if (set.wait(mm::millis_until(deadline)) != mm::wait_status::Ok) return set.take();
  }
}

}  // namespace

TEST_CASE("park_set: input queues parked sockets in the order it arrives, each once") {
  run([] {
    mm::park_set set;
    park_fixture f(3);
    for (size_t i = 0; i < 3; i++) f.park(set, i, mm::kForever);
    CHECK(set.parked() == 3);
    CHECK(set.take() == nullptr);
    CHECK(set.wait(50) == mm::wait_status::TimedOut);
    // Input on 2, then on 0; 1 stays quiet.
    REQUIRE(::write(f.peers[2], "a", 1) == 1);
    mm::park_set::entry* first = take_within(set, 2000);
    REQUIRE(first != nullptr);
    CHECK(f.index_of(first) == 2);
    CHECK_FALSE(first->expired);
    REQUIRE(::write(f.peers[0], "bb", 2) == 2);
    REQUIRE(::write(f.peers[2], "more", 4) == 4);  // not parked any more: not queued again
    mm::park_set::entry* second = take_within(set, 2000);
    REQUIRE(second != nullptr);
    CHECK(f.index_of(second) == 0);
    CHECK(set.wait(50) == mm::wait_status::TimedOut);
    CHECK(set.take() == nullptr);
    CHECK(set.parked() == 1);
    // The bytes are still there for whoever takes the socket.
    char buf[8];
    CHECK(f.servers[0]->read(buf, sizeof buf, 1000) == 2);
    CHECK(f.servers[2]->read(buf, sizeof buf, 1000) == 5);
    set.drain();
  });
}

TEST_CASE("park_set: end of stream wakes a parked socket") {
  run([] {
    mm::park_set set;
    park_fixture f(1);
    f.park(set, 0, mm::kForever);
    ::shutdown(f.peers[0], SHUT_WR);
    mm::park_set::entry* e = take_within(set, 2000);
    REQUIRE(e != nullptr);
    char buf[8];
    CHECK(f.servers[0]->read(buf, sizeof buf, 1000) == 0);
  });
}

TEST_CASE("park_set: timeouts queue entries as expired, earliest first, a later shorter one too") {
  run([] {
    mm::park_set set;
    park_fixture f(3);
    mm::coroutine_id timer = mm::coroutine_create("timeouts", [&set] { set.run_timeouts(); });
    const int64_t start = mm::now_ns();
    f.park(set, 0, 400);
    f.park(set, 1, mm::kForever);
    mm::yield();          // the timer sleeps until entry 0's deadline
    f.park(set, 2, 100);  // earlier: must wake the timer
    mm::park_set::entry* e = take_within(set, 2000);
    REQUIRE(e != nullptr);
    CHECK(f.index_of(e) == 2);
    CHECK(e->expired);
    CHECK(elapsed_ms(start) >= 100);
    CHECK(elapsed_ms(start) < 380);
    e = take_within(set, 2000);
    REQUIRE(e != nullptr);
    CHECK(f.index_of(e) == 0);
    CHECK(e->expired);
    CHECK(elapsed_ms(start) >= 400);
    // An expired entry's socket is no longer watched for input.
    REQUIRE(::write(f.peers[0], "x", 1) == 1);
    CHECK(set.wait(100) == mm::wait_status::TimedOut);
    CHECK(set.parked() == 1);
    CHECK(mm::coroutine_finish(timer, 2000));
    set.drain();
  });
}

TEST_CASE("park_set: remove and drain take entries out; a removed socket is not queued") {
  run([] {
    mm::park_set set;
    park_fixture f(3);
    for (size_t i = 0; i < 3; i++) f.park(set, i, mm::kForever);
    set.remove(f.entries[1]);
    CHECK(set.parked() == 2);
    REQUIRE(::write(f.peers[1], "x", 1) == 1);
    CHECK(set.wait(100) == mm::wait_status::TimedOut);
    REQUIRE(::write(f.peers[0], "x", 1) == 1);
    REQUIRE(set.wait(2000) == mm::wait_status::Ok);
    CHECK(set.queued() == 1);
    std::vector<mm::park_set::entry*> all = set.drain();
    CHECK(all.size() == 2);  // 2 parked, 0 queued
    CHECK(set.parked() == 0);
    CHECK(set.queued() == 0);
    CHECK(set.take() == nullptr);
    // queue() hands an entry over at once, as a new connection.
    set.queue(f.entries[1]);
    CHECK(set.take() == &f.entries[1]);
  });
}

TEST_CASE("park_set: four hundred sockets woken at once are each queued once, in a bounded pool") {
  run([] {
    constexpr size_t kConns = 400;
    constexpr int kPool = 8;
    mm::park_set set;
    park_fixture f(kConns);
    for (size_t i = 0; i < kConns; i++) f.park(set, i, mm::kForever);
    size_t served = 0;
    size_t most_queued = 0;
    std::vector<int> served_by(kConns, 0);
    mm::wait_group pool;
    for (int p = 0; p < kPool; p++) {
      pool.add();
      mm::coroutine_create("pool", [&] {
        while (served < kConns) {
          mm::park_set::entry* e = set.take();
          if (!e) {
            if (set.wait(3000) != mm::wait_status::Ok) break;
            continue;
          }
          most_queued = std::max(most_queued, set.queued() + 1);
          size_t i = f.index_of(e);
          char buf[16];
          CHECK(f.servers[i]->read(buf, sizeof buf, 1000) == 1);
          served_by[i]++;
          served++;
          mm::yield();  // a request's work: others run meanwhile
        }
        pool.done();
      });
    }
    for (size_t i = 0; i < kConns; i++) REQUIRE(::write(f.peers[i], "g", 1) == 1);
    CHECK(pool.wait(10000) == mm::wait_status::Ok);
    CHECK(served == kConns);
    for (size_t i = 0; i < kConns; i++) CHECK(served_by[i] == 1);
    CHECK(most_queued <= kConns);
    CHECK(set.parked() == 0);
  });
}
