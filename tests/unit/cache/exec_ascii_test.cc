// The executor's classic text commands (exec_ascii.cc, exec_store.cc): the
// bytes memcached 1.6 answers, the side effects it has, and its counters.
#include <doctest/doctest.h>

#include <string>

#include "exec_harness.h"

namespace ithaca::cache {

using test::connection;

TEST_CASE("set, get, gets and a multi-key get") {
  connection c;
  CHECK(c.send("set a 5 0 3\r\nabc\r\n") == "STORED\r\n");
  CHECK(c.send("set b 0 0 0\r\n\r\n") == "STORED\r\n");
  CHECK(c.send("get a\r\n") == "VALUE a 5 3\r\nabc\r\nEND\r\n");
  CHECK(c.send("get a nope b\r\n") == "VALUE a 5 3\r\nabc\r\nVALUE b 0 0\r\n\r\nEND\r\n");
  CHECK(c.send("get nope\r\n") == "END\r\n");
  const std::string gets = c.send("gets a\r\n");
  CHECK(gets.starts_with("VALUE a 5 3 "));
  CHECK(gets.ends_with("\r\nabc\r\nEND\r\n"));
  CHECK(c.counters().cmd_get.get() == 6);  // keys asked for, not commands
  CHECK(c.counters().cmd_set.get() == 2);
}

TEST_CASE("a request split over reads is answered once it is whole") {
  connection c;
  CHECK(c.send("set k 0 0 5\r\nhel") == "");
  CHECK(c.send("lo\r\nget") == "STORED\r\n");
  CHECK(c.send(" k\r\n") == "VALUE k 0 5\r\nhello\r\nEND\r\n");
}

TEST_CASE("add, replace, append, prepend keep memcached's conditions") {
  connection c;
  CHECK(c.send("replace k 0 0 1\r\nx\r\n") == "NOT_STORED\r\n");
  CHECK(c.send("append k 0 0 1\r\nx\r\n") == "NOT_STORED\r\n");
  CHECK(c.send("add k 3 0 2\r\nmm\r\n") == "STORED\r\n");
  CHECK(c.send("add k 0 0 1\r\nx\r\n") == "NOT_STORED\r\n");
  CHECK(c.send("append k 9 0 2\r\n>>\r\n") == "STORED\r\n");
  CHECK(c.send("prepend k 9 0 2\r\n<<\r\n") == "STORED\r\n");
  // append and prepend keep the item's flags.
  CHECK(c.send("get k\r\n") == "VALUE k 3 6\r\n<<mm>>\r\nEND\r\n");
  CHECK(c.send("replace k 4 0 1\r\nr\r\n") == "STORED\r\n");
  CHECK(c.send("get k\r\n") == "VALUE k 4 1\r\nr\r\nEND\r\n");
}

TEST_CASE("cas stores only with the item's current unique") {
  connection c;
  CHECK(c.send("cas k 0 0 1 1\r\nx\r\n") == "NOT_FOUND\r\n");
  CHECK(c.send("set k 0 0 1\r\na\r\n") == "STORED\r\n");
  const std::string gets = c.send("gets k\r\n");
  const std::string unique = gets.substr(12, gets.find("\r\n") - 12);  // "VALUE k 0 1 <cas>"
  CHECK(c.send("cas k 0 0 1 " + std::to_string(std::stoull(unique) + 1) + "\r\nb\r\n") == "EXISTS\r\n");
  CHECK(c.send("cas k 0 0 1 " + unique + "\r\nc\r\n") == "STORED\r\n");
  // The unique moved: the same one fails now.
  CHECK(c.send("cas k 0 0 1 " + unique + "\r\nd\r\n") == "EXISTS\r\n");
  CHECK(c.send("get k\r\n") == "VALUE k 0 1\r\nc\r\nEND\r\n");
}

TEST_CASE("incr and decr: decimal arithmetic, wrap at 2^64 up, floor at 0 down") {
  connection c;
  CHECK(c.send("incr n 1\r\n") == "NOT_FOUND\r\n");
  CHECK(c.send("set n 0 0 2\r\n10\r\n") == "STORED\r\n");
  CHECK(c.send("incr n 5\r\n") == "15\r\n");
  CHECK(c.send("decr n 100\r\n") == "0\r\n");
  CHECK(c.send("set n 0 0 20\r\n18446744073709551615\r\n") == "STORED\r\n");
  CHECK(c.send("incr n 2\r\n") == "1\r\n");
  CHECK(c.send("set s 0 0 3\r\nabc\r\n") == "STORED\r\n");
  CHECK(c.send("incr s 1\r\n") == "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
  // memcached writes a shorter number over the old one in place, padded
  // with spaces to the old length.
  CHECK(c.send("incr n 1 noreply\r\nget n\r\n") == "VALUE n 0 20\r\n2" + std::string(19, ' ') + "\r\nEND\r\n");
  CHECK(c.send("incr n 1\r\n") == "3\r\n");  // the padding is no part of the number
}

TEST_CASE("delete, touch, gat and noreply") {
  connection c;
  CHECK(c.send("delete k\r\n") == "NOT_FOUND\r\n");
  CHECK(c.send("set k 0 0 1 noreply\r\nv\r\n") == "");
  CHECK(c.send("touch k 10\r\n") == "TOUCHED\r\n");
  CHECK(c.send("touch gone 10\r\n") == "NOT_FOUND\r\n");
  CHECK(c.send("gat 100 k gone\r\n") == "VALUE k 0 1\r\nv\r\nEND\r\n");
  CHECK(c.send("delete k\r\n") == "DELETED\r\n");
  CHECK(c.send("get k\r\n") == "END\r\n");
}

TEST_CASE("an item expires at its exptime, relative or absolute, and a touch moves it") {
  connection c;
  CHECK(c.send("set rel 0 2 1\r\nr\r\n") == "STORED\r\n");
  CHECK(c.send("set abs 0 " + std::to_string(c.unix_now() + 3) + " 1\r\na\r\n") == "STORED\r\n");
  CHECK(c.send("set touched 0 2 1\r\nt\r\n") == "STORED\r\n");
  CHECK(c.send("touch touched 100\r\n") == "TOUCHED\r\n");
  CHECK(c.send("set past 0 -1 1\r\np\r\n") == "STORED\r\n");  // negative: expired at once
  CHECK(c.send("get past\r\n") == "END\r\n");
  c.advance_seconds(1);
  CHECK(c.send("get rel abs\r\n") == "VALUE rel 0 1\r\nr\r\nVALUE abs 0 1\r\na\r\nEND\r\n");
  c.advance_seconds(2);
  CHECK(c.send("get rel abs touched\r\n") == "VALUE touched 0 1\r\nt\r\nEND\r\n");
}

TEST_CASE("a set whose value is too large removes the old item; add does not") {
  protocol::parser_settings ps;
  ps.item_size_max = 1024;
  store::store_config sc = test::small_store();
  sc.item_size_max = 1024;
  connection c(sc, ps);
  CHECK(c.send("set k 0 0 1\r\nv\r\n") == "STORED\r\n");
  CHECK(c.send("add k 0 0 1\r\nw\r\n") == "NOT_STORED\r\n");
  const std::string big(2000, 'b');
  CHECK(c.send("add k 0 0 2000\r\n" + big + "\r\n") == "SERVER_ERROR object too large for cache\r\n");
  CHECK(c.send("get k\r\n") == "VALUE k 0 1\r\nv\r\nEND\r\n");
  CHECK(c.send("set k 0 0 2000\r\n" + big + "\r\n") == "SERVER_ERROR object too large for cache\r\n");
  CHECK(c.send("get k\r\n") == "END\r\n");
}

TEST_CASE("flush_all: at once, after a delay, or at an absolute time; items set after stay") {
  connection c;
  CHECK(c.send("set a 0 0 1\r\n1\r\n") == "STORED\r\n");
  CHECK(c.send("flush_all\r\n") == "OK\r\n");
  CHECK(c.send("get a\r\n") == "END\r\n");
  CHECK(c.send("set b 0 0 1\r\n2\r\n") == "STORED\r\n");
  CHECK(c.send("get b\r\n") == "VALUE b 0 1\r\n2\r\nEND\r\n");
  CHECK(c.send("flush_all 2\r\n") == "OK\r\n");
  c.advance_seconds(1);
  CHECK(c.send("get b\r\n") == "VALUE b 0 1\r\n2\r\nEND\r\n");
  c.advance_seconds(2);
  CHECK(c.send("get b\r\n") == "END\r\n");
  CHECK(c.send("set d 0 0 1\r\n4\r\n") == "STORED\r\n");
  CHECK(c.send("flush_all " + std::to_string(c.unix_now() + 5) + " noreply\r\n") == "");
  c.advance_seconds(3);
  CHECK(c.send("get d\r\n") == "VALUE d 0 1\r\n4\r\nEND\r\n");
  c.advance_seconds(3);
  CHECK(c.send("get d\r\n") == "END\r\n");
  CHECK(c.counters().cmd_flush.get() == 3);
}

TEST_CASE("parse errors get memcached's replies; a bad data chunk stores nothing and closes nothing") {
  connection c;
  flow::exec_action action = flow::exec_action::Close;
  CHECK(c.send("bogus\r\n", &action) == "ERROR\r\n");
  CHECK(action == flow::exec_action::Continue);
  CHECK(c.send("set k 0 0 1\r\nxx\r\n", &action).starts_with("CLIENT_ERROR bad data chunk"));
  CHECK(action == flow::exec_action::Continue);
  CHECK(c.send("get k\r\n") == "END\r\n");
}

}  // namespace ithaca::cache
