#include "protocol_probe.h"

#include <cerrno>
#include <cstring>
#include <string_view>

#include "line_exchange.h"

namespace ithaca::proxy {

namespace {

// The longest first line taken as an answer (memcached's longest error line
// is far shorter).
constexpr std::size_t kMaxAnswer = 512;

protocol_probe failed(failure_kind why, std::string error) {
  protocol_probe p;
  p.why = why;
  p.error = std::move(error);
  return p;
}

// A close or reset before the answer is a failed connect (the server marked
// down at once, as a refused connect does), not a broken connection: a
// server going away closes the reconnect its dying listener accepted, and
// must not stay up until failure_limit requests met it.
protocol_probe io_failed(ssize_t n, const char* doing) {
  if (n == -ETIMEDOUT) return failed(failure_kind::Timeout, std::string("no answer to mn while ") + doing);
  return failed(failure_kind::Connect,
                std::string(doing) + ": " + (n == 0 ? "closed by the server" : std::strerror(static_cast<int>(-n))));
}

}  // namespace

protocol_probe probe_protocol(backend_link& io, int64_t deadline_ns) {
  // Only the one line may come back: nothing else was asked.
  std::string answer;
  const ssize_t r = exchange_line(io, "mn\r\n", deadline_ns, kMaxAnswer, answer);
  if (r == -ECANCELED) return protocol_probe{.cancelled = true};
  if (r == -E2BIG) return failed(failure_kind::BadReply, "answered mn with an over-long line");
  if (r <= 0) return io_failed(r, "asking mn");
  protocol_probe p;
  p.ok = true;
  if (answer == "MN\r\n") {
    p.learned = protocol::backend_protocol::Meta;
  } else if (answer == "ERROR\r\n" || (answer.ends_with("\r\n") && answer.find('\n') == answer.size() - 1 &&
                                       (answer.starts_with("CLIENT_ERROR ") || answer.starts_with("SERVER_ERROR ")))) {
    p.learned = protocol::backend_protocol::Ascii;
  } else {
    std::string shown = answer.substr(0, 80);
    for (char& c : shown) {
      if (c == '\r' || c == '\n') c = ' ';
    }
    return failed(failure_kind::BadReply, "answered mn with '" + shown + "'");
  }
  return p;
}

}  // namespace ithaca::proxy
