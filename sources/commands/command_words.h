// The words of an operator command's arguments, and how they name sub-commands (`slabs ...`, `lru ...`,
// `lru_crawler ...`, `watch ...`), split on spaces as memcached's tokenizer
// does. [any thread; pure]
#pragma once

#include <string_view>
#include <vector>

namespace ithaca::commands {

inline std::vector<std::string_view> words_of(std::string_view args) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < args.size()) {
    while (i < args.size() && args[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < args.size() && args[i] != ' ') ++i;
    if (i > start) words.push_back(args.substr(start, i - start));
  }
  return words;
}

// memcached 1.6.45 compares a sub-command word with strncmp over the word's
// length: any non-empty prefix of `name` names it ("auto" is automove).
inline bool is_prefix_of(std::string_view word, std::string_view name) {
  return !word.empty() && word.size() <= name.size() && name.substr(0, word.size()) == word;
}

}  // namespace ithaca::commands
