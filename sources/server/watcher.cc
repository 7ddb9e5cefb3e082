#include "watcher.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "watch_hub.h"

namespace ithaca::server {

namespace {

// Moves the queue's lines into `pending` while it has room (kWatcherBufferBytes):
// past that, lines wait in the queue, and once that is full producers drop
// and count them. A "skipped=N" line goes before the first line taken after
// a drop, as memcached's logger does.
void take_lines(stats::watch::hub& h, int slot, uint32_t kinds, uint64_t min_gid, std::string& pending) {
  mm::byte_queue& q = h.queue(slot);
  std::string_view rec;
  while (pending.size() < stats::watch::kWatcherBufferBytes && q.try_peek(rec)) {
    stats::watch::record_header hdr{};
    if (rec.size() >= sizeof hdr) {
      std::memcpy(&hdr, rec.data(), sizeof hdr);
      // Left by a producer that saw this slot's previous watcher.
      if (hdr.gid >= min_gid && (hdr.kind & kinds) != 0) {
        if (const uint64_t skipped = h.take_skipped(slot)) {
          pending += "skipped=";
          pending += std::to_string(skipped);
          pending += '\n';
        }
        pending.append(rec.substr(sizeof hdr));
        h.count_sent();
      }
    }
    q.pop();
  }
}

bool peer_gone(int fd) {
  char discard[512];
  const ssize_t r = ::recv(fd, discard, sizeof discard, MSG_DONTWAIT);
  if (r > 0) return false;
  return r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

}  // namespace

void serve_watcher(stream& conn, int slot, uint32_t kinds, stats::command_counters& counters) {
  stats::watch::hub& h = stats::watch::hub::instance();
  mm::byte_queue::reader reader(h.queue(slot));
  const uint64_t min_gid = h.min_gid(slot);
  const int fd = conn.fd();
  // The kernel's share of a watcher's backlog is bounded too (by default it
  // grows to megabytes): past these bytes, lines wait here, then drop.
  const int sndbuf = static_cast<int>(stats::watch::kWatcherBufferBytes);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  std::string pending = "OK\r\n";
  while (!mm::coroutine_cancelled()) {
    take_lines(h, slot, kinds, min_gid, pending);
    if (!pending.empty()) {
      // Non-blocking, so a full socket is a wait on writability with a
      // timeout (mm::io::writev's timeout would not say how much it wrote).
      const ssize_t w = conn.try_send(pending.data(), pending.size());
      if (w > 0) {
        counters.bytes_written.add(static_cast<uint64_t>(w));
        pending.erase(0, static_cast<std::size_t>(w));
        continue;
      }
      if (w != -EAGAIN) return;
      if (conn.wait_writable(kWatcherPollMs) == mm::wait_status::Cancelled) return;
      if (peer_gone(fd)) return;
      continue;
    }
    if (peer_gone(fd)) return;
    if (reader.wait(kWatcherPollMs) == mm::wait_status::Cancelled) return;
  }
}

}  // namespace ithaca::server
