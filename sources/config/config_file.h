// Reading a config file from a path nobody vouches for: at SIGHUP the path
// may have become a FIFO with no writer (an open would wait for one), a
// symlink to /dev/zero (a read would never end) or a huge file. Only a
// regular file of at most kMaxConfigFileSize bytes is read.
#pragma once

#include <cstdint>
#include <string>

namespace ithaca::config {

// The largest config file read (the samples are a few KiB).
inline constexpr uint64_t kMaxConfigFileSize = uint64_t{1} << 20;

// Reads the file at `path` (symlinks followed) into *text. Opens it with
// O_NONBLOCK, so a FIFO is opened at once, then asks the opened descriptor
// what it is: anything but a regular file is refused without a read
// ("PATH is a FIFO, not a regular file; refusing to read it"), as is a file
// over kMaxConfigFileSize (also one that grows past it while read). False
// with *error ("PATH: ..." or "PATH is ...") on a refusal or an I/O error.
// [any thread; blocking I/O on a regular file only]
bool read_config_file(const std::string& path, std::string& text, std::string* error);

}  // namespace ithaca::config
