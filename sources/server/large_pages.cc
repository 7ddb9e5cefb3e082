#include "large_pages.h"

#include <gnu/libc-version.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <cstdio>

namespace ithaca::server {

namespace {

constexpr const char* kThpPath = "/sys/kernel/mm/transparent_hugepage/enabled";
constexpr const char* kTunable = "glibc.malloc.hugetlb=";

// glibc.malloc.hugetlb came with glibc 2.35.
bool glibc_has_tunable() {
  int major = 0, minor = 0;
  return std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 &&
         (major > 2 || (major == 2 && minor >= 35));
}

bool tunable_set() {
  const char* t = std::getenv("GLIBC_TUNABLES");
  return t != nullptr && std::strstr(t, kTunable) != nullptr;
}

bool tunable_on() {
  const char* t = std::getenv("GLIBC_TUNABLES");
  const char* at = t != nullptr ? std::strstr(t, kTunable) : nullptr;
  return at != nullptr && at[std::strlen(kTunable)] == '1';
}

int exec_errno = 0;  // the re-exec's failure, for the report (same thread)

}  // namespace

thp_mode read_thp_mode() {
  std::ifstream f(kThpPath);
  std::string text;
  if (!f || !std::getline(f, text)) return thp_mode::Missing;
  if (text.find("[always]") != std::string::npos) return thp_mode::Always;
  if (text.find("[madvise]") != std::string::npos) return thp_mode::Madvise;
  return thp_mode::Never;
}

void exec_with_malloc_huge_pages(char** argv) {
  if (tunable_set() || !glibc_has_tunable() || read_thp_mode() != thp_mode::Madvise) return;
  const char* old = std::getenv("GLIBC_TUNABLES");
  std::string value = old != nullptr && *old != '\0' ? std::string(old) + ":" : std::string();
  value += std::string(kTunable) + "1";
  if (::setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) {
    exec_errno = errno;
    return;
  }
  ::execv("/proc/self/exe", argv);
  exec_errno = errno;  // still here: go on without it
  if (old != nullptr) {
    ::setenv("GLIBC_TUNABLES", old, 1);
  } else {
    ::unsetenv("GLIBC_TUNABLES");
  }
}

large_pages_report report_large_pages() {
  const std::string head = "-L: transparent huge pages ";
  switch (read_thp_mode()) {
    case thp_mode::Missing:
      return {true, head + "are not available here (no " + kThpPath + "); the default page size is used"};
    case thp_mode::Never:
      return {true, head + "are disabled here (" + kThpPath + ": never); the default page size is used"};
    case thp_mode::Always:
      return {false, head + "are on for all memory (" + kThpPath + ": always)"};
    case thp_mode::Madvise: break;
  }
  if (tunable_on()) {
    return {false, head + "asked for the hash table (MADV_HUGEPAGE) and for the items' malloc heaps "
                          "(glibc.malloc.hugetlb=1)"};
  }
  std::string why = exec_errno != 0 ? std::string("re-executing with glibc.malloc.hugetlb=1 failed: ") +
                                          std::strerror(exec_errno)
                    : tunable_set() ? std::string("GLIBC_TUNABLES sets glibc.malloc.hugetlb otherwise")
                                    : std::string("glibc ") + gnu_get_libc_version() + " has no glibc.malloc.hugetlb";
  return {true, head + "asked for the hash table only (MADV_HUGEPAGE); not for the items' malloc heaps: " + why};
}

}  // namespace ithaca::server
