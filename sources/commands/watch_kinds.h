// The words after `watch`: which of the watch stream's kinds
// (stats/watch_hub.h) a `watch` command asks for. [any thread; pure]
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace ithaca::commands {

// The words after `watch` as memcached 1.6.45 reads them: each a prefix of a
// kind's name (strncmp over the word's length), none means fetchers; nullopt
// on a word that names no kind ("ERROR").
std::optional<uint32_t> parse_watch_kinds(const std::vector<std::string_view>& words);

}  // namespace ithaca::commands
