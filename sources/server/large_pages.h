// -L / process.large_pages: transparent huge pages for the store's memory.
// memcached 1.6.45 on Linux checks that THP is not "[never]" in
// /sys/kernel/mm/transparent_hugepage/enabled, then preallocates its whole -m
// in one block it madvises MADV_HUGEPAGE (and refuses to start, exit 1,
// where THP is off). ithaca has no slab block: its items are malloc blocks and
// its hash table is mmapped. So -L asks the kernel for huge pages on both:
// the hash table's mappings get MADV_HUGEPAGE (store_config::large_pages),
// and glibc's malloc madvises its heaps when started with the tunable
// glibc.malloc.hugetlb=1 (glibc >= 2.35), which only the environment can set:
// the process re-executes itself once with it, before anything else. Where
// THP cannot be had, the server starts anyway with one log line saying so.
#pragma once

#include <string>

namespace ithaca::server {

enum class thp_mode { Always, Madvise, Never, Missing };

// The kernel's THP setting (the bracketed word of the sysfs file).
thp_mode read_thp_mode();

// With THP in madvise mode and a glibc that has the tunable: sets
// GLIBC_TUNABLES=...:glibc.malloc.hugetlb=1 and execs /proc/self/exe with the
// same argv. Returns when there is nothing to do (or the exec failed: the
// report says so). [main thread, first thing, before any thread or output]
void exec_with_malloc_huge_pages(char** argv);

// The line to log at start (level warn when `warn`, else info).
struct large_pages_report {
  bool warn = false;
  std::string line;
};
large_pages_report report_large_pages();

}  // namespace ithaca::server
