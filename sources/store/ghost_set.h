// ghost_set: S3-FIFO's ghost queue, the hashes of the keys the small queue evicted lately
// (small_fifo.h). A store of a key found here goes straight to main: it was asked for again
// soon after it left, so it is not a one-hit wonder. Hashes only, no keys or values.
//
// A fixed table of 32-bit entries, set-associative: 16 entries (one cache line) per set,
// the set and a 24-bit fingerprint taken from the key's hash, the low 8 bits an epoch. The
// FIFO is a clock of insertions: every capacity/16 insertions the epoch advances, and an
// entry older than 16 epochs (about `capacity` insertions: as many hashes as main holds
// items, the size S3-FIFO gives its ghost) is gone. A full set gives its oldest entry's
// place to the new one. A fingerprint shared by two keys (a chance of about 16 in 2^24 per
// lookup) admits the other key to main: harmless.
//
// Lock-free: relaxed atomic loads, stores and one compare-exchange per hit; two threads
// inserting into one set at once may lose one hash (one key admitted to small instead of
// main). [any thread, under a bucket lock or not]
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ithaca::store {

class ghost_set {
 public:
  static constexpr unsigned kWays = 16;    // entries per set: one cache line
  static constexpr unsigned kEpochs = 16;  // an entry lives this many epochs

  // About `capacity` hashes (rounded up to a power of two, at least one set). Throws
  // bad_alloc.
  explicit ghost_set(size_t capacity);
  ~ghost_set();
  ghost_set(const ghost_set&) = delete;
  ghost_set& operator=(const ghost_set&) = delete;

  // Remembers a key's hash (store::hash_of) as evicted now.
  void insert(uint64_t hash) noexcept;
  // Whether the hash is remembered; it is forgotten then (one admission per eviction).
  bool take(uint64_t hash) noexcept;
  size_t capacity() const noexcept { return size_t{mask_ + 1} * kWays; }
  size_t bytes() const noexcept { return capacity() * sizeof(uint32_t); }

 private:
  uint32_t epoch_now() const noexcept;
  // The first slot of a hash's set.
  uint32_t* set_of(uint64_t hash) const noexcept;
  static std::atomic_ref<uint32_t> slot(uint32_t* set, unsigned way) noexcept { return std::atomic_ref(set[way]); }
  static uint32_t fingerprint(uint64_t hash) noexcept;
  static bool fresh(uint32_t entry, uint32_t epoch) noexcept {
    return entry != 0 && ((epoch - entry) & 0xFF) < kEpochs;
  }

  uint64_t mask_;       // sets - 1
  uint64_t epoch_len_;  // insertions per epoch
  // calloc'd: a page costs memory once an entry lands in it (a cache far from full, or
  // one that never evicts, keeps most of the table untouched). Plain words, only ever
  // reached through atomic_ref (as bucket_lock's).
  uint32_t* slots_;
  std::atomic<uint64_t> inserts_{0};
};

}  // namespace ithaca::store
