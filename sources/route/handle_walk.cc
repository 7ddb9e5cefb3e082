#include "handle_walk.h"

#include <cctype>

#include "route.h"
#include "route_kind.h"

namespace ithaca::route {

void handle_walk::line(std::string_view text) {
  out_.append(static_cast<std::size_t>(depth_), ' ').append(text).push_back('\n');
}

void handle_walk::child(const route& r, const protocol::request& req) {
  if (depth_ + nested_ >= kMaxDepth) return;
  ++depth_;
  r.walk_handles(req, *this);
  --depth_;
}

void handle_walk::same_level(const route& r, const protocol::request& req) {
  if (depth_ + nested_ >= kMaxDepth) return;
  ++nested_;
  r.walk_handles(req, *this);
  --nested_;
}

std::string mcrouter_handle_name(std::string_view type) {
  if (type.ends_with("Route")) type.remove_suffix(5);
  std::string out;
  auto lower = [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; };
  auto upper = [](char c) { return std::isupper(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i < type.size(); ++i) {
    const char c = type[i];
    // A capital starts a word after a lowercase letter (AllSync), or after a
    // digit when a lowercase letter follows it (L1L2Cache: not L1-L2).
    const bool starts_word = i > 0 && upper(c) &&
                             (lower(type[i - 1]) || (std::isdigit(static_cast<unsigned char>(type[i - 1])) != 0 &&
                                                     i + 1 < type.size() && lower(type[i + 1])));
    if (starts_word) out.push_back('-');
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

// The defaults of route.h: the kind's mcrouter name, then every target.
std::string route::handle_name() const {
  if (const kind_module* k = find_route_kind(kind()); k != nullptr && k->config.mcrouter != nullptr) {
    return mcrouter_handle_name(k->config.mcrouter);
  }
  return kind();
}

void route::walk_handles(const protocol::request& req, handle_walk& w) const {
  w.line(handle_name());
  for (const route* t : targets_for(req)) w.child(*t, req);
}

}  // namespace ithaca::route
