#include "stream_log.h"

#include <algorithm>
#include <cstring>

namespace ithaca::replication {

// A block's bytes are written once, in order, and never move: `used` only
// grows, so spans a writer took stay valid while the drain appends.
struct stream_log::block {
  explicit block(uint64_t s, size_t capacity) : start(s), bytes(new char[capacity]), capacity(capacity) {}
  uint64_t start;  // the stream position of bytes[0]
  std::unique_ptr<char[]> bytes;
  size_t capacity;
  size_t used = 0;
};

void stream_log::append(std::string_view bytes) {
  while (!bytes.empty()) {
    if (blocks_.empty() || blocks_.back()->used == blocks_.back()->capacity) {
      if (blocks_.empty()) begin_ = end_;
      blocks_.push_back(std::make_shared<block>(end_, block_size_));
    }
    block& b = *blocks_.back();
    const size_t n = std::min(bytes.size(), b.capacity - b.used);
    std::memcpy(b.bytes.get() + b.used, bytes.data(), n);
    b.used += n;
    end_ += n;
    bytes.remove_prefix(n);
  }
}

size_t stream_log::gather(uint64_t from, uint64_t to, size_t max_bytes, size_t max_spans, std::vector<iovec>& spans,
                          std::vector<pin>& pins) const {
  if (from >= to || blocks_.empty()) return 0;
  // Blocks are consecutive and, but for the last, full: index by arithmetic
  // from the first block's start.
  size_t i = static_cast<size_t>((from - blocks_.front()->start) / block_size_);
  size_t added = 0;
  size_t n_spans = 0;
  while (from < to && i < blocks_.size() && added < max_bytes && n_spans < max_spans) {
    const block& b = *blocks_[i];
    const size_t offset = static_cast<size_t>(from - b.start);
    const size_t n = static_cast<size_t>(std::min<uint64_t>({to - from, b.used - offset, max_bytes - added}));
    spans.push_back({b.bytes.get() + offset, n});
    pins.push_back(blocks_[i]);
    from += n;
    added += n;
    ++n_spans;
    ++i;
  }
  return added;
}

void stream_log::trim(uint64_t position) {
  // The open block (the last, with room) stays for the next append.
  while (!blocks_.empty()) {
    const block& b = *blocks_.front();
    const bool open = blocks_.size() == 1 && b.used < b.capacity;
    if (open || b.start + b.used > position) break;
    blocks_.pop_front();
  }
  begin_ = blocks_.empty() ? end_ : blocks_.front()->start;
}

}  // namespace ithaca::replication
