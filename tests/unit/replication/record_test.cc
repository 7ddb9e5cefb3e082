// The record encoder against hand-written yrmcds packets, and the slave's
// stream decoder fed whole, byte by byte and in odd pieces, plus garbage.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "record.h"
#include "stream_decoder.h"
#include "test_bytes.h"

using namespace ithaca::replication;

namespace {
std::string set_packet(std::string_view key, uint32_t flags, uint32_t exptime, std::string_view value) {
  std::string out(set_size(key.size(), value.size()), '\0');
  CHECK(encode_set(out.data(), key, flags, exptime, value) == out.size());
  return out;
}

struct decoded {
  record_kind kind;
  std::string key, value;
  uint32_t flags, exptime;
  bool operator==(const decoded&) const = default;
};

// Feeds `stream` in pieces of `piece` bytes (0 = all at once).
decode_status decode_all(std::string_view stream, size_t piece, std::vector<decoded>& out, size_t max_value = 1 << 20) {
  stream_decoder d(max_value);
  decode_status last = decode_status::NeedMore;
  while (!stream.empty()) {
    size_t n = piece ? std::min(piece, stream.size()) : stream.size();
    std::string_view in = stream.substr(0, n);
    stream.remove_prefix(n);
    record r;
    for (;;) {
      last = d.next(in, r);
      if (last == decode_status::Error) return last;
      if (last == decode_status::NeedMore) break;
      out.push_back({r.kind, std::string(r.key), std::string(r.value), r.flags, r.exptime});
    }
    CHECK(in.empty());
  }
  CHECK(d.buffered() == 0);
  return last;
}
}  // namespace

TEST_CASE("encoder_writes_yrmcds_packets") {
  // SetQ "k" flags 0x01020304 exptime 0x05060708 value "vv".
  CHECK(set_packet("k", 0x01020304, 0x05060708, "vv") ==
        bytes({0x80, 0x11, 0, 1, 8, 0, 0, 0, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}) +
            "kvv");
  std::string touch(touch_size(2), '\0');
  encode_touch(touch.data(), "ab", 0x0a0b0c0d);
  CHECK(touch ==
        bytes({0x80, 0x1c, 0, 2, 4, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a, 0x0b, 0x0c, 0x0d}) +
            "ab");
  std::string del(delete_size(3), '\0');
  encode_delete(del.data(), "xyz");
  CHECK(del == bytes({0x80, 0x14, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) + "xyz");
  // The prefix announces the value the caller appends.
  std::string prefix(set_size(1, 0), '\0');
  encode_set_prefix(prefix.data(), "k", 0x01020304, 0x05060708, 2);
  CHECK(prefix + "vv" == set_packet("k", 0x01020304, 0x05060708, "vv"));
}

TEST_CASE("wire_exptime_is_absolute_unix_or_zero") {
  CHECK(wire_exptime(0) == 0);
  CHECK(wire_exptime(-5) == 0);
  CHECK(wire_exptime(1700000000) == 1700000000u);
  CHECK(wire_exptime(int64_t{1} << 40) == 0xffffffffu);
}

TEST_CASE("decoder_gives_the_same_records_whole_byte_by_byte_and_in_pieces") {
  std::string stream;
  std::vector<decoded> want;
  for (int i = 0; i < 50; i++) {
    std::string key = "key:" + std::to_string(i);
    std::string value(static_cast<size_t>(i * 37 % 200), static_cast<char>('a' + i % 26));
    stream += set_packet(key, static_cast<uint32_t>(i), 1700000000u + i, value);
    want.push_back({record_kind::Set, key, value, static_cast<uint32_t>(i), 1700000000u + i});
    if (i % 5 == 0) {
      std::string t(touch_size(key.size()), '\0');
      encode_touch(t.data(), key, 42);
      stream += t;
      want.push_back({record_kind::Touch, key, "", 0, 42});
    }
    if (i % 7 == 0) {
      std::string d(delete_size(key.size()), '\0');
      encode_delete(d.data(), key);
      stream += d;
      want.push_back({record_kind::Delete, key, "", 0, 0});
    }
  }
  for (size_t piece : {size_t{0}, size_t{1}, size_t{3}, size_t{23}, size_t{24}, size_t{25}, size_t{1000}}) {
    CAPTURE(piece);
    std::vector<decoded> got;
    CHECK(decode_all(stream, piece, got) == decode_status::NeedMore);
    CHECK(got == want);
  }
}

TEST_CASE("decoder_refuses_garbage") {
  std::vector<decoded> got;
  const std::string good = set_packet("k", 0, 0, "v");
  auto refused = [&](std::string packet, std::string_view why) {
    CAPTURE(why);
    for (size_t piece : {size_t{0}, size_t{1}}) {
      got.clear();
      CHECK(decode_all(good + packet + good, piece, got) == decode_status::Error);
      CHECK(got.size() == 1);  // the good record before it, nothing after
    }
  };
  std::string p = good;
  p[0] = '\x81';
  refused(p, "response magic");
  refused("get k\r\n" + std::string(30, ' '), "text");
  p = good;
  p[1] = 0x01;  // Set (not quiet): yrmcds never sends it
  refused(p, "opcode");
  p = good;
  p[4] = 4;  // SetQ with 4 bytes of extras
  refused(p, "extras");
  p = good;
  p[2] = p[3] = 0;  // empty key
  refused(p, "empty key");
  p = good;
  p[11] = 2;  // body shorter than extras + key
  refused(p, "lying length");
  std::string t(touch_size(1), '\0');
  encode_touch(t.data(), "k", 1);
  t[11] = 6;
  t += "x";  // a touch carrying a value
  refused(t, "touch value");
  got.clear();
  CHECK(decode_all(set_packet("k", 0, 0, std::string(100, 'v')), 1, got, 99) == decode_status::Error);
  CHECK(decode_all(set_packet("k", 0, 0, std::string(100, 'v')), 1, got, 100) == decode_status::NeedMore);
}

TEST_CASE("decoder_stays_in_error") {
  stream_decoder d(100);
  std::string_view in = "garbage garbage garbage garbage";
  record r;
  CHECK(d.next(in, r) == decode_status::Error);
  CHECK_FALSE(d.error().empty());
  std::string good = set_packet("k", 0, 0, "v");
  std::string_view again = good;
  CHECK(d.next(again, r) == decode_status::Error);
}
