#include "http_request.h"

namespace ithaca::metrics {

namespace {

// RFC 9110 token characters (methods, header names).
bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~': return true;
    default: return false;
  }
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_tchar(c)) return false;
  }
  return true;
}

// A line without its CR LF (a bare LF is accepted, as most servers do).
std::string_view strip_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

bool parse_request_line(std::string_view line, http_request& out) {
  const size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return false;
  const size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) return false;
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method) || target.empty()) return false;
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  }
  if (version.size() != 8 || version.substr(0, 7) != "HTTP/1." || version[7] < '0' || version[7] > '9') return false;
  out.method = std::string(method);
  out.path = std::string(target.substr(0, target.find('?')));
  out.minor_version = version[7] - '0';
  return true;
}

bool valid_header(std::string_view line) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  if (!is_token(line.substr(0, colon))) return false;  // no space before the colon (RFC 9112 5.1)
  for (char c : line.substr(colon + 1)) {
    if (c == '\0' || c == '\r' || c == '\n') return false;
  }
  return true;
}

}  // namespace

http_parse parse_http_request(std::string_view data, size_t max_head, http_request& out) {
  // Find the end of the head first: the bound applies to it.
  size_t end = std::string_view::npos;
  for (size_t i = data.find('\n'); i != std::string_view::npos; i = data.find('\n', i + 1)) {
    // A blank line: "\n\n" or "\n\r\n".
    if (i + 1 < data.size() && data[i + 1] == '\n') {
      end = i + 2;
      break;
    }
    if (i + 2 < data.size() && data[i + 1] == '\r' && data[i + 2] == '\n') {
      end = i + 3;
      break;
    }
  }
  if (end == std::string_view::npos) {
    // Reject a bad request line early rather than waiting for the whole head.
    const size_t first = data.find('\n');
    if (first != std::string_view::npos && !parse_request_line(strip_cr(data.substr(0, first)), out)) {
      return http_parse::Bad;
    }
    return data.size() > max_head ? http_parse::TooLarge : http_parse::NeedMore;
  }
  if (end > max_head) return http_parse::TooLarge;
  std::string_view head = data.substr(0, end);
  size_t nl = head.find('\n');
  if (!parse_request_line(strip_cr(head.substr(0, nl)), out)) return http_parse::Bad;
  size_t pos = nl + 1;
  for (;;) {
    nl = head.find('\n', pos);
    const std::string_view line = strip_cr(head.substr(pos, nl - pos));
    if (line.empty()) break;
    if (!valid_header(line)) return http_parse::Bad;
    pos = nl + 1;
  }
  out.head_size = end;
  return http_parse::Ok;
}

}  // namespace ithaca::metrics
