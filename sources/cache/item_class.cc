#include "item_class.h"

namespace ithaca::cache {

unsigned slab_class_of(uint64_t size) {
  constexpr unsigned kChunkMax = 512 * 1024;
  constexpr unsigned kAlign = 8;
  unsigned chunk = 96;
  unsigned cls = 1;
  while (chunk < size) {
    const auto next = static_cast<unsigned>(chunk * 1.25);
    if (next >= kChunkMax / 1.25) return cls + 1;  // the largest class
    chunk = (next + kAlign - 1) / kAlign * kAlign;
    ++cls;
  }
  return cls;
}

}  // namespace ithaca::cache
