#include "routed_result.h"

namespace ithaca::protocol {

void routed_result::prepare(const request& req) {
  outcome = routed_outcome::Pending;
  number = 0;
  cas = 0;
  flags = 0;
  text.clear();
  bstatus = binary_status::NoError;
  failure = call_failure::Down;
  down_cause = call_failure::ConnectionError;
  connect_errno = 0;
  raw.clear();
  failed_keys = 0;
  // assign keeps the vector's capacity: a pooled result does not allocate
  // again for a request with no more keys than an earlier one.
  hits_.assign(req.keys.size(), key_hit{});
  values_.clear();
}

void routed_result::release_values() {
  // Capacity up to this much is kept for the next request (one small value).
  constexpr std::size_t kKeepCapacity = 64 * 1024;
  values_.clear();
  raw.clear();
  if (values_.capacity() > kKeepCapacity) std::string().swap(values_);
  if (raw.capacity() > kKeepCapacity) std::string().swap(raw);
}

void routed_result::set_hit(std::size_t i, std::uint32_t hit_flags, std::uint64_t hit_cas, std::string_view bytes) {
  if (i >= hits_.size()) return;  // not prepared for this request: nothing to fill
  key_hit& h = hits_[i];
  h.found = true;
  h.flags = hit_flags;
  h.cas = hit_cas;
  h.offset = values_.size();
  h.length = bytes.size();
  h.header = 0;  // no VALUE piece of a backend's (a route may replace one)
  h.raw_has_cas = false;
  values_.append(bytes);
}

void routed_result::clear_hit(std::size_t i) {
  if (i >= hits_.size()) return;
  hits_[i].found = false;
  hits_[i].header = 0;
}

void routed_result::set_hit_raw(std::size_t i, std::uint32_t hit_flags, std::uint64_t hit_cas, bool has_cas,
                                std::string_view bytes, std::string_view raw) {
  const bool inside = bytes.data() >= raw.data() && bytes.data() + bytes.size() + 2 == raw.data() + raw.size();
  if (i >= hits_.size() || !inside) return set_hit(i, hit_flags, hit_cas, bytes);
  key_hit& h = hits_[i];
  h.found = true;
  h.flags = hit_flags;
  h.cas = hit_cas;
  h.header = static_cast<std::size_t>(bytes.data() - raw.data());
  h.raw_has_cas = has_cas;
  h.offset = values_.size() + h.header;
  h.length = bytes.size();
  values_.append(raw);
}

}  // namespace ithaca::protocol
