// memory_trim.h's trim_policy: when freed heap is given back to the kernel
// (a fall of the client count to half its peak, follow-ups while they pay,
// never more often than kMinIntervalNs).
#include <doctest/doctest.h>

#include "memory_trim.h"

namespace ithaca::server {

namespace {
constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kGap = trim_policy::kMinIntervalNs;
constexpr uint64_t kMiB = 1 << 20;
}  // namespace

TEST_CASE("no trim while the client count holds or grows") {
  trim_policy p(10, 0);
  for (int64_t t = 1; t <= 60; ++t) CHECK_FALSE(p.due(10 + static_cast<uint64_t>(t), t * kSec));
  CHECK(p.peak() == 70);
  // A fall to just above half the peak is not one.
  CHECK_FALSE(p.due(36, 61 * kSec));
}

TEST_CASE("a fall to half the peak trims, once the interval since the start has passed") {
  trim_policy p(0, 0);
  CHECK_FALSE(p.due(100, 1 * kSec));
  CHECK_FALSE(p.due(50, 2 * kSec));  // half the peak, but too soon after the start
  CHECK_FALSE(p.due(50, kGap - 1));
  CHECK(p.due(50, kGap));
  CHECK(p.peak() == 100);
}

TEST_CASE("a fall to no clients from any is one; no clients ever is not") {
  trim_policy never(0, 0);
  CHECK_FALSE(never.due(0, 100 * kSec));
  trim_policy some(1, 0);
  CHECK(some.due(0, 100 * kSec));
}

TEST_CASE("after a fall, follow-ups trim while each gives back a MiB, at most kMaxFollowUps") {
  trim_policy p(100, 0);
  int64_t t = 10 * kSec;
  REQUIRE(p.due(10, t));
  p.trimmed(80 * kMiB, t);
  CHECK(p.peak() == 10);  // the sample the trim followed
  CHECK(p.follow_ups() == trim_policy::kMaxFollowUps);
  int trims = 0;
  for (int i = 0; i < 100; ++i) {
    t += kSec;
    if (!p.due(10, t)) continue;
    ++trims;
    p.trimmed(2 * kMiB, t);  // each gives back more than worth it
    // Never two trims within the interval.
    CHECK_FALSE(p.due(10, t + kGap - 1));
  }
  CHECK(trims == trim_policy::kMaxFollowUps);
  CHECK(p.follow_ups() == 0);
}

TEST_CASE("a follow-up that gives back less than a MiB ends the follow-ups") {
  trim_policy p(40, 0);
  REQUIRE(p.due(20, kGap));
  p.trimmed(0, kGap);
  REQUIRE(p.follow_ups() == trim_policy::kMaxFollowUps);
  CHECK_FALSE(p.due(20, 2 * kGap - 1));
  REQUIRE(p.due(20, 2 * kGap));
  p.trimmed(trim_policy::kWorthwhileBytes - 1, 2 * kGap);
  CHECK(p.follow_ups() == 0);
  CHECK_FALSE(p.due(20, 10 * kGap));
  // A new fall (from the count the last trim saw) starts it all again.
  CHECK(p.due(10, 11 * kGap));
}

TEST_CASE("a fall during the follow-ups gives them back their full count") {
  trim_policy p(100, 0);
  REQUIRE(p.due(50, kGap));
  p.trimmed(5 * kMiB, kGap);
  REQUIRE(p.due(50, 2 * kGap));  // a follow-up: no fall from 50
  p.trimmed(5 * kMiB, 2 * kGap);
  CHECK(p.follow_ups() == trim_policy::kMaxFollowUps - 1);
  REQUIRE(p.due(20, 3 * kGap));  // 50 -> 20: a fall
  p.trimmed(0, 3 * kGap);        // even one that gave nothing back
  CHECK(p.follow_ups() == trim_policy::kMaxFollowUps);
}

}  // namespace ithaca::server
