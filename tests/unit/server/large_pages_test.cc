// large_pages.h: the THP setting read from its sysfs line, and the line -L logs for each.
#include <doctest/doctest.h>

#include "large_pages.h"

namespace ithaca::server {

TEST_CASE("the bracketed word of the sysfs line is the setting") {
  CHECK(parse_thp_mode("[always] madvise never") == thp_mode::Always);
  CHECK(parse_thp_mode("always [madvise] never") == thp_mode::Madvise);
  CHECK(parse_thp_mode("always madvise [never]") == thp_mode::Never);
  CHECK(parse_thp_mode("") == thp_mode::Never);
  CHECK(parse_thp_mode("always madvise never") == thp_mode::Never);
}

TEST_CASE("-L warns unless the kernel gives huge pages to all memory, and says what it got") {
  const large_pages_report always = report_large_pages(thp_mode::Always);
  CHECK_FALSE(always.warn);
  CHECK(always.line.find("on for all memory") != std::string::npos);
  const large_pages_report madvise = report_large_pages(thp_mode::Madvise);
  CHECK_FALSE(madvise.warn);  // what memcached gets: its -m advised
  CHECK(madvise.line.find("asked for the hash table and the item region (MADV_HUGEPAGE)") != std::string::npos);
  const large_pages_report never = report_large_pages(thp_mode::Never);
  CHECK(never.warn);
  CHECK(never.line.find("are disabled here") != std::string::npos);
  const large_pages_report missing = report_large_pages(thp_mode::Missing);
  CHECK(missing.warn);
  CHECK(missing.line.find("are not available here") != std::string::npos);
  for (const auto& r : {always, madvise, never, missing}) CHECK(r.line.starts_with("-L: transparent huge pages "));
  // The report of this host is the report of the mode read here.
  CHECK(report_large_pages().line == report_large_pages(read_thp_mode()).line);
}

}  // namespace ithaca::server
