// udp_buffers.h: the receive queue asked for, and the kernel's drops on the
// watched sockets (what `udp_kernel_drops` shows).
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "log_capture.h"
#include "udp_buffers.h"

namespace ithaca::server {

namespace {

struct udp_socket_pair {
  int rx = -1, tx = -1;
  sockaddr_in addr{};
  udp_socket_pair() {
    rx = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    tx = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(rx, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(rx, reinterpret_cast<sockaddr*>(&addr), &len);
  }
  ~udp_socket_pair() {
    ::close(rx);
    ::close(tx);
  }
  void send(int n, size_t size) const {
    const std::string d(size, 'd');
    for (int i = 0; i < n; ++i) {
      ::sendto(tx, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    }
  }
};

int receive_buffer(int fd) {
  int v = 0;
  socklen_t len = sizeof v;
  ::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len);
  return v;
}

}  // namespace

TEST_CASE("sizing grows the receive queue and says what it got") {
  udp_socket_pair s;
  const int before = receive_buffer(s.rx);
  log::test::captured_log log;
  size_udp_buffers(s.rx);
  const int after = receive_buffer(s.rx);
  // SO_RCVBUFFORCE (root: CAP_NET_ADMIN) gives all of it, doubled by the
  // kernel's bookkeeping; without it the kernel clamps to rmem_max.
  CHECK(after >= before);
  CHECK(log.with("I udp socket buffers: receive " + std::to_string(after / 2048) + " KiB, send ").size() == 1);
  if (::geteuid() == 0) CHECK(after >= kUdpReceiveBuffer);
}

TEST_CASE("datagrams the kernel drops on a full queue are counted while the socket is watched") {
  udp_socket_pair s;
  const int tiny = 1;  // the kernel's minimum receive queue: a couple of datagrams
  REQUIRE(::setsockopt(s.rx, SOL_SOCKET, SO_RCVBUF, &tiny, sizeof tiny) == 0);
  const uint64_t base = udp_kernel_drops();
  s.send(50, 1000);
  CHECK(udp_kernel_drops() == base);  // not watched: not counted
  udp_drops_watch(s.rx);
  const uint64_t dropped = udp_kernel_drops() - base;
  CHECK(dropped >= 40);  // all but what fit in the queue
  CHECK(dropped <= 50);
  s.send(20, 1000);  // the queue is still full: all dropped
  CHECK(udp_kernel_drops() - base == dropped + 20);
  udp_drops_unwatch(s.rx);
  CHECK(udp_kernel_drops() == base);
}

}  // namespace ithaca::server
