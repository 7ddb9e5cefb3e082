#pragma once
// Test helpers: run a parser over a buffer whole and byte by byte, and check
// both give the same requests and errors.

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "parser.h"
#include "reply.h"

namespace ithaca::protocol::test {

// A flattened view of one parse event, comparable across feeding modes.
struct event {
  parse_status status;
  error_kind error;
  std::string reply;  // text error reply or encoded binary error
  bool close;
  command cmd;
  std::vector<std::string> keys;
  std::string value;
  std::uint32_t flags;
  std::int64_t exptime;
  std::uint64_t cas;
  std::uint64_t delta;
  bool noreply;

  bool operator==(const event&) const = default;
};

inline event capture(const parse_result& r, const request& req) {
  event e{};
  e.status = r.status;
  e.error = r.error;
  out_buffer ob;
  encode_parse_error(ob, r, req);
  e.reply = ob.str();
  e.close = r.close;
  if (r.status == parse_status::Ok) {
    e.cmd = req.cmd;
    for (std::size_t i = 0; i < req.keys.size(); ++i) e.keys.emplace_back(req.keys[i]);
    e.value = std::string(req.value);
    e.flags = req.flags;
    e.exptime = req.exptime;
    e.cas = req.cas;
    e.delta = req.delta;
    e.noreply = req.noreply;
  }
  return e;
}

// Feeds `input` at once (chunk = 0) or `chunk` bytes at a time, like a
// connection buffer that grows, and returns the Ok/Error events. Stops at a
// closing error.
inline std::vector<event> run(std::string_view input, std::size_t chunk = 0, parser_settings settings = {}) {
  parser p(settings);
  request req;
  std::vector<event> events;
  std::string buffer;
  std::size_t fed = 0;
  for (;;) {
    if (chunk == 0) {
      buffer.append(input.substr(fed));
      fed = input.size();
    }
    parse_result r = p.parse(buffer, req);
    REQUIRE(r.consumed <= buffer.size());
    if (r.status != parse_status::NeedMore) {
      events.push_back(capture(r, req));
      buffer.erase(0, r.consumed);
      if (r.close) break;
      continue;
    }
    buffer.erase(0, r.consumed);
    if (fed == input.size()) break;
    const std::size_t n = std::min(chunk == 0 ? input.size() : chunk, input.size() - fed);
    buffer.append(input.substr(fed, n));
    fed += n;
  }
  return events;
}

// Same events whole and byte by byte; returns them.
inline std::vector<event> parse_all(std::string_view input, parser_settings settings = {}) {
  auto whole = run(input, 0, settings);
  auto bytewise = run(input, 1, settings);
  CHECK(whole == bytewise);
  auto chunks = run(input, 7, settings);
  CHECK(whole == chunks);
  return whole;
}

inline std::string replies(const std::vector<event>& events) {
  std::string s;
  for (const auto& e : events) s += e.reply;
  return s;
}

// A binary request packet: header (magic 0x80, `opcode`, lengths), extras, key, value.
inline std::string binary_packet(std::uint8_t opcode, std::string_view key, std::string_view extras = {},
                                 std::string_view value = {}) {
  std::string h(24, '\0');
  h[0] = '\x80';
  h[1] = static_cast<char>(opcode);
  h[2] = static_cast<char>(key.size() >> 8);
  h[3] = static_cast<char>(key.size());
  h[4] = static_cast<char>(extras.size());
  const std::size_t body = extras.size() + key.size() + value.size();
  h[10] = static_cast<char>(body >> 8);
  h[11] = static_cast<char>(body);
  return h + std::string(extras) + std::string(key) + std::string(value);
}

}  // namespace ithaca::protocol::test
