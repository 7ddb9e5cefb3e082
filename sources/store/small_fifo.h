// small_fifo: S3-FIFO's small queue (store.h, eviction_policy::s3fifo): the items admitted
// since they were stored, oldest first. An item in it has kSmall set (item.h); when it
// reaches the queue's end the store moves it to main (it was read while in the queue) or
// evicts it and remembers its hash in the ghost set (ghost_set.h).
//
// Sharded: kShards rings of {item pointer, key hash}, each under its own one-byte spin
// lock, a shard chosen by the key's hash on push and round-robin on pop. So pops take the
// oldest entry of each shard in turn: the whole is a FIFO to within a shard's share, and
// concurrent stores (one push each) rarely meet on a lock. A shard's lock is held for a
// few loads and stores, never together with a bucket lock (the store pushes after its
// bucket lock is released, and looks a popped entry up under the bucket lock after this
// one is released): lock order, never two at once.
//
// An entry is a pointer the queue never follows: the item may have been replaced, deleted
// or freed since it was pushed. Its reader takes the bucket lock of the hash and looks for
// that pointer, still with kSmall, in the chain; a miss is a stale entry, dropped. (A
// block freed and reused by a new small item of the same bucket gets that item handled a
// little early: harmless, it has its own entry too.)
//
// The rings are allocated once (calloc: a page costs memory when the ring first reaches
// it) and never grow: a push into a full shard hands back the shard's oldest entry for
// the caller to settle (the store moves that item to main), so the queue's count is bounded
// by its capacity and its bytes by the store's small share, whichever comes first.
// [any thread]
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "bucket_lock.h"
#include "item.h"

namespace ithaca::store {

class small_fifo {
 public:
  struct entry {
    item* it = nullptr;  // identity only: never followed without the bucket lock
    uint64_t hash = 0;   // the key's hash (store::hash_of): its bucket and lock
  };
  static constexpr unsigned kShards = 16;

  // Room for about `capacity` entries in all (at least one per shard). Throws bad_alloc.
  explicit small_fifo(size_t capacity);
  ~small_fifo();
  small_fifo(const small_fifo&) = delete;
  small_fifo& operator=(const small_fifo&) = delete;

  // Appends `e` to its shard. If the shard was full its oldest entry is taken out to make
  // room, copied to `evicted`, and true returned: the caller settles it (no lock held).
  bool push(const entry& e, entry& evicted) noexcept;
  // Takes the oldest entry of the next non-empty shard (round-robin). False if all are
  // empty.
  bool pop(entry& out) noexcept;
  // Entries queued now, stale ones included. [relaxed: a hint]
  size_t size() const noexcept;
  size_t capacity() const noexcept { return size_t{per_shard_} * kShards; }
  // Bytes of the rings (what the queue costs besides the items).
  size_t bytes() const noexcept { return capacity() * sizeof(entry); }

 private:
  struct alignas(64) shard {
    bucket_lock lock;
    uint32_t head = 0;               // the oldest entry's slot
    std::atomic<uint32_t> count{0};  // entries held [written under lock; read relaxed by size()]
    entry* ring = nullptr;           // per_shard_ slots
  };
  uint32_t per_shard_;
  std::unique_ptr<shard[]> shards_;
  std::atomic<uint32_t> pop_cursor_{0};
};

}  // namespace ithaca::store
