// The lease tokens a `failover` route with enable_lease_pairing handed out
// in place of a failover child's own (mcrouter's LeaseTokenMap): each maps
// back to that token and to the child that issued it, so the lease-set goes
// where its lease-get went. Its tokens carry kLeaseTokenTag (what the meta
// codec hands out) and kPairTag, which no backend token of this codec has,
// so a route above this one sees them as its own kind of token and maps
// them again (nested failover routes pair at each level).
//
// Bounded: past kMaxPairs the oldest are forgotten (their lease-set goes to
// the first child, as an unknown token does, and memcached refuses a token
// that is not its own). [any worker; one mutex, held for a map operation]
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace ithaca::route {

class lease_pairs {
 public:
  static constexpr std::uint64_t kLeaseTokenTag = std::uint64_t{1} << 62;  // protocol's call_detail
  static constexpr std::uint64_t kPairTag = std::uint64_t{1} << 61;
  static constexpr std::size_t kMaxPairs = 100000;

  struct pair {
    std::uint64_t token;  // the child's own
    std::uint32_t child;
  };

  // Whether `token` is one of this kind (of this route or one below).
  static bool is_paired(std::uint64_t token) { return (token & kPairTag) != 0; }

  // A new token standing for (token, child).
  std::uint64_t add(std::uint64_t token, std::uint32_t child) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::uint64_t mine = kLeaseTokenTag | kPairTag | (++next_ & (kPairTag - 1));
    pairs_[mine] = pair{token, child};
    order_.push_back(mine);
    if (order_.size() > kMaxPairs) {
      pairs_.erase(order_.front());
      order_.pop_front();
    }
    return mine;
  }

  // What `mine` stands for (kept until the bound pushes it out, as mcrouter
  // keeps its own: a lease-set may be sent again).
  std::optional<pair> find(std::uint64_t mine) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pairs_.find(mine);
    if (it == pairs_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::mutex mu_;
  std::uint64_t next_ = 0;
  std::unordered_map<std::uint64_t, pair> pairs_;
  std::deque<std::uint64_t> order_;
};

}  // namespace ithaca::route
