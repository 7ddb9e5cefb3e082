// A stream fed to a parser read by read, as a connection's buffer holds it:
// the bytes received and not yet consumed. They live in one heap block the
// size of the whole stream, and AddressSanitizer is told that only the
// window [consumed, received) may be touched (the rest is poisoned), so a
// parser that reads past what has arrived, or back into what it consumed, is
// caught at once, without a fresh copy of the buffer per call. (Poisoning
// is exact at the window's end; below its start ASan can only poison whole
// 8-byte granules.) Without ASan the poisoning compiles to nothing.
#pragma once

#include <sanitizer/asan_interface.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>

namespace ithaca::fuzz {

class stream_window {
 public:
  explicit stream_window(std::string_view stream) : size_(stream.size()), bytes_(new char[stream.size() + 1]) {
    if (!stream.empty()) std::memcpy(bytes_.get(), stream.data(), stream.size());
    ASAN_POISON_MEMORY_REGION(bytes_.get(), size_ + 1);
  }
  ~stream_window() { ASAN_UNPOISON_MEMORY_REGION(bytes_.get(), size_ + 1); }
  stream_window(const stream_window&) = delete;
  stream_window& operator=(const stream_window&) = delete;

  // What a parse call is given: received and not consumed.
  std::string_view view() const { return {bytes_.get() + begin_, end_ - begin_}; }
  bool all_received() const { return end_ == size_; }

  // One more read of up to n bytes arrives.
  void receive(std::size_t n) {
    n = std::min(n, size_ - end_);
    // Only the new bytes: a byte by byte feed stays linear.
    ASAN_UNPOISON_MEMORY_REGION(bytes_.get() + end_, n);
    end_ += n;
  }
  // The parser consumed n bytes from the front.
  void consume(std::size_t n) {
    ASAN_POISON_MEMORY_REGION(bytes_.get() + begin_, n);
    begin_ += n;
  }
  std::size_t consumed() const { return begin_; }

 private:
  std::size_t size_;
  std::unique_ptr<char[]> bytes_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace ithaca::fuzz
