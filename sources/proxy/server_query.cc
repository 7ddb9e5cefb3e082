#include "server_query.h"

#include <cerrno>
#include <cstring>

#include "backend_connect.h"

namespace ithaca::proxy {

namespace {

constexpr std::size_t kMaxLine = 64 * 1024;
constexpr std::size_t kReadSize = 16 * 1024;

query_result failed(std::string why) {
  query_result r;
  r.error = std::move(why);
  return r;
}

query_result query_io_failed(ssize_t n, const char* doing) {
  query_result r;
  r.cancelled = n == -ECANCELED;
  if (n == 0) {
    r.error = std::string(doing) + ": closed by the server";
  } else if (n == -ETIMEDOUT) {
    r.error = std::string(doing) + ": timed out";
  } else {
    r.error = std::string(doing) + ": " + std::strerror(static_cast<int>(-n));
  }
  return r;
}

bool refusal(std::string_view line) {
  for (std::string_view word : {"ERROR", "CLIENT_ERROR", "SERVER_ERROR", "BUSY"}) {
    if (line.starts_with(word)) return true;
  }
  return false;
}

}  // namespace

query_result query_server(const backend_server& s, std::string_view request, std::string_view end,
                          const std::function<bool(std::string_view line)>& on_line) {
  const server_settings& cfg = s.settings();
  backend_link link = connect_backend(s, mm::deadline_after(static_cast<mm::millis>(cfg.connect_timeout_ms)));
  if (!link) {
    query_result r = failed("connect: " + link.error);
    r.cancelled = link.cancelled;
    return r;
  }
  const auto timeout = static_cast<mm::millis>(cfg.timeout_ms);
  query_result r;
  const ssize_t w = link.write(request.data(), request.size(), timeout);
  if (w <= 0) {
    r = query_io_failed(w, "sending the request");
  } else {
    std::string buf;
    std::size_t lines = 0;
    char chunk[kReadSize];
    for (bool done = false; !done;) {
      // Every complete line in the buffer, then read more.
      std::size_t at = 0;
      for (std::size_t nl; !done && (nl = buf.find('\n', at)) != std::string::npos; at = nl + 1) {
        const std::string_view line(buf.data() + at, nl + 1 - at);
        if (line == end) {
          r.ok = done = true;
        } else if (lines++ == 0 && refusal(line)) {
          r = failed("answered " + std::string(line.substr(0, line.size() - 1)));
          done = true;
        } else if (!on_line(line)) {
          r = failed("stopped");
          done = true;
        }
      }
      buf.erase(0, at);
      if (done) break;
      if (buf.size() > kMaxLine) {
        r = failed("an answer line over 64 KiB");
        break;
      }
      const ssize_t n = link.read(chunk, sizeof chunk, timeout);
      if (n <= 0) {
        r = query_io_failed(n, "reading the answer");
        break;
      }
      buf.append(chunk, static_cast<std::size_t>(n));
    }
  }
  link.close();
  return r;
}

}  // namespace ithaca::proxy
