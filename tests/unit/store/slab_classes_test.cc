// memcached's class table and item sizes (slab_classes.h). The expected tables are what
// Debian's memcached 1.6.18 prints with -vv ("slab class N: chunk size S perslab P") for
// the same -f and -n; slabs_init is unchanged in 1.6.45.
#include <doctest/doctest.h>

#include <vector>

#include "slab_classes.h"

using namespace ithaca::store;

namespace {

std::vector<uint32_t> sizes_of(const slab_classes& c) {
  std::vector<uint32_t> out;
  for (unsigned i = 1; i <= c.largest(); ++i) out.push_back(c.chunk_size(i));
  return out;
}

slab_classes with(double factor, uint32_t min_size) {
  slab_class_config cfg;
  cfg.factor = factor;
  cfg.min_size = min_size;
  return slab_classes(cfg);
}

}  // namespace

TEST_CASE("the default table is memcached's: 96 bytes growing by 1.25 up to 512 KiB") {
  const slab_classes c;
  const std::vector<uint32_t> want = {96,    120,    152,    192,    240,    304,    384,    480,    600,   752,
                                      944,   1184,   1480,   1856,   2320,   2904,   3632,   4544,   5680,  7104,
                                      8880,  11104,  13880,  17352,  21696,  27120,  33904,  42384,  52984, 66232,
                                      82792, 103496, 129376, 161720, 202152, 252696, 315872, 394840, 524288};
  CHECK(sizes_of(c) == want);
  CHECK(c.largest() == 39);
  CHECK(c.per_page(1) == 10922);
  CHECK(c.per_page(20) == 147);
  CHECK(c.per_page(39) == 2);
}

TEST_CASE("-f and -n change the table as in memcached") {
  CHECK(sizes_of(with(1.5, 100)) == std::vector<uint32_t>{152,   232,   352,    528,    792,    1192,   1792,
                                                          2688,  4032,  6048,   9072,   13608,  20416,  30624,
                                                          45936, 68904, 103360, 155040, 232560, 348840, 524288});
  // A factor of 2 stops where the next size reaches chunk_max / factor exactly.
  CHECK(sizes_of(with(2, 16)) ==
        std::vector<uint32_t>{64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 524288});
  // A small factor runs out of ids: 62 classes, then the largest is id 63.
  const slab_classes small = with(1.08, 48);
  CHECK(small.largest() == 63);
  CHECK(small.chunk_size(2) == 104);
  CHECK(small.chunk_size(62) == 13800);
  CHECK(small.chunk_size(63) == 524288);
  CHECK(small.per_page(62) == 75);
}

TEST_CASE("class_for picks the smallest chunk that holds the bytes") {
  const slab_classes c;
  CHECK(c.class_for(0) == 1);
  CHECK(c.class_for(96) == 1);
  CHECK(c.class_for(97) == 2);
  CHECK(c.class_for(152) == 3);
  CHECK(c.class_for(153) == 4);
  CHECK(c.class_for(524288) == 39);
  CHECK(c.class_for(524289) == 39);  // chunked: linked in the largest class
  CHECK(c.class_for(uint64_t{1} << 30) == 39);
}

TEST_CASE("an item's size is memcached's ITEM_ntotal with CAS") {
  // 48-byte header, key + NUL, flags only when not 0, value + "\r\n", 8 bytes of CAS.
  const slab_classes c;
  CHECK(c.item_total(3, 0, 100) == 48 + 4 + 102 + 8);
  CHECK(c.item_total(3, 7, 100) == 48 + 4 + 4 + 102 + 8);
  CHECK(c.item_class(3, 0, 100) == 4);    // 162 bytes: 192
  CHECK(c.item_class(3, 0, 5000) == 19);  // 5062 bytes: 5680
  CHECK(c.item_class(1, 0, 0) == 1);      // 59 bytes
  CHECK(c.item_class(250, 1, 0) == 7);    // 48 + 251 + 4 + 2 + 8 = 313 bytes: 384
}

TEST_CASE("with CAS off (memcached -C) an item's size has no CAS bytes") {
  slab_class_config cfg;
  cfg.cas = false;
  const slab_classes c(cfg);
  CHECK(c.item_total(3, 0, 100) == 48 + 4 + 102);
  CHECK(c.item_class(3, 0, 98) == 3);               // 152 bytes: class 3's chunk exactly
  CHECK(slab_classes().item_class(3, 0, 98) == 4);  // 160 bytes with its CAS: 192
}

TEST_CASE("an item over slab_chunk_max is a header chunk, full chunks and a last chunk") {
  const slab_classes c;
  slab_classes::chunk_list out;
  REQUIRE(c.chunks(3, 0, 100, out) == 1);
  CHECK(out[0].id == 4);
  CHECK(out[0].count == 1);
  // 600,000 bytes: a 108-byte header (class 2), one chunk of 524,288 holding 524,240
  // bytes, and 75,762 bytes left + a 48-byte chunk header (class 31, 82,792).
  REQUIRE(c.chunks(3, 0, 600000, out) == 3);
  CHECK(out[0].id == 2);
  CHECK(out[1].id == 39);
  CHECK(out[1].count == 1);
  CHECK(out[2].id == 31);
  CHECK(out[2].count == 1);
  // Exactly two chunks' room (the value and its "\r\n"): no last chunk.
  REQUIRE(c.chunks(3, 0, 2 * 524240 - 2, out) == 2);
  CHECK(out[1].count == 2);
}
