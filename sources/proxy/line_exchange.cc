#include "line_exchange.h"

#include <cerrno>

namespace ithaca::proxy {

ssize_t exchange_line(backend_link& io, std::string_view request, int64_t deadline_ns, std::size_t max,
                      std::string& line) {
  line.clear();
  const ssize_t w = io.write(request.data(), request.size(), mm::millis_until(deadline_ns));
  if (w <= 0) return w;
  char buf[256];
  while (line.find('\n') == std::string::npos) {
    if (line.size() >= max) return -E2BIG;
    const std::size_t want = std::min(sizeof buf, max - line.size());
    const ssize_t n = io.read(buf, want, mm::millis_until(deadline_ns));
    if (n <= 0) return n;
    line.append(buf, static_cast<std::size_t>(n));
  }
  return 1;
}

}  // namespace ithaca::proxy
