#include "router_stats.h"

#include <array>
#include <string>

namespace ithaca::server {

namespace {

constexpr proxy::failure_kind kFailureKinds[] = {
    proxy::failure_kind::Down,       proxy::failure_kind::Timeout,  proxy::failure_kind::Connect,
    proxy::failure_kind::Connection, proxy::failure_kind::BadReply, proxy::failure_kind::QueueFull,
};

// The gauges (not reset by `stats reset`), summed over the workers.
struct server_gauges {
  int64_t inflight = 0;
  int64_t connections = 0;
};

server_gauges gauges(const proxy::backend_server& s) {
  server_gauges out;
  for (const auto& c : s.all_counters()) {
    out.inflight += c->inflight.load(std::memory_order_relaxed);
    out.connections += c->connections.load(std::memory_order_relaxed);
  }
  return out;
}

}  // namespace

void router_stats_pools(const route::route_tree& tree, route::stat_lines& out) {
  for (const auto& p : tree.pools()) {
    uint64_t up = 0, requests = 0, replies = 0, failures = 0;
    for (const auto& s : p->servers()) {
      if (s->up()) ++up;
      const proxy::server_totals n = s->totals();
      requests += n.requests;
      replies += n.replies;
      failures += n.failures_total();
    }
    const std::string prefix = p->name() + ":";
    out.emplace_back(prefix + "servers", std::to_string(p->servers().size()));
    out.emplace_back(prefix + "servers_up", std::to_string(up));
    out.emplace_back(prefix + "requests", std::to_string(requests));
    out.emplace_back(prefix + "replies", std::to_string(replies));
    out.emplace_back(prefix + "failures", std::to_string(failures));
  }
}

void router_stats_servers(const route::route_tree& tree, route::stat_lines& out) {
  for (const auto& p : tree.pools()) {
    for (const auto& s : p->servers()) {
      const proxy::server_totals n = s->totals();
      const std::string prefix = p->name() + "/" + s->address() + ":";
      auto add = [&](const std::string& name, auto value) {
        if constexpr (std::is_convertible_v<decltype(value), std::string>) {
          out.emplace_back(prefix + name, std::string(value));
        } else {
          out.emplace_back(prefix + name, std::to_string(value));
        }
      };
      add("state", s->up() ? "up" : "down");
      add("protocol", s->protocol_name());
      add("transitions", n.transitions);
      add("requests", n.requests);
      add("replies", n.replies);
      for (std::size_t i = 0; i < n.failures.size(); ++i) {
        add(std::string("failures_") + proxy::to_string(kFailureKinds[i]), n.failures[i]);
      }
      const server_gauges g = gauges(*s);
      add("inflight", g.inflight);
      add("connections", g.connections);
      add("connects", n.connects);
      add("joined_gets", n.joined);
      add("idle_closes", n.idle_closes);
      add("latency_p50_us", proxy::latency_histogram::quantile(n.latency, 0.50));
      add("latency_p99_us", proxy::latency_histogram::quantile(n.latency, 0.99));
      add("latency_p999_us", proxy::latency_histogram::quantile(n.latency, 0.999));
    }
  }
}

void router_stats_latency(const route::route_tree& tree, route::stat_lines& out) {
  using proxy::latency_histogram;
  for (const auto& p : tree.pools()) {
    for (const auto& s : p->servers()) {
      const proxy::server_totals n = s->totals();
      const std::string prefix = p->name() + "/" + s->address() + ":";
      for (uint64_t bound : latency_histogram::kExportBoundsUs) {
        out.emplace_back(prefix + "latency_le_" + std::to_string(bound),
                         std::to_string(latency_histogram::count_below(n.latency, bound)));
      }
      uint64_t count = 0;
      for (uint64_t c : n.latency) count += c;
      out.emplace_back(prefix + "latency_sum_us", std::to_string(n.latency_sum_us));
      out.emplace_back(prefix + "latency_count", std::to_string(count));
    }
  }
}

void router_stats_summary(const route::route_tree& tree, route::stat_lines& out) {
  uint64_t servers = 0, down = 0, requests = 0, failures = 0;
  for (const auto& p : tree.pools()) {
    for (const auto& s : p->servers()) {
      ++servers;
      if (!s->up()) ++down;
      const proxy::server_totals n = s->totals();
      requests += n.requests;
      failures += n.failures_total();
    }
  }
  out.emplace_back("router_pools", std::to_string(tree.pools().size()));
  out.emplace_back("router_servers", std::to_string(servers));
  out.emplace_back("router_servers_down", std::to_string(down));
  out.emplace_back("router_requests", std::to_string(requests));
  out.emplace_back("router_failures", std::to_string(failures));
}

void router_stats_reset(const route::route_tree& tree) {
  for (const auto& p : tree.pools()) {
    for (const auto& s : p->servers()) s->reset_totals();
  }
}

}  // namespace ithaca::server
