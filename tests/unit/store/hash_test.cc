// hash_key (store/hash.h): the bucket hash reads exactly the key's bytes, lets no byte or the
// length go unheard, and spreads keys that differ only in a few digits evenly over the low bits
// the bucket mask keeps.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hash.h"

using ithaca::store::hash_key;

namespace {
constexpr uint64_t kSeed = 0x0123456789abcdefULL;
}

TEST_CASE("hash_key reads only the key: every length from 0 to 80 in an exactly sized block") {
  // Under AddressSanitizer a load past the block's end is reported.
  std::set<uint64_t> seen;
  for (size_t n = 0; n <= 80; n++) {
    auto block = std::make_unique<char[]>(n ? n : 1);
    std::fill_n(block.get(), n, 'x');
    seen.insert(hash_key({block.get(), n}, kSeed));
  }
  CHECK(seen.size() == 81);  // the length alone tells "xxx" from "xxxx"
}

TEST_CASE("hash_key hears every byte: flipping any one bit of any byte changes the hash") {
  for (size_t n = 1; n <= 48; n++) {
    std::string key(n, 'k');
    for (size_t i = 0; i < n; i++) key[i] = static_cast<char>('a' + (i * 7 + n) % 26);
    const uint64_t base = hash_key(key, kSeed);
    for (size_t i = 0; i < n; i++) {
      for (int bit = 0; bit < 8; bit++) {
        std::string flipped = key;
        flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
        INFO("length ", n, " byte ", i, " bit ", bit);
        CHECK(hash_key(flipped, kSeed) != base);
      }
    }
  }
}

TEST_CASE("hash_key depends on the seed") {
  CHECK(hash_key("key:0000000001", 1) != hash_key("key:0000000001", 2));
  CHECK(hash_key("", 1) != hash_key("", 2));
}

TEST_CASE("hash_key spreads sequential keys evenly over 4096 buckets (the low bits)") {
  // 409,600 keys of the shapes clients use; a fair spread puts 100 in each bucket with a
  // standard deviation of 10. Allow a 6-sigma worst bucket either way.
  const char* shapes[] = {"key:%010d", "%d", "user:%d:profile", "a-rather-long-prefix-of-many-bytes/%d"};
  for (const char* shape : shapes) {
    for (uint64_t seed : {uint64_t{0}, kSeed}) {
      std::vector<int> count(4096, 0);
      char buf[80];
      for (int i = 0; i < 409600; i++) {
        const int len = std::snprintf(buf, sizeof buf, shape, i);
        count[hash_key({buf, static_cast<size_t>(len)}, seed) & 4095]++;
      }
      const auto [lo, hi] = std::minmax_element(count.begin(), count.end());
      INFO("shape ", shape, " seed ", seed);
      CHECK(*lo >= 40);
      CHECK(*hi <= 160);
    }
  }
}
