// mcrouter's leases on the store (exec_lease.cc): a miss hands out a token,
// a hot key's other readers wait, a delete or a newer set makes a token stale.
#include <doctest/doctest.h>

#include <string>

#include "exec_harness.h"

namespace ithaca::cache {

using test::connection;

namespace {
// The token of an "LVALUE <key> <token> <flags> <bytes>" reply.
uint64_t token_of(const std::string& reply) {
  REQUIRE(reply.starts_with("LVALUE "));
  const size_t at = reply.find(' ', 7) + 1;
  return std::stoull(reply.substr(at, reply.find(' ', at) - at));
}
}  // namespace

TEST_CASE("a miss hands out a token; the next reader of the hot key is told to wait") {
  connection c;
  const std::string first = c.send("lease-get k\r\n");
  const uint64_t token = token_of(first);
  CHECK(token > 2);  // 0, 1 and 2 are mcrouter's reserved values
  CHECK(first == "LVALUE k " + std::to_string(token) + " 0 0\r\n\r\nEND\r\n");
  CHECK(c.send("lease-get k\r\n") == "LVALUE k 1 0 0\r\n\r\nEND\r\n");
  CHECK(c.send("lease-set k " + std::to_string(token + 1) + " 0 0 1\r\nx\r\n") == "NOT_STORED\r\n");
  CHECK(c.send("lease-set k " + std::to_string(token) + " 3 0 2\r\nvv\r\n") == "STORED\r\n");
  CHECK(c.send("lease-get k\r\n") == "VALUE k 3 2\r\nvv\r\nEND\r\n");
  // The token was used up.
  CHECK(c.send("lease-set k " + std::to_string(token) + " 0 0 1\r\nz\r\n") == "NOT_STORED\r\n");
}

TEST_CASE("a delete between the miss and the lease-set makes the token stale") {
  connection c;
  const uint64_t token = token_of(c.send("lease-get k\r\n"));
  CHECK(c.send("delete k\r\n") == "NOT_FOUND\r\n");
  CHECK(c.send("lease-set k " + std::to_string(token) + " 0 0 1\r\nx\r\n") == "NOT_STORED\r\n");
  CHECK(c.send("get k\r\n") == "END\r\n");
  CHECK(c.counters().lease_sets_refused.get() == 1);
}

TEST_CASE("a plain set between the miss and the lease-set wins") {
  connection c;
  const uint64_t token = token_of(c.send("lease-get k\r\n"));
  CHECK(c.send("set k 0 0 3\r\nnew\r\n") == "STORED\r\n");
  CHECK(c.send("lease-set k " + std::to_string(token) + " 0 0 3\r\nold\r\n") == "NOT_STORED\r\n");
  CHECK(c.send("get k\r\n") == "VALUE k 0 3\r\nnew\r\nEND\r\n");
}

TEST_CASE("after the lease interval a waiting reader gets a token of its own") {
  store::store_config sc = test::small_store();
  sc.lease_interval_ms = 2000;
  connection c(sc);
  const uint64_t first = token_of(c.send("lease-get k\r\n"));
  CHECK(c.send("lease-get k\r\n") == "LVALUE k 1 0 0\r\n\r\nEND\r\n");
  c.advance_seconds(3);
  const uint64_t second = token_of(c.send("lease-get k\r\n"));
  CHECK(second > 2);
  CHECK(second != first);
}

}  // namespace ithaca::cache
