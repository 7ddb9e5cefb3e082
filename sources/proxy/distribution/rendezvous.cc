// Rendezvous (highest random weight) hashing, weighted: every server scores
// the key and the highest score wins, so removing a server moves only its own
// keys and adding one takes only the keys it now wins.
//
// Score of server i for a hashed part p:
//     h_i = mix64(fnv1a64(p) ^ seed_i),   seed_i = mix64(fnv1a64(name_i))
//     u_i = (h_i >> 11) + 0.5) / 2^53      (uniform in (0, 1))
//     score_i = w_i / -ln(u_i)
// the logarithmic method (Schindelhauer & Schomaker), which gives server i a
// share w_i / W of the keys. When all weights are equal the score is monotone
// in h_i, so h_i is compared directly (no logarithms). Ties go to the lower
// index. It reads the part, never the pool's 32-bit hash: 32 bits of a
// possibly weak hash (crc32 keeps 15) would make many keys score alike.
// O(n) per key: meant for pools of tens of servers.
#include <cmath>
#include <vector>

#include "distribution/kinds.h"
#include "distribution/mix64.h"

namespace ithaca::proxy::detail {

namespace {

std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

class rendezvous_distribution final : public distribution {
 public:
  rendezvous_distribution(std::span<const server_spec> servers, hash_kind hash)
      : distribution(distribution_kind::Rendezvous, hash, static_cast<std::uint32_t>(servers.size())) {
    seeds_.reserve(servers.size());
    weights_.reserve(servers.size());
    for (const auto& s : servers) {
      seeds_.push_back(mix64(fnv1a64(s.name)));
      weights_.push_back(static_cast<double>(s.weight));
      if (s.weight != servers[0].weight) weighted_ = true;
    }
  }

  std::uint32_t pick(std::string_view part, std::uint32_t) const override {
    const std::uint64_t key = fnv1a64(part);
    std::uint32_t best = 0;
    if (!weighted_) {
      std::uint64_t best_h = 0;
      for (std::uint32_t i = 0; i < seeds_.size(); ++i) {
        const std::uint64_t h = mix64(key ^ seeds_[i]);
        if (i == 0 || h > best_h) {
          best_h = h;
          best = i;
        }
      }
      return best;
    }
    double best_score = 0;
    for (std::uint32_t i = 0; i < seeds_.size(); ++i) {
      const std::uint64_t h = mix64(key ^ seeds_[i]);
      const double u = (static_cast<double>(h >> 11) + 0.5) * 0x1p-53;
      const double score = weights_[i] / -std::log(u);
      if (i == 0 || score > best_score) {
        best_score = score;
        best = i;
      }
    }
    return best;
  }

 private:
  std::vector<std::uint64_t> seeds_;
  std::vector<double> weights_;
  bool weighted_ = false;
};

}  // namespace

std::unique_ptr<distribution> make_rendezvous(std::span<const server_spec> servers, hash_kind hash) {
  return std::make_unique<rendezvous_distribution>(servers, hash);
}

}  // namespace ithaca::proxy::detail
