#include <doctest/doctest.h>

#include "units.h"

using namespace ithaca::config;

TEST_CASE("sizes: plain bytes and binary suffixes") {
  uint64_t v = 0;
  CHECK((parse_size("0", v) && v == 0));
  CHECK((parse_size("1048576", v) && v == 1048576));
  CHECK((parse_size("512k", v) && v == 512 * 1024));
  CHECK((parse_size("512K", v) && v == 512 * 1024));
  CHECK((parse_size("64m", v) && v == 64ull << 20));
  CHECK((parse_size("64MiB", v) && v == 64ull << 20));
  CHECK((parse_size("64MB", v) && v == 64ull << 20));
  CHECK((parse_size("1g", v) && v == 1ull << 30));
  CHECK((parse_size("2GiB", v) && v == 2ull << 30));
  CHECK((parse_size("100b", v) && v == 100));
}

TEST_CASE("sizes: refused forms") {
  uint64_t v = 7;
  for (const char* bad :
       {"", "m", "-1", "1.5m", " 1m", "1m ", "1x", "1kk", "0x10", "99999999999999999999", "20000000000000g"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_size(bad, v));
  }
  CHECK(v == 7);
}

TEST_CASE("durations: units required except for 0") {
  uint64_t v = 0;
  CHECK((parse_duration("500ms", v) && v == 500));
  CHECK((parse_duration("2s", v) && v == 2000));
  CHECK((parse_duration("1m", v) && v == 60000));
  CHECK((parse_duration("1h", v) && v == 3600000));
  CHECK((parse_duration("0", v) && v == 0));
  CHECK_FALSE(parse_duration("1000", v));
  CHECK_FALSE(parse_duration("1.5s", v));
  CHECK_FALSE(parse_duration("s", v));
  CHECK_FALSE(parse_duration("2d", v));
  CHECK_FALSE(parse_duration("-1s", v));
}

TEST_CASE("unsigned: decimal only") {
  uint64_t v = 0;
  CHECK((parse_unsigned("18446744073709551615", v) && v == UINT64_MAX));
  CHECK_FALSE(parse_unsigned("18446744073709551616", v));
  CHECK_FALSE(parse_unsigned("+1", v));
  CHECK_FALSE(parse_unsigned("", v));
}

TEST_CASE("formatting for messages") {
  CHECK(format_size(64ull << 20) == "64 MiB");
  CHECK(format_size(1536) == "1536 bytes");
  CHECK(format_size(1ull << 30) == "1 GiB");
  CHECK(format_duration(1500) == "1500ms");
  CHECK(format_duration(2000) == "2s");
  CHECK(format_duration(3600000) == "1h");
  CHECK(describe(value_kind::Integer, {1, 256}) == "an integer from 1 to 256");
}
