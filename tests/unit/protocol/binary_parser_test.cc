// Binary protocol parsing. Behaviour captured from memcached 1.6.18 with
// oracle/probe_binary.py.
#include "binary_format.h"
#include "helpers.h"

using namespace ithaca::protocol;
using namespace ithaca::protocol::test;

namespace {

std::string packet(std::uint8_t op, std::string_view key = {}, std::string_view extras = {},
                   std::string_view value = {}, std::uint8_t magic = 0x80, std::int64_t body_length = -1,
                   std::uint64_t cas = 0) {
  binary_header h;
  h.magic = magic;
  h.opcode = op;
  h.key_length = static_cast<std::uint16_t>(key.size());
  h.extras_length = static_cast<std::uint8_t>(extras.size());
  h.body_length = body_length >= 0 ? static_cast<std::uint32_t>(body_length)
                                   : static_cast<std::uint32_t>(key.size() + extras.size() + value.size());
  h.opaque = 0xdeadbeef;
  h.cas = cas;
  std::string s(kBinaryHeaderSize, '\0');
  encode_header(h, s.data());
  return s + std::string(extras) + std::string(key) + std::string(value);
}

std::string be32(std::uint32_t v) {
  std::string s(4, '\0');
  store_be32(s.data(), v);
  return s;
}
std::string be64(std::uint64_t v) {
  std::string s(8, '\0');
  store_be64(s.data(), v);
  return s;
}

std::string hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) out += ' ';
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

const std::string kVersion = packet(0x0b);

}  // namespace

TEST_CASE("binary get, set, incr, touch, flush, and the quiet variants") {
  auto ev = parse_all(packet(0x00, "foo") + packet(0x01, "foo", be32(5) + be32(10), "bar") +
                      packet(0x11, "k", be32(0) + be32(0), "v") + packet(0x05, "ctr", be64(5) + be64(10) + be32(7)) +
                      packet(0x1d, "foo", be32(10)) + packet(0x08, {}, be32(3)) + packet(0x08) + packet(0x0d, "q") +
                      kVersion + packet(0x10) + packet(0x10, "items"));
  REQUIRE(ev.size() == 11);
  CHECK(ev[0].cmd == command::Get);
  CHECK(ev[0].keys == std::vector<std::string>{"foo"});
  CHECK(ev[1].cmd == command::Set);
  CHECK(ev[1].flags == 5);
  CHECK(ev[1].exptime == 10);
  CHECK(ev[1].value == "bar");
  CHECK_FALSE(ev[1].noreply);
  CHECK(ev[2].noreply);
  CHECK(ev[3].cmd == command::Incr);
  CHECK(ev[3].delta == 5);
  CHECK(ev[3].exptime == 7);
  CHECK(ev[4].cmd == command::Gat);
  CHECK(ev[5].cmd == command::FlushAll);
  CHECK(ev[7].noreply);
  CHECK(ev[8].cmd == command::Version);
  CHECK(ev[9].cmd == command::Stat);
  CHECK(ev[10].keys == std::vector<std::string>{"items"});

  parser_settings s;
  parser p(s);
  request req;
  auto r = p.parse(packet(0x0c, "foo", {}, {}, 0x80, -1, 42), req);
  CHECK(r.status == parse_status::Ok);
  CHECK(req.binary_with_key);
  CHECK(req.opaque == 0xdeadbeef);
  CHECK(req.cas == 42);
  r = p.parse(packet(0x05, "ctr", be64(5) + be64(10) + be32(7)), req);
  CHECK(req.initial == 10);
  r = p.parse(packet(0x08, {}, be32(3)), req);
  CHECK(req.has_flush_delay);
  CHECK(req.flush_delay == 3);
  r = p.parse(packet(0x1b, {}, be32(2)), req);
  CHECK(req.cmd == command::Verbosity);
  CHECK(req.verbosity == 2);
  const std::string append = packet(0x0e, "k", {}, "tail");  // views point into it
  r = p.parse(append, req);
  CHECK(req.cmd == command::Append);
  CHECK(req.value == "tail");
  r = p.parse(packet(0x21, "PLAIN", {}, "\0u\0p"), req);
  CHECK(req.cmd == command::SaslAuth);
}

TEST_CASE("truncated header and body are NeedMore") {
  parser_settings s;
  parser p(s);
  request req;
  const std::string full = packet(0x01, "foo", be32(0) + be32(0), "value");
  for (std::size_t n = 0; n < full.size(); ++n) {
    CHECK(p.parse(std::string_view(full).substr(0, n), req).status == parse_status::NeedMore);
  }
  CHECK(p.parse(full, req).status == parse_status::Ok);
}

TEST_CASE("binary errors and when memcached closes") {
  // Unknown magic after a binary start: closed without a reply.
  auto ev = parse_all(kVersion + packet(0x00, "foo", {}, {}, 0x81) + kVersion);
  REQUIRE(ev.size() == 2);
  CHECK(ev[1].error == error_kind::BadMagic);
  CHECK(ev[1].close);
  CHECK(ev[1].reply.empty());

  // key + extras > body: "Unknown command" (0x81) and close.
  ev = parse_all(packet(0x00, "foo", {}, {}, 0x80, 1) + kVersion);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].close);
  CHECK(hex(ev[0].reply) ==
        "81 00 00 00 00 00 00 81 00 00 00 0f de ad be ef 00 00 00 00 00 00 00 00 "
        "55 6e 6b 6e 6f 77 6e 20 63 6f 6d 6d 61 6e 64");

  // Wrong extras/key for the opcode: "Invalid arguments" (0x04) and close.
  for (const std::string& bad :
       {packet(0x00, "foo", be32(0)), packet(0x01, "foo", {}, "bar"), packet(0x01, {}, be32(5) + be32(0), "bar"),
        packet(0x00), packet(0x05, "ctr", be32(0)), packet(0x04, "foo", be32(0)), packet(0x0a, "foo"),
        packet(0x0b, {}, {}, "zz"), packet(0x00, std::string(251, 'k'))}) {
    ev = parse_all(bad + kVersion);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].error == error_kind::InvalidArguments);
    CHECK(ev[0].close);
    CHECK(hex(ev[0].reply).substr(0, 59) ==
          "81 " + hex(bad.substr(1, 1)) + " 00 00 00 00 00 04 00 00 00 11 de ad be ef 00 00 00 00");
  }

  // Unknown opcode: 0x81, body swallowed, connection kept.
  ev = parse_all(packet(0xff, {}, {}, "xyz") + kVersion);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].error == error_kind::UnknownCommand);
  CHECK_FALSE(ev[0].close);
  CHECK(ev[1].cmd == command::Version);
  // Verbosity without extras is "unknown command" too, and the connection stays.
  ev = parse_all(packet(0x1b) + kVersion);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].error == error_kind::UnknownCommand);

  // Too large: 0x03 "Too large.", the value swallowed, the connection kept.
  parser_settings s;
  s.item_size_max = 100;
  ev = parse_all(packet(0x01, "big", be32(0) + be32(0), std::string(300, 'x')) + kVersion, s);
  REQUIRE(ev.size() == 2);
  CHECK(hex(ev[0].reply) ==
        "81 01 00 00 00 00 00 03 00 00 00 0a de ad be ef 00 00 00 00 00 00 00 00 "
        "54 6f 6f 20 6c 61 72 67 65 2e");
  CHECK(ev[1].cmd == command::Version);
  // A body length of 0xffffffff: memcached's int overflows, nothing is
  // swallowed, and the next bytes are parsed as the next packet.
  ev = parse_all(packet(0x01, "foo", be32(0) + be32(0), {}, 0x80, 0xffffffff) + kVersion, s);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].error == error_kind::TooLarge);
  CHECK(ev[1].cmd == command::Version);
}

TEST_CASE("protocol is fixed by the first request, as memcached does") {
  // On a text connection 0x80 is just a byte of a bad command.
  auto ev = parse_all("version\r\n" + kVersion + "\r\n");
  REQUIRE(ev.size() == 2);
  CHECK(ev[1].reply == "ERROR\r\n");
  // Per-request detection when asked for.
  parser_settings s;
  s.lock_protocol = false;
  ev = parse_all("version\r\n" + kVersion + "mn\r\n", s);
  REQUIRE(ev.size() == 3);
  CHECK(ev[1].cmd == command::Version);
  CHECK(ev[2].cmd == command::MetaNoop);
}

TEST_CASE("a listener bound to one protocol (-l proto[ascii]: / proto[binary]:)") {
  // ascii: a binary packet is text from the first byte, as on memcached's ascii port.
  parser_settings s;
  s.binding_protocol = parser_settings::binding::Ascii;
  auto ev = parse_all(kVersion + "\r\nversion\r\n", s);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].reply == "ERROR\r\n");
  CHECK(ev[1].cmd == command::Version);
  // binary: text is a bad magic once a header's 24 bytes are in (memcached waits
  // for them too), closed with no reply.
  s.binding_protocol = parser_settings::binding::Binary;
  CHECK(parse_all("version\r\n", s).empty());
  ev = parse_all("version\r\nversion\r\nversion\r\n", s);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].error == error_kind::BadMagic);
  CHECK(ev[0].close);
  ev = parse_all(kVersion, s);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].cmd == command::Version);
  // Bound even when per-request detection is asked for.
  s.lock_protocol = false;
  s.binding_protocol = parser_settings::binding::Ascii;
  ev = parse_all("version\r\n" + kVersion + "\r\n", s);
  REQUIRE(ev.size() == 2);
  CHECK(ev[1].reply == "ERROR\r\n");
}

TEST_CASE("-S: SASL requests carry the mechanism and the data; a long mechanism or big data is refused") {
  using namespace std::string_literals;
  parser_settings s;
  s.sasl = true;
  s.binding_protocol = parser_settings::binding::Binary;
  auto ev = parse_all(packet(0x21, "PLAIN", {}, "\0u\0p"s) + packet(0x22, "PLAIN", {}, "x") + packet(0x20) +
                          packet(0x21, "PLAIN") + kVersion,
                      s);
  REQUIRE(ev.size() == 5);
  CHECK(ev[0].cmd == command::SaslAuth);
  CHECK(ev[0].keys == std::vector<std::string>{"PLAIN"});
  CHECK(ev[0].value == "\0u\0p"s);
  CHECK(ev[1].cmd == command::SaslStep);
  CHECK(ev[1].value == "x");
  CHECK(ev[2].cmd == command::SaslListMechs);
  CHECK(ev[3].cmd == command::SaslAuth);
  CHECK(ev[3].value.empty());
  // 33 bytes of mechanism: "Invalid arguments", the data swallowed, the connection kept.
  ev = parse_all(packet(0x21, std::string(33, 'M'), {}, "data") + kVersion, s);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].error == error_kind::SaslRefused);
  CHECK(!ev[0].close);
  CHECK(ev[0].reply.substr(6, 2) == "\x00\x04"s);
  CHECK(ev[1].cmd == command::Version);
  s.item_size_max = 1024;
  ev = parse_all(packet(0x21, "PLAIN", {}, std::string(1023, 'd')) + kVersion, s);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].reply.substr(6, 2) == "\x00\x82"s);  // Out of memory
  CHECK(ev[1].cmd == command::Version);
}

TEST_CASE("a binding forces the protocol whatever the first byte") {
  parser_settings s;
  s.binding_protocol = parser_settings::binding::Binary;
  // -S: text is read as a packet header, whose magic closes the connection.
  auto ev = parse_all("get foo bar baz quux 12345\r\n", s);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].error == error_kind::BadMagic);
  CHECK(ev[0].close);
  CHECK(ev[0].reply.empty());
  // Fewer than 24 bytes: nothing yet (memcached waits for a header).
  CHECK(parse_all("get foo\r\n", s).empty());
  // -Y: 0x80 is a byte of a bad text command.
  s.binding_protocol = parser_settings::binding::Ascii;
  ev = parse_all(kVersion + "\r\n", s);
  REQUIRE(!ev.empty());
  CHECK(ev[0].status == parse_status::Error);
  CHECK(ev[0].reply == "ERROR\r\n");
}
