// Loading the YAML config file.
#pragma once

#include <string>

#include "config.h"

namespace ithaca::config {

// Reads `path` into `out`, starting from the built-in defaults (not from what
// `out` held), and validates the result. On failure returns false, leaves
// `out` unchanged (so a reload with a typo keeps the running config) and sets
// *error to "FILE:LINE: message" (LINE is 1-based; "FILE: message" when there
// is no line, e.g. the file cannot be read). The first error in file order is
// reported. Unknown sections and keys are errors. An empty document (nothing,
// or only whitespace and comments) means the defaults at start-up; with
// allow_empty false (a reload) it is an error instead, because it is what a
// truncated write leaves and it would silently reset every running setting.
// Only a regular file of at most 1 MiB is read (config_file.h): a FIFO, a
// device or a larger file is refused without blocking or growing.
// out.sources lists `path`, then each file the reader imported (config.h),
// each made absolute (lexically: symlinks are kept, the watcher follows them).
// [any thread; blocking I/O]
// `text_instead`: the file's text from elsewhere (a dumped copy of it,
// config_dump.h), read as if it were the file's.
bool load_config(const std::string& path, config& out, std::string* error, bool allow_empty = true,
                 const std::string* text_instead = nullptr);

// The same, from text already in memory; `name` stands for the file in
// messages. out.sources lists only the files the text imported.
bool load_config_text(const std::string& text, const std::string& name, config& out, std::string* error,
                      bool allow_empty = true);

}  // namespace ithaca::config
