// The takeover's control messages (takeover_wire.h): the descriptor lines,
// and one FDS message with its descriptors through a real unix socket pair;
// the takeover socket's path (takeover_path.h).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "takeover_path.h"
#include "takeover_wire.h"

using namespace ithaca::server;

TEST_CASE("takeover descriptor lines read back as written") {
  const std::vector<handed_fd> fds = {{"listener", "127.0.0.1:11211", 0, 5},
                                      {"listener", "unix:/run/ithaca/a b.sock", 3, 6},
                                      {"udp", "[::]:11211", 0, 7},
                                      {"takeover", "/run/ithaca/ithaca-11211.takeover", 0, 8},
                                      {"stream", "", 0, 9}};
  const std::string text = takeover_describe(fds);
  CHECK(text ==
        "listener 0 127.0.0.1:11211\nlistener 3 unix:/run/ithaca/a b.sock\nudp [::]:11211\n"
        "takeover /run/ithaca/ithaca-11211.takeover\nstream\n");
  size_t start = 0;
  for (const handed_fd& want : fds) {
    const size_t end = text.find('\n', start);
    handed_fd got;
    REQUIRE(takeover_parse_line(text.substr(start, end - start), got));
    CHECK(got.kind == want.kind);
    CHECK(got.address == want.address);
    CHECK(got.index == want.index);
    CHECK(got.fd == -1);
    start = end + 1;
  }
}

TEST_CASE("takeover descriptor lines: malformed ones are refused") {
  handed_fd f;
  CHECK_FALSE(takeover_parse_line("", f));
  CHECK_FALSE(takeover_parse_line("socket 1 x", f));
  CHECK_FALSE(takeover_parse_line("listener x 127.0.0.1:1", f));
  CHECK_FALSE(takeover_parse_line("listener 1", f));
  CHECK_FALSE(takeover_parse_line("udp", f));
  CHECK_FALSE(takeover_parse_line("takeover", f));
}

TEST_CASE("takeover descriptors cross a unix socket with their message") {
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const std::vector<handed_fd> fds = {{"listener", "127.0.0.1:0", 0, pipe_fds[1]}, {"stream", "", 0, pipe_fds[0]}};
  std::string why;
  REQUIRE(takeover_send_fds(pair[0], fds, &why));
  std::vector<handed_fd> got;
  REQUIRE(takeover_recv_fds(pair[1], 1000, got, &why));
  REQUIRE(got.size() == 2);
  CHECK(got[0].kind == "listener");
  CHECK(got[1].kind == "stream");
  // New descriptors for the same pipe: what goes in one comes out of the other.
  CHECK(got[0].fd != pipe_fds[1]);
  CHECK((::fcntl(got[0].fd, F_GETFD) & FD_CLOEXEC) != 0);
  REQUIRE(::write(got[0].fd, "x", 1) == 1);
  char c = 0;
  REQUIRE(::read(got[1].fd, &c, 1) == 1);
  CHECK(c == 'x');
  for (int fd : {pair[0], pair[1], pipe_fds[0], pipe_fds[1], got[0].fd, got[1].fd}) ::close(fd);
}

TEST_CASE("takeover: an ERROR instead of descriptors, and a peer that says nothing") {
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
  REQUIRE(::write(pair[0], "ERROR busy\n", 11) == 11);
  std::vector<handed_fd> got;
  std::string why;
  CHECK_FALSE(takeover_recv_fds(pair[1], 1000, got, &why));
  CHECK(why == "the old process refused: busy");
  CHECK_FALSE(takeover_recv_fds(pair[1], 50, got, &why));
  CHECK(why == "the old process sent no descriptors within 50 ms");
  ::close(pair[0]);
  CHECK_FALSE(takeover_recv_fds(pair[1], 1000, got, &why));
  CHECK(why == "the old process closed the takeover connection");
  ::close(pair[1]);
}

TEST_CASE("the takeover socket's path: the setting, else the run directory and the first tcp port") {
  ithaca::config::config c;
  c.listen.tcp = {ithaca::config::tcp_address{"127.0.0.1", 11311}};
  c.takeover.socket_set = true;
  c.takeover.socket = "/somewhere/t.sock";
  CHECK(takeover_socket_path(c) == "/somewhere/t.sock");
  c.takeover.socket = "";
  CHECK(takeover_socket_path(c).empty());  // spelled out: none
  c.takeover.socket_set = false;
  const char* before = std::getenv("RUNTIME_DIRECTORY");
  const std::string saved = before ? before : "";
  ::setenv("RUNTIME_DIRECTORY", "/run/ithaca-test:/run/other", 1);
  CHECK(takeover_socket_path(c) == "/run/ithaca-test/ithaca-11311.takeover");
  c.listen.tcp.front().port = 0;  // a free port: no path another process could find
  CHECK(takeover_socket_path(c).empty());
  c.listen.tcp.clear();
  CHECK(takeover_socket_path(c).empty());
  if (before)
    ::setenv("RUNTIME_DIRECTORY", saved.c_str(), 1);
  else
    ::unsetenv("RUNTIME_DIRECTORY");
}
