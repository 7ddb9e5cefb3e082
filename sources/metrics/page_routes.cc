// ithaca_route_*: every node of the route tree, from `stats routes` (the one
// place the figures are read: server/router_stats.cc). Its lines:
//   route:N            "KIND NAME"  (N: the node's build-order index)
//   route:N:listener   the root index that reaches it (only with listeners
//                      of their own)
//   route:N:FIELD      a counter of the node (requests always; the others
//                      once they are not zero)
//   async_sent, async_dropped, async_in_flight   every worker's detached
//                      requests together
// Each node's samples carry node="N", kind, name (the route's name, empty
// when it is only its kind's: an unnamed failover is "failover") and, with
// listeners, listener. Cost: one pass over the lines and one over the nodes.
#include <string_view>
#include <unordered_map>
#include <vector>

#include "page_parts.h"

namespace ithaca::metrics {

namespace {

struct route_field {
  const char* field;
  const char* name;
  const char* help;
};

// Every per-node figure of `stats routes` is a count since start: those of
// route_counters here, those a kind keeps in its module's stats
// (route_kind.h). A field in neither is shown as ithaca_route_FIELD_total
// all the same; a level would have to be listed here as a gauge.
constexpr route_field kRouteFields[] = {
    {"requests", "ithaca_route_requests_total", "Requests the route node dispatched."},
    {"failovers", "ithaca_route_failovers_total",
     "Requests tried on a next child after an error, or gets read on from a next child after a miss."},
    {"failover_limited", "ithaca_route_failover_limited_total", "failover: next tries not made, over failover_limit."},
    {"gutter_writes", "ithaca_route_gutter_writes_total",
     "failover_exptime: writes sent to a failover child with their TTL capped."},
    {"shadow_sent", "ithaca_route_shadow_sent_total", "shadow: copies sent to the shadow children."},
    {"async_sent", "ithaca_route_async_sent_total",
     "Detached requests the node sent (all_async, all_initial, the stragglers of all_majority, all_fastest)."},
    {"async_dropped", "ithaca_route_async_dropped_total",
     "Detached requests the node dropped over its worker's bound (async_runner.h)."},
    {"rate_limited", "ithaca_route_rate_limited_total", "rate_limit: requests refused over the rate."},
    {"deletes_spooled", "ithaca_route_deletes_spooled_total",
     "pool with reliable_deletes: failed deletes spooled to be replayed."},
    {"deletes_dropped", "ithaca_route_deletes_dropped_total",
     "pool with reliable_deletes: failed deletes the spool could not take."},
};

constexpr simple_figure kAsyncFigures[] = {
    {"async_sent", "ithaca_async_sent_total", C, "Detached requests sent by every worker's async runner."},
    {"async_dropped", "ithaca_async_dropped_total", C, "Detached requests dropped over a worker's bound."},
    {"async_in_flight", "ithaca_async_in_flight", G, "Detached requests sent and not yet done."},
};

struct route_node {
  std::string index;
  std::string kind;
  std::string name;
  std::string listener;
  std::vector<std::pair<std::string_view, std::string_view>> fields;  // into the stat lines
};

bool metric_name_part(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// The help of a counter a kind keeps (page_input::route_help), else a
// generic one.
std::string kind_help(const stat_lines& help, std::string_view field) {
  for (const auto& [f, text] : help) {
    if (field == f) return text;
  }
  return "stats routes' " + std::string(field) + " of the route node.";
}

void add_node(prom_writer& w, const route_node& n, const stat_lines& help) {
  labels l{{"node", n.index}, {"kind", n.kind}, {"name", n.name}};
  if (!n.listener.empty()) l.emplace_back("listener", n.listener);
  for (const auto& [field, text] : n.fields) {
    double v = 0;
    if (!to_number(std::string(text), v)) continue;
    const route_field* known = nullptr;
    for (const route_field& f : kRouteFields) {
      if (field == f.field) known = &f;
    }
    if (known != nullptr) {
      w.add(known->name, C, known->help, l, v);
    } else if (metric_name_part(field)) {
      const std::string name = "ithaca_route_" + std::string(field) + "_total";
      w.add(name, C, kind_help(help, field), l, v);
    }
  }
}

}  // namespace

void route_families(prom_writer& w, const page_input& in) {
  constexpr std::string_view kPrefix = "route:";
  std::vector<route_node> nodes;
  std::unordered_map<std::string_view, std::size_t> by_index;  // into nodes
  for (const auto& [key, value] : in.routes) {
    const std::string_view k = key;
    if (k.substr(0, kPrefix.size()) != kPrefix) {
      for (const simple_figure& f : kAsyncFigures) {
        double v = 0;
        if (k == f.key && to_number(value, v)) w.add(f.name, f.type, f.help, {}, v);
      }
      continue;
    }
    const std::string_view rest = k.substr(kPrefix.size());
    const std::size_t colon = rest.find(':');
    const std::string_view index = rest.substr(0, colon);
    if (colon == std::string_view::npos) {
      // "KIND NAME": a kind has no space; a name equal to its kind is none.
      const std::size_t space = value.find(' ');
      route_node n{std::string(index), value.substr(0, space), {}, {}, {}};
      if (space != std::string::npos && value.compare(space + 1, std::string::npos, n.kind) != 0) {
        n.name = value.substr(space + 1);
      }
      by_index[index] = nodes.size();  // the key lives in in.routes
      nodes.push_back(std::move(n));
      continue;
    }
    auto it = by_index.find(index);
    if (it == by_index.end()) continue;  // a field before its node: not what stats routes writes
    route_node& n = nodes[it->second];
    const std::string_view field = rest.substr(colon + 1);
    if (field == "listener") {
      n.listener = value;
    } else {
      n.fields.emplace_back(field, value);
    }
  }
  for (const route_node& n : nodes) add_node(w, n, in.route_help);
}

}  // namespace ithaca::metrics
