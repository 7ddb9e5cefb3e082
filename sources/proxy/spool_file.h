// The spool machine's writes to a spool file (delete_spool.cc): a record is
// appended whole or not at all, so a failed write never leaves a partial key
// for the next record to be glued to.
//
// Thread: the spool machine only; these block on the disk, which is that
// machine's job (a worker never calls them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ithaca::proxy {

// Opens `path` (a file in `dir`) for appends, creating it (0600); if `dir`
// went away since the start (a cleaner emptied /tmp), makes it again
// (mkdir -p). -1 on failure, with *why (errno's words, or what is wrong
// with `dir`).
int spool_open(const std::string& dir, const std::string& path, std::string* why);

// Appends `record` to `fd` (O_APPEND), whose content ends at `size`. On a
// failure (a full disk, an I/O error) cuts the file back to `size` and
// returns false with *why.
bool spool_append(int fd, uint64_t size, std::string_view record, std::string* why);

// fdatasync(fd): the records appended since `synced_size` survive a machine
// crash. On a failure they are cut back off (ftruncate to `synced_size`:
// their delete is then answered with the failure) and false with *why.
bool spool_sync(int fd, uint64_t synced_size, std::string* why);

}  // namespace ithaca::proxy
