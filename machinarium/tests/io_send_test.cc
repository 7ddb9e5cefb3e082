// io::write_batched(): on io_uring a SEND submitted with the loop's enter,
// on epoll a plain write. Every case runs on both backends (meson).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "harness.h"

using namespace mm_test;

namespace {
struct pair {
  std::unique_ptr<mm::io> listener, client, server;
};

pair connect_pair() {
  pair p;
  mm::address any;
  std::string err;
  REQUIRE(mm::address::parse("127.0.0.1:0", any, &err));
  p.listener = mm::listen(any, 16, false, &err);
  REQUIRE_MESSAGE(p.listener, err);
  int e = 0;
  p.client = mm::connect(mm::local_address(p.listener->fd()), 5000, &e);
  REQUIRE_MESSAGE(p.client, "connect: " << strerror(-e));
  p.server = mm::io::attach(p.listener->accept(5000));
  REQUIRE(p.server);
  return p;
}

void small_send_buffer(int fd) {
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
}

std::string random_bytes(size_t n, unsigned seed) {
  std::string s(n, '\0');
  std::mt19937 rng(seed);
  for (auto& ch : s) ch = static_cast<char>(rng());
  return s;
}

// Reads until end of stream (or an error) or `limit` bytes.
std::string drain(mm::io& conn, size_t limit) {
  std::string got;
  std::vector<char> buf(65536);
  while (got.size() < limit) {
    ssize_t n = conn.read(buf.data(), buf.size(), 5000);
    if (n <= 0) break;
    got.append(buf.data(), static_cast<size_t>(n));
  }
  return got;
}
}  // namespace

TEST_CASE("write_batched_continues_short_sends_in_order") {
  run([] {
    auto [listener, client, server] = connect_pair();
    small_send_buffer(client->fd());
    // 2 MiB through a 4 KiB send buffer: the kernel takes it piece by piece
    // (short sends, each continued from where it stopped).
    const std::string sent = random_bytes(2 << 20, 7);
    std::string got;
    mm::coroutine_id reader = mm::coroutine_create("reader", [&, s = server.get()] { got = drain(*s, sent.size()); });
    std::mt19937 rng(11);
    size_t off = 0;
    while (off < sent.size()) {
      size_t n = std::min<size_t>(1 + rng() % 300000, sent.size() - off);
      REQUIRE(client->write_batched(sent.data() + off, n, 5000) == static_cast<ssize_t>(n));
      off += n;
    }
    REQUIRE(mm::coroutine_join(reader, 10000) == mm::wait_status::Ok);
    CHECK(got == sent);
  });
}

TEST_CASE("write_batched_to_many_sockets_in_one_turn") {
  run([] {
    // Four writers queue in the same loop turn (one enter submits them all
    // on io_uring); each peer gets exactly its own bytes, in order.
    std::vector<pair> pairs;
    for (int i = 0; i < 4; i++) pairs.push_back(connect_pair());
    std::vector<std::string> got(4);
    std::vector<mm::coroutine_id> ids;
    for (int i = 0; i < 4; i++) {
      ids.push_back(mm::coroutine_create("writer", [&pairs, i] {
        for (int k = 0; k < 50; k++) {
          std::string line = "get key" + std::to_string(i) + "_" + std::to_string(k) + "\r\n";
          REQUIRE(pairs[i].client->write_batched(line.data(), line.size(), 5000) == static_cast<ssize_t>(line.size()));
        }
        pairs[i].client->close();
      }));
      ids.push_back(mm::coroutine_create("reader", [&pairs, &got, i] { got[i] = drain(*pairs[i].server, 1 << 20); }));
    }
    for (auto id : ids) REQUIRE(mm::coroutine_join(id, 10000) == mm::wait_status::Ok);
    for (int i = 0; i < 4; i++) {
      std::string expect;
      for (int k = 0; k < 50; k++) expect += "get key" + std::to_string(i) + "_" + std::to_string(k) + "\r\n";
      CHECK(got[i] == expect);
    }
  });
}

TEST_CASE("write_batched_times_out_and_owns_its_bytes") {
  run([] {
    auto [listener, client, server] = connect_pair();
    small_send_buffer(client->fd());
    // Nobody reads: the send cannot finish and the wait times out. The
    // caller's buffer is then scribbled over and freed while the SEND may
    // still be in flight; the peer must still see the original bytes.
    const std::string original = random_bytes(4 << 20, 3);
    auto buf = std::make_unique<std::string>(original);
    const int64_t start = mm::now_ns();
    CHECK(client->write_batched(buf->data(), buf->size(), 50) == -ETIMEDOUT);
    CHECK(elapsed_ms(start) < 2000);
    std::memset(buf->data(), 'X', buf->size());
    buf.reset();
    // Close with the send (maybe) still in flight: the state waits for its
    // completion; the peer reads a prefix of the original, then the end.
    client->close();
    const std::string got = drain(*server, original.size());
    CHECK(got.size() > 0);
    CHECK(got == original.substr(0, got.size()));
  });
}

TEST_CASE("write_batched_is_cancelled_while_its_send_is_in_flight") {
  run([] {
    auto [listener, client, server] = connect_pair();
    small_send_buffer(client->fd());
    const std::string original = random_bytes(4 << 20, 5);
    ssize_t result = 0;
    mm::coroutine_id w = mm::coroutine_create("writer", [&, c = client.get()] {
      std::string copy = original;  // freed when the coroutine ends, before the send is done
      result = c->write_batched(copy.data(), copy.size(), mm::kForever);
    });
    mm::sleep(20);  // the SEND went out and waits for room
    mm::coroutine_cancel(w);
    REQUIRE(mm::coroutine_join(w, 1000) == mm::wait_status::Ok);
    CHECK(result == -ECANCELED);
    client->close();
    const std::string got = drain(*server, original.size());
    CHECK(got == original.substr(0, got.size()));
  });
}

TEST_CASE("write_batched_to_a_closed_peer_fails") {
  run([] {
    auto [listener, client, server] = connect_pair();
    server->close();
    // The first bytes may still be taken by the kernel; the reset then fails
    // a later write (no SIGPIPE: the test process would die of it).
    std::string line(64 * 1024, 'a');
    ssize_t r = 0;
    for (int i = 0; i < 100 && r >= 0; i++) r = client->write_batched(line.data(), line.size(), 1000);
    CHECK(r < 0);
    CHECK(r != -ETIMEDOUT);
    // Sticky: the next one fails at once too.
    CHECK(client->write_batched("x", 1, 1000) < 0);
  });
}
