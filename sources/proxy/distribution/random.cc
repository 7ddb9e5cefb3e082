// twemproxy's random (nc_random.c): every request goes to a uniformly random
// server; weights are ignored, as there. Each thread has its own generator
// (seeded once from std::random_device), so pick() shares no state.
#include <random>

#include "distribution/kinds.h"
#include "distribution/mix64.h"

namespace ithaca::proxy::detail {

namespace {

std::uint64_t next_random() {
  thread_local std::uint64_t state = [] {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  state += 0x9e3779b97f4a7c15ull;
  return mix64(state);
}

class random_distribution final : public distribution {
 public:
  random_distribution(std::span<const server_spec> servers, hash_kind hash)
      : distribution(distribution_kind::Random, hash, static_cast<std::uint32_t>(servers.size())) {}

  std::uint32_t pick(std::string_view, std::uint32_t) const override {
    // The high 32 random bits scaled onto [0, size): bias below 2^-32 * size.
    return static_cast<std::uint32_t>(((next_random() >> 32) * size()) >> 32);
  }
};

}  // namespace

std::unique_ptr<distribution> make_random(std::span<const server_spec> servers, hash_kind hash) {
  return std::make_unique<random_distribution>(servers, hash);
}

}  // namespace ithaca::proxy::detail
