#include "pool_group_stats.h"

#include <memory>

#include "command_class.h"
#include "machinarium.h"
#include "request_slot.h"

namespace ithaca::proxy {

namespace {

// The groups and every worker's counter blocks (worker-major). Written once
// by pool_groups_install before the workers start (their threads' creation
// orders it before every read), read-only after.
struct pool_groups {
  std::vector<std::string> names;
  unsigned workers = 0;
  std::vector<std::unique_ptr<pool_group_counters>> blocks;
};

pool_groups& groups() {
  static pool_groups g;
  return g;
}

// One group summed over the workers.
struct pool_group_totals {
  std::uint64_t requests = 0;
  std::uint64_t final_errors = 0;
  std::int64_t connections = 0;
  double duration_us = 0;
  double total_duration_us = 0;
};

// The mean of the workers' smoothed values that have a sample (0: none).
template <class Member>
double mean_of(const pool_groups& g, std::size_t group, Member member) {
  double sum = 0;
  unsigned n = 0;
  for (unsigned w = 0; w < g.workers; ++w) {
    const auto& v = g.blocks[w * g.names.size() + group].get()->*member;
    if (!v.has_value()) continue;
    sum += v.value();
    ++n;
  }
  return n == 0 ? 0 : sum / n;
}

pool_group_totals totals_of(const pool_groups& g, std::size_t group) {
  pool_group_totals t;
  for (unsigned w = 0; w < g.workers; ++w) {
    const pool_group_counters& c = *g.blocks[w * g.names.size() + group];
    t.requests += c.requests.get();
    t.final_errors += c.final_errors.get();
    t.connections += c.connections.load(std::memory_order_relaxed);
  }
  t.duration_us = mean_of(g, group, &pool_group_counters::duration_us);
  t.total_duration_us = mean_of(g, group, &pool_group_counters::total_duration_us);
  return t;
}

// mcrouter's five lines per group: GROUP + suffix, whole numbers.
#define ITHACA_POOL_GROUP_STATS(X)                                 \
  X(".requests.sum", t.requests)                                   \
  X(".final_result_error.sum", t.final_errors)                     \
  X(".connections", t.connections < 0 ? 0 : t.connections)         \
  X(".duration_us.avg", static_cast<std::uint64_t>(t.duration_us)) \
  X(".total_duration_us.avg", static_cast<std::uint64_t>(t.total_duration_us))

// How many of a client request's results were errors, as mcrouter counts
// them (its isErrorResult: a failure, an error line, a refusal), each key of
// a retrieval one result.
std::uint64_t error_results(const flow::request_slot& s) {
  using protocol::routed_outcome;
  const bool retrieval = protocol::classify(s.req) == protocol::command_class::Retrieve;
  const std::uint64_t keys = retrieval && !s.req.keys.empty() ? s.req.keys.size() : 1;
  switch (s.result.outcome) {
    case routed_outcome::Failed:
    case routed_outcome::ErrorLine:
    case routed_outcome::Refused: return keys;
    case routed_outcome::Hits: {
      std::uint64_t failed = 0;
      for (std::size_t i = 0; i < s.result.key_count(); ++i) failed += s.result.hit(i).failed ? 1 : 0;
      return failed;
    }
    default: return 0;
  }
}

}  // namespace

void pool_groups_install(std::vector<std::string> names, unsigned workers) {
  pool_groups& g = groups();
  g.names = std::move(names);
  g.workers = workers;
  g.blocks.clear();
  for (std::size_t i = 0; i < g.names.size() * workers; ++i)
    g.blocks.push_back(std::make_unique<pool_group_counters>());
}

bool pool_groups_on() { return !groups().names.empty(); }

int pool_group_of(std::string_view pool) {
  const pool_groups& g = groups();
  int best = -1;
  for (std::size_t i = 0; i < g.names.size(); ++i) {
    const std::string& n = g.names[i];
    if (!pool.starts_with(n)) continue;
    if (best < 0 || g.names[static_cast<std::size_t>(best)].size() < n.size()) best = static_cast<int>(i);
  }
  return best;
}

pool_group_counters* pool_group_at(unsigned worker, int group) {
  pool_groups& g = groups();
  if (group < 0 || worker >= g.workers) return nullptr;
  return g.blocks[worker * g.names.size() + static_cast<std::size_t>(group)].get();
}

void pool_group_call_done(unsigned worker, int group, const flow::request_slot& slot,
                          std::span<const std::uint32_t> keys, std::int64_t started_ns) {
  pool_group_counters* c = pool_group_at(worker, group);
  if (c == nullptr) return;
  const bool retrieval = protocol::classify(slot.req) == protocol::command_class::Retrieve;
  const std::size_t n = keys.empty() ? slot.req.keys.size() : keys.size();
  c->requests.add(retrieval && n > 0 ? n : 1);
  const std::int64_t ns = mm::now_ns() - started_ns;
  c->duration_us.add(static_cast<double>(ns < 0 ? 0 : ns / 1000));
}

void pool_group_reached(flow::request_slot& slot, int group) {
  if (group < 0) return;
  flow::request_slot* client = slot.client_request();
  if (client != nullptr && client->pool_group < 0) client->pool_group = static_cast<std::int16_t>(group);
}

void pool_group_answered(const flow::request_slot& slot, unsigned worker) {
  pool_group_counters* c = pool_group_at(worker, slot.pool_group);
  if (c == nullptr) return;
  c->final_errors.add(error_results(slot));
  const std::int64_t ns = mm::now_ns() - slot.began_ns;
  c->total_duration_us.add(static_cast<double>(ns < 0 ? 0 : ns / 1000));
}

void pool_group_stat_lines(stats::stat_lines& out) {
  const pool_groups& g = groups();
  for (std::size_t i = 0; i < g.names.size(); ++i) {
    const pool_group_totals t = totals_of(g, i);
#define ITHACA_X(suffix, value) out.emplace_back(g.names[i] + (suffix), std::to_string(value));
    ITHACA_POOL_GROUP_STATS(ITHACA_X)
#undef ITHACA_X
  }
}

}  // namespace ithaca::proxy
