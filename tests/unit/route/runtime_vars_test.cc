// mcrouter's runtime variables (runtime_vars.h): what a file gives a slot,
// and what a bad file or a bad variable leaves.
#include <doctest/doctest.h>

#include <string>

#include "runtime_vars.h"

using ithaca::route::runtime_range;
using ithaca::route::runtime_range_slot;
using ithaca::route::runtime_vars_apply;

namespace {

bool runtime_vars_test_is(const runtime_range* s, double lo, double hi) {
  return s->set.load() && s->lo.load() == lo && s->hi.load() == hi;
}

}  // namespace

TEST_CASE("runtime_vars: a range reaches the slot, made before or after the file") {
  std::string error;
  runtime_range* before = runtime_range_slot("rvt_before");
  CHECK_FALSE(before->set.load());
  REQUIRE(runtime_vars_apply(R"({"rvt_before": [0.4, 0.5], "rvt_after": [0, 0.25], "other": "x"})", "f", &error));
  CHECK(runtime_vars_test_is(before, 0.4, 0.5));
  CHECK(runtime_vars_test_is(runtime_range_slot("rvt_after"), 0, 0.25));
  CHECK(runtime_range_slot("rvt_before") == before);  // one slot per name
}

TEST_CASE("runtime_vars: a bad file or a bad variable keeps the running values") {
  std::string error;
  runtime_range* s = runtime_range_slot("rvt_keep");
  REQUIRE(runtime_vars_apply(R"({"rvt_keep": [0.1, 0.2]})", "f", &error));
  CHECK_FALSE(runtime_vars_apply(R"({"rvt_keep": [0, 1])", "f", &error));
  CHECK(error.starts_with("not JSON"));
  CHECK_FALSE(runtime_vars_apply("[1, 2]", "f", &error));
  CHECK(error == "expected a JSON object of variables");
  CHECK(runtime_vars_test_is(s, 0.1, 0.2));
  for (const char* bad : {R"({"rvt_keep": [0.7, 0.2]})", R"({"rvt_keep": [0, 2]})", R"({"rvt_keep": [0]})",
                          R"({"rvt_keep": ["a", "b"]})", R"({"rvt_keep": 0.5})"}) {
    CHECK(runtime_vars_apply(bad, "f", &error));  // the file is taken, the variable is not
    CHECK(runtime_vars_test_is(s, 0.1, 0.2));
  }
  CHECK(runtime_vars_apply("{}", "f", &error));  // absent: kept, as mcrouter keeps it
  CHECK(runtime_vars_test_is(s, 0.1, 0.2));
}
