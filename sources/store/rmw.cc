// Read-modify-write operations: append, prepend, incr, decr.
//
// Each is a CAS loop: read the value and its CAS under the lock (copy only), build the new
// value with no lock held (this may allocate, or read a large value's file), then store it
// with "compare CAS, keep flags and exptime". A concurrent change makes the store answer
// Exists and the loop retries, so the result is as if done atomically under the lock, while
// the lock is never held across malloc or I/O.
#include <charconv>

#include "store.h"

namespace ithaca::store {

namespace {

constexpr size_t kMaxDigits = 20;

// memcached accepts an unsigned decimal of up to 20 digits that fits in 64 bits. We are
// stricter than strtoull on purpose: no sign, no leading or trailing blanks.
bool parse_u64(std::string_view s, uint64_t& out) noexcept
{
    if (s.empty() || s.size() > kMaxDigits)
        return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return false;
        const uint64_t d = static_cast<uint64_t>(c - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;  // does not fit: memcached's strtoull fails with ERANGE too
        v = v * 10 + d;
    }
    out = v;
    return true;
}

// The value as one string: in memory, or read from its file (no lock held).
bool value_of(const get_result& r, std::string& out)
{
    if (r.large)
        return r.large.read_all(out);
    out = r.value;
    return true;
}

}  // namespace

void store::set_rmw(std::string_view key, store_mode mode, std::span<const char> value,
                    const store_now& now, const store_options& opts, store_result& res)
{
    get_options peek;
    peek.bump = false;
    get_result cur;
    std::string combined;
    for (;;) {
        get_impl(key, now, peek, cur, false);
        if (cur.status != get_status::Hit) {
            res.status = store_status::NotStored;
            return;
        }
        if (opts.compare_cas && cur.cas != opts.compare_cas) {
            res.status = store_status::Exists;
            return;
        }
        if (!value_of(cur, combined)) {
            bump(stats_.large_value_errors);
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
        o.keep_flags = o.keep_exptime = o.internal = true;
        set(key, store_mode::Cas, combined, 0, 0, now, o, res);
        if (res.status != store_status::Exists && res.status != store_status::NotFound)
            return;
        // Changed or removed between the read and the write: read again.
    }
}

void store::arithmetic(std::string_view key, arith_op op, uint64_t delta, const store_now& now,
                       const arith_options& opts, arith_result& res)
{
    res.value = res.cas = 0;
    res.old_ttl = -1;
    res.vivified = false;
    if (key.empty() || key.size() > kKeyMax) {
        res.status = arith_status::BadKey;
        return;
    }
    auto& hits = op == arith_op::Incr ? stats_.incr_hits : stats_.decr_hits;
    auto& misses = op == arith_op::Incr ? stats_.incr_misses : stats_.decr_misses;
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
                bump(misses);
                res.status = arith_status::NotFound;
                return;
            }
            // ma N: create with the initial value, returned as is (no delta applied).
            auto [end, ec] = std::to_chars(digits, digits + sizeof digits, opts.initial);
            (void)ec;
            store_options o;
            o.internal = true;
            set(key, store_mode::Add, {digits, static_cast<size_t>(end - digits)}, 0,
                opts.vivify_exptime, now, o, sr);
            if (sr.status == store_status::NotStored)
                continue;  // someone created it meanwhile
            if (sr.status != store_status::Stored) {
                res.status = arith_status::OutOfMemory;
                return;
            }
            bump(misses);
            res.status = arith_status::Ok;
            res.value = opts.initial;
            res.cas = sr.cas;
            res.vivified = true;
            return;
        }
        if (opts.compare_cas && cur.cas != opts.compare_cas) {
            res.status = arith_status::Exists;
            return;
        }
        uint64_t v;
        if (cur.large ? cur.large->size() > kMaxDigits || !value_of(cur, text) || !parse_u64(text, v)
                      : !parse_u64(cur.value, v)) {
            res.status = arith_status::NonNumeric;
            return;
        }
        if (op == arith_op::Incr)
            v += delta;  // wraps modulo 2^64, as memcached
        else
            v = delta > v ? 0 : v - delta;  // floors at 0
        auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
        (void)ec;
        store_options o;
        o.compare_cas = cur.cas;
        o.keep_flags = o.internal = true;
        o.keep_exptime = !opts.touch;
        set(key, store_mode::Cas, {digits, static_cast<size_t>(end - digits)}, 0,
            opts.touch ? opts.exptime : 0, now, o, sr);
        if (sr.status == store_status::Exists || sr.status == store_status::NotFound)
            continue;  // raced with another writer: read again
        if (sr.status != store_status::Stored) {
            res.status = arith_status::OutOfMemory;
            return;
        }
        bump(hits);
        res.status = arith_status::Ok;
        res.old_ttl = cur.ttl;
        res.value = v;
        res.cas = sr.cas;
        return;
    }
}

}  // namespace ithaca::store
