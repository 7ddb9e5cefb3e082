// The head of one HTTP/1.x request, parsed from what has arrived so far:
// the request line and the headers up to the blank line, within a size
// bound. Only what the metrics listener needs: the method, the path (the
// query string dropped) and the version; header values are checked for
// shape and otherwise ignored. Pure; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ithaca::metrics {

enum class http_parse { NeedMore, Ok, Bad, TooLarge };

struct http_request {
  std::string method;
  std::string path;       // the target without "?query"
  int minor_version = 1;  // HTTP/1.<minor>
  size_t head_size = 0;   // bytes up to and including the blank line
};

// Parses `data` (everything read so far). NeedMore while no blank line has
// come and `data` is within `max_head`; TooLarge once it is over without one;
// Bad for a malformed request line or header, or a version other than 1.x.
http_parse parse_http_request(std::string_view data, size_t max_head, http_request& out);

}  // namespace ithaca::metrics
