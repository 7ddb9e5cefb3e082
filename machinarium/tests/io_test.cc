#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "harness.h"

using namespace mm_test;

namespace {
mm::address loopback_any_port() {
  mm::address a;
  std::string err;
  REQUIRE(mm::address::parse("127.0.0.1:0", a, &err));
  return a;
}

std::unique_ptr<mm::io> listen_loopback(mm::address& bound) {
  std::string err;
  auto l = mm::listen(loopback_any_port(), 128, false, &err);
  REQUIRE_MESSAGE(l, err);
  bound = mm::local_address(l->fd());
  return l;
}

// A loopback connection: its listener, the client's end and the server's.
struct tcp_pair {
  std::unique_ptr<mm::io> listener, client, server;
};

tcp_pair connected_pair() {
  tcp_pair p;
  mm::address addr;
  p.listener = listen_loopback(addr);
  int err = 0;
  p.client = mm::connect(addr, 5000, &err);
  REQUIRE_MESSAGE(p.client, "connect: " << strerror(-err));
  p.server = mm::io::attach(p.listener->accept(5000));
  REQUIRE(p.server);
  return p;
}

// Small send buffers force partial writes. The receive buffer is left alone:
// a SO_RCVBUF below loopback's 64 KiB MSS lets the kernel advertise a window
// it then cannot accept (the probe skb's truesize exceeds the buffer and is
// dropped), and both sides stall on persist timers with nothing to read. That
// is TCP's problem, not the runtime's: `ss -tm` shows r0 on both ends.
void shrink_buffers(int fd) {
  int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
}

// Echoes everything it reads until end of stream.
void echo_loop(mm::io& conn) {
  char buf[3000];
  for (;;) {
    ssize_t n = conn.read(buf, sizeof(buf), 5000);
    if (n <= 0) return;
    REQUIRE(conn.write(buf, static_cast<size_t>(n), 5000) == n);
  }
}
}  // namespace

TEST_CASE("socket_echo_with_partial_reads_and_writes") {
  run([] {
    mm::address addr;
    auto listener = listen_loopback(addr);
    mm::coroutine_create("echo-server", [&] {
      int fd = listener->accept(5000);
      REQUIRE(fd >= 0);
      shrink_buffers(fd);
      auto conn = mm::io::attach(fd);
      echo_loop(*conn);
    });
    int err = 0;
    auto client = mm::connect(addr, 5000, &err);
    REQUIRE_MESSAGE(client, "connect: " << strerror(-err));
    shrink_buffers(client->fd());
    // 1 MiB in random-sized writes, read back in random-sized reads by a
    // second coroutine (writes block on full buffers until the reader drains).
    std::string sent(1 << 20, '\0');
    std::mt19937 rng(3);
    for (auto& ch : sent) ch = static_cast<char>(rng());
    std::string received;
    mm::coroutine_id reader = mm::coroutine_create("reader", [&] {
      std::mt19937 r(5);
      std::vector<char> buf(70000);
      while (received.size() < sent.size()) {
        size_t want = 1 + r() % buf.size();
        ssize_t n = client->read(buf.data(), want, 5000);
        REQUIRE(n > 0);
        received.append(buf.data(), static_cast<size_t>(n));
      }
    });
    size_t off = 0;
    while (off < sent.size()) {
      size_t n = std::min<size_t>(1 + rng() % 50000, sent.size() - off);
      REQUIRE(client->write(sent.data() + off, n, 5000) == static_cast<ssize_t>(n));
      off += n;
    }
    REQUIRE(mm::coroutine_join(reader, 10000) == mm::wait_status::Ok);
    CHECK(received == sent);
  });
}

TEST_CASE("writev_sends_every_buffer_in_order") {
  run([] {
    mm::address addr;
    auto listener = listen_loopback(addr);
    std::string got;
    mm::coroutine_id server = mm::coroutine_create("server", [&] {
      auto conn = mm::io::attach(listener->accept(5000));
      char buf[4096];
      for (;;) {
        ssize_t n = conn->read(buf, sizeof(buf), 5000);
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
      }
    });
    int err;
    auto client = mm::connect(addr, 5000, &err);
    REQUIRE(client);
    std::vector<std::string> parts;
    std::vector<iovec> iov;
    for (int i = 0; i < 200; i++) parts.push_back(std::string(i * 37 % 5000, static_cast<char>('a' + i % 26)));
    std::string expect;
    for (auto& p : parts) {
      iov.push_back({p.data(), p.size()});
      expect += p;
    }
    CHECK(client->writev(iov.data(), static_cast<int>(iov.size()), 5000) == static_cast<ssize_t>(expect.size()));
    client->close();
    mm::coroutine_join(server, 5000);
    CHECK(got == expect);
  });
}

TEST_CASE("read_times_out_and_read_is_cancelled") {
  run([] {
    auto [listener, client, server] = connected_pair();
    char c;
    CHECK(server->read(&c, 1, 10) == -ETIMEDOUT);
    ssize_t seen = 0;
    auto id = mm::coroutine_create("reader", [&] { seen = server->read(&c, 1, mm::kForever); });
    mm::yield();
    mm::coroutine_cancel(id);
    mm::coroutine_join(id, 1000);
    CHECK(seen == -ECANCELED);
    // The socket still works after a cancelled read.
    REQUIRE(client->write("x", 1, 1000) == 1);
    CHECK(server->read(&c, 1, 1000) == 1);
    CHECK(c == 'x');
  });
}

TEST_CASE("a_peer_that_resets") {
  run([] {
    auto [listener, client, server] = connected_pair();
    // SO_LINGER 0 makes close() send a RST.
    linger lg{1, 0};
    setsockopt(client->fd(), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    client->close();
    char buf[16];
    ssize_t r = server->read(buf, sizeof(buf), 2000);
    CHECK(r == -ECONNRESET);
    // Writing to a reset peer fails with an error, never SIGPIPE.
    ssize_t w = 0;
    for (int i = 0; i < 10 && w >= 0; i++) w = server->write("hello", 5, 1000);
    CHECK(w < 0);
  });
}

// A connection to a silent peer failing within the user timeout needs a peer
// that stops acknowledging (a link down): tests/functional/test_master_timeout.py.
TEST_CASE("user_timeout_is_set_and_a_reset_connection_is_closed") {
  run([] {
    auto [listener, client, server] = connected_pair();
    REQUIRE(mm::set_user_timeout(client->fd(), 1500) == 0);
    unsigned got = 0;
    socklen_t len = sizeof(got);
    REQUIRE(getsockopt(client->fd(), IPPROTO_TCP, TCP_USER_TIMEOUT, &got, &len) == 0);
    CHECK(got == 1500);
    REQUIRE(mm::set_user_timeout(client->fd(), 0) == 0);
    REQUIRE(getsockopt(client->fd(), IPPROTO_TCP, TCP_USER_TIMEOUT, &got, &len) == 0);
    CHECK(got == 0);
    // A quiet connection is not closed: its read just times out.
    char c;
    CHECK(client->read(&c, 1, 10) == -ETIMEDOUT);
    CHECK_FALSE(mm::tcp_closed(client->fd()));
    CHECK_FALSE(mm::tcp_closed(listener->fd()));
    CHECK_FALSE(mm::tcp_closed(-1));
    linger lg{1, 0};  // a RST
    setsockopt(server->fd(), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    server->close();
    CHECK(client->read(&c, 1, 2000) == -ECONNRESET);
    CHECK(mm::tcp_closed(client->fd()));
  });
}

TEST_CASE("end_of_stream_reads_zero") {
  run([] {
    auto [listener, client, server] = connected_pair();
    REQUIRE(client->write("ab", 2, 1000) == 2);
    client->close();
    char buf[8];
    CHECK(server->read(buf, sizeof(buf), 1000) == 2);
    CHECK(server->read(buf, sizeof(buf), 1000) == 0);
    CHECK(server->read(buf, sizeof(buf), 1000) == 0);  // sticky
  });
}

TEST_CASE("connect_to_a_closed_port_is_refused") {
  run([] {
    mm::address addr;
    {
      auto l = listen_loopback(addr);  // learn a free port, then close it
    }
    int err = 0;
    auto c = mm::connect(addr, 2000, &err);
    CHECK_FALSE(c);
    CHECK(err == -ECONNREFUSED);
  });
}

TEST_CASE("a_socket_moved_between_machines") {
  // The acceptor machine accepts and hands the fd over a channel to a worker
  // machine, which attaches it and serves it (the pooler -> worker path).
  mm::channel<int> handoff(4);
  mm::address addr;
  std::atomic<bool> bound{false};
  std::atomic<bool> served_on_worker{false};
  mm::machine* worker = start("worker", [&] {
    int fd = -1;
    REQUIRE(handoff.read(fd, 5000) == mm::wait_status::Ok);
    auto conn = mm::io::attach(fd);
    REQUIRE(conn);
    served_on_worker = std::string(mm::machine_name(mm::machine_self())) == "worker";
    echo_loop(*conn);
  });
  mm::machine* acceptor = start("acceptor", [&] {
    auto listener = listen_loopback(addr);
    bound = true;
    int fd = listener->accept(5000);
    REQUIRE(fd >= 0);
    // Attach here first, then detach: the path an io already in use takes.
    auto conn = mm::io::attach(fd);
    REQUIRE(conn);
    int moved = conn->detach();
    REQUIRE(moved == fd);
    REQUIRE(handoff.write(moved, 5000) == mm::wait_status::Ok);
  });
  while (!bound) std::this_thread::yield();
  std::string reply;
  run([&] {
    int err;
    auto client = mm::connect(addr, 5000, &err);
    REQUIRE(client);
    REQUIRE(client->write("moved", 5, 1000) == 5);
    char buf[5];
    REQUIRE(client->read_exact(buf, 5, 2000) == 5);
    reply.assign(buf, 5);
  });
  CHECK(reply == "moved");
  CHECK(served_on_worker);
  for (mm::machine* m : {acceptor, worker}) {
    mm::machine_stop(m);
    mm::machine_join(m);
  }
}

TEST_CASE("udp_recvmsg_and_sendmsg") {
  run([] {
    std::string err;
    mm::address any;
    REQUIRE(mm::address::parse("127.0.0.1:0", any, &err));
    auto server = mm::bind_udp(any, &err);
    REQUIRE_MESSAGE(server, err);
    auto client = mm::bind_udp(any, &err);
    REQUIRE(client);
    mm::address server_addr = mm::local_address(server->fd());
    mm::coroutine_create("udp-echo", [&] {
      char buf[1500];
      sockaddr_storage peer;
      iovec v{buf, sizeof(buf)};
      msghdr msg{};
      msg.msg_name = &peer;
      msg.msg_namelen = sizeof(peer);
      msg.msg_iov = &v;
      msg.msg_iovlen = 1;
      ssize_t n = server->recvmsg(&msg, 2000);
      REQUIRE(n > 0);
      v.iov_len = static_cast<size_t>(n);
      CHECK(server->sendmsg(&msg, 2000) == n);
    });
    char out[] = "datagram";
    iovec v{out, 8};
    msghdr msg{};
    msg.msg_name = &server_addr.storage;
    msg.msg_namelen = server_addr.length;
    msg.msg_iov = &v;
    msg.msg_iovlen = 1;
    REQUIRE(client->sendmsg(&msg, 1000) == 8);
    char in[64];
    iovec vi{in, sizeof(in)};
    msghdr rmsg{};
    rmsg.msg_iov = &vi;
    rmsg.msg_iovlen = 1;
    CHECK(client->recvmsg(&rmsg, 2000) == 8);
    CHECK(std::string(in, 8) == "datagram");
  });
}

TEST_CASE("udp_reuseport_group_shares_a_port") {
  std::string err;
  mm::address any;
  REQUIRE(mm::address::parse("127.0.0.1:0", any, &err));
  int a = mm::bind_udp_socket(any, true, &err);
  REQUIRE_MESSAGE(a >= 0, err);
  mm::address bound = mm::local_address(a);
  int b = mm::bind_udp_socket(bound, true, &err);
  CHECK_MESSAGE(b >= 0, err);
  // Without SO_REUSEPORT the port is taken.
  int c = mm::bind_udp_socket(bound, false, &err);
  CHECK(c < 0);
  CHECK(err.find("bind udp") != std::string::npos);
  for (int fd : {a, b}) {
    if (fd >= 0) ::close(fd);
  }
}

TEST_CASE("address_parsing") {
  mm::address a;
  std::string err;
  CHECK(mm::address::parse("127.0.0.1:11211", a, &err));
  CHECK(a.to_string() == "127.0.0.1:11211");
  CHECK(mm::address::parse("[::1]:80", a, &err));
  CHECK(a.to_string() == "[::1]:80");
  CHECK(mm::address::parse("unix:/tmp/x.sock", a, &err));
  CHECK(a.to_string() == "unix:/tmp/x.sock");
  CHECK_FALSE(mm::address::parse("127.0.0.1", a, &err));
  CHECK_FALSE(mm::address::parse("127.0.0.1:99999", a, &err));
  CHECK_FALSE(mm::address::parse("example.com:80", a, &err));
}

TEST_CASE("io_uring_submissions_and_completions_are_counted") {
  run([] {
    const mm::machine_counters before = mm::machine_counters_get(mm::machine_self());
    auto [listener, client, server] = connected_pair();
    char buf[8];
    for (int i = 0; i < 10; i++) {
      REQUIRE(client->write("ping", 4, 1000) == 4);
      REQUIRE(server->read(buf, sizeof(buf), 1000) == 4);
    }
    mm::sleep(1);  // one more loop turn copies the backend's figures
    const mm::machine_counters after = mm::machine_counters_get(mm::machine_self());
    if (std::string(mm::machine_backend_name(mm::machine_self())) == "io_uring") {
      // At least the accept, and a receive per round that had to wait.
      CHECK(after.uring_submissions > before.uring_submissions);
      CHECK(after.uring_completions > before.uring_completions);
      CHECK(after.uring_completions - before.uring_completions <= after.uring_submissions + 10);
    } else {
      CHECK(after.uring_submissions == 0);
      CHECK(after.uring_completions == 0);
    }
  });
}

// The readiness waits a caller that does its own non-blocking I/O on the fd
// uses (TLS: OpenSSL reads and writes the socket, the coroutine waits): they
// time out without the event, wake when it comes, and are cancellable. They
// are waits for the next readiness after an EAGAIN (epoll is edge-triggered:
// a socket that was writable all along may never report it again), which is
// how the TLS stream calls them.
TEST_CASE("wait_readable_and_wait_writable_on_a_socket") {
  run([] {
    auto [listener, client, server] = connected_pair();
    const int64_t t0 = mm::now_ns();
    CHECK(server->wait_readable(30) == mm::wait_status::TimedOut);
    CHECK(elapsed_ms(t0) >= 25);
    // Data from another coroutine wakes the wait.
    auto writer = mm::coroutine_create("writer", [&] {
      mm::sleep(20);
      REQUIRE(client->write("r", 1, 1000) == 1);
    });
    CHECK(server->wait_readable(2000) == mm::wait_status::Ok);
    char c = 0;
    CHECK(::recv(server->fd(), &c, 1, MSG_DONTWAIT) == 1);
    CHECK(c == 'r');
    mm::coroutine_join(writer, 1000);

    // A full socket is not writable until the peer reads.
    shrink_buffers(server->fd());
    std::vector<char> chunk(64 * 1024, 'w');
    size_t sent = 0;
    for (;;) {
      ssize_t w = ::send(server->fd(), chunk.data(), chunk.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w < 0) {
        REQUIRE((errno == EAGAIN || errno == EWOULDBLOCK));
        break;
      }
      sent += static_cast<size_t>(w);
    }
    REQUIRE(sent > 0);
    CHECK(server->wait_writable(30) == mm::wait_status::TimedOut);
    auto reader = mm::coroutine_create("reader", [&] {
      std::vector<char> buf(64 * 1024);
      size_t got = 0;
      while (got < sent) {
        ssize_t n = client->read(buf.data(), buf.size(), 2000);
        if (n <= 0) break;
        got += static_cast<size_t>(n);
      }
      CHECK(got == sent);
    });
    CHECK(server->wait_writable(2000) == mm::wait_status::Ok);
    mm::coroutine_join(reader, 3000);

    // Cancelled while waiting: Cancelled, and the socket still works.
    mm::wait_status seen = mm::wait_status::Ok;
    auto waiter = mm::coroutine_create("waiter", [&] { seen = server->wait_readable(mm::kForever); });
    mm::yield();
    mm::coroutine_cancel(waiter);
    mm::coroutine_join(waiter, 1000);
    CHECK(seen == mm::wait_status::Cancelled);
    REQUIRE(client->write("z", 1, 1000) == 1);
    CHECK(server->wait_readable(1000) == mm::wait_status::Ok);
  });
}

namespace {
// A plain blocking connect on loopback: the kernel completes the handshake
// and queues the connection on the listener whether or not anyone accepts.
int raw_connect(const mm::address& to) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&to.storage), to.length) == 0);
  return fd;
}

// Lets the machine's loop enter the kernel a few times: io_uring runs the
// accept it may still have armed (DEFER_TASKRUN runs it only then).
void let_the_kernel_run() {
  for (int i = 0; i < 5; i++) mm::sleep(1);
}

// What another process holding the listener would get: a connection from
// the listen queue, taken without this machine's backend.
int accept_directly(int listener) { return ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC); }
}  // namespace

// The takeover's trap (INTERNALS "Takeover"): io_uring's multishot accept
// stayed armed after its coroutine was cancelled and took the connections
// meant for the process that took over.
TEST_CASE("a_cancelled_accept_loop_leaves_new_connections_in_the_listen_queue") {
  run([] {
    mm::address addr;
    auto listener = listen_loopback(addr);
    std::vector<int> taken;
    auto loop = mm::coroutine_create("accept loop", [&] {
      for (;;) {
        int fd = listener->accept(mm::kForever);
        if (fd < 0) return;
        taken.push_back(fd);
      }
    });
    int first = raw_connect(addr);
    for (int i = 0; i < 1000 && taken.empty(); i++) mm::sleep(1);
    REQUIRE(taken.size() == 1);  // the accept is armed (multishot on io_uring)
    mm::coroutine_cancel(loop);
    REQUIRE(mm::coroutine_finish(loop, 1000));
    let_the_kernel_run();
    int second = raw_connect(addr);
    let_the_kernel_run();
    int got = accept_directly(listener->fd());
    CHECK_MESSAGE(got >= 0, "the connection was taken: " << strerror(errno));
    CHECK(taken.size() == 1);
    std::vector<int> late;
    CHECK(listener->stop_accepting(1000, &late) == 0);
    CHECK(late.empty());
    for (int fd : taken) ::close(fd);
    for (int fd : {first, second, got}) {
      if (fd >= 0) ::close(fd);
    }
  });
}

// Connections the kernel accepted while nobody called accept() (io_uring's
// multishot accept queues them in user space) are not lost by a stop: they
// come back from stop_accepting, and every later one waits in the listen
// queue; accept() afterwards takes them again.
TEST_CASE("stop_accepting_hands_back_what_the_kernel_accepted_and_accept_resumes") {
  run([] {
    mm::address addr;
    auto listener = listen_loopback(addr);
    int first = raw_connect(addr);
    int fd = listener->accept(1000);
    REQUIRE(fd >= 0);  // armed from here on, on io_uring
    ::close(fd);
    std::vector<int> clients = {raw_connect(addr), raw_connect(addr)};
    let_the_kernel_run();
    std::vector<int> late;
    REQUIRE(listener->stop_accepting(1000, &late) == 0);
    size_t in_queue = 0;
    for (int i = 0; i < 2; i++) {
      int got = accept_directly(listener->fd());
      if (got >= 0) {
        in_queue++;
        ::close(got);
      }
    }
    CHECK(late.size() + in_queue == 2);  // none lost
    clients.push_back(raw_connect(addr));
    let_the_kernel_run();
    int queued = accept_directly(listener->fd());
    CHECK_MESSAGE(queued >= 0, "taken after the stop: " << strerror(errno));
    if (queued >= 0) ::close(queued);
    // Accepting again re-arms.
    clients.push_back(raw_connect(addr));
    int again = listener->accept(1000);
    CHECK(again >= 0);
    if (again >= 0) ::close(again);
    for (int c : late) ::close(c);
    for (int c : clients) ::close(c);
    ::close(first);
  });
}
