// slab_classes: memcached's size classes, for statistics only. ithaca allocates every item
// with malloc (item.cc); it has no slabs. But the tools that read `stats slabs` and
// `stats items` (memcached-tool, memcached_exporter, dashboards) think in memcached's
// classes, so the store counts each item under the class memcached would put it in:
// the class table memcached's slabs_init() builds from -n (chunk_size), -f (factor),
// slab_chunk_max and the 1 MiB page, and the item size memcached's item_make_header()
// computes (its 48-byte header, the key and its NUL, 4 bytes of client flags when they are
// not 0, the value and its "\r\n", 8 bytes of CAS unless memcached runs with -C).
//
// An item larger than slab_chunk_max is what memcached calls chunked: it is counted in the
// largest class (its LRU), and its memory is a header chunk in a small class plus data
// chunks of slab_chunk_max and a last, smaller chunk (memcached's do_item_alloc and
// do_item_alloc_chunk); chunks() lists them so used-chunk figures match.
//
// Immutable after construction: any thread may read it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace ithaca::store {

// memcached's MAX_NUMBER_OF_SLAB_CLASSES: ids 1..63; 0 is no class.
inline constexpr unsigned kSlabClassMax = 64;

struct slab_class_config {
  double factor = 1.25;                    // memcached -f
  uint32_t min_size = 48;                  // memcached -n (chunk_size)
  uint32_t page_size = uint32_t{1} << 20;  // memcached's slab_page_size
  uint32_t chunk_max = uint32_t{1} << 19;  // memcached's slab_chunk_max (page / 2)
  bool cas = true;                         // memcached -C off: items count their 8 bytes of CAS (ITEM_ntotal)
};

// One allocation an item makes: `count` chunks of class `id`.
struct slab_chunk_use {
  uint8_t id = 0;
  uint32_t count = 0;
};

class slab_classes {
 public:
  // memcached's sizeof(item) on 64-bit, and of its item_chunk header.
  static constexpr uint32_t kItemHeader = 48;
  static constexpr uint32_t kChunkHeader = 48;
  static constexpr uint32_t kAlign = 8;  // CHUNK_ALIGN_BYTES

  explicit slab_classes(const slab_class_config& cfg = {});

  // The largest id (memcached's power_largest); classes are 1..largest().
  unsigned largest() const noexcept { return largest_; }
  uint32_t chunk_size(unsigned id) const noexcept { return size_[id]; }
  uint32_t per_page(unsigned id) const noexcept { return per_page_[id]; }
  uint32_t chunk_max() const noexcept { return chunk_max_; }

  // memcached's slabs_clsid without its item_size_max check: the smallest class whose
  // chunk holds `bytes`, the largest one for anything bigger. 1 for 0 bytes.
  unsigned class_for(uint64_t bytes) const noexcept;

  // memcached's ITEM_ntotal for an item with this key, flags and value (with its CAS
  // unless the table was made with cas off, as memcached -C makes its items).
  uint64_t item_total(size_t key_len, uint32_t flags, uint64_t value_len) const noexcept {
    return kItemHeader + key_len + 1 + (flags != 0 ? 4 : 0) + value_len + 2 + cas_bytes_;
  }

  // The class memcached links such an item in (its `items:N:` figures).
  unsigned item_class(size_t key_len, uint32_t flags, uint64_t value_len) const noexcept {
    return class_for(item_total(key_len, flags, value_len));
  }

  // A class's pages as memcached's `stats slabs` would count them here: the pages of
  // `per_page` chunks its `used_chunks` fill, at least one once the class has held an
  // item (memcached keeps a page it allocated). memcached's own figure is its high-water
  // mark (it gives no page back as items go, but for its slab automover); ithaca frees
  // each item, so the pages it reports are those its items need now. 0 without chunks.
  static uint64_t emulated_pages(uint64_t used_chunks, uint64_t per_page) noexcept {
    if (per_page == 0) return 0;
    const uint64_t pages = (used_chunks + per_page - 1) / per_page;
    return pages > 0 ? pages : 1;
  }

  // The chunks such an item occupies, at most three entries (one for an item that
  // fits a chunk). Returns how many entries were filled.
  using chunk_list = std::array<slab_chunk_use, 3>;
  size_t chunks(size_t key_len, uint32_t flags, uint64_t value_len, chunk_list& out) const noexcept;

 private:
  std::array<uint32_t, kSlabClassMax> size_{};
  std::array<uint32_t, kSlabClassMax> per_page_{};
  unsigned largest_ = 0;
  uint32_t chunk_max_ = 0;
  uint32_t cas_bytes_ = 8;
};

}  // namespace ithaca::store
