// Building a distribution in an order other than the caller's list, and
// answering in the caller's indices: twemproxy's kinds take the servers sorted
// by name (its config loader sorts them, so its modula slots and ketama ties
// follow that order), and make_live_distribution takes a subset of the list.
#include <algorithm>
#include <numeric>
#include <vector>

#include "distribution/kinds.h"

namespace ithaca::proxy {

namespace {

class remapped_distribution final : public distribution {
 public:
  remapped_distribution(std::unique_ptr<distribution> inner, std::vector<std::uint32_t> to_caller)
      : distribution(inner->kind(), inner->hash(), inner->size()),
        inner_(std::move(inner)),
        to_caller_(std::move(to_caller)) {}

  std::uint32_t pick(std::string_view part, std::uint32_t hash) const override {
    return to_caller_[inner_->pick(part, hash)];
  }

 private:
  std::unique_ptr<distribution> inner_;
  std::vector<std::uint32_t> to_caller_;  // inner's index -> the caller's index
};

// twemproxy's string_compare: shorter names first, then bytewise.
bool twemproxy_name_less(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
  });
}

bool sorted_by_name(distribution_kind kind) {
  return kind == distribution_kind::Ketama || kind == distribution_kind::Modula;
}

}  // namespace

std::unique_ptr<distribution> detail::build(distribution_kind kind, std::vector<server_spec> servers,
                                            std::vector<std::uint32_t> to_caller, hash_kind hash, std::string* error) {
  if (!validate(kind, servers, hash, error)) return nullptr;
  if (sorted_by_name(kind)) {
    std::vector<std::uint32_t> order(servers.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return twemproxy_name_less(servers[a].name, servers[b].name);
    });
    std::vector<server_spec> sorted;
    std::vector<std::uint32_t> sorted_to_caller;
    sorted.reserve(servers.size());
    sorted_to_caller.reserve(servers.size());
    for (std::uint32_t i : order) {
      sorted.push_back(std::move(servers[i]));
      sorted_to_caller.push_back(to_caller[i]);
    }
    servers = std::move(sorted);
    to_caller = std::move(sorted_to_caller);
  }
  auto inner = make_kind(kind, servers, hash);
  for (std::uint32_t i = 0; i < to_caller.size(); ++i) {
    if (to_caller[i] != i) {
      return std::make_unique<remapped_distribution>(std::move(inner), std::move(to_caller));
    }
  }
  return inner;
}

std::unique_ptr<distribution> make_distribution(distribution_kind kind, std::span<const server_spec> servers,
                                                hash_kind hash, std::string* error) {
  std::vector<std::uint32_t> identity(servers.size());
  std::iota(identity.begin(), identity.end(), 0u);
  return detail::build(kind, {servers.begin(), servers.end()}, std::move(identity), hash, error);
}

std::unique_ptr<distribution> make_live_distribution(distribution_kind kind, std::span<const server_spec> servers,
                                                     std::span<const std::uint32_t> live, hash_kind hash,
                                                     std::string* error) {
  std::vector<server_spec> subset;
  std::vector<std::uint32_t> full_index;
  subset.reserve(live.size());
  full_index.reserve(live.size());
  for (std::size_t i = 0; i < live.size(); ++i) {
    const std::uint32_t idx = live[i];
    if (idx >= servers.size() || (i > 0 && idx <= live[i - 1])) {
      if (error) {
        *error = "live server indices must be ascending and below " + std::to_string(servers.size());
      }
      return nullptr;
    }
    subset.push_back(servers[idx]);
    full_index.push_back(idx);
  }
  if (subset.empty()) {
    if (error) *error = "no live servers";
    return nullptr;
  }
  return detail::build(kind, std::move(subset), std::move(full_index), hash, error);
}

}  // namespace ithaca::proxy
