// -L / process.large_pages: transparent huge pages for the store's memory.
// memcached 1.6.45 on Linux checks that THP is not "[never]" in
// /sys/kernel/mm/transparent_hugepage/enabled, then preallocates its whole -m
// in one block it madvises MADV_HUGEPAGE (and refuses to start, exit 1,
// where THP is off). ithaca's hash table and its item region (item_region.h,
// one mapping of -m bytes, as memcached's block) are mmapped, and -L advises
// those mappings (store_config::large_pages). The server starts in every
// case; one log line says what -L got.
#pragma once

#include <string>
#include <string_view>

namespace ithaca::server {

enum class thp_mode { Always, Madvise, Never, Missing };

// The kernel's THP setting (the bracketed word of the sysfs file).
thp_mode read_thp_mode();
// The setting a line of that file names ("always [madvise] never"): Never
// when neither always nor madvise is the bracketed word. [pure]
thp_mode parse_thp_mode(std::string_view line);

// The line to log at start (level warn when `warn`, else info).
struct large_pages_report {
  bool warn = false;
  std::string line;
};
large_pages_report report_large_pages();
// The line for a given setting. [pure]
large_pages_report report_large_pages(thp_mode mode);

}  // namespace ithaca::server
