// The master's outgoing stream, held once for every slave: the drain copies
// each stream record it takes from the hand-off ring into this log, and every
// slave's writer sends from its own position in it (outbox.h). So the drain's
// work per record does not grow with the number of slaves, and a slave that
// reads nothing costs no copy, only the log's bytes it has not yet been sent,
// which it may hold up to send_buffer (past that it is dropped).
//
// Positions count the stream's bytes since the log was made and never wrap.
// Bytes live in fixed blocks that never move once written, so a writer may
// send straight from them while the drain appends; a writer pins the blocks
// of its current write (a shared_ptr each), so trimming a dropped slave's
// position away never frees bytes a write in progress still points at.
//
// [fan-out machine only: no lock; the drain appends and trims, the writers
// gather]
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>
#include <vector>

namespace ithaca::replication {

class stream_log {
 public:
  static constexpr size_t kBlockSize = 64 << 10;

  struct block;
  using pin = std::shared_ptr<const block>;

  explicit stream_log(size_t block_size = kBlockSize) : block_size_(block_size) {}

  uint64_t begin() const { return begin_; }  // the oldest byte still held
  uint64_t end() const { return end_; }      // just past the newest byte

  // Appends bytes at end(); a record may straddle two blocks (a writer sends
  // bytes, not records).
  void append(std::string_view bytes);

  // Adds to `spans` the first bytes of [from, to) (begin() <= from <= to <=
  // end()), at most `max_bytes` of them in at most `max_spans` spans (one per
  // block), and a pin on each block used. Returns the bytes added.
  size_t gather(uint64_t from, uint64_t to, size_t max_bytes, size_t max_spans, std::vector<iovec>& spans,
                std::vector<pin>& pins) const;

  // Frees the blocks wholly before `position` (no slave needs them; a pinned
  // one lives on until its write ends).
  void trim(uint64_t position);

  size_t blocks() const { return blocks_.size(); }

 private:
  size_t block_size_;
  std::deque<std::shared_ptr<block>> blocks_;  // consecutive, the last one open
  uint64_t begin_ = 0;
  uint64_t end_ = 0;
};

}  // namespace ithaca::replication
