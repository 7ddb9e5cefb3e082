// mcrouter's pool hashes, so keys go to the server mcrouter would choose and
// a pool moved from mcrouter to ithaca moves no key (mcrouter's HashRoute
// over the pool's servers in config order):
//   ch3            furc_hash(part, n): mcrouter's default, "Ch3"; weights ignored
//   weighted_ch3   "WeightedCh3": ch3, then the chosen server keeps the key
//                  only if spooky32(part, 0xface2014) < fraction * 2^32-1;
//                  otherwise the part gets a decimal salt ("0", "1", ...) and
//                  is hashed again (at most 32 times; then the last choice)
//   mcrouter_crc32 "Crc32": (crc32(part) & 0x7fffffff) % n
//   const_shard    "ConstShard": a part "A:N:..." (N decimal digits between the
//                  first two colons, N < n) goes to server N; any other part
//                  by ch3 (mcrouter's ShardHashFunc.cpp)
// Each reads the hashed part (the whole key, or its hash tag), never the
// pool's 32-bit key hash. A server's fraction for weighted_ch3 is
// server_spec::fraction when set (mcrouter's weights, 0..1), else its weight
// over the largest weight.
#include <algorithm>
#include <limits>
#include <vector>

#include "distribution/kinds.h"
#include "hash/hash_functions.h"

namespace ithaca::proxy::detail {

namespace {

class ch3_distribution final : public distribution {
 public:
  ch3_distribution(std::span<const server_spec> servers, hash_kind hash)
      : distribution(distribution_kind::Ch3, hash, static_cast<std::uint32_t>(servers.size())) {}

  std::uint32_t pick(std::string_view part, std::uint32_t) const override { return furc_hash(part, size()); }
};

class mcrouter_crc32_distribution final : public distribution {
 public:
  mcrouter_crc32_distribution(std::span<const server_spec> servers, hash_kind hash)
      : distribution(distribution_kind::McrouterCrc32, hash, static_cast<std::uint32_t>(servers.size())) {}

  std::uint32_t pick(std::string_view part, std::uint32_t) const override { return mcrouter_crc32(part, size()); }
};

// mcrouter's getShardId: the text between the first and the second colon,
// all digits (and not empty); false when the part has none.
bool const_shard_of(std::string_view part, std::uint32_t n, std::uint32_t& out) {
  const std::size_t first = part.find(':');
  if (first == std::string_view::npos) return false;
  const std::string_view rest = part.substr(first + 1);
  const std::size_t second = rest.find(':');
  if (second == std::string_view::npos || second == 0) return false;
  std::uint64_t v = 0;
  for (const char c : rest.substr(0, second)) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
    if (v >= n) return false;  // out of bounds (and no overflow past it)
  }
  out = static_cast<std::uint32_t>(v);
  return true;
}

class const_shard_distribution final : public distribution {
 public:
  const_shard_distribution(std::span<const server_spec> servers, hash_kind hash)
      : distribution(distribution_kind::ConstShard, hash, static_cast<std::uint32_t>(servers.size())) {}

  std::uint32_t pick(std::string_view part, std::uint32_t) const override {
    std::uint32_t shard = 0;
    return const_shard_of(part, size(), shard) ? shard : furc_hash(part, size());
  }
};

class weighted_ch3_distribution final : public distribution {
 public:
  weighted_ch3_distribution(std::span<const server_spec> servers, hash_kind hash)
      : distribution(distribution_kind::WeightedCh3, hash, static_cast<std::uint32_t>(servers.size())) {
    std::uint32_t top = 1;
    for (const auto& s : servers) top = std::max(top, s.weight);
    thresholds_.reserve(servers.size());
    for (const auto& s : servers) {
      const double f = s.fraction >= 0 ? s.fraction : static_cast<double>(s.weight) / top;
      // As mcrouter: the fraction times 2^32-1, truncated to an integer.
      thresholds_.push_back(static_cast<std::uint64_t>(f * std::numeric_limits<std::uint32_t>::max()));
    }
  }

  std::uint32_t pick(std::string_view part, std::uint32_t) const override {
    constexpr std::uint32_t kSeed = 0xface2014;
    constexpr int kRetries = 32;
    std::string salted;  // the part and its salt, made only on a first refusal
    std::string_view key = part;
    std::uint32_t index = 0;
    for (int salt = 0; salt < kRetries; ++salt) {
      index = furc_hash(key, size());
      if (spooky_v2_hash32(key, kSeed) < thresholds_[index]) return index;
      salted.assign(part);
      // mcrouter writes the salt's decimal digits least significant first.
      int s = salt;
      do {
        salted.push_back(static_cast<char>('0' + s % 10));
        s /= 10;
      } while (s > 0);
      key = salted;
    }
    return index;
  }

 private:
  std::vector<std::uint64_t> thresholds_;
};

}  // namespace

std::unique_ptr<distribution> make_ch3(distribution_kind kind, std::span<const server_spec> servers, hash_kind hash) {
  switch (kind) {
    case distribution_kind::WeightedCh3: return std::make_unique<weighted_ch3_distribution>(servers, hash);
    case distribution_kind::McrouterCrc32: return std::make_unique<mcrouter_crc32_distribution>(servers, hash);
    case distribution_kind::ConstShard: return std::make_unique<const_shard_distribution>(servers, hash);
    default: return std::make_unique<ch3_distribution>(servers, hash);
  }
}

}  // namespace ithaca::proxy::detail
