// mcrouter's pool hashes: the values its own tests pin (mcrouter's
// Ch3HashTest, Crc32HashTest, WeightedCh3HashFuncTest) and folly's
// SpookyHashV2 vectors, so ithaca places keys exactly where mcrouter does.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "distribution/distribution.h"
#include "hash/hash_functions.h"

using namespace ithaca::proxy;

namespace {

std::string all_bytes_up() {
  std::string s;
  for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i - 128));
  return s;
}

std::unique_ptr<distribution> mcrouter_make(distribution_kind kind, std::vector<server_spec> servers) {
  std::string error;
  auto d = make_distribution(kind, servers, hash_kind::Md5, &error);
  REQUIRE_MESSAGE(d, error);
  return d;
}

std::vector<server_spec> servers_n(std::size_t n) {
  std::vector<server_spec> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    char name[24];  // not operator+ on strings (GCC 12 -Wrestrict false positive)
    std::snprintf(name, sizeof name, "s%zu", i);
    v[i].name = name;
  }
  return v;
}

template <typename F>
std::vector<std::size_t> counts(std::size_t n, std::size_t keys, F pick) {
  std::vector<std::size_t> c(n, 0);
  for (std::size_t i = 0; i < keys; ++i) ++c[pick(std::to_string(i))];
  return c;
}

}  // namespace

TEST_CASE("spooky v2 hash32: folly's vectors (bytes i+128, seed 0), short and long paths") {
  const std::pair<int, std::uint32_t> expected[] = {
      {0, 0x6bf50919},   {1, 0x70de1d26},   {2, 0xa2b37298},   {3, 0x35bc5fbf},   {7, 0xf9f1a233},   {8, 0xee193982},
      {11, 0x9ed60886},  {12, 0x5f23d1da},  {15, 0x83ec01f9},  {16, 0xf274736c},  {31, 0x027bca7c},  {32, 0xe5cfc8b6},
      {33, 0xce01d9d7},  {63, 0x09c1afb4},  {64, 0x069c8bb7},  {95, 0x3abae1cb},  {96, 0x1499b81a},  {97, 0xa2993951},
      {127, 0x82356bf2}, {191, 0xe13d9e19}, {192, 0x77e012bd}, {193, 0x2d05114c}, {200, 0x1f6f7162}, {287, 0xc22c642d},
      {288, 0x47880140}, {300, 0x37e2b1da}, {383, 0x4827f45c}, {384, 0x44eb5634}, {511, 0xcc1c8250},
  };
  std::string buf;
  for (int i = 0; i < 512; ++i) buf.push_back(static_cast<char>(i + 128));
  for (const auto& [len, want] : expected) {
    CAPTURE(len);
    CHECK(spooky_v2_hash32(std::string_view(buf).substr(0, static_cast<std::size_t>(len)), 0) == want);
  }
}

TEST_CASE("ch3 (furc_hash): mcrouter's values") {
  CHECK(furc_hash("sample", 100) == 97);
  CHECK(furc_hash("sample", 1) == 0);
  CHECK(furc_hash("", 100) == 72);
  CHECK(furc_hash("", 1) == 0);
  CHECK(furc_hash("", kFurcMaxServers) == 6173600);
  CHECK(furc_hash("sample", kFurcMaxServers) == 5167780);
  std::string key = all_bytes_up();
  CHECK(furc_hash(key, 99999) == 31015);
  std::reverse(key.begin(), key.end());
  CHECK(furc_hash(key, 99999) == 67101);
  CHECK(counts(3, 1000, [](const std::string& k) { return furc_hash(k, 3); }) ==
        std::vector<std::size_t>{307, 342, 351});
  CHECK(counts(10, 10000, [](const std::string& k) { return furc_hash(k, 10); }) ==
        std::vector<std::size_t>{995, 955, 1046, 968, 1032, 972, 1016, 1038, 1010, 968});
}

TEST_CASE("ch3: growing the pool only moves keys to the new servers") {
  for (std::uint32_t n = 1; n < 40; ++n) {
    for (int i = 0; i < 500; ++i) {
      std::string k = "key:";
      k += std::to_string(i);
      const std::uint32_t before = furc_hash(k, n), after = furc_hash(k, n + 1);
      CHECK((after == before || after == n));
    }
  }
}

TEST_CASE("mcrouter crc32: mcrouter's values") {
  CHECK(mcrouter_crc32("sample", 100) == 7);
  CHECK(mcrouter_crc32("sample", 1) == 0);
  CHECK(mcrouter_crc32("", 100) == 0);
  CHECK(mcrouter_crc32("", (1u << 30) - 1) == 0);
  CHECK(mcrouter_crc32("sample", (1u << 30) - 1) == 822834884);
  std::string key = all_bytes_up();
  CHECK(mcrouter_crc32(key, 99999) == 11697);
  std::reverse(key.begin(), key.end());
  CHECK(mcrouter_crc32(key, 99999) == 97630);
}

TEST_CASE("distributions ch3 and mcrouter_crc32 read the hashed part, in list order") {
  auto ch3 = mcrouter_make(distribution_kind::Ch3, servers_n(100));
  CHECK(ch3->pick("sample", 0) == 97);
  CHECK(ch3->locate("sample") == 97);
  CHECK(!ch3->reads_hash());
  auto crc = mcrouter_make(distribution_kind::McrouterCrc32, servers_n(100));
  CHECK(crc->locate("sample") == 7);
  distribution_kind k;
  REQUIRE(from_string("weighted_ch3", k));
  CHECK(k == distribution_kind::WeightedCh3);
  CHECK(to_string(distribution_kind::McrouterCrc32) == "mcrouter_crc32");
}

TEST_CASE("weighted_ch3: mcrouter's values") {
  auto with_fractions = [](std::vector<double> f) {
    std::vector<server_spec> s = servers_n(f.size());
    for (std::size_t i = 0; i < f.size(); ++i) s[i].fraction = f[i];
    return mcrouter_make(distribution_kind::WeightedCh3, s);
  };
  auto unit100 = with_fractions(std::vector<double>(100, 1.0));
  CHECK(unit100->locate("sample") == 97);
  CHECK(unit100->locate("") == 72);
  auto zero1 = with_fractions({0.0});
  CHECK(zero1->locate("sample") == 0);
  auto zero100 = with_fractions(std::vector<double>(100, 0.0));
  CHECK(zero100->locate("sample") == 59);
  CHECK(zero100->locate("") == 45);
  auto reduced = with_fractions({1.0, 1.0, 0.7});
  CHECK(counts(3, 1000, [&](const std::string& k) { return reduced->locate(k); }) ==
        std::vector<std::size_t>{341, 371, 288});
  auto random10 = with_fractions({0.429, 0.541, 0.117, 0.998, 0.283, 0.065, 0.109, 0.042, 0.676, 0.943});
  CHECK(counts(10, 10000, [&](const std::string& k) { return random10->locate(k); }) ==
        std::vector<std::size_t>{1016, 1252, 288, 2354, 661, 195, 247, 122, 1668, 2197});
}

TEST_CASE("weighted_ch3 without fractions: each weight over the largest") {
  std::vector<server_spec> s = servers_n(3);
  s[0].weight = 10;
  s[1].weight = 10;
  s[2].weight = 7;
  auto d = mcrouter_make(distribution_kind::WeightedCh3, s);
  CHECK(counts(3, 1000, [&](const std::string& k) { return d->locate(k); }) == std::vector<std::size_t>{341, 371, 288});
}

// mcrouter's ConstShardHashFuncTest: a key "A:N:..." names its shard, others
// fall back to ch3.
TEST_CASE("const_shard: mcrouter's ConstShard") {
  auto d = mcrouter_make(distribution_kind::ConstShard, servers_n(4));
  CHECK(d->locate("b:3:meh") == 3);
  CHECK(d->locate("bl:2:meh") == 2);
  CHECK(d->locate("bla:1:meh") == 1);
  CHECK(d->locate("blah:0:meh") == 0);
  CHECK(d->locate("blahmeh") == 2);
  CHECK(d->locate("blah:meh") == 0);
  CHECK(d->locate("blah::meh") == 1);
  CHECK(d->locate("blah:12c34:meh") == 0);
  CHECK(d->locate("blah:4:meh") == 3);
  CHECK(!d->reads_hash());
  CHECK(to_string(distribution_kind::ConstShard) == "const_shard");
}

// mcrouter's bucketize (pool.h, locate_bucket): a key's bucket is ch3 over
// total_buckets; mcrouter's test_bucketized_poolroute.py puts key1 in 808.
TEST_CASE("mcrouter's buckets are ch3 over total_buckets") { CHECK(furc_hash("key1", 1000) == 808); }
