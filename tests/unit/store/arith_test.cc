#include <doctest/doctest.h>

#include <string>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

arith_result arith(store& s, std::string_view key, arith_op op, uint64_t delta, arith_options o = {}) {
  arith_result r;
  s.arithmetic(key, op, delta, at_sec(1), o, r);
  return r;
}

}  // namespace

TEST_CASE("incr and decr basics and stats") {
  store s(small_config());
  CHECK(arith(s, "n", arith_op::Incr, 1).status == arith_status::NotFound);
  CHECK(arith(s, "n", arith_op::Decr, 1).status == arith_status::NotFound);
  put(s, "n", "10", at_sec(1), 100, 3);
  auto r = arith(s, "n", arith_op::Incr, 5);
  CHECK(r.status == arith_status::Ok);
  CHECK(r.value == 15);
  CHECK(r.cas != 0);
  get_result g;
  s.get("n", at_sec(1), {}, g);
  CHECK(g.value == "15");
  CHECK(g.flags == 3);
  CHECK(g.ttl == 100);
  CHECK(g.cas == r.cas);
  CHECK(arith(s, "n", arith_op::Decr, 3).value == 12);
  auto st = s.stats();
  CHECK(st.incr_hits == 1);
  CHECK(st.incr_misses == 1);
  CHECK(st.decr_hits == 1);
  CHECK(st.decr_misses == 1);
}

TEST_CASE("incr wraps modulo 2^64") {
  store s(small_config());
  put(s, "n", "18446744073709551615", at_sec(1));
  auto r = arith(s, "n", arith_op::Incr, 1);
  CHECK(r.status == arith_status::Ok);
  CHECK(r.value == 0);
  // memcached writes a shorter number over the old one, padded with spaces.
  CHECK(fetch(s, "n", at_sec(1)) == "0                   ");
}

TEST_CASE("decr floors at 0 and keeps the length, padded with spaces (memcached)") {
  store s(small_config());
  put(s, "n", "10", at_sec(1));
  CHECK(arith(s, "n", arith_op::Decr, 1).value == 9);
  CHECK(fetch(s, "n", at_sec(1)) == "9 ");
  CHECK(arith(s, "n", arith_op::Decr, 100).value == 0);
  CHECK(fetch(s, "n", at_sec(1)) == "0 ");
  CHECK(arith(s, "n", arith_op::Incr, 100).value == 100);
  CHECK(fetch(s, "n", at_sec(1)) == "100");
}

TEST_CASE("incr grows the length") {
  store s(small_config());
  put(s, "n", "99", at_sec(1));
  CHECK(arith(s, "n", arith_op::Incr, 1).value == 100);
  CHECK(fetch(s, "n", at_sec(1)) == "100");
  CHECK(arith(s, "n", arith_op::Incr, 18446744073709551000ULL).value == 18446744073709551100ULL);
  CHECK(fetch(s, "n", at_sec(1)) == "18446744073709551100");
}

TEST_CASE("non-numeric values") {
  store s(small_config());
  for (const char* v : {"", "  ", "abc", "-1", "1a", "+", "123456789012345678901", "18446744073709551616",
                        "99999999999999999999", "x1"}) {
    CAPTURE(v);
    put(s, "n", v, at_sec(1));
    CHECK(arith(s, "n", arith_op::Incr, 1).status == arith_status::NonNumeric);
    CHECK(arith(s, "n", arith_op::Decr, 1).status == arith_status::NonNumeric);
  }
  put(s, "n", "00000000000000000007", at_sec(1));  // 20 digits, leading zeros fine
  CHECK(arith(s, "n", arith_op::Incr, 1).value == 8);
  // strtoull's syntax, as memcached reads the value: blanks around, a sign,
  // and anything after a blank.
  for (const char* v : {" 1", "1 ", "+1", "\t1\n", "1 junk", "-0"}) {
    CAPTURE(v);
    put(s, "n", v, at_sec(1));
    CHECK(arith(s, "n", arith_op::Incr, 1).status == arith_status::Ok);
  }
}

TEST_CASE("ma: vivify with initial value, compare cas, touch") {
  store s(small_config());
  arith_options o;
  o.vivify = true;
  o.initial = 42;
  o.vivify_exptime = 50;
  auto r = arith(s, "n", arith_op::Incr, 5, o);
  CHECK(r.status == arith_status::Ok);
  CHECK(r.vivified);
  CHECK(r.value == 42);
  r = arith(s, "n", arith_op::Incr, 5, o);
  CHECK(r.value == 47);
  CHECK(!r.vivified);
  arith_options c;
  c.compare_cas = r.cas + 1;
  CHECK(arith(s, "n", arith_op::Incr, 1, c).status == arith_status::Exists);
  c.compare_cas = r.cas;
  c.touch = true;
  c.exptime = 500;
  CHECK(arith(s, "n", arith_op::Incr, 1, c).value == 48);
  get_result g;
  s.get("n", at_sec(1), {}, g);
  CHECK(g.ttl == 500);
}
