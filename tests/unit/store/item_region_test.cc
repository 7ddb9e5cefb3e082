// item_region: the allocator the store's items live in (item_region.h).
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "helpers.h"
#include "item_region.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

constexpr uint64_t kRegionTestMiB = 1024 * 1024;

struct region_block {
  void* p;
  uint32_t size;
};

}  // namespace

TEST_CASE("item_region: blocks are 8-aligned, cost their header and rounding, and do not overlap") {
  item_region r(kRegionTestMiB, kRegionTestMiB, kRegionTestMiB, false);
  std::vector<region_block> got;
  for (size_t n : {1, 7, 8, 24, 100, 158, 1000, 4000}) {
    uint32_t size = 0;
    void* p = r.alloc(n, size);
    REQUIRE(p);
    CHECK(reinterpret_cast<uintptr_t>(p) % 8 == 0);
    CHECK(size == item_region::block_size(n));
    CHECK(size >= n + 8);
    CHECK(size < n + 8 + 8 + 32);
    std::memset(p, 0xab, n);
    got.push_back({p, size});
  }
  CHECK(item_region::block_size(158) == 168);  // a 100-byte value's item: memcached's chunk is 192
  uint64_t sum = 0;
  for (auto& b : got) sum += b.size;
  CHECK(r.top() == sum);
  for (auto& b : got) r.free(b.p);
  CHECK(r.top() == 0);  // everything melted back into the untouched end
  CHECK(r.free_bytes() == 0);
}

TEST_CASE("item_region: the top stays under the budget and the caller's bound") {
  item_region r(kRegionTestMiB, kRegionTestMiB, 64 * 1024, false);
  uint32_t size;
  int n = 0;
  while (r.alloc(1000, size)) ++n;
  CHECK(n == 64 * 1024 / 1008);
  CHECK(r.top() <= 64 * 1024);
  item_region bounded(kRegionTestMiB, kRegionTestMiB, kRegionTestMiB, false);
  n = 0;
  while (bounded.alloc(1000, size, 10 * 1024)) ++n;
  CHECK(n == 10);
}

TEST_CASE("item_region: a freed block is reused by the next of its size, neighbours merge for a bigger one") {
  item_region r(kRegionTestMiB, kRegionTestMiB, 100 * 1024, false);
  std::vector<void*> small;
  uint32_t size;
  while (void* p = r.alloc(150, size)) small.push_back(p);
  const uint64_t top = r.top();
  // Full: one freed block of the size is found again (the exact list is looked at).
  r.free(small[10]);
  void* again = r.alloc(150, size);
  CHECK(again == small[10]);
  // A bigger request needs neighbours: free ten in a row in the middle, out of order.
  CHECK_FALSE(r.alloc(1500, size));
  for (int i : {25, 21, 23, 20, 22, 24, 29, 26, 28, 27}) r.free(small[i]);
  CHECK(r.free_bytes() == 10 * item_region::block_size(150));
  void* big = r.alloc(1500, size);
  REQUIRE(big);
  CHECK(big == small[20]);  // the merged block starts where the first of them did
  CHECK(r.top() == top);
}

TEST_CASE("item_region: random sizes, frees in random order, the region's books balance") {
  item_region r(4 * kRegionTestMiB, 4 * kRegionTestMiB, 4 * kRegionTestMiB, false);
  std::mt19937 rng(7);
  std::vector<std::pair<char*, uint32_t>> live;
  uint64_t used = 0;
  for (int step = 0; step < 200000; ++step) {
    if (!live.empty() && (rng() % 2 || live.size() > 5000)) {
      const size_t i = rng() % live.size();
      // The block still holds what was written: no other block overlapped it.
      CHECK_MESSAGE(static_cast<unsigned char>(live[i].first[0]) == (live[i].second & 0xff), step);
      used -= live[i].second;
      r.free(live[i].first);
      live[i] = live.back();
      live.pop_back();
      continue;
    }
    const size_t n = 40 + rng() % (rng() % 8 ? 400 : 20000);
    uint32_t size;
    auto* p = static_cast<char*>(r.alloc(n, size));
    if (!p) continue;
    std::memset(p, static_cast<int>(size & 0xff), n);
    used += size;
    live.push_back({p, size});
  }
  CHECK(r.top() == used + r.free_bytes());
  for (auto& b : live) r.free(b.first);
  CHECK(r.top() == 0);
  CHECK(r.free_bytes() == 0);
}

TEST_CASE("item_region: a raised budget commits more up to the reservation; trim gives free pages back") {
  item_region r(64 * 1024, kRegionTestMiB, 64 * 1024, false);
  uint32_t size;
  std::vector<void*> got;
  while (void* p = r.alloc(4000, size)) got.push_back(p);
  CHECK(got.size() == 64 * 1024 / 4008);
  // Past the reservation (memcached takes any larger limit): all of it committed, the
  // bound what is committed.
  CHECK(r.set_budget(2 * kRegionTestMiB));
  CHECK(r.committed() == kRegionTestMiB);
  CHECK(r.budget() == kRegionTestMiB);
  CHECK(r.set_budget(kRegionTestMiB));
  CHECK(r.committed() == kRegionTestMiB);
  while (void* p = r.alloc(4000, size)) got.push_back(p);
  CHECK(got.size() == kRegionTestMiB / 4008);
  for (size_t i = 0; i + 1 < got.size(); i += 2) r.free(got[i]);      // every other: 4 KiB holes
  for (size_t i = 0; i + 1 < got.size(); i += 4) r.free(got[i + 1]);  // some merge to 12 KiB
  const uint64_t advised = r.trim();
  CHECK(advised > 0);
  CHECK(advised < r.free_bytes());  // headers, links and partial pages stay
  // Trimmed blocks are still whole free blocks: allocate them again, write them.
  while (void* p = r.alloc(4000, size)) std::memset(p, 1, 4000);
  CHECK(r.free_bytes() < 64 * 1024);
}

TEST_CASE("the store's items live in its region and cost their block") {
  store s(small_config());
  const auto now = at_sec(1);
  put(s, "k", std::string(100, 'v'), now);
  CHECK(s.mem_used() == item_region::block_size(48 + 1 + 100));
  CHECK(s.region().top() == s.mem_used());
  s.remove("k", now);
  CHECK(s.mem_used() == 0);
  CHECK(s.region().top() == 0);
}
