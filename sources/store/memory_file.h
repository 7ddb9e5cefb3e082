// memory_file: memcached's -e FILE, the item region kept in a file across a graceful stop
// (INTERNALS.md, "Item memory", "-e FILE").
//
// FILE is the region itself (mapped MAP_SHARED: on tmpfs or DAX it is the memory), and
// FILE.meta, a few lines of `key value` text written beside it, says whether the region may
// be served again: `clean 1` only between a graceful stop (SIGUSR1: store::save_memory_file)
// and the next start, which rewrites it `clean 0` before it changes a byte of the region, so
// a crash or a SIGKILL leaves `clean 0` and the next start is a clean one. It also holds what
// the region's bytes mean (the format, the region's size, item_size_max, -C), what the walk
// needs (the blocks' end), the clocks (the unix time at the stop and at the old server time
// 0, so deadlines become unix times and back), the CAS and flush state, a generation counted
// up at every start, and a checksum of the blocks, so a file changed since (or a half-written
// one) is not served: never a wrong value.
//
// No lock: opened by the store's constructor, saved after every other thread stopped.
#pragma once

#include <cstdint>
#include <string>

namespace ithaca::store {

inline constexpr uint64_t kMemoryFileFormat = 1;  // the item and block layouts; +1 when either changes

struct memory_file_meta {
  uint64_t format = 0;
  bool clean = false;
  uint64_t region_size = 0;      // the file's size: -m at the start that made it
  uint64_t item_size_max = 0;    // -I
  bool cas_enabled = true;       // -C
  uint64_t generation = 0;       // starts since the file was made
  uint64_t top = 0;              // the blocks' end at the stop
  uint64_t checksum = 0;         // memory_file_checksum of [0, top)
  int64_t stop_unix = 0;         // unix time at the stop
  int64_t wall_base = 0;         // unix time at the stopped process's server time 0 (store_time.h)
  uint64_t cas_counter = 0;      // the CAS counter at the stop
  uint64_t oldest_cas = 0;       // flush_all: CAS at or below it is invalid
  int64_t oldest_live_unix = 0;  // flush_all with a delay: stored at or before it is invalid once passed
};

// FILE.meta's path.
std::string memory_file_meta_path(const std::string& file);
// Reads FILE.meta. False (and `why`) if it is missing or unreadable.
bool memory_file_read_meta(const std::string& file, memory_file_meta& m, std::string& why);
// Writes FILE.meta whole (a temporary, fsync, rename, fsync of the directory): a reader sees
// the old or the new, never half. False (and `why`) on an I/O error.
bool memory_file_write_meta(const std::string& file, const memory_file_meta& m, std::string& why);
// What the store's constructor learned of FILE before it mapped it.
struct memory_file_state {
  std::string path;         // "" = no memory file (anonymous memory)
  int fd = -1;              // the file, handed to the item region
  uint64_t size = 0;        // the region's size (-m, page rounded)
  bool restorable = false;  // FILE.meta said clean and compatible: walk the region
  std::string why;          // why not, when a file was there
  memory_file_meta meta;    // as read; its generation is this start's
};

// Opens FILE (made if missing), reads FILE.meta and decides whether the region it holds may
// be walked and served (`restorable`; else `why`), then rewrites FILE.meta `clean 0` with
// the generation counted up, before the region is touched, so a crash from here on leaves
// a file no start serves. Throws std::runtime_error if FILE cannot be opened or FILE.meta
// cannot be written. [the store's constructor]
// The file is locked (flock, exclusive) for as long as this process has it: a second
// process on the same file is refused (std::runtime_error), or with `replace_in_use`
// (a takeover, whose old process still serves from it) the path is unlinked and a
// new file made there; the old process keeps its own until it exits, and leaves
// FILE.meta alone (it saves only on SIGUSR1).
memory_file_state memory_file_prepare(const std::string& path, uint64_t size, uint64_t item_size_max, bool cas_enabled,
                                      bool replace_in_use = false);

// A 64-bit hash of n bytes (8 at a time; n is a multiple of 8).
uint64_t memory_file_checksum(const char* p, uint64_t n) noexcept;

}  // namespace ithaca::store
