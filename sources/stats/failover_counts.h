// mcrouter's failover counters (its stat_list.h, the count_stats group that
// `stats` prints as totals), kept for the whole process as mcrouter keeps
// them per proxy and sums them: a reload does not reset them, `stats reset`
// does. Their meaning is mcrouter's FailoverRoute's (failover_route.cc counts
// them, failover_policy.cc finds the collisions):
//   policy_result_error      a reply that fails over and is an error other
//                            than a server marked down, seen before the last
//                            child the policy allows (mcrouter never looks at
//                            the last one's kind: it only tells all_failed)
//   policy_tko_error         the same for a server marked down (TKO)
//   all_failed_count         a request whose every try failed: the last child
//                            the policy allows answered an error (or the
//                            first did, when it allows one child)
//   num_collisions           deterministic order: draws of the key's hash
//                            that hit a child tried already, beyond the one
//                            kept per step (counted when the failover ends
//                            with an error, as mcrouter counts them)
//   num_failed_domain_collisions  deterministic order with failure domains:
//                            draws that hit a child in the failure domain of
//                            a server that answered TKO in this request
// mcrouter's rate counters (failover_all, failover_*_policy, ...) are rates
// over a window in its `stats`, and are not kept here; route counters
// (`stats routes`: failovers, failover_limited) count the same events.
// [any worker adds (relaxed atomics: failovers are rare); `stats` reads]
#pragma once

#include <atomic>
#include <cstdint>

namespace ithaca::stats {

#define ITHACA_FAILOVER_COUNTS(X) \
  X(policy_result_error)          \
  X(policy_tko_error)             \
  X(all_failed_count)             \
  X(num_collisions)               \
  X(num_failed_domain_collisions)

struct failover_counts {
#define ITHACA_X(name) std::atomic<std::uint64_t> name{0};
  ITHACA_FAILOVER_COUNTS(ITHACA_X)
#undef ITHACA_X

  static void add(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) {
    if (n != 0) c.fetch_add(n, std::memory_order_relaxed);
  }
  // `stats reset`: an increment racing with it may survive it.
  void reset() {
#define ITHACA_X(name) name.store(0, std::memory_order_relaxed);
    ITHACA_FAILOVER_COUNTS(ITHACA_X)
#undef ITHACA_X
  }
  // The process's one set.
  static failover_counts& instance() {
    static failover_counts c;
    return c;
  }
};

}  // namespace ithaca::stats
