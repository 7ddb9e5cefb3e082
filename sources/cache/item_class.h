// memcached's slab class of an item, for the figures that name one (me's
// cls=, watch's clsid=): ithaca has no slabs, so it is the class memcached
// would put the same item in with its default settings.
#pragma once

#include <cstdint>

namespace ithaca::cache {

// The class for an item of `size` bytes (memcached's ITEM_ntotal), with
// -n 48, -f 1.25 and a 512 KiB largest chunk: 96, 120, 152, 192, ...
unsigned slab_class_of(uint64_t size);

// memcached's ITEM_ntotal: header (48) + CAS (8) + key + NUL + flags (only
// when non-zero) + value + "\r\n".
inline uint64_t item_total_size(uint64_t key_len, uint32_t flags, uint64_t value_len) {
  return 48 + 8 + key_len + 1 + (flags != 0 ? 4 : 0) + value_len + 2;
}

inline unsigned item_class(uint64_t key_len, uint32_t flags, uint64_t value_len) {
  return slab_class_of(item_total_size(key_len, flags, value_len));
}

}  // namespace ithaca::cache
