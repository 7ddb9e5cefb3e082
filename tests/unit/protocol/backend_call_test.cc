// backend_call without sockets: what it sends for a client request, what it
// makes of scripted backend replies, and what the client gets on failures.
// (Byte-for-byte agreement with memcached is tests/functional/test_codec.py.)
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backend_call.h"
#include "binary_format.h"
#include "parser.h"
#include "reply.h"

namespace ithaca::protocol {
namespace {

// One client request parsed from bytes; keeps the bytes alive.
struct client_request {
  std::string bytes;
  request req;
  explicit client_request(std::string in) : bytes(std::move(in)) {
    parser p(parser_settings{});
    const parse_result r = p.parse(bytes, req);
    REQUIRE(r.status == parse_status::Ok);
  }
};

// A scripted conversation: each step's expected request bytes and the reply
// the backend sends for it.
struct exchange {
  std::string expect_sent;
  std::string reply;
};

std::string converse(const request& req, backend_protocol proto, const std::vector<exchange>& script,
                     routed_result& result, std::span<const std::uint32_t> keys = {}, reply_tally* tally = nullptr) {
  backend_call call;
  backend_reply_parser rp;
  auto p = call.start(req, proto, result, keys);
  std::size_t i = 0;
  while (p == backend_call::progress::NextStep) {
    REQUIRE(i < script.size());
    std::string sent;
    const reply_shape shape = call.encode(sent);
    CHECK(sent == script[i].expect_sent);
    std::string in = script[i].reply;
    ++i;
    do {
      reply_piece piece;
      std::size_t used = 0;
      REQUIRE(rp.next(in, shape, piece, used) == parse_status::Ok);
      p = call.on_piece(piece);
      in.erase(0, used);
    } while (p == backend_call::progress::More);
    CHECK(in.empty());
  }
  CHECK(i == script.size());
  if (tally != nullptr) *tally = call.tally();
  out_buffer out;
  render_routed_reply(req, result, out);
  return out.str();
}

// The counts of one conversation's tally, by result name, zeros left out.
std::string tally_of(const std::string& client, backend_protocol proto, const std::vector<exchange>& script) {
  client_request c(client);
  routed_result r;
  r.prepare(c.req);
  reply_tally t{};
  converse(c.req, proto, script, r, {}, &t);
  std::string out;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] == 0) continue;
    if (!out.empty()) out += ' ';
    out += std::string(kReplyResultNames[i]) + "=" + std::to_string(t[i]);
  }
  return out;
}

std::string render(const request& req, const routed_result& result) {
  out_buffer out;
  render_routed_reply(req, result, out);
  return out.str();
}

std::string binary_packet(std::uint8_t op, std::string_view key, std::string_view extras, std::string_view value = {},
                          std::uint64_t cas = 0, std::uint32_t opaque = 0) {
  binary_header h;
  h.magic = kBinaryRequestMagic;
  h.opcode = op;
  h.key_length = static_cast<std::uint16_t>(key.size());
  h.extras_length = static_cast<std::uint8_t>(extras.size());
  h.body_length = static_cast<std::uint32_t>(extras.size() + key.size() + value.size());
  h.opaque = opaque;
  h.cas = cas;
  std::string out(kBinaryHeaderSize, '\0');
  encode_header(h, out.data());
  out.append(extras);
  out.append(key);
  out.append(value);
  return out;
}

std::string incr_extras(std::uint64_t delta, std::uint64_t initial, std::uint32_t exptime) {
  std::string e(20, '\0');
  store_be64(e.data(), delta);
  store_be64(e.data() + 8, initial);
  store_be32(e.data() + 16, exptime);
  return e;
}

}  // namespace

TEST_CASE("noreply is never forwarded; the reply is hidden at render") {
  client_request c("set k 3 0 1 noreply\r\nx\r\n");
  routed_result r;
  r.prepare(c.req);
  CHECK(converse(c.req, backend_protocol::Ascii, {{"set k 3 0 1\r\nx\r\n", "STORED\r\n"}}, r).empty());
  r.prepare(c.req);
  CHECK(converse(c.req, backend_protocol::Meta, {{"ms k 1 F3 T0\r\nx\r\n", "HD\r\n"}}, r).empty());
}

TEST_CASE("meta q over a meta backend: forwarded with mn behind it") {
  client_request c("mg k v q k\r\n");
  routed_result r;
  r.prepare(c.req);
  CHECK(converse(c.req, backend_protocol::Meta, {{"mg k v q k\r\nmn\r\n", "MN\r\n"}}, r).empty());
  r.prepare(c.req);
  CHECK(converse(c.req, backend_protocol::Meta, {{"mg k v q k\r\nmn\r\n", "VA 1 kk\r\nx\r\nMN\r\n"}}, r) ==
        "VA 1 kk\r\nx\r\n");
}

TEST_CASE("binary incr with an initial value over ascii: incr, add, incr, gets") {
  const std::string pkt = binary_packet(0x05, "n", incr_extras(2, 40, 0), {}, 0, 7);
  client_request c(pkt);
  routed_result r;
  r.prepare(c.req);
  const std::string reply = converse(c.req, backend_protocol::Ascii,
                                     {{"incr n 2\r\n", "NOT_FOUND\r\n"},
                                      {"add n 0 0 2\r\n40\r\n", "NOT_STORED\r\n"},
                                      {"incr n 2\r\n", "12\r\n"},
                                      {"gets n\r\n", "VALUE n 0 2 33\r\n12\r\nEND\r\n"}},
                                     r);
  out_buffer expect;
  encode_binary_number(expect, c.req, 12, 33);
  CHECK(reply == expect.str());

  // 0xffffffff: no create; the miss is the answer.
  client_request nv(binary_packet(0x05, "n", incr_extras(2, 40, 0xffffffff)));
  r.prepare(nv.req);
  const std::string miss = converse(nv.req, backend_protocol::Ascii, {{"incr n 2\r\n", "NOT_FOUND\r\n"}}, r);
  out_buffer nf;
  encode_binary_error(nf, nv.req, binary_status::KeyNotFound);
  CHECK(miss == nf.str());
}

TEST_CASE("fail(): clear errors for single-key commands, misses for multi-key gets") {
  client_request set("set k 0 0 1\r\nx\r\n");
  routed_result r;
  backend_call call;
  r.prepare(set.req);
  REQUIRE(call.start(set.req, backend_protocol::Ascii, r) == backend_call::progress::NextStep);
  call.fail(call_failure::Down);
  CHECK(call.done());
  CHECK(render(set.req, r) == "SERVER_ERROR Server unavailable. Reason: mc_res_connect_error\r\n");
  r.prepare(set.req);
  REQUIRE(call.start(set.req, backend_protocol::Ascii, r) == backend_call::progress::NextStep);
  call.fail(call_failure::Down, call_failure::Timeout);
  CHECK(render(set.req, r) == "SERVER_ERROR Server unavailable. Reason: mc_res_timeout\r\n");

  client_request mg("mg k v O5\r\n");
  r.prepare(mg.req);
  REQUIRE(call.start(mg.req, backend_protocol::Meta, r) == backend_call::progress::NextStep);
  call.fail(call_failure::Timeout);
  CHECK(render(mg.req, r) == "SERVER_ERROR Reply timeout\r\n");

  // get a b c over two servers: the second fails, its keys are misses.
  client_request get("get a b c\r\n");
  r.prepare(get.req);
  const std::vector<std::uint32_t> first{0, 2};
  const std::vector<std::uint32_t> second{1};
  converse(get.req, backend_protocol::Ascii, {{"get a c\r\n", "VALUE c 1 1\r\nC\r\nEND\r\n"}}, r, first);
  backend_call other;
  REQUIRE(other.start(get.req, backend_protocol::Ascii, r, second) == backend_call::progress::NextStep);
  other.fail(call_failure::ConnectionError);
  CHECK(r.failed_keys == 1);
  CHECK(render(get.req, r) == "VALUE c 1 1\r\nC\r\nEND\r\n");

  // Binary: temporary failure (0x86) with a clear body; a quiet get is a silent miss.
  client_request bget(binary_packet(0x00, "k", {}, {}, 0, 9));
  r.prepare(bget.req);
  REQUIRE(call.start(bget.req, backend_protocol::Ascii, r) == backend_call::progress::NextStep);
  call.fail(call_failure::Down);
  out_buffer expect;
  encode_binary(expect, 0x00, 9, binary_status::TemporaryFailure, 0, {}, {},
                "Server unavailable. Reason: mc_res_connect_error");
  CHECK(render(bget.req, r) == expect.str());
  client_request getq(binary_packet(0x09, "k", {}));
  r.prepare(getq.req);
  REQUIRE(call.start(getq.req, backend_protocol::Meta, r) == backend_call::progress::NextStep);
  call.fail(call_failure::Down);
  CHECK(render(getq.req, r).empty());
}

TEST_CASE("a reply that does not fit the request is BadReply") {
  client_request incr("incr k 1\r\n");
  routed_result r;
  r.prepare(incr.req);
  backend_call call;
  REQUIRE(call.start(incr.req, backend_protocol::Ascii, r) == backend_call::progress::NextStep);
  std::string sent;
  CHECK(call.encode(sent) == reply_shape::Line);
  reply_piece piece;
  piece.kind = piece_kind::Line;
  piece.line = "STORED";
  CHECK(call.on_piece(piece) == backend_call::progress::BadReply);
  CHECK(render(incr.req, r) == "SERVER_ERROR remote error: the server sent a bad reply\r\n");

  // A VALUE for a key that was not asked for.
  client_request get("get a\r\n");
  r.prepare(get.req);
  REQUIRE(call.start(get.req, backend_protocol::Ascii, r) == backend_call::progress::NextStep);
  sent.clear();
  call.encode(sent);
  piece = reply_piece{};
  piece.kind = piece_kind::Value;
  piece.key = "zz";
  CHECK(call.on_piece(piece) == backend_call::progress::BadReply);
}

TEST_CASE("a lease over an ascii backend goes as meta; ERROR from it says why") {
  client_request lease("lease-get k\r\n");
  routed_result r;
  r.prepare(lease.req);
  CHECK(converse(lease.req, backend_protocol::Ascii, {{"mg k f v c N10\r\n", "ERROR\r\n"}}, r) ==
        "SERVER_ERROR lease-get and lease-set need a backend that speaks meta commands (memcached 1.6 or later)\r\n");
  r.prepare(lease.req);
  CHECK(converse(lease.req, backend_protocol::Ascii, {{"mg k f v c N10\r\n", "EN\r\n"}}, r) == "END\r\n");
}

TEST_CASE("refusals need no backend: start() is Done") {
  routed_result r;
  backend_call call;
  client_request mg("mg k t v\r\n");
  r.prepare(mg.req);
  CHECK(call.start(mg.req, backend_protocol::Ascii, r) == backend_call::progress::Done);
  CHECK(render(mg.req, r) == "CLIENT_ERROR flag t needs a meta backend\r\n");

  client_request bkey(binary_packet(0x00, "a b", {}));
  r.prepare(bkey.req);
  CHECK(call.start(bkey.req, backend_protocol::Ascii, r) == backend_call::progress::Done);
  r.prepare(bkey.req);
  CHECK(converse(bkey.req, backend_protocol::Meta, {{"mg YSBi b f v c\r\n", "EN\r\n"}}, r).size() ==
        kBinaryHeaderSize + 9);  // "Not found"
}

TEST_CASE("a long multi-get is cut into lines below 2 KiB, and the ENDs counted") {
  std::string line = "gat 10";
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) {
    keys.push_back("key" + std::to_string(1000 + i));
    line += " " + keys.back();
  }
  client_request c(line + "\r\n");
  routed_result r;
  r.prepare(c.req);
  backend_call call;
  REQUIRE(call.start(c.req, backend_protocol::Ascii, r) == backend_call::progress::NextStep);
  std::string sent;
  CHECK(call.encode(sent) == reply_shape::Values);
  std::size_t lines = 0;
  std::size_t from = 0;
  while (from < sent.size()) {
    const std::size_t nl = sent.find("\r\n", from);
    CHECK(nl - from <= 2000);
    CHECK(sent.compare(from, 7, "gat 10 ") == 0);
    from = nl + 2;
    ++lines;
  }
  CHECK(lines > 1);
  reply_piece end;
  end.kind = piece_kind::End;
  for (std::size_t i = 0; i + 1 < lines; ++i) CHECK(call.on_piece(end) == backend_call::progress::More);
  CHECK(call.on_piece(end) == backend_call::progress::Done);
  CHECK(render(c.req, r) == "END\r\n");
}

namespace {

// Several client gets meeting on one connection, as backend_conn drives them:
// each joins the open line if it can, and every reply piece is offered to the
// head call, passed on while calls say Passed.
struct shared_line {
  std::vector<client_request*> reqs;
  std::vector<routed_result> results;
  std::vector<backend_call> calls;
  std::vector<bool> orphan;
  std::string sent;
  std::vector<std::size_t> joined;  // indexes of the calls that joined a line

  explicit shared_line(std::vector<client_request*> in, std::vector<bool> orphans = {})
      : reqs(std::move(in)), results(reqs.size()), calls(reqs.size()), orphan(std::move(orphans)) {
    orphan.resize(reqs.size(), false);
    backend_call* open = nullptr;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      results[i].prepare(reqs[i]->req);
      REQUIRE(calls[i].start(reqs[i]->req, backend_protocol::Ascii, results[i]) == backend_call::progress::NextStep);
      if (open != nullptr && calls[i].join_line(*open, sent)) {
        joined.push_back(i);
      } else {
        calls[i].encode(sent);
      }
      open = calls[i].line_open() ? &calls[i] : nullptr;
    }
  }

  // Feeds the backend's reply; every call must end with it.
  void reply(std::string in) {
    backend_reply_parser rp;
    std::size_t head = 0;
    while (!in.empty()) {
      REQUIRE(head < calls.size());
      reply_piece piece;
      std::size_t used = 0;
      REQUIRE(rp.next(in, reply_shape::Values, piece, used) == parse_status::Ok);
      auto p = backend_call::progress::Passed;
      while (p == backend_call::progress::Passed) {
        REQUIRE(head < calls.size());
        p = orphan[head] ? calls[head].on_orphan_piece(piece) : calls[head].on_piece(piece);
        REQUIRE(p != backend_call::progress::BadReply);
        if (p != backend_call::progress::More) ++head;
      }
      in.erase(0, used);
    }
    CHECK(head == calls.size());
  }

  std::string client_reply(std::size_t i) { return render(reqs[i]->req, results[i]); }
};

}  // namespace

TEST_CASE("gets of several clients share one get line; each takes its own values") {
  client_request a("get a\r\n"), b("get b\r\n"), a2("get a\r\n"), ab("get a b c\r\n"), cas("gets a\r\n"),
      gat("gat 10 a\r\n"), after("get z\r\n");
  shared_line line({&a, &b, &a2, &ab, &cas, &gat, &after});
  // get joins get; gets starts its own line; gat never joins nor is joined.
  CHECK(line.sent == "get a b a a b c\r\ngets a\r\ngat 10 a\r\nget z\r\n");
  CHECK(line.joined == std::vector<std::size_t>{1, 2, 3});
  line.reply(
      "VALUE a 1 2\r\nA1\r\nVALUE a 1 2\r\nA1\r\nVALUE a 1 2\r\nA1\r\nVALUE c 3 1\r\nC\r\nEND\r\n"
      "VALUE a 1 2 77\r\nA1\r\nEND\r\n"
      "VALUE a 1 2\r\nA1\r\nEND\r\n"
      "END\r\n");
  CHECK(line.client_reply(0) == "VALUE a 1 2\r\nA1\r\nEND\r\n");
  CHECK(line.client_reply(1) == "END\r\n");  // b missed: its value never came
  CHECK(line.client_reply(2) == "VALUE a 1 2\r\nA1\r\nEND\r\n");
  CHECK(line.client_reply(3) == "VALUE a 1 2\r\nA1\r\nVALUE c 3 1\r\nC\r\nEND\r\n");
  CHECK(line.client_reply(4) == "VALUE a 1 2 77\r\nA1\r\nEND\r\n");
  CHECK(line.client_reply(5) == "VALUE a 1 2\r\nA1\r\nEND\r\n");
  CHECK(line.client_reply(6) == "END\r\n");
}

TEST_CASE("a shared get line stays under the line limit, and an error line ends every call on it") {
  std::vector<client_request> many;
  many.reserve(200);
  std::vector<client_request*> ptrs;
  for (int i = 0; i < 200; ++i) {
    many.emplace_back("get key_number_" + std::to_string(1000 + i) + "\r\n");
    ptrs.push_back(&many.back());
  }
  shared_line line(ptrs);
  std::size_t lines = 0, start = 0;
  while (start < line.sent.size()) {
    const std::size_t end = line.sent.find("\r\n", start);
    CHECK(end - start <= 2000);
    start = end + 2;
    ++lines;
  }
  CHECK(lines == 2);  // 200 x 20 bytes
  CHECK(line.joined.size() == 198);
  std::string reply;
  for (std::size_t i = 0; i < lines; ++i) reply += "SERVER_ERROR out of memory\r\n";
  line.reply(reply);
  for (std::size_t i = 0; i < ptrs.size(); ++i) CHECK(line.client_reply(i) == "SERVER_ERROR out of memory\r\n");
}

TEST_CASE("an orphan on a shared line takes only its own values (the slot kept its keys)") {
  client_request a("get a\r\n"), b("get b\r\n"), c("get c\r\n");
  shared_line line({&a, &b, &c}, {false, true, false});
  CHECK(line.sent == "get a b c\r\n");
  line.reply("VALUE a 0 1\r\nA\r\nVALUE b 0 1\r\nB\r\nVALUE c 0 1\r\nC\r\nEND\r\n");
  CHECK(line.client_reply(0) == "VALUE a 0 1\r\nA\r\nEND\r\n");
  CHECK(line.client_reply(2) == "VALUE c 0 1\r\nC\r\nEND\r\n");
}

TEST_CASE("orphans frame their replies by the call's own state") {
  // A multi-line get: one END per line; mg per key: one reply each.
  std::string many = "get";
  for (int i = 0; i < 200; ++i) many += " key_number_" + std::to_string(1000 + i);
  client_request big(many + "\r\n"), after("get z\r\n");
  shared_line line({&big, &after}, {true, false});
  CHECK(line.joined.size() == 1);  // z joins big's last line
  line.reply("VALUE key_number_1000 0 1\r\nx\r\nEND\r\nVALUE z 0 1\r\nZ\r\nEND\r\n");
  CHECK(line.client_reply(1) == "VALUE z 0 1\r\nZ\r\nEND\r\n");

  client_request mg("mg a v\r\n"), bget(binary_packet(0x00, "k", {}));
  routed_result r;
  r.prepare(bget.req);
  backend_call call;
  REQUIRE(call.start(bget.req, backend_protocol::Meta, r) == backend_call::progress::NextStep);
  std::string sent;
  call.encode(sent);
  reply_piece en;
  en.kind = piece_kind::Meta;
  en.code = "EN";
  CHECK(call.on_orphan_piece(en) == backend_call::progress::Done);
}

TEST_CASE("an abandoned call frames its late reply by its own copy of the keys, and stores nothing") {
  // The middle call of a shared line times out: its client is answered and
  // its slot reused (its request bytes and result overwritten) before the
  // late reply comes; the calls around it still take their own values.
  client_request a("get a\r\n"), b("get b c\r\n"), c("get d\r\n");
  shared_line line({&a, &b, &c});
  CHECK(line.sent == "get a b c d\r\n");
  line.calls[1].abandon(true, call_failure::Timeout, call_failure::ConnectionError);
  CHECK(line.calls[1].abandoned());
  CHECK(line.client_reply(1) == "END\r\n");  // a multi-key get's failed keys are misses
  std::fill(b.bytes.begin(), b.bytes.end(), 'x');
  line.results[1] = routed_result{};
  line.orphan[1] = true;  // the connection feeds it as an orphan
  line.reply("VALUE a 0 1\r\nA\r\nVALUE b 0 1\r\nB\r\nVALUE c 0 1\r\nC\r\nVALUE d 0 1\r\nD\r\nEND\r\n");
  CHECK(line.client_reply(0) == "VALUE a 0 1\r\nA\r\nEND\r\n");
  CHECK(line.client_reply(2) == "VALUE d 0 1\r\nD\r\nEND\r\n");
  CHECK(line.results[1].key_count() == 0);  // nothing stored for the abandoned one

  // A single-key get's client gets the timeout; an mg's reply is framed by
  // its count of keys.
  client_request one("get k\r\n");
  routed_result r;
  r.prepare(one.req);
  backend_call call;
  REQUIRE(call.start(one.req, backend_protocol::Meta, r) == backend_call::progress::NextStep);
  std::string sent;
  call.encode(sent);
  call.abandon(true, call_failure::Timeout, call_failure::ConnectionError);
  CHECK(render(one.req, r) == "SERVER_ERROR Reply timeout\r\n");
  reply_piece va;
  va.kind = piece_kind::Meta;
  va.code = "VA";
  CHECK(call.on_orphan_piece(va) == backend_call::progress::Done);
}

}  // namespace ithaca::protocol

namespace ithaca::protocol {

TEST_CASE("a kept ascii VALUE piece is sent as is only when the client asked the same way") {
  const std::string with_cas = "VALUE a 1 2 77\r\nA1\r\n";
  const std::string without = "VALUE a 1 2\r\nA1\r\n";
  auto data_of = [](const std::string& raw) { return std::string_view(raw).substr(raw.size() - 4, 2); };
  {
    client_request get("get a\r\n");
    routed_result r;
    r.prepare(get.req);
    r.outcome = routed_outcome::Hits;
    r.set_hit_raw(0, 1, 77, true, data_of(with_cas), with_cas);
    CHECK(r.raw_piece(r.hit(0)) == with_cas);
    CHECK(r.data(r.hit(0)) == "A1");
    CHECK(render(get.req, r) == without + "END\r\n");  // get never shows a cas
  }
  {
    client_request gets("gets a\r\n");
    routed_result r;
    r.prepare(gets.req);
    r.outcome = routed_outcome::Hits;
    r.set_hit_raw(0, 1, 77, false, data_of(without), without);
    CHECK(render(gets.req, r) == with_cas + "END\r\n");  // rendered: the piece had no cas
    r.prepare(gets.req);
    r.outcome = routed_outcome::Hits;
    r.set_hit_raw(0, 1, 77, true, data_of(with_cas), with_cas);
    CHECK(render(gets.req, r) == with_cas + "END\r\n");
  }
  {
    // Data that is not inside the piece: copied alone, nothing kept.
    client_request get("get a\r\n");
    routed_result r;
    r.prepare(get.req);
    r.outcome = routed_outcome::Hits;
    const std::string elsewhere = "A1";
    r.set_hit_raw(0, 1, 0, false, elsewhere, without);
    CHECK(r.raw_piece(r.hit(0)).empty());
    CHECK(render(get.req, r) == without + "END\r\n");
  }
}

}  // namespace ithaca::protocol

namespace ithaca::protocol {
namespace {

TEST_CASE("binary exptime from 2^31 on: the latest time text and meta can say") {
  // memcached reads a binary exptime as unsigned (from 2^31: an absolute
  // time after 2038, the item lives) and a text or meta one as signed
  // (2^31 and above: negative, expired at once).
  for (const std::uint32_t exptime : {0x80000000u, 0xffffffffu}) {
    std::string extras(8, '\0');
    store_be32(extras.data() + 4, exptime);
    client_request set(binary_packet(0x11, "k", extras, "v"));  // SetQ: no gets behind
    routed_result r;
    r.prepare(set.req);
    converse(set.req, backend_protocol::Ascii, {{"set k 0 2147483647 1\r\nv\r\n", "STORED\r\n"}}, r);
    r.prepare(set.req);
    converse(set.req, backend_protocol::Meta, {{"ms k 1 F0 T2147483647 c\r\nv\r\n", "HD c5\r\n"}}, r);
    std::string touch_extras(4, '\0');
    store_be32(touch_extras.data(), exptime);
    client_request touch(binary_packet(0x1c, "k", touch_extras));
    r.prepare(touch.req);
    converse(touch.req, backend_protocol::Ascii, {{"gats 2147483647 k\r\n", "END\r\n"}}, r);
    r.prepare(touch.req);
    converse(touch.req, backend_protocol::Meta, {{"mg k f c T2147483647\r\n", "EN\r\n"}}, r);
  }
  // Below 2^31 (an absolute time in the past, too) it goes as it came.
  std::string extras(8, '\0');
  store_be32(extras.data() + 4, 1000000000u);
  client_request past(binary_packet(0x11, "k", extras, "v"));
  routed_result r;
  r.prepare(past.req);
  converse(past.req, backend_protocol::Ascii, {{"set k 0 1000000000 1\r\nv\r\n", "STORED\r\n"}}, r);
}

}  // namespace
TEST_CASE("tally: what each answer said, a retrieval once per key") {
  using enum backend_protocol;
  CHECK(tally_of("get a b c\r\n", Ascii, {{"get a b c\r\n", "VALUE a 0 1\r\nx\r\nEND\r\n"}}) == "found=1 notfound=2");
  CHECK(tally_of("get a b\r\n", Meta, {{"mg a f v\r\nmg b f v\r\n", "EN\r\nVA 1 f0\r\nx\r\n"}}) ==
        "found=1 notfound=1");
  // Error lines by mcrouter's results: SERVER_ERROR remote_error, CLIENT_ERROR client_error, ERROR error.
  CHECK(tally_of("get a b\r\n", Ascii, {{"get a b\r\n", "SERVER_ERROR out of memory\r\n"}}) == "remote_error=1");
  CHECK(tally_of("set k 0 0 1\r\nx\r\n", Ascii, {{"set k 0 0 1\r\nx\r\n", "ERROR\r\n"}}) == "error=1");
  CHECK(tally_of("set k 0 0 1\r\nx\r\n", Ascii, {{"set k 0 0 1\r\nx\r\n", "CLIENT_ERROR bad data chunk\r\n"}}) ==
        "client_error=1");
  CHECK(tally_of("set k 0 0 1\r\nx\r\n", Ascii, {{"set k 0 0 1\r\nx\r\n", "STORED\r\n"}}) == "stored=1");
  CHECK(tally_of("add k 0 0 1\r\nx\r\n", Meta, {{"ms k 1 F0 T0 ME\r\nx\r\n", "NS\r\n"}}) == "notstored=1");
  CHECK(tally_of("delete k\r\n", Ascii, {{"delete k\r\n", "NOT_FOUND\r\n"}}) == "notfound=1");
  CHECK(tally_of("incr k 1\r\n", Ascii,
                 {{"incr k 1\r\n", "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"}}) ==
        "client_error=1");
  CHECK(tally_of("touch k 9\r\n", Ascii, {{"touch k 9\r\n", "TOUCHED\r\n"}}) == "touched=1");
  // Meta passthrough: by the reply's code and the command; q's MN alone is its quiet answer.
  CHECK(tally_of("md k\r\n", Meta, {{"md k\r\n", "HD\r\n"}}) == "deleted=1");
  CHECK(tally_of("mg k v q\r\n", Meta, {{"mg k v q\r\nmn\r\n", "MN\r\n"}}) == "notfound=1");
  CHECK(tally_of("ms k 1 q\r\nx\r\n", Meta, {{"ms k 1 q\r\nx\r\nmn\r\n", "MN\r\n"}}) == "stored=1");
  CHECK(tally_of("ms k 1 q\r\nx\r\n", Meta, {{"ms k 1 q\r\nx\r\nmn\r\n", "NS\r\nMN\r\n"}}) == "notstored=1");
}

}  // namespace ithaca::protocol
