// Reply encoders: byte-exact against replies captured from memcached 1.6.18.
#include <sys/uio.h>

#include "helpers.h"

using namespace ithaca::protocol;
using namespace ithaca::protocol::test;

namespace {

request parsed(std::string_view line) {
  static parser_settings s;
  parser p(s);
  request req;
  REQUIRE(p.parse(line, req).status == parse_status::Ok);
  return req;
}

}  // namespace

TEST_CASE("ascii replies") {
  out_buffer o;
  encode_ascii_value(o, "a", 0, "x");
  encode_ascii_status(o, ascii_status::End);
  CHECK(o.str() == "VALUE a 0 1\r\nx\r\nEND\r\n");
  o.consume(o.size());
  const std::uint64_t cas = 4;
  encode_ascii_value(o, "a", 4294967295u, "x", &cas);
  CHECK(o.str() == "VALUE a 4294967295 1 4\r\nx\r\n");
  o.consume(o.size());
  for (auto [s, text] :
       std::initializer_list<std::pair<ascii_status, const char*>>{{ascii_status::Stored, "STORED\r\n"},
                                                                   {ascii_status::NotStored, "NOT_STORED\r\n"},
                                                                   {ascii_status::Exists, "EXISTS\r\n"},
                                                                   {ascii_status::NotFound, "NOT_FOUND\r\n"},
                                                                   {ascii_status::Deleted, "DELETED\r\n"},
                                                                   {ascii_status::Touched, "TOUCHED\r\n"},
                                                                   {ascii_status::Ok, "OK\r\n"},
                                                                   {ascii_status::Error, "ERROR\r\n"}}) {
    encode_ascii_status(o, s);
    CHECK(o.str() == text);
    o.consume(o.size());
  }
  encode_ascii_number(o, 8);
  encode_ascii_stat(o, "maxbytes", "67108864");
  encode_ascii_version(o, "1.6.18");
  encode_ascii_line(o, "SERVER_ERROR out of memory storing object");
  CHECK(o.str() ==
        "8\r\nSTAT maxbytes 67108864\r\nVERSION 1.6.18\r\n"
        "SERVER_ERROR out of memory storing object\r\n");
  o.consume(o.size());
  encode_lease_value(o, "k", 123, 0, {});
  CHECK(o.str() == "LVALUE k 123 0 0\r\n\r\nEND\r\n");
}

TEST_CASE("meta replies echo return flags in request order") {
  out_buffer o;
  meta_item item;
  item.cas = 22;
  item.flags = 5;
  item.size = 3;
  // "mg foo v c f t s k O123 q" -> "VA 3 c22 f5 t-1 s3 kfoo O123\r\nbar\r\n"
  encode_meta(o, meta_code::VA, parsed("mg foo v c f t s k O123 q\r\n"), &item, "bar");
  CHECK(o.str() == "VA 3 c22 f5 t-1 s3 kfoo O123\r\nbar\r\n");
  o.consume(o.size());
  // "mg foo h l t" -> "HD h1 l1 t-1"
  item.fetched = true;
  item.last_access = 1;
  encode_meta(o, meta_code::HD, parsed("mg foo h l t\r\n"), &item);
  CHECK(o.str() == "HD h1 l1 t-1\r\n");
  o.consume(o.size());
  // "mg missing k O5" -> "EN kmissing O5"
  encode_meta(o, meta_code::EN, parsed("mg missing k O5 v c\r\n"), nullptr);
  CHECK(o.str() == "EN kmissing O5\r\n");
  o.consume(o.size());
  // "mg nn N30 v c t" on a miss -> "VA 0 c23 t30 W\r\n\r\n"
  meta_item viv;
  viv.cas = 23;
  viv.ttl = 30;
  viv.win = true;
  encode_meta(o, meta_code::VA, parsed("mg nn N30 v c t\r\n"), &viv, "");
  CHECK(o.str() == "VA 0 c23 t30 W\r\n\r\n");
  o.consume(o.size());
  // After "md v1 I T30" (captured from memcached 1.6.18): the first reader
  // gets "VA 2 c9 t30 X W", the next ones "VA 2 c9 t30 Z X".
  meta_item stale;
  stale.cas = 9;
  stale.ttl = 30;
  stale.stale = true;
  stale.win = true;
  encode_meta(o, meta_code::VA, parsed("mg v1 v c t\r\n"), &stale, "hi");
  stale.win = false;
  stale.won_already = true;
  encode_meta(o, meta_code::VA, parsed("mg v1 v c t\r\n"), &stale, "hi");
  CHECK(o.str() == "VA 2 c9 t30 X W\r\nhi\r\nVA 2 c9 t30 Z X\r\nhi\r\n");
  o.consume(o.size());
  // "ms foo 3 c k O1 T5 F3 s f t" -> "HD c33 kfoo O1 s3" (ms returns c k O and,
  // since 1.6.45, s)
  meta_item stored;
  stored.cas = 33;
  stored.size = 3;
  encode_meta(o, meta_code::HD, parsed("ms foo 3 c k O1 T5 F3 s f t\r\nabc\r\n"), &stored);
  CHECK(o.str() == "HD c33 kfoo O1 s3\r\n");
  o.consume(o.size());
  // "ms Zm9v 3 k b c" -> "HD kZm9v b c25"
  stored.cas = 25;
  request b = parsed("ms Zm9v 3 k b c\r\nabc\r\n");
  encode_meta(o, meta_code::HD, b, &stored, {}, b.meta_key_binary);
  CHECK(o.str() == "HD kZm9v b c25\r\n");
  o.consume(o.size());
  // "md foo k O1 c" (miss) -> "NF kfoo O1"
  encode_meta(o, meta_code::NF, parsed("md foo k O1 c\r\n"), nullptr);
  CHECK(o.str() == "NF kfoo O1\r\n");
  o.consume(o.size());
  // "ma n D10 v c t k O1 N0" -> "VA 2 c38 t-1 kn O1\r\n17\r\n"
  meta_item counter;
  counter.cas = 38;
  encode_meta(o, meta_code::VA, parsed("ma n D10 v c t k O1 N0\r\n"), &counter, "17");
  CHECK(o.str() == "VA 2 c38 t-1 kn O1\r\n17\r\n");
  o.consume(o.size());
  encode_meta(o, meta_code::MN, parsed("mn\r\n"), nullptr);
  encode_meta(o, meta_code::NS, parsed("ms foo 3 ME\r\nabc\r\n"), nullptr);
  encode_meta(o, meta_code::EX, parsed("ms foo 3 C1\r\nabc\r\n"), nullptr);
  encode_meta_debug(o, "foo", "exp=-1 la=1 cas=22 fetch=yes cls=1 size=69");
  CHECK(o.str() == "MN\r\nNS\r\nEX\r\nME foo exp=-1 la=1 cas=22 fetch=yes cls=1 size=69\r\n");
}

TEST_CASE("binary replies") {
  static parser_settings s;
  parser p(s);
  request req;
  std::string get(24, '\0');
  get[0] = '\x80';
  get[3] = 3;
  get[11] = 3;
  get[12] = '\xde';
  get[13] = '\xad';
  get[14] = '\xbe';
  get[15] = '\xef';
  const std::string input = get + "foo";  // the request's views point into it
  REQUIRE(p.parse(input, req).status == parse_status::Ok);
  out_buffer o;
  // get hit: "81 00 00 00 04 00 00 00 00 00 00 07 de ad be ef <cas 45> 00 00 00 05 bar"
  encode_binary_get(o, req, 5, 45, "bar");
  CHECK(o.str() == std::string("\x81\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x07\xde\xad\xbe\xef"
                               "\x00\x00\x00\x00\x00\x00\x00\x2d\x00\x00\x00\x05"
                               "bar",
                               31));
  o.consume(o.size());
  encode_binary_error(o, req, binary_status::KeyNotFound);
  CHECK(o.str() == std::string("\x81\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x09\xde\xad\xbe\xef"
                               "\x00\x00\x00\x00\x00\x00\x00\x00"
                               "Not found",
                               33));
  o.consume(o.size());
  // GetK miss carries the key, no message.
  req.binary_with_key = true;
  req.opcode = 0x0c;
  encode_binary_error(o, req, binary_status::KeyNotFound);
  CHECK(o.str() == std::string("\x81\x0c\x00\x03\x00\x00\x00\x01\x00\x00\x00\x03\xde\xad\xbe\xef"
                               "\x00\x00\x00\x00\x00\x00\x00\x00"
                               "foo",
                               27));
  o.consume(o.size());
  req.opcode = 0x05;
  encode_binary_number(o, req, 10, 46);
  CHECK(o.str() == std::string("\x81\x05\x00\x00\x00\x00\x00\x00\x00\x00\x00\x08\xde\xad\xbe\xef"
                               "\x00\x00\x00\x00\x00\x00\x00\x2e\x00\x00\x00\x00\x00\x00\x00\x0a",
                               32));
  o.consume(o.size());
  req.opcode = 0x10;
  encode_binary_stat(o, req, "pid", "1");
  encode_binary_stat(o, req, {}, {});
  CHECK(o.size() == 24 + 4 + 24);
  CHECK(o.str().substr(24, 4) == "pid1");
}

TEST_CASE("out_buffer copies a large value without an owner") {
  out_buffer o;
  std::string scratch(4096, 'v');  // a reused buffer: nothing keeps these bytes
  encode_ascii_value(o, "k", 0, scratch);
  encode_ascii_status(o, ascii_status::End);
  scratch.assign(4096, 'x');      // the next hit overwrites the buffer
  CHECK(o.iovecs().size() == 1);  // one contiguous copy
  CHECK(o.str() == "VALUE k 0 4096\r\n" + std::string(4096, 'v') + "\r\nEND\r\n");
}

TEST_CASE("out_buffer gives back a huge batch's storage once it is written") {
  out_buffer o;
  o.append(std::string(out_buffer::kKeepCapacity * 4, 'v'));
  CHECK(o.storage_capacity() >= out_buffer::kKeepCapacity * 4);
  o.consume(o.size() - 1);
  CHECK(o.storage_capacity() >= out_buffer::kKeepCapacity * 4);  // one byte still unsent
  o.consume(1);
  CHECK(o.storage_capacity() <= out_buffer::kKeepCapacity);
  // A batch under the bound keeps its storage for the next one.
  o.append(std::string(1000, 'v'));
  o.consume(o.size());
  CHECK(o.storage_capacity() >= 1000);
}

TEST_CASE("out_buffer references large values that have an owner and survives partial writes") {
  out_buffer o;
  auto keeper = std::make_shared<std::string>(4096, 'v');
  const std::string& big = *keeper;
  encode_ascii_value(o, "k", 0, big, nullptr, keeper);
  encode_ascii_status(o, ascii_status::End);
  auto iov = o.iovecs();
  REQUIRE(iov.size() == 3);  // header, value (not copied), "\r\nEND\r\n"
  CHECK(iov[1].iov_base == big.data());
  const std::string expected = "VALUE k 0 4096\r\n" + big + "\r\nEND\r\n";
  CHECK(o.str() == expected);
  // Write it in odd-sized pieces.
  std::string written;
  while (!o.empty()) {
    auto v = o.iovecs(2);
    std::size_t n = std::min<std::size_t>(777, v[0].iov_len);
    written.append(static_cast<const char*>(v[0].iov_base), n);
    o.consume(n);
  }
  CHECK(written == expected);
  CHECK(o.iovecs().empty());
  // An owner is released once its bytes are consumed.
  auto owner = std::make_shared<std::string>(big);
  std::weak_ptr<std::string> weak = owner;
  o.append_value(*owner, owner);
  owner.reset();
  CHECK_FALSE(weak.expired());
  o.consume(o.size());
  CHECK(weak.expired());
}

TEST_CASE("out_buffer drop_unsent removes what follows the last mark") {
  out_buffer o;
  o.append("STORED\r\n");
  o.drop_unsent();  // no mark yet: everything unsent goes
  CHECK(o.empty());
  o.append("VALUE a 0 1\r\nx\r\nEND\r\n");
  o.mark_sent();
  o.append("STORED\r\n");
  const std::string big(2000, 'v');
  o.append_ref(big);  // an external segment
  o.append("DELETED\r\n");
  o.drop_unsent();
  CHECK(o.str() == "VALUE a 0 1\r\nx\r\nEND\r\n");
  o.append("CLIENT_ERROR bad command line format\r\n");
  CHECK(o.str() == "VALUE a 0 1\r\nx\r\nEND\r\nCLIENT_ERROR bad command line format\r\n");
}

TEST_CASE("out_buffer drop_unsent keeps consumed bytes") {
  out_buffer o;
  o.append("NOT_FOUND\r\n");
  o.consume(4);     // a partial write took "NOT_"
  o.drop_unsent();  // the rest is unsent; the head segment shrinks to what was written
  CHECK(o.empty());
  o.append("ERROR\r\n");
  o.consume(o.size());
  o.append("OK\r\n");
  o.drop_unsent();
  CHECK(o.empty());
  o.append("END\r\n");
  CHECK(o.str() == "END\r\n");
}

namespace {
// An intrusive owner as the store's item pin is: release(object, context) once.
struct counted_value {
  std::string bytes;
  int releases = 0;
};
void release_counted(void* object, void*) noexcept { ++static_cast<counted_value*>(object)->releases; }
value_owner pin_of(counted_value& v) { return value_owner(&release_counted, &v, nullptr); }
}  // namespace

TEST_CASE("out_buffer releases an intrusive owner once consume has passed its value") {
  out_buffer o;
  counted_value big{std::string(4096, 'v')};
  counted_value small{std::string(100, 's')};
  encode_ascii_value(o, "s", 0, small.bytes, nullptr, pin_of(small));
  CHECK(small.releases == 1);  // copied: the pin goes at once
  encode_ascii_value(o, "b", 0, big.bytes, nullptr, pin_of(big));
  encode_ascii_status(o, ascii_status::End);
  auto iov = o.iovecs();
  REQUIRE(iov.size() == 3);  // the small reply and big's header, big's value, "\r\nEND\r\n"
  CHECK(iov[1].iov_base == big.bytes.data());
  const std::size_t before_value = iov[0].iov_len;
  o.consume(before_value + 4095);  // all but the value's last byte
  CHECK(big.releases == 0);
  o.consume(1);
  CHECK(big.releases == 1);
  o.consume(o.size());
  CHECK(big.releases == 1);
}

TEST_CASE("out_buffer releases intrusive owners it drops unsent, splices or is destroyed with") {
  counted_value a{std::string(3000, 'a')}, b{std::string(3000, 'b')}, c{std::string(3000, 'c')};
  {
    out_buffer o;
    o.append("x");
    o.mark_sent();
    o.append_value(a.bytes, pin_of(a));
    o.drop_unsent();  // a multi-get culled on a bad key
    CHECK(a.releases == 1);
    out_buffer from;
    from.append_value(b.bytes, pin_of(b));
    o.splice(from);  // moved, not released
    CHECK(b.releases == 0);
    CHECK(o.str() == "x" + b.bytes);
    o.append_value(c.bytes, pin_of(c));
  }
  CHECK(b.releases == 1);
  CHECK(c.releases == 1);
}

TEST_CASE("out_buffer against a plain string model: random appends, in-place formats, refs, partial writes, culls") {
  // The model: `written` (consumed bytes, gone) and `pending` (what str() must show);
  // `mark` is where the last mark_sent() was, as an offset into everything appended.
  std::uint64_t seed = 0x9e3779b97f4a7c15ULL;
  auto next = [&seed](std::uint64_t bound) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed % bound;
  };
  const std::string big(70000, 'b');  // refs of up to 70 KB; copies past kKeepCapacity
  for (int run = 0; run < 200; ++run) {
    out_buffer o;
    std::string pending;
    std::size_t appended = 0, consumed = 0, mark = 0;
    for (int step = 0; step < 300; ++step) {
      const std::uint64_t op = next(10);
      if (op < 3) {  // a copied piece, 0 to 9000 bytes
        const std::size_t n = next(9001);
        const std::string piece(n, static_cast<char>('a' + next(26)));
        o.append(piece);
        pending += piece;
        appended += n;
      } else if (op == 3) {  // formatted in place, committing part of the room
        const std::size_t room = 1 + next(5000);
        const std::size_t used = next(room + 1);
        char* p = o.tail_room(room);
        for (std::size_t i = 0; i < used; ++i) p[i] = static_cast<char>('0' + i % 10);
        o.commit(used);
        for (std::size_t i = 0; i < used; ++i) pending += static_cast<char>('0' + i % 10);
        appended += used;
      } else if (op == 4) {  // a referenced value
        const std::size_t off = next(big.size());
        const std::string_view piece(big.data() + off, next(big.size() - off));
        o.append_ref(piece);
        pending += piece;
        appended += piece.size();
      } else if (op < 7) {  // a partial write
        const std::size_t n = next(pending.size() + 1);
        o.consume(n);
        pending.erase(0, n);
        consumed += n;
      } else if (op == 7) {
        o.mark_sent();
        mark = appended;
      } else if (op == 8) {
        o.drop_unsent();
        const std::size_t keep = std::max(mark, consumed);
        pending.resize(pending.size() - (appended - keep));
        appended = keep;
      } else {  // the writer's view: iovecs spell the pending bytes
        std::string joined;
        for (const iovec& v : o.iovecs()) joined.append(static_cast<const char*>(v.iov_base), v.iov_len);
        REQUIRE(joined == pending);
      }
      REQUIRE(o.size() == pending.size());
    }
    REQUIRE(o.str() == pending);
  }
}
