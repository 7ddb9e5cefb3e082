#include <doctest/doctest.h>

#include "watch_hub.h"
#include "watch_kinds.h"

using ithaca::commands::parse_watch_kinds;
using namespace ithaca::stats::watch;

TEST_CASE("watch kinds are read as memcached 1.6.45 reads them") {
  CHECK(parse_watch_kinds({}) == kFetchers);
  CHECK(parse_watch_kinds({"fetchers", "mutations"}) == (kFetchers | kMutations));
  CHECK(parse_watch_kinds({"f", "m", "d"}) == (kFetchers | kMutations | kDeletions));
  CHECK(parse_watch_kinds({"connevents", "evictions"}) == (kConnEvents | kEvictions));
  CHECK(parse_watch_kinds({"proxy"}) == kProxyReqs);  // a prefix of several: the first in memcached's order
  CHECK(parse_watch_kinds({"e"}) == kEvictions);
  CHECK_FALSE(parse_watch_kinds({"fetchersX"}).has_value());
  CHECK_FALSE(parse_watch_kinds({"noreply"}).has_value());
  CHECK_FALSE(parse_watch_kinds({"fetchers", "bogus"}).has_value());
}
