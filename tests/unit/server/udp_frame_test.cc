// udp_server.h's frame: memcached's 8-byte UDP header, what is dropped, and
// how many datagrams a reply takes.
#include <doctest/doctest.h>

#include <string>

#include "udp_server.h"

namespace ithaca::server {

namespace {
std::string frame_bytes(uint16_t id, uint16_t seq, uint16_t total, uint16_t reserved) {
  std::string s(8, '\0');
  udp_write_header(s.data(), id, seq, total);
  s[6] = static_cast<char>(reserved >> 8);
  s[7] = static_cast<char>(reserved & 0xff);
  return s;
}
}  // namespace

TEST_CASE("the header is four big-endian u16: request id, sequence, total, reserved 0") {
  char out[8];
  std::fill(std::begin(out), std::end(out), 'x');
  udp_write_header(out, 0x1234, 0xabcd, 0x0102);
  CHECK(std::string(out, 8) == std::string("\x12\x34\xab\xcd\x01\x02\x00\x00", 8));
}

TEST_CASE("a datagram parses into its frame and payload") {
  const std::string d = frame_bytes(0xfffe, 7, 1, 0x5a5a) + "get k\r\n";
  udp_frame f;
  std::string_view payload;
  REQUIRE(udp_parse_frame(d, f, payload));
  CHECK(f.request_id == 0xfffe);
  CHECK(f.sequence == 7);  // not checked, as memcached does not check it
  CHECK(f.total == 1);
  CHECK(f.reserved == 0x5a5a);  // nor the reserved field
  CHECK(payload == "get k\r\n");
}

TEST_CASE("datagrams memcached drops are refused") {
  udp_frame f;
  std::string_view payload;
  // 8 bytes or fewer: a header with no request.
  CHECK_FALSE(udp_parse_frame(frame_bytes(1, 0, 1, 0), f, payload));
  CHECK_FALSE(udp_parse_frame(std::string_view("\x00\x01\x00", 3), f, payload));
  CHECK_FALSE(udp_parse_frame({}, f, payload));
  // A request spread over several datagrams (or none).
  CHECK_FALSE(udp_parse_frame(frame_bytes(1, 0, 2, 0) + "x", f, payload));
  CHECK_FALSE(udp_parse_frame(frame_bytes(1, 0, 0, 0) + "x", f, payload));
  // One payload byte is enough. (The payload is a view into the datagram,
  // which must outlive it.)
  const std::string one = frame_bytes(1, 0, 1, 0) + "x";
  CHECK(udp_parse_frame(one, f, payload));
  CHECK(payload == "x");
}

TEST_CASE("a reply of n bytes takes ceil(n / 1392) datagrams") {
  CHECK(kUdpMaxPayload == 1392);
  CHECK(udp_datagram_count(0) == 0);
  CHECK(udp_datagram_count(1) == 1);
  CHECK(udp_datagram_count(kUdpMaxPayload) == 1);
  CHECK(udp_datagram_count(kUdpMaxPayload + 1) == 2);
  CHECK(udp_datagram_count(10 * kUdpMaxPayload) == 10);
  // The largest reply a u16 sequence can number.
  CHECK(udp_datagram_count(kUdpMaxReply) == 65535);
  CHECK(udp_datagram_count(kUdpMaxReply + 1) == 65536);
}

}  // namespace ithaca::server
