// memcached's ascii authentication (-Y), the exchange a connection must go
// through before any command: `set <key> <flags> <exptime> <bytes>\r\n`
// whose <bytes>-long value is "user password"\r\n. The key, flags and
// exptime are not looked at. memcached 1.6.45's try_read_command_asciiauth,
// step by step:
//
//  - fewer than 3 bytes, or no newline yet: wait; but over 2048 bytes
//    without a newline, close;
//  - a line (up to its \n) shorter than 6 bytes: close, without a reply;
//  - the line is cut into tokens at spaces (at most 23), its last byte before
//    the \n left out (the \r; a bare \n loses the line's last character, as
//    memcached's tokenizer does); fewer than 5 tokens, a line not starting with
//    "set", or a 5th token that is not a 32-bit decimal: the line is consumed
//    and answered "CLIENT_ERROR unauthenticated" (so is every other command);
//  - <bytes> over 16384: "CLIENT_ERROR auth token too long", the line
//    consumed (its value is then read as commands);
//  - else the value and 2 more bytes are waited for; they must end in \r\n
//    ("CLIENT_ERROR bad command line termination"); the user is what
//    precedes the value's first space ("CLIENT_ERROR bad authentication
//    token format" without one), the password the rest before the \r\n.
//
// The reader keeps no state: a request not whole yet is looked at again,
// whole, with more bytes. [the connection's coroutine; pure, no lock]
#pragma once

#include <cstddef>
#include <string_view>

namespace ithaca::protocol {

inline constexpr std::size_t kAsciiAuthTokenMax = 16384;  // memcached's MAX_AUTH_REQ_LEN
inline constexpr std::size_t kAsciiAuthLineMin = 6;       // MIN_AUTH_REQ_LEN
inline constexpr std::size_t kAsciiAuthNoNewlineMax = 2048;

struct ascii_auth_step {
  enum class kind {
    NeedMore,  // nothing consumed: wait for more bytes
    Close,     // close the connection without a reply
    Reply,     // answer `reply` (a line without its \r\n); `consumed` bytes used
    Check,     // check `user` and `password`: STORED if right, else
               // "CLIENT_ERROR authentication failure"; `consumed` bytes used
  };
  kind what = kind::NeedMore;
  std::size_t consumed = 0;
  std::string_view reply;     // Reply
  std::string_view user;      // Check: views into the input
  std::string_view password;  // Check
};

// The next step for the unconsumed input of an unauthenticated connection.
ascii_auth_step next_ascii_auth(std::string_view input);

// memcached's replies.
inline constexpr std::string_view kReplyUnauthenticated = "CLIENT_ERROR unauthenticated";
inline constexpr std::string_view kReplyAuthTokenTooLong = "CLIENT_ERROR auth token too long";
inline constexpr std::string_view kReplyAuthBadTermination = "CLIENT_ERROR bad command line termination";
inline constexpr std::string_view kReplyAuthBadFormat = "CLIENT_ERROR bad authentication token format";
inline constexpr std::string_view kReplyAuthFailure = "CLIENT_ERROR authentication failure";
inline constexpr std::string_view kReplyAuthStored = "STORED";

}  // namespace ithaca::protocol
