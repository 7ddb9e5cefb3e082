// The order in which a `failover` route tries its children, and when it
// stops: mcrouter's failover_policy (FailoverPolicy.h).
//
//   in order (the default)   children in the order written, every one;
//                            mcrouter's InOrderPolicy: its max_tries bounds
//                            the error tries (max_error_tries here), not the
//                            children, and exclude_errors
//   deterministic order      the first child, then children chosen by the
//                            key: ch3 (or WeightedCh3, with `hash.weights`)
//                            of the routing key (up to "|#|") with a salt
//                            "2", "3", ... appended, skipping children
//                            already tried (and, unless
//                            ignore_normal_reply_index, the child at the
//                            first child's pool index + 1: the same server
//                            when the failover list is that pool's servers),
//                            at most 100 draws per step; with
//                            enable_failure_domains, a draw whose child is
//                            in the failure domain of a server marked down
//                            earlier in the request is drawn again (up to 75
//                            draws into a step, then taken); max_tries (children
//                            in all, required) and max_error_tries (replies
//                            that count as an error try, required)
//   rendezvous               the first child (a pool route), then the
//                            others (its servers, one `tag` each) by
//                            mcrouter's rendezvous score of the routing key
//                            against each tag, highest first, skipping the
//                            child of the first child's server for the key
//                            (mcrouter's RendezvousPolicy; every one of them,
//                            no error tries). The route's own `tags`, when
//                            given, replace the policy's; a route `hash` of
//                            "WeightedRendezvous" weighs each tag's score by
//                            the policy's `weights` (w / -ln(score in [0, 1)))
//   least failures           the first child, then the others by how many
//                            errors in a row each answered last (fewest
//                            first, ties in written order); max_tries.
//                            mcrouter sorts once, when the first child has
//                            answered: so a request's own failures do not
//                            reorder the children it has still to try
//
// An error try is a failing-over reply that is not `tko` (a server marked
// down costs nothing) and not one of exclude_errors. Every policy also stops
// at the last child. [read: the thread building the tree; used: any worker]
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "distribution/distribution.h"
#include "route_util.h"

namespace YAML {
class Node;
}
namespace ithaca::config {
class route_kind_reader;
}
namespace ithaca::proxy {
class pool;
}

namespace ithaca::route {

enum class failover_policy_kind : std::uint8_t { InOrder, DeterministicOrder, LeastFailures, Rendezvous };

// failover_policy as a file writes it.
struct failover_policy_config {
  failover_policy_kind kind = failover_policy_kind::InOrder;
  std::uint32_t max_tries = 0;        // 0: every child
  std::uint32_t max_error_tries = 0;  // 0: max_tries
  std::vector<std::string> exclude_errors;
  bool weighted = false;        // hash_func WeightedCh3
  std::vector<double> weights;  // its weights, by child (0.5 for those missing, as mcrouter)
  bool ignore_normal_reply_index = false;
  bool enable_failure_domains = false;
  std::vector<std::string> tags;  // rendezvous: one per child after the first
  bool tags_given = false;        // the policy's or the route's
  std::vector<double> rendezvous_weights;  // rendezvous: the policy's `weights`, by tag
  bool rendezvous_weights_given = false;
  // mcrouter's route-level `hash` when it is a name, not an object: it picks
  // the rendezvous hash ("WeightedRendezvous"); the other policies ignore it,
  // but the deterministic order's must be an object.
  std::string route_hash;
};

// Reads `failover_policy` (`v`) into `out`, errors through `in` (mcrouter's
// type names in JSON, in_order / deterministic_order / least_failures in
// YAML; the same keys in both).
void read_failover_policy(config::route_kind_reader& in, const YAML::Node& v, failover_policy_config& out);
// RendezvousPolicy's `tags` (the policy's, or mcrouter's route-level ones)
// into `out`; false (and an error) when they are not a list of strings.
bool read_rendezvous_tags(config::route_kind_reader& in, const YAML::Node& v, std::vector<std::string>& out);
// mcrouter's route-level `hash` (merged into a DeterministicOrderPolicy).
void read_failover_policy_hash(config::route_kind_reader& in, const YAML::Node& v, failover_policy_config& out);
// "deterministic_order/12/3": for describe_options.
std::string show_failover_policy(const failover_policy_config& c);

// What the deterministic order's draws cost for a key up to a position
// (mcrouter's iterator Stats): draws beyond the one kept per step, and draws
// that hit a failed failure domain.
struct failover_draws {
  std::uint32_t collisions = 0;
  std::uint32_t failed_domain_collisions = 0;
};

// Positions of a request's tries whose reply was a server marked down (bit
// j: position j), which the deterministic order's failure domains skip.
using tko_positions = std::uint32_t;
inline constexpr std::uint32_t kTkoPositions = 30;  // positions past these are not remembered

class failover_order {
 public:
  // `pools`: each child's pool when it is a pool route, else null; the
  // first child's (the normal pool) index for a key is the one
  // deterministic order skips, and a child's failure domain for a key is
  // that of its pool's server for the key.
  failover_order(const failover_policy_config& c, std::vector<const proxy::pool*> pools);
  // False and *why when the config cannot be built (an unknown error name).
  bool ok(std::string* why) const;
  // The child tried at `position` (0: the first child; < max_tries()) for
  // `key`, after the tries `tko` says were servers marked down.
  std::size_t child_at(std::uint32_t position, std::string_view key, tko_positions tko = 0) const;
  // Deterministic order: the draws for positions 1 to `position` (zero for
  // the other policies).
  failover_draws draws(std::uint32_t position, std::string_view key, tko_positions tko) const;
  std::uint32_t max_tries() const { return max_tries_; }
  std::uint32_t max_error_tries() const { return max_error_tries_; }
  // Whether a reply that fails over counts as an error try.
  bool error_try(const protocol::routed_result& r) const;
  // Least failures: child `i` answered, `failed` or not. [any worker; relaxed]
  void note_reply(std::size_t i, bool failed) const;
  // Least failures: the next child after those in `tried` (bit i-1: child i,
  // 1 <= i <= kLeastFailuresTracked): the one with the fewest errors in a
  // row among the others, ties in written order. Those left are untouched by
  // this request's replies, so this is the child mcrouter's order, sorted
  // once, has next. With more children than tracked, the order is sorted
  // again at each step (`position`), as child_at does.
  static constexpr std::size_t kLeastFailuresTracked = 30;
  std::size_t least_failures_next(std::uint64_t tried, std::uint32_t position, std::string_view key) const;
  bool in_order() const { return kind_ == failover_policy_kind::InOrder; }
  bool notes_replies() const { return kind_ == failover_policy_kind::LeastFailures; }

 private:
  std::size_t deterministic_at(std::uint32_t position, std::string_view key, tko_positions tko,
                               failover_draws* counted) const;
  failover_policy_kind kind_;
  std::size_t children_;
  std::uint32_t max_tries_;
  std::uint32_t max_error_tries_;
  failover_mask exclude_ = 0;
  std::string bad_error_;
  // Rendezvous: the child at `position` (>= 1).
  std::size_t rendezvous_at(std::uint32_t position, std::string_view key) const;
  // Child `i`'s failure domain for `key` (0: none).
  std::uint32_t domain_of(std::size_t i, std::string_view key) const;
  bool ignore_normal_;
  bool failure_domains_;
  std::vector<const proxy::pool*> pools_;  // by child; null: not a pool route
  std::vector<std::uint64_t> tag_hashes_;  // rendezvous: by child after the first
  std::vector<double> tag_weights_;        // weighted rendezvous: by tag; empty: plain
  std::unique_ptr<proxy::distribution> hash_;  // deterministic order: ch3 or weighted_ch3 over the children
  mutable std::unique_ptr<std::atomic<std::uint32_t>[]> errors_in_a_row_;  // least failures
};

}  // namespace ithaca::route
