// large_value: a value kept in an unlinked temporary file (yrmcds "large data").
//
// The file is written once, before the bucket lock is taken, and never changes afterwards
// (a new store makes a new file), so readers need no lock: a get takes a reference under the
// bucket lock and reads with pread() after unlocking. The file is closed, and its blocks
// freed, when the last reference goes; the store drops its reference outside the lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <utility>

namespace ithaca::store {

class large_value {
public:
    // Creates an unlinked file in dir (O_TMPFILE, or mkstemp + unlink) holding data.
    // Returns nullptr with errno set on failure. Does file I/O: never call under a lock.
    // The result has one reference.
    static large_value* create(const std::string& dir, std::string_view data) noexcept;

    // pread() of up to len bytes at offset; returns bytes read or -1 with errno.
    ssize_t read(uint64_t offset, char* buf, size_t len) const noexcept;

    uint64_t size() const noexcept { return size_; }

    // Reference counting; any thread, lock-free. unref() may close the file: no lock held.
    void ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    void unref() noexcept;

    // Total bytes held in live large-value files by the process (for stats).
    static uint64_t file_bytes() noexcept;

private:
    large_value(int fd, uint64_t size) noexcept : fd_(fd), size_(size) {}
    ~large_value();

    std::atomic<uint32_t> refs_{1};
    int fd_;
    uint64_t size_;
};

// Owning handle handed to callers of get(); copyable, move-cheap.
class large_value_ref {
public:
    large_value_ref() noexcept = default;
    // Adopts one existing reference.
    explicit large_value_ref(large_value* v) noexcept : v_(v) {}
    large_value_ref(const large_value_ref& o) noexcept : v_(o.v_) { if (v_) v_->ref(); }
    large_value_ref(large_value_ref&& o) noexcept : v_(std::exchange(o.v_, nullptr)) {}
    large_value_ref& operator=(large_value_ref o) noexcept { std::swap(v_, o.v_); return *this; }
    ~large_value_ref() { if (v_) v_->unref(); }

    explicit operator bool() const noexcept { return v_ != nullptr; }
    const large_value* operator->() const noexcept { return v_; }
    const large_value* get() const noexcept { return v_; }
    void reset() noexcept { large_value_ref().swap(*this); }
    void swap(large_value_ref& o) noexcept { std::swap(v_, o.v_); }

    // Reads the whole value into out (resizes it). False on I/O error.
    bool read_all(std::string& out) const;

private:
    large_value* v_ = nullptr;
};

}  // namespace ithaca::store
