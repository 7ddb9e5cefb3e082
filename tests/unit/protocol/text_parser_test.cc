// Classic ascii parsing. Expected replies were captured from memcached 1.6.18
// with oracle/probe_text.py (the comment next to each case shows the exchange),
// and from memcached 1.6.45 where the two differ (ithaca answers as 1.6.45).
#include "helpers.h"

using namespace ithaca::protocol;
using namespace ithaca::protocol::test;

namespace {

event only(std::string_view input, parser_settings s = {}) {
  auto ev = parse_all(input, s);
  REQUIRE(ev.size() == 1);
  return ev[0];
}

std::string error_of(std::string_view input) {
  auto e = only(input);
  CHECK(e.status == parse_status::Error);
  return e.reply;
}

}  // namespace

TEST_CASE("get and gets, one and many keys, with \\r\\n or \\n") {
  auto e = only("get foo\r\n");
  CHECK(e.status == parse_status::Ok);
  CHECK(e.cmd == command::Get);
  CHECK(e.keys == std::vector<std::string>{"foo"});

  e = only("gets a b c\n");
  CHECK(e.cmd == command::Gets);
  CHECK(e.keys == std::vector<std::string>{"a", "b", "c"});

  // "  get a  " works; runs of spaces collapse; tabs belong to the key.
  e = only("  get  a  \r\n");
  CHECK(e.keys == std::vector<std::string>{"a"});
  e = only("get a\tb\r\n");
  CHECK(e.keys == std::vector<std::string>{"a\tb"});
  // Only one '\r' is stripped: "get a\r\r\n" asks for "a\r" (memcached: END).
  e = only("get a\r\r\n");
  CHECK(e.keys == std::vector<std::string>{"a\r"});
}

TEST_CASE("multiget beyond the inline key capacity spills") {
  std::string line = "get";
  for (int i = 0; i < 100; ++i) line += " k" + std::to_string(i);
  line += "\r\n";
  auto e = only(line);
  REQUIRE(e.keys.size() == 100);
  CHECK(e.keys[99] == "k99");
}

TEST_CASE("gat and gats take the exptime first") {
  auto e = only("gat 10 a n\r\n");
  CHECK(e.cmd == command::Gat);
  CHECK(e.exptime == 10);
  CHECK(e.keys == std::vector<std::string>{"a", "n"});
  e = only("gats -1 a\r\n");
  CHECK(e.cmd == command::Gats);
  CHECK(e.exptime == -1);
  // "gat 10": no keys is a bad command line (1.6.45; 1.6.18 said END).
  CHECK(error_of("gat 10\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(error_of("gat x a\r\n") == "CLIENT_ERROR invalid exptime argument\r\n");
  CHECK(error_of("gat +5 a\r\n") == "CLIENT_ERROR invalid exptime argument\r\n");
}

TEST_CASE("storage commands") {
  auto e = only("set foo 5 10 3\r\nbar\r\n");
  CHECK(e.cmd == command::Set);
  CHECK(e.keys == std::vector<std::string>{"foo"});
  CHECK(e.flags == 5);
  CHECK(e.exptime == 10);
  CHECK(e.value == "bar");
  CHECK_FALSE(e.noreply);

  CHECK(only("add k 0 0 1\r\nx\r\n").cmd == command::Add);
  CHECK(only("replace k 0 0 1\r\nx\r\n").cmd == command::Replace);
  CHECK(only("append k 0 0 1\r\nx\r\n").cmd == command::Append);
  CHECK(only("prepend k 0 0 1\r\nx\r\n").cmd == command::Prepend);
  e = only("cas k 1 2 1 99 noreply\r\nx\r\n");
  CHECK(e.cmd == command::Cas);
  CHECK(e.cas == 99);
  CHECK(e.noreply);
  // A value may contain "\r\n"; an empty value is fine.
  CHECK(only("set k 0 0 4\r\n\r\n\r\n\r\n").value == "\r\n\r\n");
  CHECK(only("set k 0 0 0\r\n\r\n").value.empty());
  // Number forms memcached accepts: "01", extra spaces, an extra word that
  // is not "noreply" ("set a 0 0 1 junk" -> STORED). 1.6.45 reads the length
  // strictly: "+1" is a bad command line (the flags and exptime still take it).
  CHECK(error_of("set a 0 0 +1\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(only("set a +1 +1 1\r\nx\r\n").flags == 1);
  CHECK(only("set a 0 0 01\r\nx\r\n").value == "x");
  CHECK(only("set  a  0 0  1\r\nx\r\n").value == "x");
  e = only("set a 0 0 1 junk\r\nx\r\n");
  CHECK(e.status == parse_status::Ok);
  CHECK_FALSE(e.noreply);
  // Flags are parsed as 64 bits and truncated ("set a 4294967296 0 1" stores 0).
  CHECK(only("set a 4294967296 0 1\r\nx\r\n").flags == 0);
  CHECK(only("set a 4294967295 0 1\r\nx\r\n").flags == 4294967295u);
  // Negative exptime is accepted (expires at once: the store's business).
  CHECK(only("set a 0 -5 1\r\nx\r\n").exptime == -5);
  // mcrouter lease-set: key token flags exptime bytes [noreply].
  parser p({});
  request req;
  auto r = p.parse("lease-set k 77 1 2 1\r\nx\r\n", req);
  CHECK(r.status == parse_status::Ok);
  CHECK(req.cmd == command::LeaseSet);
  CHECK(req.lease_token == 77);
  CHECK(req.flags == 1);
  CHECK(req.value == "x");
  r = p.parse("lease-get k\r\n", req);
  CHECK(req.cmd == command::LeaseGet);
  CHECK(req.key() == "k");
}

TEST_CASE("storage command errors, with memcached 1.6.45's words and resync") {
  // A length that is not a number (or too few words): a bad command line,
  // and nothing is swallowed (the length is unknown).
  CHECK(replies(parse_all("set a 0 0 -1\r\n")) == "CLIENT_ERROR bad command line format\r\n");
  CHECK(replies(parse_all("set a 0 0 1x\r\nget a\r\n")) == "CLIENT_ERROR bad command line format\r\n");
  CHECK(replies(parse_all("set a 0 0\r\n")) == "CLIENT_ERROR bad command line format\r\n");
  // vlen > INT_MAX - 2 is a bad command line, not "too large".
  CHECK(error_of("set a 0 0 2147483646\r\n") == "CLIENT_ERROR bad command line format\r\n");
  // Once the length is known, every error swallows the data: bad flags or
  // exptime, a cas without its unique (or a bad one), a key too long.
  for (const char* line :
       {"set a abc 0 1\r\nx\r\n", "set a -1 0 1\r\nx\r\n", "set a 0 abc 1\r\nx\r\n", "set a 0x10 0 1\r\nx\r\n",
        "cas a 0 0 1\r\nx\r\n", "cas a 0 0 1 \r\nx\r\n", "cas a 0 0 1 abc\r\nx\r\n", "cas a 0 0 1 +5\r\nx\r\n"}) {
    CHECK(replies(parse_all(line)) == "CLIENT_ERROR bad command line format\r\n");
  }
  CHECK(replies(parse_all("set " + std::string(251, 'a') + " 0 0 1\r\nx\r\n")) ==
        "CLIENT_ERROR bad command line format\r\n");
  // Words after the last one used are ignored.
  CHECK(only("set a 0 0 1 2 3\r\nx\r\n").status == parse_status::Ok);
  // With noreply memcached hides the error, and the data is swallowed.
  CHECK(replies(parse_all("set a abc 0 1 noreply\r\nx\r\n")).empty());
}

TEST_CASE("bad data chunk: memcached reads bytes+2 and resumes right after") {
  // "set a 0 0 3\r\nabcde\r\nget a\r\n" ->
  // "CLIENT_ERROR bad data chunk\r\nERROR\r\nEND\r\n"
  auto ev = parse_all("set a 0 0 3\r\nabcde\r\nget a\r\n");
  REQUIRE(ev.size() == 3);
  CHECK(ev[0].reply == "CLIENT_ERROR bad data chunk\r\n");
  // the "\r\n" left over is a line too short to be a command (1.6.45)
  CHECK(ev[1].reply == "CLIENT_ERROR bad command line format\r\n");
  CHECK(ev[2].cmd == command::Get);
  // "set a 0 0 1\nx\nget a\n": "\n" alone does not end a value.
  ev = parse_all("set a 0 0 1\nx\nget a\n");
  CHECK(replies(ev) == "CLIENT_ERROR bad data chunk\r\nERROR\r\n");
  // noreply hides it: "set a 0 0 1 noreply\r\nxyz\r\nversion\r\n" ->
  // the bad command line of the "\r\n" left over, VERSION.
  ev = parse_all("set a 0 0 1 noreply\r\nxyz\r\nversion\r\n");
  CHECK(replies(ev) == "CLIENT_ERROR bad command line format\r\n");
  CHECK(ev.back().cmd == command::Version);
}

TEST_CASE("too large values are refused and swallowed") {
  parser_settings s;
  s.item_size_max = 100;
  std::string input = "set big 0 0 200\r\n" + std::string(200, 'x') + "\r\nget a\r\n";
  auto ev = parse_all(input, s);
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].reply == "SERVER_ERROR object too large for cache\r\n");
  CHECK(ev[0].error == error_kind::TooLarge);
  CHECK_FALSE(ev[0].close);
  CHECK(ev[1].cmd == command::Get);
  // noreply: silent, still swallowed.
  ev = parse_all("set big 0 0 200 noreply\r\n" + std::string(200, 'x') + "\r\nversion\r\n", s);
  CHECK(replies(ev).empty());
  CHECK(ev.back().cmd == command::Version);
  // The swallow state survives across reads.
  parser p(s);
  request req;
  auto r = p.parse("set big 0 0 200\r\nxx", req);
  CHECK(r.status == parse_status::Error);
  CHECK(r.consumed == 19);
  CHECK(p.swallowing() == 200);
  CHECK(req.key() == "big");  // the executor unlinks it, as memcached does
}

TEST_CASE("incr and decr") {
  auto e = only("incr n 3\r\n");
  CHECK(e.cmd == command::Incr);
  CHECK(e.delta == 3);
  e = only("decr n 18446744073709551615 noreply\r\n");
  CHECK(e.cmd == command::Decr);
  CHECK(e.delta == 18446744073709551615ull);
  CHECK(e.noreply);
  CHECK(only("incr n 1 junk\r\n").noreply == false);
  CHECK(error_of("incr n +5\r\n") == "CLIENT_ERROR invalid numeric delta argument\r\n");
  CHECK(only("incr n 5 6 7\r\n").delta == 5);
  CHECK(error_of("incr a x\r\n") == "CLIENT_ERROR invalid numeric delta argument\r\n");
  CHECK(error_of("incr n -1\r\n") == "CLIENT_ERROR invalid numeric delta argument\r\n");
  CHECK(error_of("incr n 18446744073709551616\r\n") == "CLIENT_ERROR invalid numeric delta argument\r\n");
  CHECK(error_of("incr n 5x\r\n") == "CLIENT_ERROR invalid numeric delta argument\r\n");
  CHECK(error_of("incr n x noreply\r\n").empty());
  CHECK(error_of("incr a\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(error_of("decr\r\n") == "CLIENT_ERROR bad command line format\r\n");
}

TEST_CASE("delete") {
  auto e = only("delete a\r\n");
  CHECK(e.cmd == command::Delete);
  CHECK(e.keys == std::vector<std::string>{"a"});
  CHECK(only("delete a 0\r\n").status == parse_status::Ok);
  CHECK(only("delete a noreply\r\n").noreply);
  CHECK(only("delete a 0 noreply\r\n").noreply);
  // 1.6.45 ignores what follows the key.
  CHECK(only("delete a 5\r\n").status == parse_status::Ok);
  CHECK(only("delete a b c\r\n").status == parse_status::Ok);
  CHECK(error_of("delete\r\n") == "CLIENT_ERROR bad command line format\r\n");
}

TEST_CASE("touch, flush_all, verbosity, version, quit, stats, shutdown") {
  auto e = only("touch a 10\r\n");
  CHECK(e.cmd == command::Touch);
  CHECK(e.exptime == 10);
  CHECK(error_of("touch a x\r\n") == "CLIENT_ERROR invalid exptime argument\r\n");
  CHECK(error_of("touch a +5\r\n") == "CLIENT_ERROR invalid exptime argument\r\n");
  CHECK(error_of("touch a\r\n") == "CLIENT_ERROR bad command line format\r\n");

  parser p({});
  request req;
  p.parse("flush_all\r\n", req);
  CHECK(req.cmd == command::FlushAll);
  CHECK_FALSE(req.has_flush_delay);
  p.parse("flush_all 10\r\n", req);
  CHECK(req.has_flush_delay);
  CHECK(req.flush_delay == 10);
  p.parse("flush_all noreply\r\n", req);
  CHECK(req.noreply);
  CHECK_FALSE(req.has_flush_delay);
  p.parse("flush_all -1 noreply\r\n", req);
  CHECK(req.flush_delay == -1);
  CHECK(req.noreply);
  CHECK(error_of("flush_all x\r\n") == "CLIENT_ERROR invalid exptime argument\r\n");

  p.parse("verbosity 1 noreply\r\n", req);
  CHECK(req.cmd == command::Verbosity);
  CHECK(req.verbosity == 1);
  CHECK(req.noreply);
  CHECK(error_of("verbosity\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(only("verbosity 1 2 3\r\n").cmd == command::Verbosity);
  CHECK(error_of("verbosity x\r\n") == "CLIENT_ERROR bad command line format\r\n");

  CHECK(only("version x\r\n").cmd == command::Version);
  CHECK(only("quit x\r\n").cmd == command::Quit);
  p.parse("stats settings extra \r\n", req);
  CHECK(req.cmd == command::Stats);
  CHECK(req.args == "settings extra");
  p.parse("stats\r\n", req);
  CHECK(req.args.empty());
  p.parse("shutdown graceful\r\n", req);
  CHECK(req.cmd == command::Shutdown);
  CHECK(req.args == "graceful");
}

TEST_CASE("unknown commands answer ERROR; lines too short to hold a command, a bad command line") {
  CHECK(error_of("bogus\r\n") == "ERROR\r\n");
  CHECK(error_of("\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(error_of(" \n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(error_of("mn\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(error_of("   \r\n") == "ERROR\r\n");
  CHECK(error_of("GET a\r\n") == "ERROR\r\n");
  CHECK(error_of("get\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(error_of("gat 10\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(error_of("lease-get\r\n") == "ERROR\r\n");
}

TEST_CASE("HTTP-looking request lines close without a reply (memcached 1.6.45's rule)") {
  for (const char* line : {"GET / HTTP/1.1\r\n", "POST /x HTTP/1.0\r\n", "PUT / HTTP/1.1\r\n", "DELETE / HTTP/1.1\r\n",
                           "CONNECT a:1 HTTP/1.1\r\n", "PRI * HTTP/2.0\r\n", "GET HTTP/\r\n", "gx / HTTP/1.1\r\n",
                           "send / HTTP/1.1\r\n", "X HTTP/1.1\r\n", "mx HTTP/1.1\r\n"}) {
    CAPTURE(line);
    auto e = only(line);
    CHECK(e.status == parse_status::Error);
    CHECK(e.error == error_kind::CrossProtocol);
    CHECK(e.close);
    CHECK(e.reply.empty());
  }
  // One word, or HTTP/ not in the last word: ERROR as usual.
  for (const char* line : {"HTTP/1.1\r\n", "GET HTTP/1.1 x\r\n"}) {
    CAPTURE(line);
    CHECK(error_of(line) == "ERROR\r\n");
  }
  // memcached keeps 23 words: the 23rd is the one it looks at.
  std::string many = "GET";
  for (int i = 0; i < 21; ++i) many += " w";
  CHECK(only(many + " HTTP/1.1 x y\r\n").error == error_kind::CrossProtocol);
  CHECK(only(many + " w HTTP/1.1\r\n").error == error_kind::UnknownCommand);
  // A known command is that command.
  CHECK(only("get HTTP/1.1\r\n").cmd == command::Get);
  CHECK(only("mg HTTP/1.1\r\n").cmd == command::MetaGet);
}

TEST_CASE("a NUL is a byte of the line like any other (1.6.45; 1.6.18 ended the line there)") {
  auto e = only(std::string("get a\0 b c\r\n", 13));
  CHECK(e.keys == std::vector<std::string>{std::string("a\0", 2), "b", "c"});
  CHECK(replies(parse_all(std::string("set a 0 0 1\0zz\r\nx\r\n", 20))) ==
        "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\n");
}

TEST_CASE("numbers as memcached 1.6.45 reads them") {
  // Flags and exptime with safe_strto* (64 bits, the low 32 kept); the
  // length, cas unique and delta strictly (digits only, in range; a signed
  // one may be "-0").
  CHECK(only("set a -0 -0 -0\r\n\r\n").status == parse_status::Ok);
  auto e = only("set a 4294967304 4294967296 1\r\nx\r\n");
  CHECK(e.flags == 8);
  CHECK(e.exptime == 0);
  CHECK(e.value == "x");
  CHECK(error_of("set a 0 0 4294967297\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(only("set a 0 -2147483649 0\r\n\r\n").exptime == 2147483647);
  CHECK(replies(parse_all("cas a 0 0 0 -0\r\n\r\n")) == "CLIENT_ERROR bad command line format\r\n");
  CHECK(replies(parse_all("set a -1 0 0\r\n\r\n")) == "CLIENT_ERROR bad command line format\r\n");
  CHECK(error_of("incr a -0\r\n") == "CLIENT_ERROR invalid numeric delta argument\r\n");
}

TEST_CASE("key length limit is 250") {
  CHECK(only("get " + std::string(250, 'a') + "\r\n").status == parse_status::Ok);
  CHECK(error_of("get " + std::string(251, 'a') + "\r\n") == "CLIENT_ERROR bad command line format\r\n");
  // get takes no noreply: the error shows.
  CHECK(error_of("get " + std::string(251, 'a') + " noreply\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(error_of("incr " + std::string(251, 'a') + " 1\r\n") == "CLIENT_ERROR bad command line format\r\n");
}

TEST_CASE("a line may be 16384 bytes with its newline; longer closes, however it arrives") {
  // memcached 1.6.18 (READ_BUFFER_SIZE 16384), a line sent whole:
  // 16384 bytes with "\r\n" -> ERROR; 16385 -> closed without a reply.
  // `parse_all` checks the same events whole, byte by byte and in 7-byte reads.
  auto line = [](std::size_t n) { return std::string(n - 2, 'x') + "\r\n"; };
  CHECK(replies(parse_all(line(2049))) == "ERROR\r\n");
  auto ev = parse_all(line(16384) + "mn\r\n");
  CHECK(replies(ev) == "ERROR\r\n");
  CHECK(ev.back().cmd == command::MetaNoop);
  ev = parse_all(line(16385) + "mn\r\n");
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].error == error_kind::LineTooLong);
  CHECK(ev[0].close);
  CHECK(ev[0].reply.empty());
  // A bare "\n" counts one byte: 16383 'x' + "\n" is 16384 bytes.
  CHECK(parse_all(std::string(16383, 'x') + "\nmn\r\n").size() == 2);
  CHECK(parse_all(std::string(16384, 'x') + "\n").at(0).error == error_kind::LineTooLong);
  // Without its newline: 16383 bytes wait; 16384 close (the line cannot fit).
  CHECK(run(std::string(16383, 'x')).empty());
  CHECK(run(std::string(16383, 'x'), 1).empty());
  ev = run(std::string(16384, 'x'));
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].close);
  // Fed byte by byte, the limit is found as soon as it is reached.
  ev = run(std::string(20000, 'x'), 1);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].close);
  // A multiget may be longer (memcached grows its buffer for it).
  std::string get = "get";
  while (get.size() < 40000) get += " a";
  CHECK(run(get).empty());
  CHECK(run(get, 1).empty());
  CHECK(parse_all(get + "\r\n").size() == 1);
  // Leading spaces count toward the limit like any byte.
  CHECK(parse_all(std::string(16375, ' ') + "version\r\n").at(0).cmd == command::Version);
  CHECK(parse_all(std::string(16376, ' ') + "version\r\n").at(0).error == error_kind::LineTooLong);
}

TEST_CASE("pipelined requests in one buffer") {
  auto ev = parse_all("set n 0 0 1\r\n5\r\nincr n 3\r\ndecr n 100\r\nget n m\r\nmn\r\nquit\r\n");
  REQUIRE(ev.size() == 6);
  CHECK(ev[0].cmd == command::Set);
  CHECK(ev[1].cmd == command::Incr);
  CHECK(ev[2].cmd == command::Decr);
  CHECK(ev[3].keys.size() == 2);
  CHECK(ev[4].cmd == command::MetaNoop);
  CHECK(ev[5].cmd == command::Quit);
}

TEST_CASE("a value trickling in does not need rescans and is NeedMore until complete") {
  parser p({});
  request req;
  std::string buf = "set k 0 0 10\r\n";
  CHECK(p.parse(buf, req).status == parse_status::NeedMore);
  buf += "01234";
  CHECK(p.parse(buf, req).status == parse_status::NeedMore);
  buf += "56789\r";
  CHECK(p.parse(buf, req).status == parse_status::NeedMore);
  buf += "\n";
  auto r = p.parse(buf, req);
  CHECK(r.status == parse_status::Ok);
  CHECK(r.consumed == buf.size());
  CHECK(req.value == "0123456789");
}

// memcached 1.6.18: "cache_memlimit 4294967304" -> OK (8 after truncation),
// "-0" -> MEMLIMIT_TOO_SMALL, "-5" and "0x10" -> ERROR, "noreply" hides all.
TEST_CASE("cache_memlimit") {
  parser p({});
  request req;
  auto ok = [&](std::string_view line) {
    parse_result r = p.parse(line, req);
    REQUIRE(r.status == parse_status::Ok);
    CHECK(req.cmd == command::CacheMemlimit);
    return req.memlimit_mb;
  };
  CHECK(ok("cache_memlimit 100\r\n") == 100);
  CHECK(ok("cache_memlimit 4294967304\r\n") == 8);
  CHECK(ok("cache_memlimit -0\r\n") == 0);
  CHECK(ok("cache_memlimit +9\r\n") == 9);
  CHECK(ok("cache_memlimit 18446744073709551615\r\n") == 4294967295u);
  CHECK(ok("cache_memlimit 100 foo\r\n") == 100);
  CHECK_FALSE(req.noreply);
  CHECK(ok("cache_memlimit 100 noreply\r\n") == 100);
  CHECK(req.noreply);

  CHECK(error_of("cache_memlimit\r\n") == "ERROR\r\n");
  CHECK(error_of("cache_memlimit 1 noreply x\r\n") == "ERROR\r\n");
  CHECK(error_of("cache_memlimit -5\r\n") == "ERROR\r\n");
  CHECK(error_of("cache_memlimit 0x10\r\n") == "ERROR\r\n");
  CHECK(error_of("cache_memlimit 18446744073709551616\r\n") == "ERROR\r\n");
  parse_result r = p.parse("cache_memlimit abc noreply\r\n", req);
  CHECK(r.status == parse_status::Error);
  CHECK(r.silent);
}

TEST_CASE("Ok and Error leave nothing of the request parsed before into the same object") {
  // The request loop reuses one request object per slot and does not clear it:
  // the parsers must.
  parser_settings s;
  s.max_line_length = 64;
  for (const std::string_view bad :
       {std::string_view("bogus\r\n"), std::string_view("set k 0 0 x\r\n"), std::string_view("get\r\n")}) {
    parser p(s);
    request req;
    REQUIRE(p.parse("ms kk 2 T9 F7 c\r\nxy\r\n", req).status == parse_status::Ok);
    REQUIRE(req.keys.size() == 1);
    const parse_result r = p.parse(bad, req);
    INFO(bad);
    CHECK(r.status == parse_status::Error);
    CHECK(req.keys.empty());
    CHECK(req.value.empty());
    CHECK(req.flags == 0);
    CHECK(req.meta.ttl != 9);
  }
  {
    parser p(s);
    request req;
    REQUIRE(p.parse("get a b c\r\n", req).status == parse_status::Ok);
    const std::string endless(100, 'x');
    const parse_result r = p.parse(endless, req);  // no newline within 64 bytes
    CHECK(r.status == parse_status::Error);
    CHECK(r.close);
    CHECK(req.keys.empty());
  }
  {
    parser_settings loose;
    loose.lock_protocol = false;
    parser p(loose);
    request req;
    REQUIRE(p.parse("get a b c\r\n", req).status == parse_status::Ok);
    std::string bad_binary(24, '\0');
    bad_binary[0] = static_cast<char>(0x80);
    bad_binary[1] = static_cast<char>(0x01);  // set
    bad_binary[4] = 0;                        // no extras: a set needs 8
    const parse_result r = p.parse(bad_binary, req);
    CHECK(r.status == parse_status::Error);
    CHECK(req.keys.empty());
    CHECK(req.proto == protocol_kind::Binary);
  }
}
