// backend_reply_parser: every shape, fed whole, byte by byte and in chunks,
// must give the same pieces; garbage is an Error, never an over-read.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backend_reply_parser.h"

namespace ithaca::protocol {
namespace {

struct flat_piece {
  piece_kind kind;
  std::string raw, line, key, data, code, flags_text;
  std::uint32_t flags;
  std::uint64_t cas;
  bool has_cas;
  bool operator==(const flat_piece&) const = default;
};

struct run_result {
  std::vector<flat_piece> pieces;
  bool error = false;
  std::size_t left = 0;  // bytes never consumed
  bool operator==(const run_result&) const = default;
};

// Feeds `input` `chunk` bytes at a time (0: all at once) through one shape,
// the buffer holding only what was received and not consumed, as a
// connection's read buffer does.
run_result run(std::string_view input, reply_shape shape, std::size_t chunk) {
  backend_reply_parser p(1 << 20);
  run_result r;
  std::string buf;
  std::size_t fed = 0;
  for (;;) {
    reply_piece piece;
    std::size_t used = 0;
    const parse_status st = p.next(buf, shape, piece, used);
    REQUIRE(used <= buf.size());
    if (st == parse_status::Ok) {
      REQUIRE(used > 0);
      REQUIRE(piece.raw.data() == buf.data());
      REQUIRE(piece.raw.size() == used);
      r.pieces.push_back({piece.kind, std::string(piece.raw), std::string(piece.line), std::string(piece.key),
                          std::string(piece.data), std::string(piece.code), std::string(piece.meta_flags), piece.flags,
                          piece.cas, piece.has_cas});
      buf.erase(0, used);
      continue;
    }
    if (st == parse_status::Error) {
      r.error = true;
      break;
    }
    REQUIRE(used == 0);
    if (fed == input.size()) break;
    const std::size_t n = chunk == 0 ? input.size() - fed : std::min(chunk, input.size() - fed);
    buf.append(input.substr(fed, n));
    fed += n;
  }
  r.left = buf.size() + (input.size() - fed);
  return r;
}

run_result parse_all(std::string_view input, reply_shape shape) {
  const run_result whole = run(input, shape, 0);
  CHECK(whole == run(input, shape, 1));
  CHECK(whole == run(input, shape, 5));
  return whole;
}

}  // namespace

TEST_CASE("values: VALUE pieces with data, then END") {
  const std::string in = "VALUE a 5 3\r\nabc\r\nVALUE bb 0 0 77\r\n\r\nVALUE c 4294967295 2\r\n\r\n\r\nEND\r\n";
  const auto r = parse_all(in, reply_shape::Values);
  REQUIRE_FALSE(r.error);
  REQUIRE(r.pieces.size() == 4);
  CHECK(r.pieces[0].kind == piece_kind::Value);
  CHECK(r.pieces[0].key == "a");
  CHECK(r.pieces[0].flags == 5);
  CHECK(r.pieces[0].data == "abc");
  CHECK_FALSE(r.pieces[0].has_cas);
  CHECK(r.pieces[1].key == "bb");
  CHECK(r.pieces[1].data.empty());
  CHECK(r.pieces[1].has_cas);
  CHECK(r.pieces[1].cas == 77);
  CHECK(r.pieces[2].flags == 4294967295u);
  CHECK(r.pieces[2].data == "\r\n");  // data may hold CRLF: the length frames it
  CHECK(r.pieces[3].kind == piece_kind::End);
  CHECK(r.left == 0);
}

TEST_CASE("values: an error line ends the reply") {
  const auto r = parse_all("SERVER_ERROR out of memory writing get response\r\n", reply_shape::Values);
  REQUIRE(r.pieces.size() == 1);
  CHECK(r.pieces[0].kind == piece_kind::Error);
  CHECK(r.pieces[0].line == "SERVER_ERROR out of memory writing get response");
  CHECK(parse_all("ERROR\r\n", reply_shape::Values).pieces[0].kind == piece_kind::Error);
  CHECK(parse_all("CLIENT_ERROR bad command line format\r\n", reply_shape::Line).pieces[0].kind == piece_kind::Error);
}

TEST_CASE("line and version shapes") {
  const auto r = parse_all("STORED\r\n12345\r\nNOT_FOUND\r\n", reply_shape::Line);
  REQUIRE(r.pieces.size() == 3);
  CHECK(r.pieces[1].kind == piece_kind::Line);
  CHECK(r.pieces[1].line == "12345");
  const auto v = parse_all("VERSION 1.6.18\r\n", reply_shape::Version);
  REQUIRE(v.pieces.size() == 1);
  CHECK(v.pieces[0].line == "VERSION 1.6.18");
  CHECK(parse_all("STORED\r\n", reply_shape::Version).error);
}

TEST_CASE("stats: STAT name value lines up to END") {
  const auto r = parse_all("STAT pid 42\r\nSTAT version 1.6.18\r\nSTAT empty \r\nEND\r\n", reply_shape::Stats);
  REQUIRE(r.pieces.size() == 4);
  CHECK(r.pieces[0].kind == piece_kind::Stat);
  CHECK(r.pieces[0].key == "pid");
  CHECK(r.pieces[0].data == "42");
  CHECK(r.pieces[2].key == "empty");
  CHECK(r.pieces[3].kind == piece_kind::End);
  CHECK(parse_all("VALUE a 0 1\r\nx\r\nEND\r\n", reply_shape::Stats).error);
}

TEST_CASE("meta: every code, VA with data, return flags") {
  const std::string in =
      "HD c5 kfoo\r\nVA 2 f3 c9 s2\r\nhi\r\nEN\r\nNF O12\r\nNS\r\nEX\r\nMN\r\nME a exp=-1 la=1\r\nVA 0\r\n\r\n";
  const auto r = parse_all(in, reply_shape::Meta);
  REQUIRE_FALSE(r.error);
  REQUIRE(r.pieces.size() == 9);
  CHECK(r.pieces[0].code == "HD");
  CHECK(r.pieces[0].flags_text == "c5 kfoo");
  CHECK(r.pieces[1].code == "VA");
  CHECK(r.pieces[1].data == "hi");
  CHECK(r.pieces[1].flags_text == "f3 c9 s2");
  CHECK(r.pieces[7].code == "ME");
  CHECK(r.pieces[8].data.empty());

  backend_reply_parser p;
  reply_piece piece;
  std::size_t used = 0;
  REQUIRE(p.next("VA 2 f3 c9 W\r\nhi\r\n", reply_shape::Meta, piece, used) == parse_status::Ok);
  std::string_view token;
  CHECK(piece.meta_flag('c', token));
  CHECK(token == "9");
  CHECK(piece.meta_flag('W'));
  CHECK_FALSE(piece.meta_flag('Z'));
}

TEST_CASE("garbage is an Error, never a crash or an over-read") {
  // A line over 2 KiB without a newline.
  CHECK(parse_all(std::string(3000, 'x'), reply_shape::Line).error);
  CHECK(parse_all("VALUE " + std::string(3000, 'k'), reply_shape::Values).error);
  // Data not followed by CRLF (the length lies).
  CHECK(parse_all("VALUE a 0 3\r\nabcd\r\nEND\r\n", reply_shape::Values).error);
  CHECK(parse_all("VA 1\r\nxy\r\n", reply_shape::Meta).error);
  // Bad numbers and tokens.
  CHECK(parse_all("VALUE a x 3\r\nabc\r\n", reply_shape::Values).error);
  CHECK(parse_all("VALUE a 0 -3\r\nabc\r\n", reply_shape::Values).error);
  CHECK(parse_all("VALUE a 4294967296 1\r\na\r\n", reply_shape::Values).error);
  CHECK(parse_all("VALUE a 0 1 zz\r\na\r\n", reply_shape::Values).error);
  CHECK(parse_all("VALUE a 0 1 1 1\r\na\r\n", reply_shape::Values).error);
  CHECK(parse_all("VALUE a 0\r\n", reply_shape::Values).error);
  CHECK(parse_all("VALUE\r\n", reply_shape::Values).error);
  CHECK(parse_all("STORED\r\n", reply_shape::Values).error);  // not a retrieval reply
  CHECK(parse_all("XX\r\n", reply_shape::Meta).error);
  CHECK(parse_all("VA x\r\n", reply_shape::Meta).error);
  CHECK(parse_all("HDX\r\n", reply_shape::Meta).error);
  // A bare LF, and a length beyond the parser's bound (no waiting for 4 GB).
  CHECK(parse_all("STORED\n", reply_shape::Line).error);
  CHECK(parse_all("VALUE a 0 4000000000\r\n", reply_shape::Values).error);
  CHECK(parse_all("VA 99999999999\r\n", reply_shape::Meta).error);
}

TEST_CASE("a missing END or an unfinished value is NeedMore, not a piece") {
  const auto r = parse_all("VALUE a 0 3\r\nabc\r\n", reply_shape::Values);
  CHECK_FALSE(r.error);
  CHECK(r.pieces.size() == 1);  // the caller keeps waiting (and times out) for END
  const auto partial = parse_all("VALUE a 0 10\r\nabc", reply_shape::Values);
  CHECK_FALSE(partial.error);
  CHECK(partial.pieces.empty());
  CHECK(partial.left == 17);
}

TEST_CASE("reset forgets a half-read piece") {
  backend_reply_parser p;
  reply_piece piece;
  std::size_t used = 0;
  CHECK(p.next("VALUE a 0 100\r\nab", reply_shape::Values, piece, used) == parse_status::NeedMore);
  p.reset();
  CHECK(p.next("END\r\n", reply_shape::Values, piece, used) == parse_status::Ok);
  CHECK(piece.kind == piece_kind::End);
}

TEST_CASE("a header announcing more than the value bound is an error before any data") {
  backend_reply_parser p;
  p.set_max_value(1 << 20);  // the router's live item_size_max
  reply_piece piece;
  std::size_t used = 0;
  // Only the header has arrived: refused at once, not NeedMore for a GiB.
  CHECK(p.next("VALUE k 0 1073741824\r\n", reply_shape::Values, piece, used) == parse_status::Error);
  CHECK(p.next("VA 1048577 v\r\n", reply_shape::Meta, piece, used) == parse_status::Error);
  // The bound itself is a value memcached can hold.
  const std::string at_bound = "VALUE k 0 1048576\r\n" + std::string(1 << 20, 'x') + "\r\n";
  CHECK(p.next(at_bound, reply_shape::Values, piece, used) == parse_status::Ok);
  CHECK(piece.data.size() == (1u << 20));
  // A reload lowers it: the next header sees the new bound.
  p.set_max_value(1000);
  CHECK(p.next("VALUE k 0 1001\r\n", reply_shape::Values, piece, used) == parse_status::Error);
  CHECK(p.next("VALUE k 0 1000\r\n", reply_shape::Values, piece, used) == parse_status::NeedMore);
}

}  // namespace ithaca::protocol
