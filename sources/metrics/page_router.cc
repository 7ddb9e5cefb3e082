// ithaca_pool_* and ithaca_server_*: the router role per pool and server,
// from `stats pools`, `stats servers` and `stats latency` (histograms).
#include <cstdlib>
#include <map>
#include <vector>

#include "page_parts.h"

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
    if (key.size() > p.size() + 1 && key.compare(0, p.size(), p) == 0 && key[p.size()] == '/' &&
        p.size() + 1 < colon && (best == nullptr || p.size() > best->size())) {
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

void ithaca_pools(prom_writer& w, const stat_lines& pools, const std::vector<std::string>& names) {
  struct pool_figure {
    const char* field;
    const char* name;
    metric_type type;
    const char* help;
  };
  static const pool_figure kFigures[] = {
      {"servers", "ithaca_pool_servers", G, "Servers in the pool."},
      {"servers_up", "ithaca_pool_servers_up", G, "Servers of the pool marked up."},
      {"requests", "ithaca_pool_requests_total", C, "Requests sent to the pool's servers."},
      {"replies", "ithaca_pool_replies_total", C, "Replies from the pool's servers."},
      {"failures", "ithaca_pool_failures_total", C, "Requests to the pool's servers that failed."},
  };
  const char* kResults = "Replies from the pool's servers by result (a retrieval counts each key).";
  for (const std::string& pool : names) {
    const std::string results_prefix = pool + ":replies_";
    for (const auto& [k, value] : pools) {
      double v = 0;
      if (k.size() > results_prefix.size() && k.compare(0, results_prefix.size(), results_prefix) == 0 &&
          k.find(':', results_prefix.size()) == std::string::npos && to_number(value, v)) {
        w.add("ithaca_pool_reply_results_total", C, kResults, {{"pool", pool}, {"result", k.substr(results_prefix.size())}},
              v);
      }
    }
    for (const pool_figure& f : kFigures) {
      const std::string key = pool + ":" + f.field;
      for (const auto& [k, value] : pools) {
        double v = 0;
        if (k == key && to_number(value, v)) w.add(f.name, f.type, f.help, {{"pool", pool}}, v);
      }
    }
  }
}

void ithaca_servers(prom_writer& w, const stat_lines& servers, const std::vector<std::string>& names) {
  struct server_figure {
    const char* field;
    const char* name;
    metric_type type;
    const char* help;
  };
  static const server_figure kFigures[] = {
      {"transitions", "ithaca_server_transitions_total", C, "Up/down transitions of the server."},
      {"requests", "ithaca_server_requests_total", C, "Requests sent to the server."},
      {"replies", "ithaca_server_replies_total", C, "Replies from the server."},
      {"inflight", "ithaca_server_inflight", G, "Requests sent and not yet answered."},
      {"connections", "ithaca_server_connections", G, "Open connections to the server (all workers)."},
      {"connects", "ithaca_server_connects_total", C, "Connections opened to the server."},
      {"joined_gets", "ithaca_server_joined_gets_total", C, "Gets that joined another's get line."},
      {"idle_closes", "ithaca_server_idle_closes_total", C, "Idle connections the server closed."},
  };
  const char* kFailures = "Requests to the server that failed, by kind.";
  const char* kResults = "Replies from the server by result (a retrieval counts each key).";
  for (const auto& [key, value] : servers) {
    server_key k;
    if (!split_server_key(names, key, k)) continue;
    const labels l{{"pool", k.pool}, {"server", k.server}};
    if (k.field == "state") {
      w.add("ithaca_server_up", G, "1 if the server is marked up, 0 if down (failing fast, probed).", l,
            value == "up" ? 1 : 0);
      continue;
    }
    double v = 0;
    if (!to_number(value, v)) continue;
    if (k.field.rfind("replies_", 0) == 0) {
      labels lk = l;
      lk.emplace_back("result", k.field.substr(8));
      w.add("ithaca_server_reply_results_total", C, kResults, lk, v);
      continue;
    }
    if (k.field.rfind("failures_", 0) == 0) {
      labels lk = l;
      lk.emplace_back("kind", k.field.substr(9));
      w.add("ithaca_server_failures_total", C, kFailures, lk, v);
      continue;
    }
    for (const server_figure& f : kFigures) {
      if (k.field == f.field) w.add(f.name, f.type, f.help, l, v);
    }
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
