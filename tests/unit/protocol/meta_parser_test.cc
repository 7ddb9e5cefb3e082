// Meta command parsing. Replies captured from memcached 1.6.45 (ithaca answers
// as 1.6.45 where it and Debian's 1.6.18 differ).
#include "helpers.h"

using namespace ithaca::protocol;
using namespace ithaca::protocol::test;

namespace {

std::string meta_error_of(std::string_view input) {
  auto ev = parse_all(input);
  REQUIRE(!ev.empty());
  CHECK(ev[0].status == parse_status::Error);
  return ev[0].reply;
}

request parse_one(std::string_view input) {
  static parser_settings s;
  parser p(s);
  request req;
  auto r = p.parse(input, req);
  CHECK(r.status == parse_status::Ok);
  CHECK(r.consumed == input.size());
  return req;
}

}  // namespace

TEST_CASE("mg flags are recorded with their values and their order") {
  parser_settings s;
  parser p(s);
  request req;
  // At most 17 flags fit in a line (20 words are refused): two requests.
  auto res = p.parse("mg foo h l u P L I\r\n", req);
  REQUIRE(res.status == parse_status::Ok);
  for (char c : std::string_view("hluPLI")) CHECK(req.meta.has(c));
  res = p.parse("mg Zm9v b v c f t s k O123 q T30 N40 R50 E7\r\n", req);
  REQUIRE(res.status == parse_status::Ok);
  CHECK(req.cmd == command::MetaGet);
  CHECK(req.proto == protocol_kind::Meta);
  CHECK(req.key() == "foo");
  CHECK(req.meta_key_binary);
  for (char c : std::string_view("bvcftskOqTNRE")) CHECK(req.meta.has(c));
  CHECK_FALSE(req.meta.has('h'));
  CHECK_FALSE(req.meta.has('x'));
  CHECK(req.meta.opaque == "123");
  CHECK(req.meta.ttl == 30);
  CHECK(req.meta.vivify_ttl == 40);
  CHECK(req.meta.recache_ttl == 50);
  CHECK(req.meta.explicit_cas == 7);
  CHECK(req.noreply);
  CHECK(std::string(req.meta.order.data(), req.meta.order_size) == "bvcftskOqTNRE");
}

TEST_CASE("ms, md, ma, mn, me") {
  parser_settings s;
  parser p(s);
  request req;
  auto r = p.parse("ms foo 3 T90 F1 C5 MA I k\r\nbar\r\n", req);
  REQUIRE(r.status == parse_status::Ok);
  CHECK(req.cmd == command::MetaSet);
  CHECK(req.value == "bar");
  CHECK(req.exptime == 90);
  CHECK(req.flags == 1);
  CHECK(req.cas == 5);
  CHECK(req.meta.mode == 'A');
  for (const char* mode : {"ME", "MA", "MP", "MR", "MS"}) {
    CHECK(p.parse(std::string("ms k 1 ") + mode + "\r\nx\r\n", req).status == parse_status::Ok);
  }
  r = p.parse("md foo q C9 I T30\r\n", req);
  CHECK(req.cmd == command::MetaDelete);
  CHECK(req.cas == 9);
  r = p.parse("ma n D10 J7 N0 MD v\r\n", req);
  CHECK(req.cmd == command::MetaArithmetic);
  CHECK(req.delta == 10);
  CHECK(req.initial == 7);
  CHECK(req.meta.mode == 'D');
  for (const char* mode : {"MI", "M+", "MD", "M-"}) {
    CHECK(p.parse(std::string("ma n ") + mode + "\r\n", req).status == parse_status::Ok);
  }
  r = p.parse("ma n\r\n", req);
  CHECK(req.delta == 1);  // default delta
  r = p.parse("mn x\r\n", req);
  CHECK(req.cmd == command::MetaNoop);
  r = p.parse("me foo x\r\n", req);
  CHECK(req.cmd == command::MetaDebug);
  CHECK(req.key() == "foo");
  // ms byte by byte gives the same as whole.
  auto ev = parse_all("ms foo 3 T0 F7 c k O9\r\nabc\r\nmg foo v\r\n");
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].value == "abc");
}

TEST_CASE("meta errors, memcached 1.6.45 words") {
  CHECK(meta_error_of("mg\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(meta_error_of("md\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(meta_error_of("mz foo\r\n") == "ERROR\r\n");
  CHECK(meta_error_of("me\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(meta_error_of("mg " + std::string(251, 'a') + "\r\n") == "CLIENT_ERROR bad command line format\r\n");
  CHECK(meta_error_of("mg foo z\r\n") == "CLIENT_ERROR invalid flag\r\n");
  CHECK(meta_error_of("mg foo +\r\n") == "CLIENT_ERROR bad command line format\r\n");  // its tokenizer
  CHECK(meta_error_of("mg foo 1\r\n") == "CLIENT_ERROR invalid flag\r\n");
  CHECK(meta_error_of("mg foo S\r\n") == "CLIENT_ERROR invalid flag\r\n");
  CHECK(meta_error_of("mg foo v v\r\n") == "CLIENT_ERROR duplicate flag\r\n");
  CHECK(meta_error_of("mg foo T1 T2\r\n") == "CLIENT_ERROR duplicate flag\r\n");
  CHECK(meta_error_of("mg foo T\r\n") == "CLIENT_ERROR bad token in command line format\r\n");
  CHECK(meta_error_of("mg foo Tx\r\n") == "CLIENT_ERROR bad token in command line format\r\n");
  CHECK(meta_error_of("mg foo R\r\n") == "CLIENT_ERROR bad token in command line format\r\n");
  CHECK(meta_error_of("mg foo N\r\n") == "CLIENT_ERROR bad token in command line format\r\n");
  // The last token error wins, as in memcached.
  CHECK(meta_error_of("mg foo T b\r\n") == "CLIENT_ERROR error decoding key\r\n");
  CHECK(meta_error_of("mg foo b T\r\n") == "CLIENT_ERROR bad token in command line format\r\n");
  CHECK(meta_error_of("mg Zm9v= b k v\r\n") == "CLIENT_ERROR error decoding key\r\n");
  CHECK(meta_error_of("mg !!! b\r\n") == "CLIENT_ERROR error decoding key\r\n");
  CHECK(meta_error_of("mg Z b\r\n") == "CLIENT_ERROR error decoding key\r\n");
  // Opaque: "O" + 31 bytes is fine, 32 is too long.
  CHECK(parse_all("mg foo O" + std::string(31, 'a') + "\r\n")[0].status == parse_status::Ok);
  CHECK(meta_error_of("mg foo O" + std::string(32, 'a') + "\r\n") == "CLIENT_ERROR opaque token too long\r\n");
  CHECK(meta_error_of("md foo O" + std::string(32, 'a') + "\r\n") == "CLIENT_ERROR opaque token too long\r\n");
  // 20 words or more.
  std::string many = "mg foo";
  for (char c : std::string_view("kstcfvhulOPLITNRC"))
    many += std::string(" ") + c + (std::string_view("TNRC").find(c) != std::string_view::npos ? "1" : "");
  CHECK(parse_all(many + "\r\n")[0].status == parse_status::Ok);     // 19 words
  CHECK(parse_all(many + " D1\r\n")[0].status == parse_status::Ok);  // 20 words
  CHECK(meta_error_of(many + " D1 E1\r\n") == "CLIENT_ERROR options flags are too long\r\n");
  // md names its flag problems; ma uses one message for all of them.
  CHECK(parse_all("md foo x\r\n")[0].status == parse_status::Ok);
  CHECK(meta_error_of("md foo 5\r\n") == "CLIENT_ERROR invalid flag\r\n");
  CHECK(meta_error_of("md foo Tx\r\n") == "CLIENT_ERROR bad token in command line format\r\n");
  CHECK(meta_error_of("ma n Dx\r\n") == "CLIENT_ERROR invalid or duplicate flag\r\n");
  CHECK(meta_error_of("ma n Jx\r\n") == "CLIENT_ERROR invalid or duplicate flag\r\n");
  CHECK(meta_error_of("ma n Mx\r\n") == "CLIENT_ERROR invalid mode for ma M token\r\n");
  CHECK(meta_error_of("ma n Mi\r\n") == "CLIENT_ERROR invalid mode for ma M token\r\n");
}

TEST_CASE("ms errors: before the length no swallow, after it the value is swallowed") {
  CHECK(replies(parse_all("ms foo\r\nabc\r\n")) == "CLIENT_ERROR bad command line format\r\nERROR\r\n");
  CHECK(replies(parse_all("ms foo x\r\nabc\r\n")) == "CLIENT_ERROR bad command line format\r\nERROR\r\n");
  CHECK(replies(parse_all("ms foo -1\r\nabc\r\n")) == "CLIENT_ERROR bad command line format\r\nERROR\r\n");
  CHECK(replies(parse_all("ms " + std::string(251, 'a') + " 3\r\nabc\r\n")) ==
        "CLIENT_ERROR bad command line format\r\n");
  CHECK(replies(parse_all("ms foo 3 MX\r\nabc\r\nmn\r\n")) == "CLIENT_ERROR invalid mode for ms M token\r\n");
  CHECK(replies(parse_all("ms foo 1 Ms\r\nx\r\n")) == "CLIENT_ERROR invalid mode for ms M token\r\n");
  CHECK(parse_all("ms foo 3 MEE\r\nabc\r\n")[0].status == parse_status::Ok);  // 1.6.45: mode E
  CHECK(replies(parse_all("ms foo 3 Fx\r\nabc\r\n")) == "CLIENT_ERROR bad command line format\r\n");
  CHECK(replies(parse_all("ms foo 3 Cx\r\nabc\r\n")) == "CLIENT_ERROR bad token in command line format\r\n");
  CHECK(replies(parse_all("ms foo 3 T\r\nabc\r\n")) == "CLIENT_ERROR bad token in command line format\r\n");
  CHECK(replies(parse_all("ms foo 3 S3\r\nabc\r\n")) == "CLIENT_ERROR invalid flag\r\n");
  CHECK(replies(parse_all("ms foo 3 zz\r\nabc\r\n")) == "CLIENT_ERROR invalid flag\r\n");
  CHECK(replies(parse_all("ms foo 1 b\r\nx\r\nmn\r\n")) == "CLIENT_ERROR error decoding key\r\n");
  // Bad data chunk is shown even with q; the "\r\n" left over is too short a line.
  CHECK(replies(parse_all("ms foo 3 q\r\nabcde\r\nmn\r\n")) ==
        "CLIENT_ERROR bad data chunk\r\nCLIENT_ERROR bad command line format\r\n");
  parser_settings s;
  s.item_size_max = 10;
  auto ev = parse_all("ms foo 20\r\n" + std::string(20, 'x') + "\r\nmn\r\n", s);
  CHECK(replies(ev) == "SERVER_ERROR object too large for cache\r\n");
  CHECK(ev.back().cmd == command::MetaNoop);
  std::string many = "ms foo 1";
  for (char c : std::string_view("kstcfvhulOPLIqub")) many += std::string(" ") + c;
  CHECK(replies(parse_all(many + " D1 C1\r\nx\r\n")) == "CLIENT_ERROR options flags are too long\r\n");
}

TEST_CASE("base64 keys decode into the request's scratch") {
  request r = parse_one("mg Zm8= b k v\r\n");
  CHECK(r.key() == "fo");
  r = parse_one("md Zg== b\r\n");
  CHECK(r.key() == "f");
  CHECK(r.meta_key_binary);
}

TEST_CASE("a long meta line is answered, not closed, and the connection goes on") {
  // memcached 1.6.45: "mg foo" with 1,000 flags (about 8 KB) ->
  // CLIENT_ERROR options flags are too long; the next command is served.
  // parse_all feeds it whole, byte by byte and in 7-byte reads.
  std::string flags;
  for (int i = 0; i < 1000; ++i) flags += " O" + std::to_string(i);
  auto answered_then_mn = [](const std::string& input, std::string_view reply) {
    auto ev = parse_all(input + "mn\r\n");
    CHECK(replies(ev) == reply);
    REQUIRE(!ev.empty());
    CHECK(ev.back().cmd == command::MetaNoop);  // the connection goes on
  };
  answered_then_mn("mg foo" + flags + "\r\n", "CLIENT_ERROR options flags are too long\r\n");
  // md words it so too, ma with its one message for every flag problem
  // (and so for 21 words, as for 1,000).
  answered_then_mn("md foo" + flags + "\r\n", "CLIENT_ERROR options flags are too long\r\n");
  answered_then_mn("ma foo" + flags + "\r\n", "CLIENT_ERROR invalid or duplicate flag\r\n");
  std::string twenty_one = "md foo q";  // 21 words
  for (int i = 0; i < 18; ++i) twenty_one += " k";
  CHECK(replies(parse_all(twenty_one + "\r\n")) == "CLIENT_ERROR options flags are too long\r\n");
  // ms: its length is known, so the value is swallowed.
  answered_then_mn("ms foo 1" + flags + "\r\nx\r\n", "CLIENT_ERROR options flags are too long\r\n");
  // A long line with few words is fine: spaces up to the 16384-byte limit.
  const std::string pad(16384 - std::string_view("mg foo v\r\n").size(), ' ');
  auto ev = parse_all("mg foo" + pad + " v\r\nmn\r\n");
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].status == parse_status::Ok);
  CHECK(ev[0].cmd == command::MetaGet);
  CHECK(ev[1].cmd == command::MetaNoop);
  // One byte more closes without a reply.
  ev = parse_all("mg foo " + pad + " v\r\nmn\r\n");
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].error == error_kind::LineTooLong);
  CHECK(ev[0].close);
}

TEST_CASE("clear() gives every meta field back its default after a request that set them all") {
  parser_settings s;
  parser p(s);
  request req;
  auto r = p.parse("ma foo N40 J13 D7 T30 C5 E9 MD O77 q v t c k\r\n", req);
  REQUIRE(r.status == parse_status::Ok);
  REQUIRE(req.meta.present != 0);
  REQUIRE(req.meta.order_size > 0);
  // The parse really set what clear() must undo.
  REQUIRE(req.meta.vivify_ttl == 40);
  REQUIRE(req.meta.initial == 13);
  REQUIRE(req.meta.delta == 7);
  REQUIRE(req.meta.ttl == 30);
  REQUIRE(req.meta.compare_cas == 5);
  REQUIRE(req.meta.explicit_cas == 9);
  REQUIRE(req.meta.mode != 0);
  REQUIRE(req.meta.opaque == "77");
  req.meta.client_flags = 3;  // F is an ms flag: set by hand so it is covered too
  req.meta.recache_ttl = 50;
  req.clear();
  const meta_flags fresh{};
  CHECK(req.meta.present == fresh.present);
  CHECK(req.meta.ttl == fresh.ttl);
  CHECK(req.meta.vivify_ttl == fresh.vivify_ttl);
  CHECK(req.meta.recache_ttl == fresh.recache_ttl);
  CHECK(req.meta.client_flags == fresh.client_flags);
  CHECK(req.meta.compare_cas == fresh.compare_cas);
  CHECK(req.meta.explicit_cas == fresh.explicit_cas);
  CHECK(req.meta.delta == 1);
  CHECK(req.meta.initial == fresh.initial);
  CHECK(req.meta.mode == fresh.mode);
  CHECK(req.meta.opaque.empty());
  CHECK(req.meta.order_size == 0);
  // The next request starts from there: a plain mg with one flag.
  r = p.parse("mg bar v\r\n", req);
  REQUIRE(r.status == parse_status::Ok);
  CHECK(std::string(req.meta.order.data(), req.meta.order_size) == "v");
  CHECK_FALSE(req.meta.has('D'));
  CHECK(req.meta.delta == 1);
}
