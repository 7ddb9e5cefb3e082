// fd_reserve.h: an accept loop with a full descriptor table refuses what
// waits (the clients see EOF, not a hang), keeps its spare descriptor, and
// reports it at most once per kLogIntervalMs.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "fd_reserve.h"
#include "log_capture.h"

namespace ithaca::server {

namespace {

// A listener on 127.0.0.1, port chosen by the kernel; non-blocking.
struct listener {
  int fd = -1;
  sockaddr_in addr{};
  listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    REQUIRE(::listen(fd, 64) == 0);
  }
  ~listener() { ::close(fd); }
  int connect_client() const {
    const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(::connect(c, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    return c;
  }
};

// The peer closed: a read returns 0 (EOF) within a second.
bool sees_eof(int client) {
  pollfd p{client, POLLIN, 0};
  if (::poll(&p, 1, 1000) != 1) return false;
  char c;
  return ::read(client, &c, 1) == 0;
}

// Fills the descriptor table under a lowered RLIMIT_NOFILE, gives it back after.
class full_table {
 public:
  full_table() {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    // Room for a few more than what is open now, then every slot taken.
    int highest = 0;
    for (int fd = 0; fd < 4096; ++fd) {
      if (::fcntl(fd, F_GETFD) >= 0) highest = fd;
    }
    rlimit low = saved_;
    low.rlim_cur = static_cast<rlim_t>(highest + 8);
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    for (;;) {
      const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0) break;
      held_.push_back(fd);
    }
    const int error = errno;
    REQUIRE(error == EMFILE);
  }
  ~full_table() {
    for (int fd : held_) ::close(fd);
    ::setrlimit(RLIMIT_NOFILE, &saved_);
  }
  // Frees one slot (the lowest held), as another thread's close would.
  void free_one() {
    ::close(held_.front());
    held_.erase(held_.begin());
  }
  static bool has_room() {
    const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ::close(fd);
    return true;
  }

 private:
  rlimit saved_{};
  std::vector<int> held_;
};

}  // namespace

TEST_CASE("with the table full, the pending connections are refused with the spare's slot, and the spare is kept") {
  listener l;
  fd_reserve reserve;  // its spare is open before the table fills
  std::vector<int> clients;
  for (int i = 0; i < 3; ++i) clients.push_back(l.connect_client());
  log::test::captured_log log;
  {
    full_table full;
    const int accepted = ::accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    const int error = errno;
    CHECK(accepted < 0);
    CHECK(error == EMFILE);
    CHECK(reserve.refuse_pending(l.fd, "tcp:127.0.0.1", EMFILE, 0) == 3);
    // The spare has its slot again: the table is as full as before.
    CHECK_FALSE(full_table::has_room());
  }
  for (int c : clients) {
    CHECK(sees_eof(c));
    ::close(c);
  }
  const auto lines = log.with("accept on tcp:127.0.0.1: Too many open files; refused 3 connection(s)");
  CHECK(lines.size() == 1);
  // An empty queue refuses nothing.
  CHECK(reserve.refuse_pending(l.fd, "tcp:127.0.0.1", EMFILE, 1) == 0);
}

TEST_CASE("the report is rate limited: one line per interval, with the count refused since the last") {
  listener l;
  fd_reserve reserve;
  log::test::captured_log log;
  auto refuse = [&](int n, int64_t now_ms) {
    std::vector<int> clients;
    for (int i = 0; i < n; ++i) clients.push_back(l.connect_client());
    CHECK(reserve.refuse_pending(l.fd, "L", EMFILE, now_ms) == static_cast<uint64_t>(n));
    for (int c : clients) ::close(c);
  };
  refuse(1, 1000);                                   // logged: the first
  refuse(2, 1000 + fd_reserve::kLogIntervalMs - 1);  // too soon: counted
  refuse(4, 1000 + fd_reserve::kLogIntervalMs - 1);  // still too soon
  refuse(1, 1000 + fd_reserve::kLogIntervalMs);      // logged: 2 + 4 + 1
  refuse(5, 1000 + 2 * fd_reserve::kLogIntervalMs);  // logged: 5
  const auto lines = log.with("accept on L:");
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].find("refused 1 connection(s)") != std::string::npos);
  CHECK(lines[1].find("refused 7 connection(s)") != std::string::npos);
  CHECK(lines[2].find("refused 5 connection(s)") != std::string::npos);
  CHECK(lines[0].starts_with("W "));
}

TEST_CASE("a spare lost to a full table is won back from the next accepted connection") {
  listener l;
  const int client = l.connect_client();
  {
    full_table full;
    fd_reserve reserve;  // made with the table full: no spare
    full.free_one();     // a slot for the accept
    const int fd = ::accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    REQUIRE(fd >= 0);
    // The connection's slot goes to the spare: the caller must not serve it.
    CHECK_FALSE(reserve.keep_spare_before(fd));
    CHECK_FALSE(full_table::has_room());
  }
  CHECK(sees_eof(client));
  ::close(client);
}

TEST_CASE("with room in the table, keep_spare_before opens a lost spare and leaves the connection alone") {
  listener l;
  const int client = l.connect_client();
  int fd = -1;
  {
    full_table full;
    fd_reserve reserve;  // no spare
    full.free_one();
    full.free_one();  // one slot for the accept, one for the spare
    fd = ::accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    REQUIRE(fd >= 0);
    CHECK(reserve.keep_spare_before(fd));
    CHECK_FALSE(full_table::has_room());  // the spare took the other slot
    // With the spare in place, nothing more is done.
    CHECK(reserve.keep_spare_before(fd));
  }
  // The connection still works.
  CHECK(::write(fd, "x", 1) == 1);
  char c = 0;
  CHECK(::read(client, &c, 1) == 1);
  CHECK(c == 'x');
  ::close(fd);
  ::close(client);
}

}  // namespace ithaca::server
