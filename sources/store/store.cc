// store: construction, lookup helpers, get / set / remove / touch / flush_all.
// Read-modify-write operations are in rmw.cc; the GC, inline eviction and scan in gc.cc.
#include "store.h"

#include <new>
#include <type_traits>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <random>

#include "hash.h"

namespace ithaca::store {

namespace {

bool valid_key(std::string_view key) noexcept
{
    return !key.empty() && key.size() <= kKeyMax;
}

// The class table counts an item's CAS as the store keeps it for clients (memcached -C).
slab_class_config classes_of(const store_config& cfg) noexcept
{
    slab_class_config c = cfg.slab_classes;
    c.cas = cfg.cas_enabled;
    return c;
}

uint64_t round_up_pow2(uint64_t n) noexcept
{
    uint64_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

}  // namespace

store::store(const store_config& cfg) : store(cfg, nullptr)
{
    // Last, so errno still says why when the file could not be made (instance.cc logs it).
    arena_ = large_arena::open(cfg.temp_dir, cfg.large_value_disk_limit);
}

store::store(const store_config& cfg, std::shared_ptr<large_arena> arena)
    : cfg_(cfg),
      memory_limit_(cfg.memory_limit),
      item_size_max_(cfg.item_size_max),
      large_value_threshold_(cfg.large_value_threshold),
      lease_interval_ms_(cfg.lease_interval_ms),
      evictions_(cfg.evictions),
      table_(round_up_pow2(std::max<uint64_t>(cfg.bucket_count, 1)), cfg.large_pages),
      classes_(classes_of(cfg))
{
    cfg_.bucket_count = table_.bucket_count();
    std::random_device rd;
    seed_ = (uint64_t{rd()} << 32) ^ rd();
    lease_counter_.store((uint64_t{rd()} << 32) ^ rd());
    arena_ = std::move(arena);
    if (arena_)
        arena_->set_limit(cfg.large_value_disk_limit);
}

void store::set_large_value_disk_limit(uint64_t bytes) noexcept
{
    if (arena_)
        arena_->set_limit(bytes);
}

uint64_t store::large_value_disk_limit() const noexcept
{
    return arena_ ? arena_->limit() : cfg_.large_value_disk_limit;
}

uint64_t store::large_value_disk_used() const noexcept
{
    return arena_ ? arena_->used() : 0;
}

// Bounded: a few rounds of sampled eviction, each followed by one more try. Fragmentation
// can make an extent not fit although the budget has room by size; eviction goes on then.
large_value* store::create_large(std::span<const char> value) noexcept
{
    constexpr int kTries = 4;
    if (!arena_)
        return nullptr;
    for (int i = 0; i < kTries; ++i) {
        large_value* lv = large_value::create(*arena_, {value.data(), value.size()});
        if (lv || errno != ENOSPC)
            return lv;
        // Ask for a little more than the value's size each time, to get past fragments.
        if (!evictions() || (!evict_large_inline(value.size() << i) && i > 0))
            break;  // memcached -M: no room is an error, not an eviction
    }
    return nullptr;
}

store::~store()
{
    // No other thread may use the store any more.
    table_.drain([](item* it) { item_free(it); });
}

uint64_t store::hash_of(std::string_view key) const noexcept
{
    return hash_key(key, seed_);
}

// Under table_.lock_of(h).
void store::link_first(uint64_t h, item* it) noexcept
{
    item** head = table_.head_of(h);
    it->next_ = *head;
    *head = it;
}

bool store::in_bucket(const item* it, uint64_t b, const hash_table::chain& c) const noexcept
{
    return !c.shared || (hash_of(it->key()) & c.mask) == b;
}

bool store::grow_step(uint64_t buckets) noexcept
{
    auto start = [this] {
        const uint64_t items = stats_.count(store_counter::curr_items);
        return items > table_.bucket_count() / 2 * 3 && table_.start_growth();
    };
    if (!table_.growing() && !start())
        return false;
    if (!table_.migrate(buckets, [this](const item* it) { return hash_of(it->key()); }))
        return true;
    return start();  // this doubling is done: the next one, if the items still ask for it
}

store::table_shape store::table_now() const noexcept
{
    return {static_cast<unsigned>(std::countr_zero(table_.bucket_count())), table_.bytes(), table_.growing()};
}

void store::prefetch(std::span<const std::string_view> keys) const noexcept
{
    constexpr size_t kMax = 64;
    uint64_t hashes[kMax];
    const size_t n = std::min(keys.size(), kMax);
    for (size_t i = 0; i < n; i++) {
        hashes[i] = hash_of(keys[i]);
        table_.prefetch(hashes[i]);
    }
    for (size_t i = 0; i < n; i++) {
        // The head as it is now: racing writers may change it (benign, a hint only).
        const item* it = table_.peek_head(hashes[i]);
        if (!it)
            continue;
        // Header and key, and with them a small value (an item needs not start on a line).
        const char* p = reinterpret_cast<const char*>(it);
        __builtin_prefetch(p);
        __builtin_prefetch(p + 64);
        __builtin_prefetch(p + 128);
    }
}

// Under table_.lock_of(h).
item** store::find_link(uint64_t h, std::string_view key) noexcept
{
    item** link = table_.head_of(h);
    while (*link) {
        const item* it = *link;
        if (it->key_len_ == key.size() && std::memcmp(it->key_data(), key.data(), key.size()) == 0)
            return link;
        link = &(*link)->next_;
    }
    return link;
}

// Under the item's bucket lock.
bool store::invalid(const item* it, uint32_t sec, remove_reason& why) const noexcept
{
    if (deadline_passed(it->deadline_, sec) && (it->is_placeholder() || !expiry_by_master())) {
        why = remove_reason::Expired;
        return true;
    }
    if (it->is_placeholder())
        return false;  // cas_ is a lease token, not subject to flush_all
    if (it->cas_ <= oldest_cas_.load(std::memory_order_relaxed)) {
        why = remove_reason::Flushed;
        return true;
    }
    const uint32_t ol = oldest_live_.load(std::memory_order_relaxed);
    if (ol != 0 && ol <= sec && it->stime_ <= ol) {
        why = remove_reason::Flushed;
        return true;
    }
    return false;
}

// Under the item's bucket lock.
bool store::hidden_expired(const item* it, uint32_t sec) const noexcept
{
    return !it->is_placeholder() && deadline_passed(it->deadline_, sec) && expiry_by_master();
}

// memcached's reclaimed and expired_unfetched counts of an invalid item about
// to be unlinked, store-wide and per class. [under its bucket lock]
void store::count_reclaimed(const item* it, remove_reason why) noexcept
{
    stats_.add(store_counter::reclaimed);
    class_count(it, class_counter::reclaimed);
    if (why == remove_reason::Expired && !(it->bits_ & kFetched)) {
        stats_.add(store_counter::expired_unfetched);
        class_count(it, class_counter::expired_unfetched);
    }
}

// Under the item's bucket lock: unlinks *link, notifies, hands it to rl for freeing.
item* store::find_valid(uint64_t h, std::string_view key, uint32_t sec, reclaim_list& rl,
                        item**& link, bool reclaim) noexcept
{
    link = find_link(h, key);
    item* it = *link;
    remove_reason why;
    if (it && invalid(it, sec, why)) {
        if (reclaim && !it->is_placeholder()) count_reclaimed(it, why);
        unlink(link, rl, why);
        return nullptr;
    }
    return it;
}

void store::unlink(item** link, reclaim_list& rl, remove_reason why) noexcept
{
    item* it = *link;
    *link = it->next_;
    if (it->is_placeholder()) {
        stats_.add(store_counter::lease_placeholders, -1);
    } else {
        stats_.add(store_counter::curr_items, -1);
        class_unlink(it);
        if (observer_)
            observer_->on_remove(it->key(), why);
    }
    rl.add(it);
}

// Under the item's bucket lock.
void store::notify_store(const item* it) noexcept
{
    if (!observer_ || it->is_placeholder())
        return;
    item_view v{it->key(), it->flags_, it->deadline_, it->cas_,
                it->is_large() ? std::string_view{} : it->value(),
                it->is_large() ? it->large() : nullptr};
    observer_->on_store(v);
}

// Under the item's bucket lock.
void store::notify_touch(const item* it) noexcept
{
    if (!observer_ || it->is_placeholder())
        return;
    observer_->on_touch(item_view{it->key(), it->flags_, it->deadline_, it->cas_, {}, nullptr});
}

unsigned store::class_of(const item* it) const noexcept
{
    return classes_.item_class(it->key_len_, it->flags_, it->data_size());
}

// Under the item's bucket lock, as it is linked: its flags and value are final.
void store::class_link(item* it) noexcept
{
    const uint64_t total = classes_.item_total(it->key_len_, it->flags_, it->data_size());
    const unsigned cls = classes_.class_for(total);
    it->slab_class_ = static_cast<uint8_t>(cls);
    class_account(it, cls, total, 1);
}

// Under the item's bucket lock, as it is unlinked (or replaced).
void store::class_unlink(const item* it) noexcept
{
    const uint64_t total = classes_.item_total(it->key_len_, it->flags_, it->data_size());
    class_account(it, it->slab_class_, total, -1);
}

// The per-class counts an item adds (sign 1) or takes back (-1). An item that fits one
// chunk uses one chunk of its own class, found without a second class search (a set
// links one item and unlinks another; class_for was 0.6% of the pipelined set row).
void store::class_account(const item* it, unsigned cls, uint64_t total, int64_t sign) noexcept
{
    class_stats_.add(cls, class_counter::number, sign);
    class_stats_.add(cls, class_counter::mem_requested, sign * static_cast<int64_t>(total));
    if (total <= classes_.chunk_max()) {
        class_stats_.add(cls, class_counter::used_chunks, sign);
        if (sign > 0)
            class_stats_.mark_seen(cls);
        return;
    }
    slab_classes::chunk_list chunks;
    const size_t n = classes_.chunks(it->key_len_, it->flags_, it->data_size(), chunks);
    for (size_t i = 0; i < n; ++i) {
        class_stats_.add(chunks[i].id, class_counter::used_chunks, sign * int64_t{chunks[i].count});
        if (sign > 0)
            class_stats_.mark_seen(chunks[i].id);
    }
}

uint64_t store::next_cas() noexcept
{
    return cas_counter_.fetch_add(1, std::memory_order_relaxed) + 1;
}

// Tokens 0, 1 and 2 mean "none", "wait" and "hot miss" to mcrouter clients: never issue them.
uint64_t store::next_lease_token() noexcept
{
    for (;;) {
        uint64_t t = lease_counter_.fetch_add(1, std::memory_order_relaxed);
        if (t > 2)
            return t;
    }
}

// Not under any lock. The item's flags are set (they choose its class for outofmemory).
bool store::charge(item* it) noexcept
{
    const int64_t n = static_cast<int64_t>(item_mem(it));
    const int64_t total = stats_.bytes.fetch_add(n, std::memory_order_relaxed) + n;
    if (static_cast<uint64_t>(total) <= memory_limit() || (evictions() ? evict_inline() : reclaim_inline()))
        return true;
    stats_.bytes.fetch_sub(n, std::memory_order_relaxed);
    stats_.add(store_counter::out_of_memory);
    if (!it->is_placeholder())
        class_stats_.add(class_of(it), class_counter::outofmemory);
    return false;
}

// Not under any lock.
item* store::alloc_charged(std::string_view key, size_t value_len, uint32_t flags) noexcept
{
    item* it = item_alloc(key, value_len);
    if (!it) {
        stats_.add(store_counter::out_of_memory);
        class_stats_.add(classes_.item_class(key.size(), flags, value_len),
                         class_counter::outofmemory);
        return nullptr;
    }
    it->flags_ = flags;
    if (!charge(it)) {
        item_free(it);
        return nullptr;
    }
    return it;
}

void store::get(std::string_view key, const store_now& now, const get_options& opts,
                get_result& res)
{
    get_impl(key, now, opts, res, opts.count);
    if (!opts.item_cas)
        res.cas = client_cas(res.cas);
}

// The one lookup behind every read (get, gets, gat, mg, lease-get, and the
// read of a read-modify-write with count = false): under the key's bucket
// lock it unlinks an expired or flushed item, hides one kept for the master,
// pins a hit's item (opts.pin: res.pinned, read after the lock) or copies its
// value into res.value (retrying after growing the buffer
// outside the lock rather than allocating under it), applies touch, recache
// (W/X/Z), vivify or a lease placeholder (allocated before the lock, freed
// after it if unused), and resets the item's CLOCK counter (opts.bump). [any thread; exactly one
// bucket lock at a time, no allocation, I/O or suspension under it; a large
// value is returned as a ref to read after the call] Loops only to retry
// after such a growth or allocation.
void store::get_impl(std::string_view key, const store_now& now, const get_options& opts,
                     get_result& res, bool count)
{
    res.status = get_status::Miss;
    res.flags = 0;
    res.cas = 0;
    res.ttl = -1;
    res.last_access = 0;
    res.fetched_before = res.win = res.stale = res.win_sent = res.vivified = false;
    res.key_binary = false;
    res.lease_token = 0;
    res.value_size = 0;
    res.value.clear();  // keeps capacity
    res.large.reset();
    res.pinned.reset();  // a previous call's pin (may free the item: before the lock)
    if (!valid_key(key)) {
        res.status = get_status::BadKey;
        return;
    }
    const uint32_t sec = server_sec(now);
    const uint64_t h = hash_of(key);
    item* spare = nullptr;  // allocated outside the lock for vivify / lease placeholders
    bool counted_expiry = false;
    unsigned hit_class = 0;  // the class of the item hit, for the per-class counts

    for (;;) {
        size_t need_capacity = 0;
        bool need_spare = false;
        {
            reclaim_list rl(stats_.bytes);
            bucket_guard guard(table_.lock_of(h));
            item** link = find_link(h, key);
            item* it = *link;
            remove_reason why;
            if (it && invalid(it, sec, why)) {
                if (count && !it->is_placeholder() && !counted_expiry) {
                    stats_.add(why == remove_reason::Expired ? store_counter::get_expired : store_counter::get_flushed);
                    counted_expiry = true;
                }
                unlink(link, rl, why);
                it = nullptr;
            }
            bool hidden = false;  // past its deadline here, kept for the master's word
            if (it && hidden_expired(it, sec)) {
                if (count && !counted_expiry) {
                    stats_.add(store_counter::get_expired);
                    counted_expiry = true;
                }
                hidden = true;
                it = nullptr;
            }
            if (hidden) {
                // A miss; nothing is created over the kept item (a slave takes no writes).
            } else if (it && !it->is_placeholder()) {
                const bool pin = opts.want_value && opts.pin && !it->is_large() &&
                                 it->value_len_ > opts.copy_at_most;
                if (opts.want_value && !pin && !it->is_large() &&
                    it->value_len_ > res.value.capacity()) {
                    // Growing the string would malloc under the lock: do it outside, retry.
                    need_capacity = it->value_len_;
                } else {
                    res.status = get_status::Hit;
                    hit_class = it->slab_class_;
                    if (opts.touch) {
                        it->deadline_ = to_deadline(opts.exptime, now);
                        notify_touch(it);
                    }
                    res.flags = it->flags_;
                    res.cas = it->cas_;
                    res.ttl = ttl_remaining(it->deadline_, sec);
                    res.last_access = sec > it->atime_ ? sec - it->atime_ : 0;
                    res.fetched_before = it->bits_ & kFetched;
                    res.key_binary = it->bits_ & kKeyBinary;
                    res.value_size = it->data_size();
                    if (pin) {
                        // No copy under the lock: the caller reads the item itself.
                        item_pin(it);
                        res.pinned = item_ref(it, &stats_.bytes);
                    } else if (opts.want_value) {
                        if (it->is_large()) {
                            it->large()->ref();
                            res.large = large_value_ref(it->large());
                        } else {
                            res.value.resize(it->value_len_);  // within capacity: memcpy only
                            std::memcpy(res.value.data(), it->value_data(), it->value_len_);
                        }
                    }
                    if (it->bits_ & kStale) {
                        res.stale = true;
                        if (it->bits_ & kWinSent) {
                            res.win_sent = true;
                        } else {
                            res.win = true;
                            it->bits_ |= kWinSent;
                        }
                    } else if (it->bits_ & kWinSent) {
                        res.win_sent = true;
                    } else if (opts.recache_threshold && it->deadline_ != kNever &&
                               res.ttl < int64_t{opts.recache_threshold}) {
                        res.win = true;
                        it->bits_ |= kWinSent;
                    }
                    if (opts.bump) {
                        it->clock_ = 0;
                        it->atime_ = sec;
                        it->bits_ |= kFetched;
                    }
                }
            } else if (opts.lease) {
                if (it) {  // a live placeholder: a token is out
                    // Each worker's clock is its loop's cached snapshot, so a token issued on
                    // another worker may carry a later time than ours: that is a fresh token
                    // (waiting), never a negative age wrapped to a huge one.
                    const uint64_t issued = it->lease_issued_ms();
                    if (now.ms < issued ||
                        now.ms - issued < lease_interval_ms_.load(std::memory_order_relaxed)) {
                        res.status = get_status::LeaseWait;
                    } else {
                        it->cas_ = next_lease_token();
                        it->set_lease_issued_ms(now.ms);
                        it->deadline_ = server_sec(now) + cfg_.lease_ttl_sec;
                        res.status = get_status::LeaseToken;
                        res.lease_token = it->cas_;
                    }
                } else if (!spare) {
                    need_spare = true;
                } else {
                    spare->bits_ = kPlaceholder;
                    spare->cas_ = next_lease_token();
                    spare->set_lease_issued_ms(now.ms);
                    spare->deadline_ = sec + cfg_.lease_ttl_sec;
                    spare->stime_ = spare->atime_ = sec;
                    link_first(h, spare);
                    stats_.add(store_counter::lease_placeholders);
                    res.status = get_status::LeaseToken;
                    res.lease_token = spare->cas_;
                    spare = nullptr;
                }
            } else if (opts.vivify && !it) {
                if (!spare) {
                    need_spare = true;
                } else {
                    spare->deadline_ = to_deadline(opts.vivify_exptime, now);
                    spare->cas_ = new_cas(opts.vivify_cas);
                    spare->stime_ = spare->atime_ = sec;
                    // This caller wins; later readers see Z.
                    spare->bits_ = static_cast<uint8_t>(kWinSent | (opts.vivify_key_binary ? kKeyBinary : 0));
                    link_first(h, spare);
                    stats_.add(store_counter::curr_items);
                    stats_.add(store_counter::total_items);
                    class_link(spare);
                    notify_store(spare);
                    res.vivified = res.win = true;
                    res.key_binary = opts.vivify_key_binary;
                    res.cas = spare->cas_;
                    res.ttl = ttl_remaining(spare->deadline_, sec);
                    spare = nullptr;
                }
            }
        }
        if (need_capacity) {
            res.value.reserve(need_capacity);
            continue;
        }
        if (need_spare) {
            spare = alloc_charged(key, opts.lease ? sizeof(uint64_t) : 0);
            if (spare)
                continue;
            // Out of memory for a placeholder: a plain miss.
        }
        break;
    }
    if (spare) {
        reclaim_list rl(stats_.bytes);
        rl.add(spare);
    }
    if (count && opts.count_as_touch) {
        stats_.add(res.status == get_status::Hit ? store_counter::touch_hits : store_counter::touch_misses);
        if (res.status == get_status::Hit)
            class_stats_.add(hit_class, class_counter::touch_hits);
    } else if (count) {
        switch (res.status) {
        case get_status::Hit:
            stats_.add(store_counter::get_hits);
            class_stats_.add(hit_class, class_counter::get_hits);
            break;
        case get_status::LeaseToken: stats_.add(store_counter::lease_tokens); stats_.add(store_counter::get_misses); break;
        case get_status::LeaseWait: stats_.add(store_counter::lease_waits); stats_.add(store_counter::get_misses); break;
        default: stats_.add(store_counter::get_misses); break;
        }
    }
}

// See store.h for the contract. The item, and a large value's file extent,
// are made before the lock; under it only the mode/CAS/lease checks, the
// relink and the observer's record; the replaced item is freed after it
// (reclaim_list). [any thread; one bucket lock]
void store::set(std::string_view key, store_mode mode, std::span<const char> value,
                uint32_t flags, int64_t exptime, const store_now& now, const store_options& opts,
                store_result& res)
{
    res.cas = 0;
    res.value_size = 0;
    if (!valid_key(key)) {
        res.status = store_status::BadKey;
        return;
    }
    if (mode == store_mode::Append || mode == store_mode::Prepend) {
        set_rmw(key, mode, value, flags, now, opts, res);
        return;
    }
    if (sizeof(item) + key.size() + value.size() > item_size_max()) {
        res.status = store_status::TooLarge;
        return;
    }

    // Build the whole item (and write its file) before taking the lock.
    item* it = nullptr;
    const uint64_t large_threshold = large_value_threshold_.load(std::memory_order_relaxed);
    if (large_threshold && value.size() > large_threshold) {
        large_value* lv = create_large(value);
        if (!lv) {
            stats_.add(store_counter::large_value_errors);
            res.status = store_status::OutOfMemory;
            return;
        }
        it = item_alloc_large(key, lv);
        if (it)
            it->flags_ = flags;
        if (!it) {
            lv->unref();
        } else if (!charge(it)) {
            item_free(it);
            it = nullptr;
        } else {
            stats_.add(store_counter::large_values);
        }
    } else {
        it = alloc_charged(key, value.size(), flags);
        if (it && !value.empty())
            std::memcpy(it->value_data(), value.data(), value.size());
    }
    if (!it) {
        res.status = store_status::OutOfMemory;
        return;
    }
    it->flags_ = flags;
    const uint32_t sec = server_sec(now);
    const uint32_t deadline = to_deadline(exptime, now);
    const bool compare = mode == store_mode::Cas ||
                         (opts.compare_cas != 0 && mode != store_mode::Add);
    const uint64_t h = hash_of(key);

    reclaim_list rl(stats_.bytes);
    {
        bucket_guard guard(table_.lock_of(h));
        item** link;
        item* old = find_valid(h, key, sec, rl, link, true);
        // An item kept past its deadline for the master (expiry_by_master) is replaced, but
        // is not live: an add may store over it.
        item* live = old && !old->is_placeholder() && !hidden_expired(old, sec) ? old : nullptr;
        bool stale_store = false;
        res.status = store_status::Stored;
        if (opts.lease_token != 0 && (!old || !old->is_placeholder() || old->cas_ != opts.lease_token)) {
            // The token was invalidated by a delete or a set since it was issued.
            res.status = store_status::NotStored;
        } else if (mode == store_mode::Add && live) {
            res.status = store_status::NotStored;
        } else if (mode == store_mode::Replace && !live) {
            res.status = store_status::NotStored;
        } else if (compare) {
            if (!live)
                res.status = store_status::NotFound;
            else if (!cfg_.cas_enabled && !opts.internal && !opts.item_cas)
                res.status = store_status::Exists;  // memcached -C: a cas store never matches
            else if (live->cas_ != opts.compare_cas) {
                if (opts.invalidate && opts.compare_cas < live->cas_)
                    stale_store = true;  // meta I: an older writer stores, marked stale
                else
                    res.status = store_status::Exists;
            }
        }
        // memcached counts a cas's per-class hit or bad value in the stored item's class,
        // and every set that got memory (stored or not) in the new item's.
        if (!opts.internal)
            class_stats_.add(class_of(it), class_counter::cmd_set);
        if (mode == store_mode::Cas && !opts.internal) {
            switch (res.status) {
            case store_status::Stored:
                stats_.add(store_counter::cas_hits);
                class_count(live, class_counter::cas_hits);
                break;
            case store_status::Exists:
                stats_.add(store_counter::cas_badval);
                class_count(live, class_counter::cas_badval);
                break;
            case store_status::NotFound: stats_.add(store_counter::cas_misses); break;
            default: break;
            }
        }
        if (res.status != store_status::Stored) {
            rl.add(it);
            return;
        }
        it->cas_ = new_cas(opts.explicit_cas);
        it->deadline_ = deadline;
        if (live && (opts.keep_exptime || stale_store))
            it->deadline_ = live->deadline_;
        if (live && opts.keep_flags)
            it->flags_ = live->flags_;
        if (stale_store)
            it->bits_ |= kStale | (live->bits_ & kWinSent);
        if (opts.key_binary || (live && opts.internal && (live->bits_ & kKeyBinary)))
            it->bits_ |= kKeyBinary;
        it->stime_ = it->atime_ = sec;
        res.cas = client_cas(it->cas_);
        res.value_size = it->data_size();
        if (!opts.in_place)
            stats_.add(store_counter::total_items);
        if (it->deadline_ == kExpiredNow && !expiry_by_master()) {
            // Stored and at once invisible (memcached semantics): drop the old one instead.
            // (Following a master, it is kept hidden: a Touch may revive it.)
            if (old)
                unlink(link, rl, remove_reason::Deleted);
            rl.add(it);
            return;
        }
        if (old) {
            it->next_ = old->next_;
            *link = it;
            if (old->is_placeholder()) {
                stats_.add(store_counter::lease_placeholders, -1);
            } else {
                stats_.add(store_counter::curr_items, -1);
                class_unlink(old);
            }
            rl.add(old);
        } else {
            link_first(h, it);
        }
        stats_.add(store_counter::curr_items);
        class_link(it);
        notify_store(it);
    }
}

// delete / md (the contract is in store.h): one bucket lock; what is
// unlinked is freed by the reclaim list after the unlock.
remove_status store::remove(std::string_view key, const store_now& now,
                            const remove_options& opts)
{
    if (!valid_key(key))
        return remove_status::BadKey;
    const uint32_t sec = server_sec(now);
    const uint64_t h = hash_of(key);
    remove_status st = remove_status::NotFound;
    // A client's CAS against the item's (memcached -C: against 0, so any but 0 differs).
    auto mismatch = [&](const item* it) {
        return opts.compare_cas != 0 && (!cfg_.cas_enabled || it->cas_ != opts.compare_cas);
    };
    // md x: the emptied item, allocated before the lock (malloc is never called under it).
    item* empty = nullptr;
    if (opts.remove_value) {
        empty = alloc_charged(key, 0);
        if (!empty)
            return remove_status::OutOfMemory;
    }
    {
        reclaim_list rl(stats_.bytes);
        bucket_guard guard(table_.lock_of(h));
        item** link;
        item* it = find_valid(h, key, sec, rl, link);
        if (it && !it->is_placeholder() && !mismatch(it))
            class_count(it, class_counter::delete_hits);
        if (it && it->is_placeholder()) {
            unlink(link, rl, remove_reason::Deleted);  // invalidates the outstanding lease
            it = nullptr;
        }
        if (!it) {
            st = remove_status::NotFound;
        } else if (mismatch(it)) {
            st = remove_status::Exists;
        } else if (opts.remove_value || opts.invalidate) {
            if (opts.remove_value) {
                // md x: the same key with an empty value takes the item's place, keeping
                // its CAS (or E's); as memcached 1.6.45, flags F and exptime T are the new
                // item's, not the old one's.
                empty->flags_ = opts.flags;
                empty->deadline_ = opts.touch ? to_deadline(opts.exptime, now) : kNever;
                empty->cas_ = opts.explicit_cas && cfg_.cas_enabled ? opts.explicit_cas : it->cas_;
                empty->stime_ = empty->atime_ = sec;
                empty->bits_ = static_cast<uint8_t>(it->bits_ & kKeyBinary);
                empty->next_ = it->next_;
                *link = empty;
                // The emptied item takes the old one's place in its class counts too
                // (it may change class: its value is gone).
                class_unlink(it);
                class_link(empty);
                rl.add(it);
                stats_.add(store_counter::total_items);
                it = empty;
                empty = nullptr;
            }
            if (opts.invalidate) {
                // md I: keep the value, serve it as stale (X) and let one reader win (W).
                it->bits_ = static_cast<uint8_t>((it->bits_ | kStale) & ~kWinSent);
                it->cas_ = new_cas(opts.explicit_cas);
                if (opts.touch)
                    it->deadline_ = to_deadline(opts.exptime, now);
            }
            notify_store(it);
            st = remove_status::Deleted;
        } else {
            unlink(link, rl, remove_reason::Deleted);
            st = remove_status::Deleted;
        }
        if (empty)
            rl.add(empty);  // not used (a miss or a CAS mismatch)
    }
    if (st == remove_status::Deleted)
        stats_.add(store_counter::delete_hits);
    else if (st == remove_status::NotFound)
        stats_.add(store_counter::delete_misses);
    return st;
}

touch_status store::touch(std::string_view key, int64_t exptime, const store_now& now)
{
    if (!valid_key(key))
        return touch_status::BadKey;
    const uint32_t sec = server_sec(now);
    const uint64_t h = hash_of(key);
    touch_status st = touch_status::NotFound;
    {
        reclaim_list rl(stats_.bytes);
        bucket_guard guard(table_.lock_of(h));
        item** link;
        item* it = find_valid(h, key, sec, rl, link);
        if (it && !it->is_placeholder()) {
            it->deadline_ = to_deadline(exptime, now);
            it->clock_ = 0;
            it->atime_ = sec;
            notify_touch(it);
            class_count(it, class_counter::touch_hits);
            st = touch_status::Touched;
        }
    }
    stats_.add(st == touch_status::Touched ? store_counter::touch_hits : store_counter::touch_misses);
    return st;
}

void store::flush_all(const store_now& now, int64_t delay)
{
    if (delay <= 0) {
        // Everything stored so far has a CAS at most the counter's current value.
        oldest_cas_.store(cas_counter_.load(std::memory_order_relaxed), std::memory_order_relaxed);
        return;
    }
    oldest_live_.store(server_sec(now) + static_cast<uint32_t>(std::min<int64_t>(delay, kMaxRelativeExptime)),
                       std::memory_order_relaxed);
}

}  // namespace ithaca::store
