// Ketama as twemproxy (nc_ketama.c ketama_update) and libmemcached with
// MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED (hosts.cc update_continuum) build it;
// the two differ only in the server names they hash (server_spec.h) and in
// libmemcached allowing md5 keys only (checked by make_distribution).
//
// Server i of n with weight w_i out of a total W gets
//     points_i = floor(float(w_i) / float(W) * 160 / 4 * n) * 4
// points (160 per server on average, in groups of 4), computed in float as
// both do: twemproxy adds 1e-10 in double and libmemcached 1e-10f in float
// before the floor, which changes nothing for a value >= 2^-12 and leaves
// anything smaller below 1, so one formula serves both. A server whose share
// rounds to 0 points gets no keys, as in both. Group j = 0, 1, ... of server
// i is the 4 little-endian words of md5("<name>-<j>").
#include <cmath>
#include <string>

#include "distribution/continuum.h"
#include "distribution/kinds.h"

namespace ithaca::proxy::detail {

namespace {

constexpr std::uint32_t kPointsPerServer = 160;
constexpr std::uint32_t kPointsPerHash = 4;

std::uint32_t ketama_points(std::uint32_t weight, std::uint32_t total, std::uint32_t servers) {
  const float pct = static_cast<float>(weight) / static_cast<float>(total);
  const float groups =
      pct * static_cast<float>(kPointsPerServer) / static_cast<float>(kPointsPerHash) * static_cast<float>(servers);
  return static_cast<std::uint32_t>(std::floor(static_cast<float>(static_cast<double>(groups) + 0.0000000001)) *
                                    static_cast<float>(kPointsPerHash));
}

class ketama_distribution final : public distribution {
 public:
  ketama_distribution(distribution_kind kind, std::span<const server_spec> servers, hash_kind hash)
      : distribution(kind, hash, static_cast<std::uint32_t>(servers.size())) {
    const std::uint32_t n = size();
    const std::uint32_t total = total_weight(servers);
    ring_.reserve(static_cast<std::size_t>(n) * kPointsPerServer + kPointsPerServer);
    std::string name;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t groups = ketama_points(servers[i].weight, total, n) / kPointsPerHash;
      for (std::uint32_t j = 0; j < groups; ++j) {
        name = servers[i].name;
        name += '-';
        name += std::to_string(j);
        ring_.add_md5_points(name, i);
      }
    }
    ring_.seal();
  }

  std::uint32_t pick(std::string_view, std::uint32_t hash) const override { return ring_.find(hash); }

 private:
  continuum ring_;
};

}  // namespace

std::unique_ptr<distribution> make_ketama(distribution_kind kind, std::span<const server_spec> servers,
                                          hash_kind hash) {
  return std::make_unique<ketama_distribution>(kind, servers, hash);
}

}  // namespace ithaca::proxy::detail
