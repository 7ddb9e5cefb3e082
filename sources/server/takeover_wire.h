// The takeover's control connection (INTERNALS "Takeover"): what the new
// process and the old one say to each other on the takeover socket, and the
// descriptors that go with it (SCM_RIGHTS).
//
//   new -> old  "ITHACA-TAKEOVER 1 <pid>\n"
//   old -> new  one message: "FDS <count> <bytes>\n" then <bytes> of text,
//               one line per descriptor carried, in order:
//                 "listener <index> <address>"  a TCP or unix listener (listen entry <index>)
//                 "udp <address>"               one UDP socket of that address's group
//                 "takeover <path>"             the takeover socket itself
//                 "stream"                      the store's replication stream (absent: none)
//               or "ERROR <why>\n" and nothing else
//   new -> old  "READY\n" once it started all but its listeners (what may
//               fail has not): the old one may stop serving
//   new -> old  "DONE\n" once it serves (its listeners accept)
#pragma once

#include <string>
#include <vector>

namespace ithaca::server {

inline constexpr const char* kTakeoverHello = "ITHACA-TAKEOVER 1";
// Descriptors in one message: the kernel's SCM_MAX_FD is 253.
inline constexpr size_t kTakeoverMaxFds = 250;

struct handed_fd {
  std::string kind;     // listener, udp, takeover, stream
  std::string address;  // as the listen entry writes it; the path for takeover
  size_t index = 0;     // listener: its listen entry
  int fd = -1;
};

// The text lines describing `fds` (without the FDS header).
std::string takeover_describe(const std::vector<handed_fd>& fds);
// Parses one line of it into `out` (fd left -1). False if malformed.
bool takeover_parse_line(const std::string& line, handed_fd& out);

// Sends the FDS message on the non-blocking socket `sock` in one sendmsg:
// the socket is new and its buffer empty, so a short write is an error.
// [the old process's pooler machine]
bool takeover_send_fds(int sock, const std::vector<handed_fd>& fds, std::string* why);

// Receives the FDS message (blocking socket, poll within `timeout_ms`):
// the descriptors, close-on-exec, in `out`. An ERROR line is returned as
// false with its text in `why`. [the new process's main thread]
bool takeover_recv_fds(int sock, int timeout_ms, std::vector<handed_fd>& out, std::string* why);

}  // namespace ithaca::server
