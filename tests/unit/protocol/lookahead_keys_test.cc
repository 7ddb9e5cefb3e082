// lookahead_keys (lookahead_keys.h): the keys read ahead for the store's
// prefetch are the keys the real parser finds in the same pipelined input,
// in order, up to the first request the scanner does not read.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lookahead_keys.h"
#include "helpers.h"
#include "parser.h"

namespace ithaca::protocol {
namespace {

std::vector<std::string> lookahead(std::string_view input, std::size_t room = 64) {
  std::vector<std::string_view> out(room);
  const std::size_t n = lookahead_keys(input, out);
  REQUIRE(n <= room);
  return {out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n)};
}

// The keys of every complete request of `input`, as the parser reads them.
std::vector<std::string> parsed_keys(std::string_view input) {
  parser p{parser_settings{}};
  std::vector<std::string> keys;
  while (!input.empty()) {
    request req;
    const parse_result r = p.parse(input, req);
    if (r.status == parse_status::NeedMore) break;
    INFO("at: ", std::string(input.substr(0, 16)));
    REQUIRE(r.status == parse_status::Ok);
    for (std::size_t i = 0; i < req.keys.size(); i++) keys.emplace_back(req.keys[i]);
    input.remove_prefix(r.consumed);
  }
  return keys;
}

std::string lookahead_binary(std::uint8_t opcode, std::string_view key, std::string_view extras = {},
                             std::string_view value = {}) {
  return test::binary_packet(opcode, key, extras, value);
}

TEST_CASE("a pipeline of text and meta requests: the parser's keys, in order") {
  const std::string input = std::string("get a b c\r\n") + "gets d\r\n" +
                            "set e 0 0 12\r\nget x\r\nget y\r\n" +  // a value that looks like commands
                            "mg f v t\r\n" + "ms g 3 T10\r\nabc\r\n" + "delete h\r\n" + "incr i 1\r\n" +
                            "touch j 10\r\n" + "cas k 0 0 1 99\r\nz\r\n" + "md l q\r\n" + "ma m\r\n" +
                            "append q 0 0 2\r\nxy\r\n" + "get r\r\n";
  const std::vector<std::string> want = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "q", "r"};
  CHECK(parsed_keys(input) == want);
  CHECK(lookahead(input) == want);
}

// A connection speaks one protocol (its first byte decides, as in memcached).
TEST_CASE("a pipeline of binary requests: the parser's keys, in order") {
  const std::string input = lookahead_binary(0x00, "n") + lookahead_binary(0x01, "o", std::string(8, '\0'), "value") +
                            lookahead_binary(0x0c, "p") + lookahead_binary(0x04, "q") + lookahead_binary(0x0a, "");
  const std::vector<std::string> want = {"n", "o", "p", "q"};
  CHECK(parsed_keys(input) == want);
  CHECK(lookahead(input) == want);
}

TEST_CASE("stops at an incomplete request, at a line it does not read, and when full") {
  CHECK(lookahead("get a\r\nget b") == std::vector<std::string>{"a"});
  CHECK(lookahead("get a\r\nset b 0 0 5\r\nab") == std::vector<std::string>{"a", "b"});
  CHECK(lookahead("get a\r\nset b 0 0 5\r\nabcde\r\nget c\r\n") == std::vector<std::string>{"a", "b", "c"});
  CHECK(lookahead("get a\r\nstats\r\nget b\r\n") == std::vector<std::string>{"a"});
  CHECK(lookahead("get a\r\nset b 0 0 x\r\n\r\nget c\r\n") == std::vector<std::string>{"a", "b"});
  CHECK(lookahead("get a b c d\r\nget e\r\n", 3) == std::vector<std::string>{"a", "b", "c"});
  CHECK(lookahead(lookahead_binary(0x00, "a") + lookahead_binary(0x00, "b").substr(0, 20)) ==
        std::vector<std::string>{"a"});
  // A body shorter than its key and extras: not read, and nothing after it.
  std::string bad = lookahead_binary(0x00, "abc");
  bad[11] = 1;
  CHECK(lookahead(bad + "get x\r\n").empty());
  CHECK(lookahead("").empty());
  CHECK(lookahead("\r\n").empty());
  CHECK(lookahead("get\r\nget a\r\n") == std::vector<std::string>{"a"});
  CHECK(lookahead("set \r\nget a\r\n").empty());
}

TEST_CASE("bare newlines and runs of spaces as the text parser takes them") {
  const std::string input = "get  a   b\nmg c v\nset d 0 0 1\nx\r\n";
  CHECK(lookahead(input) == parsed_keys(input));
}

}  // namespace
}  // namespace ithaca::protocol
