// Small helpers shared by the store unit tests.
#pragma once

#include <string>
#include <string_view>

#include "store.h"

namespace ithaca::store::test {

inline store_now at_sec(uint64_t sec, int64_t wall_base = 1'700'000'000) { return store_now{sec * 1000, wall_base}; }

inline store_config small_config() {
  store_config c;
  c.bucket_count = 1024;
  return c;
}

inline store_status put(store& s, std::string_view key, std::string_view value, const store_now& now,
                        int64_t exptime = 0, uint32_t flags = 0, store_mode mode = store_mode::Set,
                        store_options opts = {}, uint64_t* cas_out = nullptr) {
  store_result r;
  s.set(key, mode, {value.data(), value.size()}, flags, exptime, now, opts, r);
  if (cas_out) *cas_out = r.cas;
  return r.status;
}

// prefix + i, built without operator+ (GCC 12 -Wrestrict false positive on it).
inline std::string key_n(std::string_view prefix, long i) {
  std::string k(prefix);
  k += std::to_string(i);
  return k;
}

// The value if hit, "<miss>" otherwise.
inline std::string fetch(store& s, std::string_view key, const store_now& now, get_options opts = {}) {
  get_result r;
  s.get(key, now, opts, r);
  if (r.status != get_status::Hit) return "<miss>";
  if (r.large) {
    std::string v;
    r.large.read_all(v);
    return v;
  }
  return r.value;
}

}  // namespace ithaca::store::test
