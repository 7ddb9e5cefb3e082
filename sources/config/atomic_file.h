// Files written whole or not at all, as mcrouter writes its dumped configs
// and stats files (atomicallyWriteFileToDisk): the text goes to a temporary
// file beside the target, which is renamed over it, so a reader sees the old
// file or the new one, never a part. [any thread; blocking file I/O: not on
// a machine's event loop]
#pragma once

#include <string>

namespace ithaca::config {

// mkdir -p `dir` (mode 0777 less the umask). False and *error if a part
// cannot be made or is not a directory.
bool make_directories(const std::string& dir, std::string* error);

// Writes `text` to `path` through "PATH.tmp.PID" and a rename, with `mode`
// for a new file. False and *error (the temporary file removed).
bool write_file_atomically(const std::string& path, const std::string& text, unsigned mode, std::string* error);

}  // namespace ithaca::config
