#include "slab_classes.h"

#include <algorithm>

namespace ithaca::store {

// The same arithmetic as memcached's slabs_init() (its types too: an unsigned size times a
// double factor, truncated), so every chunk size matches what memcached prints with the
// same -n and -f.
slab_classes::slab_classes(const slab_class_config& cfg) {
  chunk_max_ = std::max<uint32_t>(cfg.chunk_max, kItemHeader + kAlign);
  cas_bytes_ = cfg.cas ? 8 : 0;
  const uint32_t page = std::max(cfg.page_size, chunk_max_);
  const double factor = cfg.factor > 1.0 ? cfg.factor : 1.25;
  unsigned i = 0;  // POWER_SMALLEST - 1
  unsigned size = kItemHeader + cfg.min_size;
  while (++i < kSlabClassMax - 1) {
    if (size >= chunk_max_ / factor) break;
    if (size % kAlign) size += kAlign - size % kAlign;
    size_[i] = size;
    per_page_[i] = page / size;
    size = static_cast<unsigned>(size * factor);
  }
  largest_ = i;
  size_[i] = chunk_max_;
  per_page_[i] = page / chunk_max_;
}

unsigned slab_classes::class_for(uint64_t bytes) const noexcept {
  // Sizes grow strictly: the first one that holds `bytes`.
  const auto first = size_.begin() + 1;
  const auto last = size_.begin() + largest_ + 1;
  const auto it = std::lower_bound(first, last, bytes, [](uint32_t size, uint64_t b) { return size < b; });
  return it == last ? largest_ : static_cast<unsigned>(it - size_.begin());
}

// memcached: an item whose total exceeds slab_chunk_max takes a header from the class that
// holds key, flags, CAS, the item and the chunk header; then it reads the value ("\r\n"
// included) into chunks of at most slab_chunk_max bytes, each carrying a chunk header, the
// last one sized to what remains.
size_t slab_classes::chunks(size_t key_len, uint32_t flags, uint64_t value_len, chunk_list& out) const noexcept {
  const uint64_t total = item_total(key_len, flags, value_len);
  if (total <= chunk_max_) {
    out[0] = {static_cast<uint8_t>(class_for(total)), 1};
    return 1;
  }
  size_t n = 0;
  const uint64_t header = kItemHeader + kChunkHeader + key_len + 1 + (flags != 0 ? 4 : 0) + cas_bytes_;
  out[n++] = {static_cast<uint8_t>(class_for(header)), 1};
  const uint64_t data = value_len + 2;
  const uint64_t room = chunk_max_ - kChunkHeader;
  const uint64_t full = data / room;
  const uint64_t rest = data % room;
  if (full) out[n++] = {static_cast<uint8_t>(largest_), static_cast<uint32_t>(full)};
  if (rest) out[n++] = {static_cast<uint8_t>(class_for(rest + kChunkHeader)), 1};
  return n;
}

}  // namespace ithaca::store
