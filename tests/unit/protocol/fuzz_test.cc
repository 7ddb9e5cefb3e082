// Random bytes never crash the parser, never make it read past its input,
// and every call either makes progress or asks for more.
#include <cstring>
#include <memory>
#include <random>

#include "helpers.h"

using namespace ithaca::protocol;

namespace {

void fuzz_once(std::mt19937& rng, const std::string& seed_text, bool binary_start) {
  parser_settings s;
  s.item_size_max = 64;
  s.lock_protocol = (rng() & 1) != 0;
  parser p(s);
  request req;
  std::string buffer;
  // Mix fragments of real commands with random bytes.
  static const char* pieces[] = {"get ", "set ",    "ms ",  "mg ", " b",   " v", " T",   "\r\n", "\n",  " 0",
                                 " 5 ",  "noreply", "incr", "O",   "Zm9v", " q", "\x80", " -1",  "cas "};
  std::string input = binary_start ? std::string(1, '\x80') : std::string();
  const int n = static_cast<int>(rng() % 400);
  for (int i = 0; i < n; ++i) {
    if (rng() % 3 == 0) {
      input += pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];
    } else {
      input += static_cast<char>(rng() & 0xff);
    }
  }
  input += seed_text;
  std::size_t fed = 0;
  int idle = 0;
  while (fed < input.size() || !buffer.empty()) {
    const std::size_t chunk = 1 + rng() % 64;
    const std::size_t take = std::min(chunk, input.size() - fed);
    buffer.append(input, fed, take);
    fed += take;
    // Exact-size heap copy so ASan catches any read past the end.
    std::unique_ptr<char[]> exact(new char[buffer.size() + 1]);
    std::memcpy(exact.get(), buffer.data(), buffer.size());
    parse_result r = p.parse(std::string_view(exact.get(), buffer.size()), req);
    REQUIRE(r.consumed <= buffer.size());
    if (r.status == parse_status::Ok) REQUIRE(r.consumed > 0);
    if (r.status == parse_status::Error && !r.close) REQUIRE(r.consumed > 0);
    out_buffer o;
    encode_parse_error(o, r, req);
    buffer.erase(0, r.consumed);
    if (r.status == parse_status::Error && r.close) return;
    if (r.status == parse_status::NeedMore && take == 0) {
      if (++idle > 2) return;  // input exhausted, waiting for more
    }
  }
}

}  // namespace

TEST_CASE("fuzz: random input never crashes and always progresses or waits") {
  std::mt19937 rng(12345);
  for (int i = 0; i < 3000; ++i) fuzz_once(rng, "\r\nversion\r\n", (i % 4) == 0);
}
