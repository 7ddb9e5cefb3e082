#include "distribution/distribution.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "distribution/kinds.h"

namespace ithaca::proxy {

namespace {

// Longest server name taken: a DNS name's limit. Keeps "<name>-<index>" below
// twemproxy's 273-byte ketama point buffer, so its truncation never applies.
constexpr std::size_t kMaxNameLength = 255;

// Most servers in one distribution: far beyond any pool, and low enough that
// ketama's point counts (about 160 per server) stay well inside 32 bits.
constexpr std::size_t kMaxServers = 65536;

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

// The kinds that hash or order by server name need every name, and distinct
// ones: twemproxy refuses duplicate names, and two servers with one name
// would share ketama points (one of them getting no keys) or rendezvous seeds.
bool uses_names(distribution_kind kind) {
  switch (kind) {
    case distribution_kind::Random:
    case distribution_kind::Jump:
    case distribution_kind::Ch3:
    case distribution_kind::WeightedCh3:
    case distribution_kind::McrouterCrc32:
    case distribution_kind::ConstShard: return false;  // placed by index: mcrouter's pools may even repeat a server
    default: return true;
  }
}

}  // namespace

bool detail::validate(distribution_kind kind, std::span<const server_spec> servers, hash_kind hash,
                      std::string* error) {
  if (servers.empty()) return fail(error, "no servers");
  if (servers.size() > kMaxServers) return fail(error, "more than " + std::to_string(kMaxServers) + " servers");
  if (kind == distribution_kind::LibmemcachedKetama && hash != hash_kind::Md5) {
    return fail(error, "libmemcached_ketama hashes keys with md5 only (got hash " + std::string(to_string(hash)) + ")");
  }
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const server_spec& s = servers[i];
    const std::string which = "server " + std::to_string(i) + " (" + s.name + ")";
    if (s.weight == 0) return fail(error, which + ": weight must be at least 1");
    total += s.weight;
    if (!uses_names(kind)) continue;
    if (s.name.empty()) return fail(error, which + ": empty name");
    if (s.name.size() > kMaxNameLength) {
      return fail(error, which + ": name longer than " + std::to_string(kMaxNameLength) + " bytes");
    }
  }
  if (uses_names(kind)) {
    std::vector<std::string_view> names;
    names.reserve(servers.size());
    for (const auto& s : servers) names.push_back(s.name);
    std::sort(names.begin(), names.end());
    const auto dup = std::adjacent_find(names.begin(), names.end());
    if (dup != names.end()) return fail(error, "two servers named '" + std::string(*dup) + "'");
  }
  const std::uint64_t limit = kind == distribution_kind::Jump ? std::numeric_limits<std::int32_t>::max()
                                                              : std::numeric_limits<std::uint32_t>::max();
  if (total > limit) {
    return fail(error, "total weight " + std::to_string(total) + " over " + std::to_string(limit));
  }
  return true;
}

std::uint32_t distribution::key_hash(std::string_view part) const {
  if (size_ == 1 || part.empty()) return 0;
  return hash_key(hash_, part);
}

bool distribution::reads_hash() const {
  switch (kind_) {
    case distribution_kind::Random:
    case distribution_kind::Rendezvous:
    case distribution_kind::Ch3:
    case distribution_kind::WeightedCh3:
    case distribution_kind::McrouterCrc32:
    case distribution_kind::ConstShard: return false;  // they read the hashed part itself
    default: return true;
  }
}

std::uint32_t distribution::locate(std::string_view part) const {
  return pick(part, reads_hash() ? key_hash(part) : 0);
}

std::uint32_t detail::total_weight(std::span<const server_spec> servers) {
  std::uint32_t total = 0;
  for (const auto& s : servers) total += s.weight;
  return total;
}

std::unique_ptr<distribution> detail::make_kind(distribution_kind kind, std::span<const server_spec> servers,
                                                hash_kind hash) {
  switch (kind) {
    case distribution_kind::Ketama:
    case distribution_kind::LibmemcachedKetama: return make_ketama(kind, servers, hash);
    case distribution_kind::Modula: return make_modula(servers, hash);
    case distribution_kind::Random: return make_random(servers, hash);
    case distribution_kind::Jump: return make_jump(servers, hash);
    case distribution_kind::Rendezvous: return make_rendezvous(servers, hash);
    case distribution_kind::Ch3:
    case distribution_kind::WeightedCh3:
    case distribution_kind::McrouterCrc32:
    case distribution_kind::ConstShard: return make_ch3(kind, servers, hash);
  }
  return make_random(servers, hash);  // not reached: every kind is handled above
}

std::string server_point_name(distribution_kind kind, std::string_view host, std::uint16_t port,
                              std::string_view configured_name) {
  if (kind == distribution_kind::LibmemcachedKetama) return libmemcached_server_name(host, port);
  return twemproxy_server_name(host, port, configured_name);
}

}  // namespace ithaca::proxy
