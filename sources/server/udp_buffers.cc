#include "udp_buffers.h"

#include <linux/sock_diag.h>
#include <sys/socket.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include <spdlog/spdlog.h>

namespace ithaca::server {

namespace {

// memcached's MAX_SENDBUF_SIZE.
constexpr int kMaxSendBuffer = 256 * 1024 * 1024;

int buffer_size(int fd, int opt) {
  int v = 0;
  socklen_t len = sizeof(v);
  return getsockopt(fd, SOL_SOCKET, opt, &v, &len) == 0 ? v : -1;
}

// memcached's maximize_sndbuf: the largest size setsockopt accepts.
void maximize_send_buffer(int fd) {
  int lo = std::max(buffer_size(fd, SO_SNDBUF), 0);
  int hi = kMaxSendBuffer;
  while (lo <= hi) {
    const int mid = static_cast<int>((static_cast<unsigned>(lo) + static_cast<unsigned>(hi)) / 2);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &mid, sizeof(mid)) == 0) {
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
}

std::mutex g_mutex;
std::vector<int> g_fds;  // [g_mutex]

}  // namespace

void size_udp_buffers(int fd) {
  maximize_send_buffer(fd);
  const int want = kUdpReceiveBuffer;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want)) != 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));  // clamped to rmem_max
  }
  // The kernel reports twice what was granted (it counts its bookkeeping).
  spdlog::info("udp socket buffers: receive {} KiB, send {} KiB", buffer_size(fd, SO_RCVBUF) / 2048,
               buffer_size(fd, SO_SNDBUF) / 2048);
}

void udp_drops_watch(int fd) {
  std::lock_guard lock(g_mutex);
  g_fds.push_back(fd);
}

void udp_drops_unwatch(int fd) {
  std::lock_guard lock(g_mutex);
  g_fds.erase(std::remove(g_fds.begin(), g_fds.end(), fd), g_fds.end());
}

uint64_t udp_kernel_drops() {
  std::vector<int> fds;
  {
    std::lock_guard lock(g_mutex);
    fds = g_fds;
  }
  uint64_t total = 0;
  for (int fd : fds) {
    uint32_t mem[SK_MEMINFO_VARS] = {};
    socklen_t len = sizeof(mem);
    if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) == 0 && len > SK_MEMINFO_DROPS * sizeof(uint32_t)) {
      total += mem[SK_MEMINFO_DROPS];
    }
  }
  return total;
}

}  // namespace ithaca::server
