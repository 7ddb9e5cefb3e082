#include "watch_kinds.h"

#include "command_words.h"
#include "watch_hub.h"

namespace ithaca::commands {

namespace watch = stats::watch;

namespace {

struct kind_name {
  std::string_view name;
  uint32_t bit;
};

// In memcached's order: a word that is a prefix of several takes the first.
constexpr kind_name kKindNames[] = {
    {"rawcmds", watch::kRawCmds},     {"evictions", watch::kEvictions},     {"fetchers", watch::kFetchers},
    {"mutations", watch::kMutations}, {"sysevents", watch::kSysEvents},     {"connevents", watch::kConnEvents},
    {"proxyreqs", watch::kProxyReqs}, {"proxyevents", watch::kProxyEvents}, {"proxyuser", watch::kProxyUser},
    {"deletions", watch::kDeletions},
};
}  // namespace

std::optional<uint32_t> parse_watch_kinds(const std::vector<std::string_view>& words) {
  if (words.empty()) return watch::kFetchers;
  uint32_t kinds = 0;
  for (std::string_view w : words) {
    bool known = false;
    for (const kind_name& k : kKindNames) {
      if (is_prefix_of(w, k.name)) {
        kinds |= k.bit;
        known = true;
        break;
      }
    }
    if (!known) return std::nullopt;
  }
  return kinds;
}

}  // namespace ithaca::commands
