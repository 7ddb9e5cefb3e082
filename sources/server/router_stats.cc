#include "router_stats.h"

#include "async_runner.h"
#include "counters.h"
#include "delete_spool.h"

#include <array>
#include <atomic>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "router_stats_table.h"

namespace ithaca::server {

namespace {

constexpr proxy::failure_kind kFailureKinds[] = {
    proxy::failure_kind::Down,       proxy::failure_kind::Timeout,  proxy::failure_kind::Connect,
    proxy::failure_kind::Connection, proxy::failure_kind::BadReply, proxy::failure_kind::QueueFull,
    proxy::failure_kind::ShadowFull,
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

using stats::load;

// A PerName row's value (router_stats_table.h): a count per name, one line each.
using per_name = std::vector<std::pair<std::string_view, uint64_t>>;

per_name reply_results(const std::array<uint64_t, protocol::kReplyResultCount>& counts) {
  per_name out;
  for (std::size_t i = 0; i < counts.size(); ++i) out.emplace_back(protocol::kReplyResultNames[i], counts[i]);
  return out;
}

per_name failure_kinds(const std::array<uint64_t, proxy::kFailureKindCount>& counts) {
  per_name out;
  for (std::size_t i = 0; i < counts.size(); ++i) out.emplace_back(proxy::to_string(kFailureKinds[i]), counts[i]);
  return out;
}

// One row's lines: PREFIX + name, a number in decimal or text as it is; a
// PerName row's, PREFIX + name + each name.
template <class V>
void add_row(stats::stat_lines& out, const std::string& prefix, const char* name, const V& value) {
  if constexpr (std::is_same_v<V, per_name>) {
    for (const auto& [suffix, n] : value) out.emplace_back(prefix + name + std::string(suffix), std::to_string(n));
  } else if constexpr (std::is_convertible_v<V, std::string>) {
    out.emplace_back(prefix + name, std::string(value));
  } else {
    out.emplace_back(prefix + name, std::to_string(value));
  }
}

}  // namespace

// Rows of router_stats_table.h, read by their expressions below.
#define ITHACA_X(name, type, prom, help, page, labels, when, read) \
  if (when) add_row(out, prefix, name, read);

void router_stats_pools(const route::route_tree& tree, stats::stat_lines& out) {
  for (const auto& p : tree.pools()) {
    uint64_t up = 0, requests = 0, replies = 0, failures = 0;
    std::array<uint64_t, protocol::kReplyResultCount> results{};
    for (const auto& s : p->servers()) {
      if (s->up()) ++up;
      const proxy::server_totals n = s->totals();
      requests += n.requests;
      replies += n.replies;
      failures += n.failures_total();
      for (std::size_t i = 0; i < results.size(); ++i) results[i] += n.results[i];
    }
    const std::string prefix = p->name() + ":";
    ITHACA_POOL_STATS(ITHACA_X)
  }
}

void router_stats_servers(const route::route_tree& tree, stats::stat_lines& out) {
  for (const auto& p : tree.pools()) {
    for (const auto& s : p->servers()) {
      const proxy::server_totals n = s->totals();
      const server_gauges g = gauges(*s);
      const proxy::spool_counts& sp = s->spool();
      const std::string prefix = p->name() + "/" + s->address() + ":";
      ITHACA_SERVER_STATS(ITHACA_X)
    }
  }
}

void router_stats_latency(const route::route_tree& tree, stats::stat_lines& out) {
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

void router_stats_routes(const route::route_tree& tree, stats::stat_lines& out) {
  // Only a tree with listeners of their own says which one a node serves.
  const auto listeners = tree.roots() > 1 ? tree.first_roots() : std::unordered_map<const route::route*, std::size_t>{};
  std::size_t i = 0;
  for (const route::route* r : tree.nodes()) {
    const std::string prefix = "route:" + std::to_string(i++);
    out.emplace_back(prefix, std::string(r->kind()) + " " + r->name());
    if (auto it = listeners.find(r); it != listeners.end()) {
      out.emplace_back(prefix + ":listener", std::to_string(it->second));
    }
    const route::route_counters& c = r->counters();
    auto add = [&](const char* name, const std::atomic<std::uint64_t>& v, bool always = false) {
      const std::uint64_t n = v.load(std::memory_order_relaxed);
      if (always || n != 0) out.emplace_back(prefix + ":" + name, std::to_string(n));
    };
    add("requests", c.requests, true);
    add("failovers", c.failovers);
    add("failover_limited", c.failover_limited);
    add("gutter_writes", c.gutter_writes);
    add("shadow_sent", c.shadow_sent);
    add("async_sent", c.async_sent);
    add("async_dropped", c.async_dropped);
    add("rate_limited", c.rate_limited);
    add("deletes_spooled", c.deletes_spooled);
    add("deletes_dropped", c.deletes_dropped);
    r->kind_counters([&](const char* field, std::uint64_t n) {
      if (n != 0) out.emplace_back(prefix + ":" + field, std::to_string(n));
    });
  }
  const route::async_totals& a = route::async_counters();
  const std::uint64_t sent = a.sent.load(std::memory_order_relaxed);
  const std::uint64_t done = a.done.load(std::memory_order_relaxed);
  out.emplace_back("async_sent", std::to_string(sent));
  out.emplace_back("async_dropped", std::to_string(a.dropped.load(std::memory_order_relaxed)));
  out.emplace_back("async_in_flight", std::to_string(sent >= done ? sent - done : 0));
}

void router_stats_summary(const route::route_tree& tree, stats::stat_lines& out) {
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
  const proxy::spool_totals& sp = proxy::spool_counters();
  const std::string prefix;
  ITHACA_ROUTER_SUMMARY_STATS(ITHACA_X)
}

#undef ITHACA_X

namespace {

std::uint64_t mcrouter_failures_of(const proxy::server_totals& n, proxy::failure_kind k) {
  return n.failures[static_cast<std::size_t>(k)];
}

std::uint64_t mcrouter_results_of(const proxy::server_totals& n, protocol::reply_result r) {
  return n.results[static_cast<std::size_t>(r)];
}

}  // namespace

mcrouter_state mcrouter_state_of(const proxy::backend_server& s, const proxy::server_counters& c) {
  if (!s.up()) return mcrouter_state::Down;
  if (c.connections.load(std::memory_order_relaxed) > 0) return mcrouter_state::Up;
  return c.connects.get() > 0 ? mcrouter_state::Closed : mcrouter_state::New;
}

mcrouter_figures router_mcrouter_figures(const route::route_tree& tree) {
  mcrouter_figures f;
  using protocol::reply_result;
  using proxy::failure_kind;
  for_each_tree_server(tree, [&f](const proxy::backend_server& s) {
    // One destination per worker, in that worker's state.
    for (const auto& c : s.all_counters()) {
      ++f.servers;
      switch (mcrouter_state_of(s, *c)) {
        case mcrouter_state::Down: ++f.down; break;
        case mcrouter_state::Up: ++f.up; break;
        case mcrouter_state::Closed: ++f.closed; break;
        case mcrouter_state::New: ++f.fresh; break;
      }
    }
    if (!s.up() || s.failure_streak() > 0) ++f.suspect;
    const proxy::server_totals n = s.totals();
    f.connect_error +=
        mcrouter_failures_of(n, failure_kind::Connect) + mcrouter_failures_of(n, failure_kind::Connection);
    f.data_timeout += mcrouter_failures_of(n, failure_kind::Timeout);
    f.tko += mcrouter_failures_of(n, failure_kind::Down);
    f.local_error += mcrouter_failures_of(n, failure_kind::BadReply) + mcrouter_failures_of(n, failure_kind::QueueFull);
    f.client_error += mcrouter_results_of(n, reply_result::ClientError);
    f.remote_error += mcrouter_results_of(n, reply_result::RemoteError);
    f.error += n.failures_total() + mcrouter_results_of(n, reply_result::Error) +
               mcrouter_results_of(n, reply_result::ClientError) + mcrouter_results_of(n, reply_result::RemoteError);
  });
  // mcrouter counts dev_null_requests per proxy, whichever DevNullRoute
  // dropped the request: here the sum over the tree's dev_null nodes.
  for (const route::route* r : tree.nodes()) {
    r->kind_counters([&f](const char* field, std::uint64_t n) {
      if (std::string_view(field) == "dev_null_requests") f.dev_null += n;
    });
  }
  return f;
}

void router_stats_suspect(const route::route_tree& tree, stats::stat_lines& out) {
  for_each_tree_server(tree, [&out](const proxy::backend_server& s) {
    const unsigned failures = s.failure_streak();
    if (s.up() && failures == 0) return;
    out.emplace_back(s.address(),
                     std::string("status:") + (s.up() ? "down" : "tko") + " num_failures:" + std::to_string(failures));
  });
}

void router_stats_reset(const route::route_tree& tree) {
  for (const auto& p : tree.pools()) {
    for (const auto& s : p->servers()) s->reset_totals();
  }
}

}  // namespace ithaca::server
