// The one command classification (command_class.h), checked on requests as
// the parsers produce them from real lines and packets.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "command_class.h"
#include "helpers.h"
#include "parser.h"

namespace ithaca::protocol {
namespace {

// Parses one complete request from `wire`.
request parse_one(std::string_view wire) {
  parser p{parser_settings{}};
  request req;
  const parse_result r = p.parse(wire, req);
  REQUIRE(r.status == parse_status::Ok);
  return req;
}

std::string binary(std::uint8_t opcode, std::string_view key, std::string_view extras = {},
                   std::string_view value = {}) {
  return test::binary_packet(opcode, key, extras, value);
}

TEST_CASE("each ascii command has one class and one operation") {
  struct row {
    const char* line;
    command_class cls;
    op_class op;
    bool modifies;
    bool again;
  };
  const row rows[] = {
      {"get a b\r\n", command_class::Retrieve, op_class::Get, false, true},
      {"gets a\r\n", command_class::Retrieve, op_class::Get, false, true},
      {"gat 10 a\r\n", command_class::Retrieve, op_class::Touch, true, false},
      {"set a 0 0 1\r\nx\r\n", command_class::Store, op_class::Set, true, false},
      {"cas a 0 0 1 5\r\nx\r\n", command_class::Store, op_class::Set, true, false},
      {"append a 0 0 1\r\nx\r\n", command_class::Store, op_class::Set, true, false},
      {"delete a\r\n", command_class::Delete, op_class::Delete, true, false},
      {"incr a 1\r\n", command_class::Arithmetic, op_class::Arithmetic, true, false},
      {"touch a 10\r\n", command_class::Touch, op_class::Touch, true, false},
      {"flush_all\r\n", command_class::Flush, op_class::None, true, false},
      {"mg a v\r\n", command_class::Retrieve, op_class::Get, false, true},
      {"mg a v T30\r\n", command_class::Retrieve, op_class::Get, true, false},
      {"mg a v N30\r\n", command_class::Retrieve, op_class::Get, true, false},
      {"mg a v h\r\n", command_class::Retrieve, op_class::Get, false, false},
      {"ms a 1\r\nx\r\n", command_class::Store, op_class::Set, true, false},
      {"md a\r\n", command_class::Delete, op_class::Delete, true, false},
      {"ma a\r\n", command_class::Arithmetic, op_class::Arithmetic, true, false},
      {"me a\r\n", command_class::Debug, op_class::None, false, false},
      {"mn\r\n", command_class::Server, op_class::None, false, false},
      {"version\r\n", command_class::Server, op_class::None, false, false},
      {"stats items\r\n", command_class::Server, op_class::None, false, false},
      {"verbosity 1\r\n", command_class::Server, op_class::None, false, false},
      {"quit\r\n", command_class::Server, op_class::None, false, false},
      {"cache_memlimit 64\r\n", command_class::Server, op_class::None, false, false},
      {"watch\r\n", command_class::Server, op_class::None, false, false},
  };
  for (const row& r : rows) {
    CAPTURE(r.line);
    const request req = parse_one(r.line);
    CHECK(classify(req) == r.cls);
    CHECK(operation_of(req) == r.op);
    CHECK(modifies(req) == r.modifies);
    CHECK(can_fetch_again(req) == r.again);
  }
}

TEST_CASE("binary Touch answers a value: a retrieval that modifies") {
  const std::string extras("\0\0\0\x0a", 4);
  const request touch = parse_one(binary(0x1c, "k", extras));
  CHECK(touch.cmd == command::Touch);
  CHECK(classify(touch) == command_class::Retrieve);
  CHECK(operation_of(touch) == op_class::Touch);
  CHECK(modifies(touch));
  const request get = parse_one(binary(0x00, "k"));
  CHECK(classify(get) == command_class::Retrieve);
  CHECK_FALSE(modifies(get));
  const request noop = parse_one(binary(0x0a, ""));
  CHECK(classify(noop) == command_class::Server);
}

TEST_CASE("only an ascii get line is a multi-key retrieval") {
  CHECK(is_multikey_retrieval(parse_one("get a b c\r\n")));
  CHECK(is_multikey_retrieval(parse_one("gats 1 a\r\n")));
  CHECK_FALSE(is_multikey_retrieval(parse_one("mg a v\r\n")));
  CHECK_FALSE(is_multikey_retrieval(parse_one(binary(0x00, "k"))));
}

}  // namespace
}  // namespace ithaca::protocol
