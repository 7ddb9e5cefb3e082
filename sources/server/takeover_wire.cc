#include "takeover_wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <sstream>

#include "machinarium.h"

namespace ithaca::server {

namespace {
// Reads into `buf` until it holds `want` bytes, each read within the time
// left. [new process, blocking socket]
bool takeover_read_until(int sock, std::string& buf, size_t want, int64_t deadline_ns, std::string* why) {
  while (buf.size() < want) {
    const int64_t left_ms = (deadline_ns - mm::now_ns()) / 1000000;
    pollfd p{sock, POLLIN, 0};
    if (left_ms <= 0 || ::poll(&p, 1, static_cast<int>(left_ms)) <= 0) {
      *why = "the old process sent no descriptors in time";
      return false;
    }
    char chunk[4096];
    const ssize_t n = ::read(sock, chunk, sizeof chunk);
    if (n <= 0) {
      *why = n == 0 ? "the old process closed the takeover connection" : std::string("read: ") + std::strerror(errno);
      return false;
    }
    buf.append(chunk, static_cast<size_t>(n));
  }
  return true;
}
}  // namespace

std::string takeover_describe(const std::vector<handed_fd>& fds) {
  std::string text;
  for (const handed_fd& f : fds) {
    text += f.kind;
    if (f.kind == "listener") {
      text += ' ';
      text += std::to_string(f.index);
    }
    if (!f.address.empty()) {
      text += ' ';
      text += f.address;
    }
    text += '\n';
  }
  return text;
}

bool takeover_parse_line(const std::string& line, handed_fd& out) {
  std::istringstream in(line);
  in >> out.kind;
  if (out.kind == "listener") {
    std::string index;
    in >> index;
    auto [p, ec] = std::from_chars(index.data(), index.data() + index.size(), out.index);
    if (ec != std::errc() || p != index.data() + index.size()) return false;
  } else if (out.kind != "udp" && out.kind != "takeover" && out.kind != "stream") {
    return false;
  }
  std::getline(in >> std::ws, out.address);
  return out.kind == "stream" || !out.address.empty();
}

bool takeover_send_fds(int sock, const std::vector<handed_fd>& fds, std::string* why) {
  if (fds.size() > kTakeoverMaxFds) {
    *why = "too many descriptors to hand over (" + std::to_string(fds.size()) + ")";
    return false;
  }
  const std::string text = takeover_describe(fds);
  const std::string message = "FDS " + std::to_string(fds.size()) + " " + std::to_string(text.size()) + "\n" + text;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max<size_t>(fds.size(), 1)));
  iovec iov{const_cast<char*>(message.data()), message.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    int* slots = reinterpret_cast<int*>(CMSG_DATA(c));
    for (size_t i = 0; i < fds.size(); i++) slots[i] = fds[i].fd;
  }
  const ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  if (n != static_cast<ssize_t>(message.size())) {
    *why = n < 0 ? std::string("sendmsg: ") + std::strerror(errno) : "sendmsg: short write";
    return false;
  }
  return true;
}

bool takeover_recv_fds(int sock, int timeout_ms, std::vector<handed_fd>& out, std::string* why) {
  const int64_t deadline = mm::now_ns() + int64_t{timeout_ms} * 1000000;
  pollfd p{sock, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) {
    *why = "the old process sent no descriptors within " + std::to_string(timeout_ms) + " ms";
    return false;
  }
  // The descriptors come with the message's first bytes.
  std::vector<char> control(CMSG_SPACE(sizeof(int) * kTakeoverMaxFds));
  char first[8192];
  iovec iov{first, sizeof first};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  const ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  if (n <= 0) {
    *why = n == 0 ? "the old process closed the takeover connection" : std::string("recvmsg: ") + std::strerror(errno);
    return false;
  }
  std::vector<int> fds;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    const int* slots = reinterpret_cast<const int*>(CMSG_DATA(c));
    fds.insert(fds.end(), slots, slots + count);
  }
  auto close_all = [&fds] {
    for (int fd : fds) ::close(fd);
  };
  std::string buf(first, static_cast<size_t>(n));
  if ((msg.msg_flags & MSG_CTRUNC) != 0) {
    close_all();
    *why = "the descriptors were truncated";
    return false;
  }
  size_t eol = buf.find('\n');
  while (eol == std::string::npos && buf.size() < 256) {
    if (!takeover_read_until(sock, buf, buf.size() + 1, deadline, why)) {
      close_all();
      return false;
    }
    eol = buf.find('\n');
  }
  const std::string head = buf.substr(0, eol == std::string::npos ? buf.size() : eol);
  if (head.starts_with("ERROR ")) {
    close_all();
    *why = "the old process refused: " + head.substr(6);
    return false;
  }
  size_t count = 0, bytes = 0;
  if (std::sscanf(head.c_str(), "FDS %zu %zu", &count, &bytes) != 2 || count != fds.size() || bytes > (1 << 20)) {
    close_all();
    *why = "malformed takeover message '" + head + "' with " + std::to_string(fds.size()) + " descriptors";
    return false;
  }
  if (!takeover_read_until(sock, buf, eol + 1 + bytes, deadline, why)) {
    close_all();
    return false;
  }
  std::istringstream lines(buf.substr(eol + 1, bytes));
  std::string line;
  out.clear();
  for (size_t i = 0; i < count; i++) {
    handed_fd f;
    if (!std::getline(lines, line) || !takeover_parse_line(line, f)) {
      for (size_t j = i; j < count; j++) ::close(fds[j]);
      for (const handed_fd& g : out) ::close(g.fd);
      out.clear();
      *why = "malformed descriptor line '" + line + "'";
      return false;
    }
    f.fd = fds[i];
    out.push_back(std::move(f));
  }
  return true;
}

}  // namespace ithaca::server
