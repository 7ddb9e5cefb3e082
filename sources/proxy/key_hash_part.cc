#include "key_hash_part.h"

namespace ithaca::proxy {

bool valid_hash_tag(std::string_view tag) { return tag.empty() || tag.size() == 2; }

std::string_view key_hash_part(std::string_view key, const key_hash_options& options) {
  if (options.hash_stop) {
    // mcrouter looks for '|' first: most keys have none.
    const auto bar = key.find('|');
    if (bar != std::string_view::npos) {
      const auto stop = key.find(kHashStop, bar);
      if (stop != std::string_view::npos) key = key.substr(0, stop);
    }
  }
  if (options.hash_tag.size() == 2) {
    const auto open = key.find(options.hash_tag[0]);
    if (open != std::string_view::npos) {
      const auto close = key.find(options.hash_tag[1], open + 1);
      if (close != std::string_view::npos && close - open > 1) return key.substr(open + 1, close - open - 1);
    }
  }
  return key;
}

}  // namespace ithaca::proxy
