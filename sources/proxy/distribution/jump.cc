// Jump consistent hash (Lamping & Veach, "A Fast, Minimal Memory, Consistent
// Hash Algorithm", 2014) over weight buckets: server i owns `weight` buckets,
// consecutive in list order (weight_slots.h), and a key goes to the owner of
// jump(key64, total_weight).
//
// key64 is the 32-bit key hash widened by splitmix64's finalizer (mix64.h):
// jump feeds its key to a 64-bit LCG whose high bits decide, and a raw 32-bit
// value would leave them to the multiplier alone.
//
// Stability: appending a server (or raising the last server's weight) moves
// only the keys that land in the new buckets, about w_new / W of them; removing
// or reweighting a server in the middle shifts the buckets after it, so use
// rendezvous or ketama where arbitrary servers come and go.
#include "distribution/kinds.h"
#include "distribution/mix64.h"
#include "distribution/weight_slots.h"

namespace ithaca::proxy::detail {

namespace {

// The paper's algorithm: the last bucket the key jumped to before passing
// `buckets`. O(log buckets) steps.
std::uint32_t jump_bucket(std::uint64_t key, std::int64_t buckets) {
  std::int64_t b = -1;
  std::int64_t j = 0;
  while (j < buckets) {
    b = j;
    key = key * 2862933555777941757ull + 1;
    j = static_cast<std::int64_t>(static_cast<double>(b + 1) *
                                  (static_cast<double>(std::int64_t{1} << 31) / static_cast<double>((key >> 33) + 1)));
  }
  return static_cast<std::uint32_t>(b);
}

class jump_distribution final : public distribution {
 public:
  jump_distribution(std::span<const server_spec> servers, hash_kind hash)
      : distribution(distribution_kind::Jump, hash, static_cast<std::uint32_t>(servers.size())), slots_(servers) {}

  std::uint32_t pick(std::string_view, std::uint32_t hash) const override {
    const auto buckets = static_cast<std::int64_t>(slots_.total());
    return slots_.server_of(jump_bucket(mix64(hash), buckets));
  }

 private:
  weight_slots slots_;
};

}  // namespace

std::unique_ptr<distribution> make_jump(std::span<const server_spec> servers, hash_kind hash) {
  return std::make_unique<jump_distribution>(servers, hash);
}

}  // namespace ithaca::proxy::detail
