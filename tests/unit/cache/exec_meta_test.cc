// The executor's meta commands (exec_meta.cc): mg ms md ma mn, their flags,
// quiet mode and base64 keys, as memcached 1.6 answers them.
#include <doctest/doctest.h>

#include <string>

#include "exec_harness.h"

namespace ithaca::cache {

using test::connection;

TEST_CASE("ms stores; mg returns what its flags ask for, in their order") {
  connection c;
  CHECK(c.send("ms k 2 F7 T100\r\nhi\r\n") == "HD\r\n");
  CHECK(c.send("mg k v\r\n") == "VA 2\r\nhi\r\n");
  CHECK(c.send("mg k\r\n") == "HD\r\n");
  CHECK(c.send("mg k s f k\r\n") == "HD s2 f7 kk\r\n");
  CHECK(c.send("mg k v t O42\r\n") == "VA 2 t100 O42\r\nhi\r\n");
  CHECK(c.send("mg nope v\r\n") == "EN\r\n");
  CHECK(c.counters().cmd_meta.get() == 6);
}

TEST_CASE("ms c returns the unique that mg c and gets show, and C compares it") {
  connection c;
  const std::string hd = c.send("ms k 1 c\r\nx\r\n");
  REQUIRE(hd.starts_with("HD c"));
  const std::string unique = hd.substr(4, hd.size() - 6);
  CHECK(c.send("mg k c\r\n") == "HD c" + unique + "\r\n");
  CHECK(c.send("gets k\r\n") == "VALUE k 0 1 " + unique + "\r\nx\r\nEND\r\n");
  CHECK(c.send("ms k 1 C" + std::to_string(std::stoull(unique) + 1) + "\r\ny\r\n") == "EX\r\n");
  CHECK(c.send("ms k 1 C" + unique + "\r\nz\r\n") == "HD\r\n");
  CHECK(c.send("mg k v\r\n") == "VA 1\r\nz\r\n");
}

TEST_CASE("ms modes: add, replace, append, prepend") {
  connection c;
  CHECK(c.send("ms k 1 MR\r\nx\r\n") == "NS\r\n");
  CHECK(c.send("ms k 1 ME\r\nx\r\n") == "HD\r\n");
  CHECK(c.send("ms k 1 ME\r\ny\r\n") == "NS\r\n");
  CHECK(c.send("ms k 1 MA\r\n>\r\n") == "HD\r\n");
  CHECK(c.send("ms k 1 MP\r\n<\r\n") == "HD\r\n");
  CHECK(c.send("mg k v\r\n") == "VA 3\r\n<x>\r\n");
}

// (mn is a server command, flow/server_commands.h: not the executor's.)
TEST_CASE("quiet mode: what is expected is silent (ms's HD, mg's EN, md's HD), the rest is said") {
  connection c;
  CHECK(c.send("ms k 1 q\r\nv\r\nmg nope v q\r\nmg k v q\r\nmd nope q\r\n") == "VA 1\r\nv\r\nNF\r\n");
  CHECK(c.send("md k q\r\nmg k v\r\n") == "EN\r\n");
}

TEST_CASE("md deletes; ma counts, creating the item with N and J") {
  connection c;
  CHECK(c.send("md k\r\n") == "NF\r\n");
  CHECK(c.send("ma n\r\n") == "NF\r\n");
  CHECK(c.send("ma n N0 J13 v\r\n") == "VA 2\r\n13\r\n");
  CHECK(c.send("ma n v\r\n") == "VA 2\r\n14\r\n");
  CHECK(c.send("ma n MD D20 v\r\n") == "VA 1\r\n0\r\n");
  CHECK(c.send("ma n D5\r\n") == "HD\r\n");
  CHECK(c.send("mg n v\r\n") == "VA 2\r\n5 \r\n");  // in place, padded to the old length
  CHECK(c.send("md n\r\n") == "HD\r\n");
  CHECK(c.send("mg n v\r\n") == "EN\r\n");
}

TEST_CASE("a base64 key (b) names the same item as its decoded text key") {
  connection c;
  CHECK(c.send("ms Zm9v 1 b\r\nx\r\n") == "HD\r\n");  // "foo"
  CHECK(c.send("get foo\r\n") == "VALUE foo 0 1\r\nx\r\nEND\r\n");
  CHECK(c.send("mg Zm9v b k v\r\n") == "VA 1 kZm9v b\r\nx\r\n");
}

TEST_CASE("mg T touches; an item past its TTL is gone") {
  connection c;
  CHECK(c.send("ms k 1 T2\r\nx\r\n") == "HD\r\n");
  CHECK(c.send("mg k T50 t\r\n") == "HD t50\r\n");
  c.advance_seconds(10);
  CHECK(c.send("mg k t v\r\n") == "VA 1 t40\r\nx\r\n");
  c.advance_seconds(41);
  CHECK(c.send("mg k v\r\n") == "EN\r\n");
}

}  // namespace ithaca::cache
