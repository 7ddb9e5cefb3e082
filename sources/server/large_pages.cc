#include "large_pages.h"

#include <fstream>

namespace ithaca::server {

namespace {
constexpr const char* kThpPath = "/sys/kernel/mm/transparent_hugepage/enabled";
}  // namespace

thp_mode read_thp_mode() {
  std::ifstream f(kThpPath);
  std::string text;
  if (!f || !std::getline(f, text)) return thp_mode::Missing;
  return parse_thp_mode(text);
}

thp_mode parse_thp_mode(std::string_view line) {
  if (line.find("[always]") != std::string_view::npos) return thp_mode::Always;
  if (line.find("[madvise]") != std::string_view::npos) return thp_mode::Madvise;
  return thp_mode::Never;
}

large_pages_report report_large_pages() { return report_large_pages(read_thp_mode()); }

large_pages_report report_large_pages(thp_mode mode) {
  const std::string head = "-L: transparent huge pages ";
  switch (mode) {
    case thp_mode::Missing:
      return {true, head + "are not available here (no " + kThpPath + "); the default page size is used"};
    case thp_mode::Never:
      return {true, head + "are disabled here (" + kThpPath + ": never); the default page size is used"};
    case thp_mode::Always:
      return {false, head + "are on for all memory here (" + kThpPath + ": always): the hash table and the items"};
    case thp_mode::Madvise: break;
  }
  return {false, head + "asked for the hash table and the item region (MADV_HUGEPAGE)"};
}

}  // namespace ithaca::server
