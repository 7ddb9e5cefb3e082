#include "udp_server.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "parser.h"
#include "udp_buffers.h"

namespace ithaca::server {

namespace {
// The largest UDP payload over IPv4/IPv6 fits; a larger (jumbo) datagram is
// truncated by the kernel and dropped here.
constexpr size_t kDatagramBuffer = 64 * 1024;
// A full socket send buffer is waited for this long per datagram; past that
// the rest of the reply is dropped (UDP promises no delivery anyway).
constexpr mm::millis kSendTimeoutMs = 100;

uint16_t load_u16(const char* p) {
  return static_cast<uint16_t>((static_cast<uint8_t>(p[0]) << 8) | static_cast<uint8_t>(p[1]));
}

void store_u16(char* p, uint16_t v) {
  p[0] = static_cast<char>(v >> 8);
  p[1] = static_cast<char>(v & 0xff);
}

void close_all(std::vector<std::vector<udp_socket>>& out) {
  for (auto& per_worker : out) {
    for (auto& s : per_worker) ::close(s.fd);
  }
  out.clear();
}

// True if nothing at all is bound to `addr` (no SO_REUSEADDR/SO_REUSEPORT on
// this probe, so it conflicts with any holder). Without it a second process of
// the same user, binding with SO_REUSEPORT too, would silently join our group
// and take a share of the datagrams instead of failing like memcached does.
bool udp_port_free(const mm::address& addr, std::string* error) {
  int fd = ::socket(addr.storage.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  const int one = 1;  // as the sockets themselves will be (mm::bind_udp_socket)
  if (addr.storage.ss_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr.storage), addr.length) == 0;
  if (!ok) *error = "bind udp " + addr.to_string() + ": " + std::strerror(errno);
  ::close(fd);
  return ok;
}
}  // namespace

bool udp_parse_frame(std::string_view datagram, udp_frame& frame, std::string_view& payload) {
  if (datagram.size() <= kUdpHeaderSize) return false;
  const char* p = datagram.data();
  frame.request_id = load_u16(p);
  frame.sequence = load_u16(p + 2);
  frame.total = load_u16(p + 4);
  frame.reserved = load_u16(p + 6);
  if (frame.total != 1) return false;
  payload = datagram.substr(kUdpHeaderSize);
  return true;
}

void udp_write_header(char* out, uint16_t request_id, uint16_t sequence, uint16_t total) {
  store_u16(out, request_id);
  store_u16(out + 2, sequence);
  store_u16(out + 4, total);
  store_u16(out + 6, 0);
}

size_t udp_datagram_count(size_t bytes) { return (bytes + kUdpMaxPayload - 1) / kUdpMaxPayload; }

bool udp_bind_listeners(const std::vector<std::string>& addresses, unsigned workers,
                        std::vector<std::vector<udp_socket>>& out) {
  out.assign(workers, {});
  for (const std::string& text : addresses) {
    mm::address addr;
    std::string error;
    if (!mm::address::parse(text, addr, &error) || !udp_port_free(addr, &error)) {
      spdlog::error("listen udp {}: {}", text, error);
      close_all(out);
      return false;
    }
    for (unsigned w = 0; w < workers; w++) {
      int fd = mm::bind_udp_socket(addr, true, &error);
      if (fd < 0) {
        spdlog::error("listen udp {}: {}", text, error);
        close_all(out);
        return false;
      }
      size_udp_buffers(fd);
      out[w].push_back(udp_socket{fd, mm::local_address(fd).to_string()});
    }
    // Logged like the tcp line (warn passes the default threshold), and
    // before it: once a test sees the tcp line, the udp sockets are bound.
    spdlog::warn("listening on udp {}", out[0].back().local);
  }
  return true;
}

udp_server::batch::batch(const worker_shared& shared, stats::command_counters& counters)
    : live(*shared.live), ctx(*shared.store, counters), server{*shared.stats, counters} {
  ctx.drain = this;
}

udp_server::udp_server(const worker_shared& shared, stats::command_counters& counters)
    : shared_(shared), counters_(counters), inline_(shared, counters), datagram_(kDatagramBuffer) {}

// run() finished every concurrent batch before it returned.
udp_server::~udp_server() = default;

void udp_server::run(const udp_socket& s) {
  auto sock = mm::io::attach(s.fd);
  if (!sock) {
    spdlog::error("udp {}: attach failed: {}", s.local, std::strerror(errno));
    ::close(s.fd);
    return;
  }
  udp_drops_watch(s.fd);
  for (;;) {
    sockaddr_storage peer{};
    iovec v{datagram_.data(), datagram_.size()};
    msghdr msg{};
    msg.msg_name = &peer;
    msg.msg_namelen = sizeof(peer);
    msg.msg_iov = &v;
    msg.msg_iovlen = 1;
    // Forever: the machine's stop cancels this wait.
    ssize_t n = sock->recvmsg(&msg, mm::kForever);
    if (n == -ECANCELED) break;
    if (n < 0) {
      spdlog::warn("udp {}: recvmsg: {}", s.local, std::strerror(static_cast<int>(-n)));
      if (mm::sleep(10) == mm::wait_status::Cancelled) break;  // do not spin on a persistent error
      continue;
    }
    counters_.bytes_read.add(static_cast<uint64_t>(n));
    udp_frame frame;
    std::string_view payload;
    if ((msg.msg_flags & MSG_TRUNC) ||
        !udp_parse_frame(std::string_view(datagram_.data(), static_cast<size_t>(n)), frame, payload)) {
      counters_.udp_dropped.add();
      continue;
    }
    counters_.udp_requests.add();
    if (may_wait()) {
      if (!start_concurrent(*sock, payload, peer, msg.msg_namelen, frame.request_id)) counters_.udp_dropped.add();
      continue;
    }
    inline_.peer = peer;
    inline_.peer_len = msg.msg_namelen;
    inline_.request_id = frame.request_id;
    flow::exec_action action = process(inline_, payload);
    send_reply(*sock, inline_);
    if (action == flow::exec_action::Shutdown && shared_.request_shutdown) shared_.request_shutdown();
  }
  // The batches use this object and the socket: end them first (cancelled,
  // each ends at its next wait; its calls in flight are orphaned).
  std::vector<mm::coroutine_id> ids;
  for (const auto& b : running_) ids.push_back(b->coroutine);
  for (mm::coroutine_id id : ids) {
    if (!mm::coroutine_finish(id, 5000)) spdlog::error("udp {}: a datagram's coroutine did not end", s.local);
  }
  udp_drops_unwatch(s.fd);
  sock->close();
}

bool udp_server::may_wait() {
  inline_.live.refresh();
  const route::route_tree* tree = inline_.live->routes.get();
  return tree != nullptr && tree->root_may_wait();
}

bool udp_server::start_concurrent(mm::io& sock, std::string_view payload, const sockaddr_storage& peer,
                                  socklen_t peer_len, uint16_t request_id) {
  if (running_.size() >= kUdpMaxConcurrent) return false;
  std::unique_ptr<batch> b;
  if (spare_.empty()) {
    b = std::make_unique<batch>(shared_, counters_);
  } else {
    b = std::move(spare_.back());
    spare_.pop_back();
  }
  b->payload.assign(payload);
  b->peer = peer;
  b->peer_len = peer_len;
  b->request_id = request_id;
  batch* raw = b.get();
  running_.push_back(std::move(b));
  raw->coroutine = mm::coroutine_create("udp datagram", [this, &sock, raw] { serve_concurrent(sock, *raw); });
  return true;
}

// [a concurrent batch's own coroutine] Runs the datagram on the snapshot
// current when it started, sends its replies, and gives the batch back.
void udp_server::serve_concurrent(mm::io& sock, batch& b) {
  const flow::exec_action action = process(b, b.payload);
  if (!mm::coroutine_cancelled()) send_reply(sock, b);
  b.out.consume(b.out.size());
  if (action == flow::exec_action::Shutdown && shared_.request_shutdown) shared_.request_shutdown();
  // A few spare batches are kept; a burst's others are freed.
  constexpr size_t kKeepSpare = 8;
  for (size_t i = 0; i < running_.size(); i++) {
    if (running_[i].get() != &b) continue;
    std::unique_ptr<batch> mine = std::move(running_[i]);
    running_[i] = std::move(running_.back());
    running_.pop_back();
    mine->coroutine = 0;
    if (spare_.size() < kKeepSpare && mine->inflight.empty()) {
      std::string().swap(mine->payload);
      spare_.push_back(std::move(mine));
    }
    break;
  }
}

// A fresh parser per datagram: a request never continues in the next one, and
// datagrams from different senders share this socket. An incomplete request at
// the end is dropped without a reply (memcached sends none either).
flow::exec_action udp_server::process(batch& b, std::string_view payload) {
  b.live.refresh();  // one snapshot for the whole datagram
  protocol::parser parser(shared_.parser);
  parser.set_item_size_max(b.live->item_size_max);
  b.server.enable_shutdown = b.live->enable_shutdown;
  b.server.flush_enabled = b.live->enable_flush_all;
  b.server.dump_enabled = b.live->enable_dumping;
  b.server.config_file = b.live->config_file;
  b.server.config_loaded_at = b.live->config_loaded_at;
  b.server.info = b.live->info.get();
  b.ctx.now = shared_.clock->now();
  flow::exec_action action = flow::exec_action::Continue;
  route::loop_context loop{&b.ctx, b.server,         &b,           b.live->routes.get(), b.inflight,
                           b.out,  shared_.backends, shared_.acks, shared_.async};
  route::execute_input(parser, payload, loop, action);
  // No trim: the queue is reused datagram after datagram.
  return action;
}

// Each datagram is its header and an iovec slice of the reply (values pinned
// in the store are sent from the item, not copied), filled to kUdpMaxPayload
// but the last. If a slice would need more than kSlicePieces iovecs it is
// copied into one buffer instead (many small referenced pieces; not expected,
// as out_buffer merges copied bytes and references only values over 2 KiB).
void udp_server::send_reply(mm::io& sock, batch& b) {
  protocol::out_buffer& out = b.out;
  const size_t total = udp_datagram_count(out.size());
  if (out.size() > kUdpMaxReply) {
    counters_.udp_dropped.add();
    out.consume(out.size());
    return;
  }
  // One sender at a time on the socket (its single write waiter); a send
  // waits kSendTimeoutMs at most per datagram, so this wait is bounded too.
  while (sending_) {
    if (send_free_.wait(kSendTimeoutMs) == mm::wait_status::Cancelled) {
      out.consume(out.size());
      return;
    }
  }
  sending_ = true;
  constexpr size_t kSlicePieces = 16;
  char header[kUdpHeaderSize];
  char copy[kUdpMaxPayload];  // only for a slice of too many pieces
  for (size_t seq = 0; seq < total; seq++) {
    udp_write_header(header, b.request_id, static_cast<uint16_t>(seq), static_cast<uint16_t>(total));
    iovec v[kSlicePieces + 1];
    v[0] = {header, kUdpHeaderSize};
    size_t pieces = 1;
    size_t len = 0;
    for (const iovec& part : out.iovecs(kSlicePieces)) {
      size_t take = std::min(part.iov_len, kUdpMaxPayload - len);
      v[pieces++] = {part.iov_base, take};
      len += take;
      if (len == kUdpMaxPayload) break;
    }
    if (len < std::min(out.size(), kUdpMaxPayload)) {
      // Too many pieces for one slice: copy them into one (out.iovecs()
      // gives up to 1024 pieces, more than a slice's bytes can span).
      len = 0;
      for (const iovec& part : out.iovecs()) {
        size_t take = std::min(part.iov_len, kUdpMaxPayload - len);
        std::memcpy(copy + len, part.iov_base, take);
        len += take;
        if (len == kUdpMaxPayload) break;
      }
      v[1] = {copy, len};
      pieces = 2;
    }
    msghdr msg{};
    msg.msg_name = &b.peer;
    msg.msg_namelen = b.peer_len;
    msg.msg_iov = v;
    msg.msg_iovlen = pieces;
    ssize_t w = sock.sendmsg(&msg, kSendTimeoutMs);
    // The slice's bytes are sent (or lost): drop them, and the pins they held.
    out.consume(len);
    if (w < 0) {
      // The rest would be useless to the client without this datagram.
      counters_.udp_dropped.add();
      break;
    }
    counters_.bytes_written.add(static_cast<uint64_t>(w));
  }
  if (!out.empty()) out.consume(out.size());
  sending_ = false;
  send_free_.signal();
}

}  // namespace ithaca::server
