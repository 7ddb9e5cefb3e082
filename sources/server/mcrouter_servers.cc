#include "mcrouter_servers.h"

#include <array>
#include <cstdio>
#include <map>
#include <string>

#include "router_stats.h"

namespace ithaca::server {

namespace {

using protocol::reply_result;
using proxy::failure_kind;

// The results mcrouter's destinations count that ithaca's calls can end
// in, in mcrouter's enum order (carbon_result.thrift), without "mc_res_".
enum class mc_result : std::uint8_t {
  Deleted, Touched, Found, NotFound, NotStored, Ok, Stored, Exists,
  Timeout, ConnectError, ClientError, LocalError, RemoteError, Count
};
constexpr std::size_t kResults = static_cast<std::size_t>(mc_result::Count);
constexpr const char* kResultNames[kResults] = {"deleted", "touched",       "found",        "notfound",    "notstored",
                                                "ok",      "stored",        "exists",       "timeout",     "connect_error",
                                                "client_error", "local_error", "remote_error"};

// ithaca's reply result as mcrouter's ascii client reads the line: an
// incr's number is STORED, the server's ERROR a parse error (its client
// then fails the call with remote_error).
constexpr mc_result kReplyResults[protocol::kReplyResultCount] = {
    mc_result::Found,     mc_result::NotFound, mc_result::Stored,      mc_result::NotStored,
    mc_result::Exists,    mc_result::Deleted,  mc_result::Touched,     mc_result::Ok,
    mc_result::Stored,    mc_result::RemoteError, mc_result::ClientError, mc_result::RemoteError};
static_assert(static_cast<int>(reply_result::RemoteError) == protocol::kReplyResultCount - 1);

// A failure as mcrouter's destination would count it; Down (failed fast)
// not at all: mcrouter's DestinationRoute answers tko before the
// destination sees the request. A broken connection fails its sent calls
// with remote_error, as mcrouter's client does, and so does garbage. A
// shadow copy dropped past max_shadow_requests never reached the
// destination (mcrouter drops it before sending): not counted either.
constexpr mc_result kFailureResults[proxy::kFailureKindCount] = {
    mc_result::Count,       mc_result::Timeout,     mc_result::ConnectError, mc_result::RemoteError,
    mc_result::RemoteError, mc_result::LocalError,  mc_result::Count};
static_assert(static_cast<int>(failure_kind::ShadowFull) == proxy::kFailureKindCount - 1);

struct destination {
  std::array<uint64_t, kResults> results{};
  std::array<uint64_t, kMcrouterStates> states{};
  bool hard_tko = false, soft_tko = false;
  double latency_sum = 0;
  uint64_t latency_count = 0;
  int64_t pending = 0, inflight = 0;
};

// mcrouter's ProxyDestinationKey::str() for an ascii destination.
std::string key_of(const proxy::backend_server& s) {
  return s.address() + ":" + s.protocol_name() + ":" + (s.settings().tls.enabled ? "ssl" : "plain") +
         ":notcompressed-" + std::to_string(s.settings().timeout_ms);
}

void add(destination& d, const proxy::backend_server& s) {
  for (const auto& c : s.all_counters()) {
    ++d.states[static_cast<std::size_t>(mcrouter_state_of(s, *c))];
    if (c->recent_latency.has_value()) {
      d.latency_sum += c->recent_latency.value();
      ++d.latency_count;
    }
    d.pending += c->pending.load(std::memory_order_relaxed);
    d.inflight += c->inflight.load(std::memory_order_relaxed);
  }
  if (!s.up()) (s.down_cause() == failure_kind::Connect ? d.hard_tko : d.soft_tko) = true;
  const proxy::server_totals n = s.totals();
  for (std::size_t i = 0; i < n.results.size(); ++i) d.results[static_cast<std::size_t>(kReplyResults[i])] += n.results[i];
  for (std::size_t i = 0; i < n.failures.size(); ++i) {
    if (kFailureResults[i] != mc_result::Count) d.results[static_cast<std::size_t>(kFailureResults[i])] += n.failures[i];
  }
}

std::string value_of(const destination& d) {
  char latency[64];
  std::snprintf(latency, sizeof latency, "%.3f", d.latency_count == 0 ? 0.0 : d.latency_sum / static_cast<double>(d.latency_count));
  std::string out = std::string("avg_latency_us:") + latency + " pending_reqs:" + std::to_string(std::max<int64_t>(0, d.pending)) +
                    " inflight_reqs:" + std::to_string(std::max<int64_t>(0, d.inflight));
  if (d.hard_tko) {
    out += " hard_tko; ";
  } else if (d.soft_tko) {
    out += " soft_tko; ";
  }
  for (std::size_t i = 0; i < kMcrouterStates; ++i) {
    if (d.states[i] > 0) out += std::string(" ") + kMcrouterStateNames[i] + ":" + std::to_string(d.states[i]);
  }
  bool first = true;
  for (std::size_t i = 0; i < kResults; ++i) {
    if (d.results[i] == 0) continue;
    out += std::string(first ? ";" : "") + " " + kResultNames[i] + ":" + std::to_string(d.results[i]);
    first = false;
  }
  return out;
}

}  // namespace

// Servers with one key (the same address, protocol, TLS and timeout, other
// settings apart) are one destination, their figures added, as mcrouter's
// destination map holds one. Cost: one pass over the servers and workers.
void mcrouter_stats_servers(const route::route_tree& tree, stats::stat_lines& out) {
  std::map<std::string, destination> by_key;
  for_each_tree_server(tree, [&by_key](const proxy::backend_server& s) { add(by_key[key_of(s)], s); });
  for (const auto& [key, d] : by_key) out.emplace_back(key, value_of(d));
}

}  // namespace ithaca::server
