#include <doctest/doctest.h>

#include <string>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

store_config lease_config() {
  store_config c = small_config();
  c.lease_interval_ms = 2000;
  c.lease_ttl_sec = 10;
  return c;
}

get_result lease_get(store& s, std::string_view key, uint64_t ms) {
  get_options o;
  o.lease = true;
  get_result r;
  s.get(key, store_now{ms, 0}, o, r);
  return r;
}

store_status lease_set(store& s, std::string_view key, std::string_view v, uint64_t token, uint64_t ms) {
  store_options o;
  o.lease_token = token;
  store_result r;
  s.set(key, store_mode::Set, {v.data(), v.size()}, 0, 0, store_now{ms, 0}, o, r);
  return r.status;
}

}  // namespace

TEST_CASE("lease-get miss hands out a token; lease-set with it stores") {
  store s(lease_config());
  auto r = lease_get(s, "k", 1000);
  CHECK(r.status == get_status::LeaseToken);
  CHECK(r.lease_token > 2);
  CHECK(s.stats().curr_items == 0);  // a placeholder is not an item
  CHECK(s.stats().lease_placeholders == 1);
  CHECK(s.mem_used() > 0);  // but it costs memory
  CHECK(fetch(s, "k", store_now{1000, 0}) == "<miss>");
  CHECK(lease_set(s, "k", "v", r.lease_token, 1100) == store_status::Stored);
  CHECK(s.stats().lease_placeholders == 0);
  CHECK(s.stats().curr_items == 1);
  auto h = lease_get(s, "k", 1200);
  CHECK(h.status == get_status::Hit);
  CHECK(h.value == "v");
  // The token is spent.
  CHECK(lease_set(s, "k", "w", r.lease_token, 1300) == store_status::NotStored);
}

TEST_CASE("hot key: other lease-gets wait within the interval, get a new token after") {
  store s(lease_config());
  auto first = lease_get(s, "k", 1000);
  REQUIRE(first.status == get_status::LeaseToken);
  CHECK(lease_get(s, "k", 1001).status == get_status::LeaseWait);
  CHECK(lease_get(s, "k", 2999).status == get_status::LeaseWait);
  auto second = lease_get(s, "k", 3000);
  CHECK(second.status == get_status::LeaseToken);
  CHECK(second.lease_token != first.lease_token);
  CHECK(lease_set(s, "k", "old", first.lease_token, 3001) == store_status::NotStored);
  CHECK(lease_set(s, "k", "new", second.lease_token, 3002) == store_status::Stored);
  CHECK(s.stats().lease_waits == 2);
  CHECK(s.stats().lease_tokens == 2);
}

TEST_CASE("a lease-get whose clock is behind the token's issue time waits (workers' clocks differ)") {
  // Workers read a per-loop cached clock: one worker may hand out a token at 1005 while
  // another still reads 1000. That older reader must wait, not take a second token.
  store s(lease_config());
  auto first = lease_get(s, "k", 1005);
  REQUIRE(first.status == get_status::LeaseToken);
  CHECK(lease_get(s, "k", 1000).status == get_status::LeaseWait);
  CHECK(lease_set(s, "k", "v", first.lease_token, 1001) == store_status::Stored);
  CHECK(s.stats().lease_tokens == 1);
}

TEST_CASE("a delete invalidates the token: the stale lease-set is refused") {
  store s(lease_config());
  auto r = lease_get(s, "k", 1000);
  CHECK(s.remove("k", store_now{1100, 0}) == remove_status::NotFound);
  CHECK(lease_set(s, "k", "stale", r.lease_token, 1200) == store_status::NotStored);
  CHECK(fetch(s, "k", store_now{1200, 0}) == "<miss>");
  // The next lease-get gets a fresh token at once.
  CHECK(lease_get(s, "k", 1300).status == get_status::LeaseToken);
}

TEST_CASE("a plain set since the token was issued invalidates it") {
  store s(lease_config());
  auto r = lease_get(s, "k", 1000);
  put(s, "k", "fresh", store_now{1100, 0});
  CHECK(lease_set(s, "k", "stale", r.lease_token, 1200) == store_status::NotStored);
  CHECK(fetch(s, "k", store_now{1200, 0}) == "fresh");
}

TEST_CASE("lease-set without any token outstanding is refused; placeholders expire") {
  store s(lease_config());
  CHECK(lease_set(s, "k", "v", 12345, 1000) == store_status::NotStored);
  auto r = lease_get(s, "k", 1000);
  // lease_ttl_sec = 10: the placeholder is gone 10 s later, and so is the token.
  CHECK(lease_set(s, "k", "v", r.lease_token, 11000) == store_status::NotStored);
  CHECK(s.stats().lease_placeholders == 0);
  CHECK(s.mem_used() == 0);
}
