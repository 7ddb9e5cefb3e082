// ithaca_pool_* and ithaca_server_*: the router role per pool and server,
// from `stats pools` and `stats servers` (the rows of
// stats/router_stats_table.h) and `stats latency` (histograms).
#include <cstdlib>
#include <map>
#include <vector>

#include "page_parts.h"
#include "router_stats_table.h"

namespace ithaca::metrics {

namespace {

// Pool names come from `stats pools` ("POOL:servers"); a server line is
// "POOL/ADDRESS:field". Names may hold '/' or ':', so the pool is the longest
// known name followed by '/', and the field is after the last ':'.
struct server_key {
  std::string pool;
  std::string server;
  std::string field;
};

bool split_server_key(const std::vector<std::string>& pools, const std::string& key, server_key& out) {
  const size_t colon = key.rfind(':');
  if (colon == std::string::npos) return false;
  const std::string* best = nullptr;
  for (const std::string& p : pools) {
    if (key.size() > p.size() + 1 && key.compare(0, p.size(), p) == 0 && key[p.size()] == '/' && p.size() + 1 < colon &&
        (best == nullptr || p.size() > best->size())) {
      best = &p;
    }
  }
  if (best == nullptr) return false;
  out.pool = *best;
  out.server = key.substr(best->size() + 1, colon - best->size() - 1);
  out.field = key.substr(colon + 1);
  return true;
}

std::vector<std::string> pool_names(const stat_lines& pools) {
  std::vector<std::string> out;
  constexpr std::string_view kSuffix = ":servers";
  for (const auto& [key, value] : pools) {
    if (key.size() > kSuffix.size() && key.compare(key.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
      out.push_back(key.substr(0, key.size() - kSuffix.size()));
    }
  }
  return out;
}

// `stats pools`' lines by pool, in `names`' order, field -> value: a line
// is "POOL:FIELD", and a field holds no ':'.
std::vector<std::pair<std::string, lookup>> by_pool(const stat_lines& pools, const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, lookup>> out;
  for (const std::string& pool : names) {
    lookup m;
    for (const auto& [key, value] : pools) {
      if (key.size() > pool.size() + 1 && key.compare(0, pool.size(), pool) == 0 && key[pool.size()] == ':' &&
          key.find(':', pool.size() + 1) == std::string::npos) {
        m.emplace(key.substr(pool.size() + 1), value);
      }
    }
    out.emplace_back(pool, std::move(m));
  }
  return out;
}

// The rows of stats/router_stats_table.h per pool, labelled `pool`.
void ithaca_pools(prom_writer& w, const stat_lines& pools, const std::vector<std::string>& names) {
  for (const auto& [pool, m] : by_pool(pools, names)) add_rows(w, m, stats::kPoolStats, "ithaca_", {{"pool", pool}});
}

// The rows of stats/router_stats_table.h per server, labelled `pool` and
// `server`, the servers in the order `stats servers` lists them.
void ithaca_servers(prom_writer& w, const stat_lines& servers, const std::vector<std::string>& names) {
  std::vector<std::pair<server_key, lookup>> by_server;
  for (const auto& [key, value] : servers) {
    server_key k;
    if (!split_server_key(names, key, k)) continue;
    if (by_server.empty() || by_server.back().first.pool != k.pool || by_server.back().first.server != k.server) {
      by_server.emplace_back(k, lookup{});
    }
    by_server.back().second.emplace(k.field, value);
  }
  for (const auto& [k, m] : by_server) {
    add_rows(w, m, stats::kServerStats, "ithaca_", {{"pool", k.pool}, {"server", k.server}});
  }
}

// `stats latency`: per server the cumulative count at each bound (us), the
// sum (us) and the count; summed per pool as well.
struct histogram_acc {
  std::map<uint64_t, uint64_t> cumulative;  // bound us -> count
  double sum_us = 0;
  uint64_t count = 0;
};

void add_histogram(prom_writer& w, const char* name, const char* help, const labels& l, const histogram_acc& h) {
  std::vector<std::pair<double, uint64_t>> buckets;
  for (const auto& [bound, n] : h.cumulative) buckets.emplace_back(static_cast<double>(bound) / 1e6, n);
  w.histogram(name, help, l, buckets, h.sum_us / 1e6, h.count);
}

void ithaca_latency(prom_writer& w, const stat_lines& latency, const std::vector<std::string>& names) {
  std::vector<std::pair<server_key, histogram_acc>> servers;  // in the order they come
  std::map<std::string, histogram_acc> pools;
  for (const auto& [key, value] : latency) {
    server_key k;
    double v = 0;
    if (!split_server_key(names, key, k) || !to_number(value, v)) continue;
    if (servers.empty() || servers.back().first.pool != k.pool || servers.back().first.server != k.server) {
      servers.emplace_back(k, histogram_acc{});
    }
    histogram_acc& h = servers.back().second;
    histogram_acc& p = pools[k.pool];
    if (k.field.rfind("latency_le_", 0) == 0) {
      const uint64_t bound = std::strtoull(k.field.c_str() + 11, nullptr, 10);
      h.cumulative[bound] += static_cast<uint64_t>(v);
      p.cumulative[bound] += static_cast<uint64_t>(v);
    } else if (k.field == "latency_sum_us") {
      h.sum_us += v;
      p.sum_us += v;
    } else if (k.field == "latency_count") {
      h.count += static_cast<uint64_t>(v);
      p.count += static_cast<uint64_t>(v);
    }
  }
  for (const auto& [k, h] : servers) {
    add_histogram(w, "ithaca_server_latency_seconds",
                  "Time from sending a request to the server to its reply (failures not counted).",
                  {{"pool", k.pool}, {"server", k.server}}, h);
  }
  for (const std::string& pool : names) {
    auto it = pools.find(pool);
    if (it == pools.end()) continue;
    add_histogram(w, "ithaca_pool_latency_seconds", "The latency of the pool's servers together.", {{"pool", pool}},
                  it->second);
  }
}
}  // namespace

void router_families(prom_writer& w, const page_input& in) {
  const std::vector<std::string> pools = pool_names(in.pools);
  ithaca_pools(w, in.pools, pools);
  ithaca_servers(w, in.servers, pools);
  ithaca_latency(w, in.latency, pools);
}

}  // namespace ithaca::metrics
