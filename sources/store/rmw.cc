// Read-modify-write operations: append, prepend, incr, decr.
//
// Each is a CAS loop: read the value and its CAS under the lock (copy only), build the new
// value with no lock held (this may allocate, or read a large value's file), then store it
// with "compare CAS, keep flags and exptime". A concurrent change makes the store answer
// Exists and the loop retries, so the result is as if done atomically under the lock, while
// the lock is never held across malloc or I/O.
#include <charconv>

#include "store.h"
#include "store_inline.h"

namespace ithaca::store {

namespace {

constexpr size_t kMaxDigits = 20;

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// memcached's incr/decr reads the item's data with safe_strtoull, and its data always ends in
// "\r\n": leading blanks are skipped, a sign is allowed, the digits must fit in 64 bits and
// be followed by a blank or the end ("+12", " 12 " and "12 5" are 12; "12x" is not a number).
// A '-' turns the number negative modulo 2^64, refused when that is negative as a signed
// number ("-0" is 0). An all-blank value is refused: memcached reads past its end there.
bool parse_u64(std::string_view s, uint64_t& out) noexcept {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  const size_t first = i;
  uint64_t v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    const uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;  // strtoull's ERANGE
    v = v * 10 + d;
  }
  if (i == first || (i < s.size() && !is_space(s[i]))) return false;
  if (negative) {
    v = uint64_t{0} - v;
    if (static_cast<int64_t>(v) < 0) return false;
  } else if (static_cast<int64_t>(v) < 0 && s.find('-') != std::string_view::npos) {
    return false;  // safe_strtoull looks for a '-' anywhere in the string
  }
  out = v;
  return true;
}

// The value as one string: in memory, or read from its file (no lock held).
bool value_of(const get_result& r, std::string& out) {
  if (r.large) return r.large.read_all(out);
  out = r.value;
  return true;
}

}  // namespace

void store::set_rmw(std::string_view key, store_mode mode, std::span<const char> value, uint32_t flags,
                    const store_now& now, const store_options& opts, store_result& res) {
  // memcached reads an append's data into an item of its own (the command's key, flags
  // and data) and counts the set in that item's class once it has memory, stored or not
  // (complete_nread_ascii); the combined item it then makes is counted nowhere.
  class_stats_.add(classes_.item_class(key.size(), flags, value.size()), class_counter::cmd_set);
  get_options peek;
  peek.bump = false;
  get_result cur;
  std::string combined;
  for (;;) {
    get_impl(key, now, peek, cur, false);
    if (cur.status != get_status::Hit) {
      if (!opts.vivify) {
        res.status = store_status::NotStored;
        return;
      }
      // ms MA/MP N: the miss creates the item from this data (an add, so that an
      // item created meanwhile is appended to instead). A C on a miss does not stop
      // it, as in memcached 1.6.45.
      store_options o;
      o.explicit_cas = opts.explicit_cas;
      o.key_binary = opts.key_binary;
      o.internal = true;  // its set is counted above
      set(key, store_mode::Add, value, flags, opts.vivify_exptime, now, o, res);
      if (res.status != store_status::NotStored) return;
      continue;
    }
    // memcached -C ignores an append's CAS (its items have CAS 0, its compare none).
    if (opts.compare_cas && cfg_.cas_enabled && cur.cas != opts.compare_cas) {
      res.status = store_status::Exists;
      return;
    }
    if (!value_of(cur, combined)) {
      stats_.add(store_counter::large_value_errors);
      res.status = store_status::OutOfMemory;
      return;
    }
    if (mode == store_mode::Append)
      combined.append(value.data(), value.size());
    else
      combined.insert(0, value.data(), value.size());

    store_options o;
    o.compare_cas = cur.cas;
    o.explicit_cas = opts.explicit_cas;
    o.key_binary = opts.key_binary;
    o.keep_flags = o.keep_exptime = o.internal = true;
    set(key, store_mode::Cas, combined, 0, 0, now, o, res);
    // memcached: an append that would outgrow the item size limit fails to allocate
    // the combined item and answers NOT_STORED, not "too large".
    if (res.status == store_status::TooLarge) res.status = store_status::NotStored;
    if (res.status != store_status::Exists && res.status != store_status::NotFound) return;
    // Changed or removed between the read and the write: read again.
  }
}

// incr/decr (and ma with N, J, T, C) as a read-modify-write: read without
// counting (get_impl), compute as memcached does (incr wraps at 2^64, decr
// floors at 0, a shorter result padded with spaces), then a CAS store of the
// result; a writer in between makes it read again. [any thread; one bucket
// lock at a time, inside get_impl and set, never two] Retries only while
// other writers change the key between its read and its write.
void store::arithmetic(std::string_view key, arith_op op, uint64_t delta, const store_now& now,
                       const arith_options& opts, arith_result& res) {
  res.value = res.cas = 0;
  res.old_ttl = -1;
  res.vivified = false;
  if (key.empty() || key.size() > kKeyMax) {
    res.status = arith_status::BadKey;
    return;
  }
  const store_counter hits = op == arith_op::Incr ? store_counter::incr_hits : store_counter::decr_hits;
  const store_counter misses = op == arith_op::Incr ? store_counter::incr_misses : store_counter::decr_misses;
  get_options peek;
  peek.bump = false;
  get_result cur;
  std::string text;
  char digits[kMaxDigits + 1];
  for (;;) {
    get_impl(key, now, peek, cur, false);
    store_result sr;
    if (cur.status != get_status::Hit) {
      if (!opts.vivify) {
        stats_.add(misses);
        res.status = arith_status::NotFound;
        return;
      }
      // ma N: create with the initial value, returned as is (no delta applied).
      auto [end, ec] = std::to_chars(digits, digits + sizeof digits, opts.initial);
      (void)ec;
      store_options o;
      o.internal = true;
      o.explicit_cas = opts.explicit_cas;
      set(key, store_mode::Add, {digits, static_cast<size_t>(end - digits)}, 0, opts.vivify_exptime, now, o, sr);
      if (sr.status == store_status::NotStored) continue;  // someone created it meanwhile
      if (sr.status != store_status::Stored) {
        res.status = arith_status::OutOfMemory;
        return;
      }
      stats_.add(misses);
      res.status = arith_status::Ok;
      res.value = opts.initial;
      res.cas = sr.cas;
      res.vivified = true;
      return;
    }
    // memcached -C: the item's CAS is 0, so any CAS but 0 differs.
    if (opts.compare_cas && (!cfg_.cas_enabled || cur.cas != opts.compare_cas)) {
      res.status = arith_status::Exists;
      return;
    }
    uint64_t v;
    // A value kept in a file is far too long to be a number (memcached: a chunked item
    // is non-numeric).
    if (cur.large || !parse_u64(cur.value, v)) {
      res.status = arith_status::NonNumeric;
      return;
    }
    if (op == arith_op::Incr)
      v += delta;  // wraps modulo 2^64, as memcached
    else
      v = delta > v ? 0 : v - delta;  // floors at 0
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
    (void)ec;
    // memcached writes a number no longer than the old value over it in place, padded
    // with spaces to the old length ("100" decr 1 is "99 "); a longer one is stored as is.
    text.assign(digits, static_cast<size_t>(end - digits));
    if (text.size() < cur.value.size()) text.resize(cur.value.size(), ' ');
    store_options o;
    o.compare_cas = cur.cas;
    o.explicit_cas = opts.explicit_cas;
    o.keep_flags = o.internal = true;
    o.keep_exptime = !opts.touch;
    // memcached overwrites the old item when the number fits its length (no new item
    // for total_items); a longer one replaces it. Its in-place test also asks that no
    // other thread holds the item: a reader mid-reply there makes a new item, which
    // ithaca, whose readers copy small values, cannot tell; a bare race, not counted.
    o.in_place = text.size() == cur.value.size();
    set(key, store_mode::Cas, text, 0, opts.touch ? opts.exptime : 0, now, o, sr);
    if (sr.status == store_status::Exists || sr.status == store_status::NotFound)
      continue;  // raced with another writer: read again
    if (sr.status != store_status::Stored) {
      res.status = arith_status::OutOfMemory;
      return;
    }
    stats_.add(hits);
    class_stats_.add(classes_.item_class(key.size(), cur.flags, cur.value.size()),
                     op == arith_op::Incr ? class_counter::incr_hits : class_counter::decr_hits);
    res.status = arith_status::Ok;
    res.old_ttl = cur.ttl;
    res.value = v;
    res.cas = sr.cas;
    return;
  }
}

}  // namespace ithaca::store
