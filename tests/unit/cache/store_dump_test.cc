// store_dump.h: `lru_crawler metadump` / `mgdump` and `stats cachedump` of the
// local store, in memcached 1.6.45's lines.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "exec_harness.h"
#include "slab_classes.h"
#include "store_dump.h"

namespace ithaca::cache {

using test::connection;

namespace {

commands::class_set every_class() {
  commands::class_set s;
  s.set();
  return s;
}

std::vector<std::string> split(const std::string& text, const std::string& sep) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t end; (end = text.find(sep, at)) != std::string::npos; at = end + sep.size()) {
    out.push_back(text.substr(at, end - at));
  }
  CHECK(at == text.size());
  return out;
}

std::string dump(connection& c, commands::dump_format f, const commands::class_set& classes) {
  store_dump d(c.ctx());
  protocol::out_buffer out;
  REQUIRE(d.dump(f, classes, out));
  return out.str();
}

}  // namespace

TEST_CASE("metadump: one line per live item with its expiry, access, fetch, class, size and flags") {
  connection c;
  const int64_t now = c.unix_now();
  CHECK(c.send("set plain 0 0 1\r\nx\r\n") == "STORED\r\n");
  CHECK(c.send("set a%b 7 100 2\r\nxy\r\n") == "STORED\r\n");
  CHECK(c.send("get plain\r\n") == "VALUE plain 0 1\r\nx\r\nEND\r\n");
  CHECK(c.send("set gone 0 1 1\r\ng\r\n") == "STORED\r\n");
  CHECK(c.send("set deleted 0 0 1\r\nd\r\n") == "STORED\r\n");
  CHECK(c.send("delete deleted\r\n") == "DELETED\r\n");
  c.advance_seconds(2);  // "gone" expires
  const std::string text = dump(c, commands::dump_format::Meta, every_class());
  REQUIRE(text.starts_with("OK\r\n"));
  REQUIRE(text.ends_with("END\r\n"));
  std::vector<std::string> lines = split(text.substr(4, text.size() - 9), "\n");
  std::sort(lines.begin(), lines.end());
  REQUIRE(lines.size() == 2);
  const store::slab_classes& classes = c.store().classes();
  const uint64_t size_ab = classes.item_total(3, 7, 2);
  const uint64_t size_plain = classes.item_total(5, 0, 1);
  CHECK(lines[0] ==
        "key=a%25b exp=" + std::to_string(now + 100) + " la=" + std::to_string(now) +
            " cas=" + lines[0].substr(lines[0].find("cas=") + 4, lines[0].find(" fetch") - lines[0].find("cas=") - 4) +
            " fetch=no cls=" + std::to_string(classes.class_for(size_ab)) + " size=" + std::to_string(size_ab) +
            " flags=7 ");
  CHECK(lines[1].starts_with("key=plain exp=-1 la="));
  CHECK(lines[1].find(" fetch=yes cls=" + std::to_string(classes.class_for(size_plain)) +
                      " size=" + std::to_string(size_plain) + " flags=0 ") != std::string::npos);
}

TEST_CASE("a dump of some classes lists only their items") {
  connection c;
  CHECK(c.send("set small 0 0 1\r\ns\r\n") == "STORED\r\n");
  CHECK(c.send("set big 0 0 5000\r\n" + std::string(5000, 'b') + "\r\n") == "STORED\r\n");
  const store::slab_classes& classes = c.store().classes();
  const unsigned big = classes.item_class(3, 0, 5000);
  REQUIRE(big != classes.item_class(5, 0, 1));
  commands::class_set only;
  only.set(big);
  CHECK(dump(c, commands::dump_format::Mg, only) == "OK\r\nmg big\r\nEN\r\n");
  commands::class_set none;
  CHECK(dump(c, commands::dump_format::Meta, none) == "OK\r\nEND\r\n");
}

TEST_CASE("mgdump: one mg line per item, a binary key in base64 with b") {
  connection c;
  CHECK(c.send("set text 0 0 1\r\nt\r\n") == "STORED\r\n");
  CHECK(c.send("ms Zm9vYg== 1 b\r\nz\r\n") == "HD\r\n");
  const std::string text = dump(c, commands::dump_format::Mg, every_class());
  REQUIRE(text.starts_with("OK\r\n"));
  REQUIRE(text.ends_with("EN\r\n"));
  const auto lines = split(text.substr(4, text.size() - 8), "\r\n");
  CHECK(std::set<std::string>(lines.begin(), lines.end()) == std::set<std::string>{"mg text", "mg Zm9vYg== b"});
}

TEST_CASE("cachedump: the newest items of the class first, at most the limit, expiry in unix seconds") {
  connection c;
  const int64_t now = c.unix_now();
  for (int i = 0; i < 5; ++i) {
    CHECK(c.send("set k" + std::to_string(i) + " 0 " + (i == 3 ? "50" : "0") + " 2\r\nvv\r\n") == "STORED\r\n");
  }
  CHECK(c.send("ms Yg== 2 b\r\nvv\r\n") == "HD\r\n");  // binary keys are not printed
  const unsigned cls = c.store().classes().item_class(2, 0, 2);
  store_dump d(c.ctx());
  protocol::out_buffer out;
  REQUIRE(d.cachedump(cls, 3, out));
  CHECK(out.str() ==
        "ITEM k4 [2 b; 0 s]\r\nITEM k3 [2 b; " + std::to_string(now + 50) + " s]\r\nITEM k2 [2 b; 0 s]\r\nEND\r\n");
  protocol::out_buffer all;
  REQUIRE(d.cachedump(cls, 0, all));
  CHECK(split(all.str(), "\r\n").size() == 6);  // five items and END
  protocol::out_buffer other;
  REQUIRE(d.cachedump(cls + 1, 0, other));
  CHECK(other.str() == "END\r\n");
}

}  // namespace ithaca::cache
