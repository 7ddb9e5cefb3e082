#pragma once
// A list of keys for one request. Multi-key gets are common but short, so the
// first kInline keys live inside the request (no allocation on the hot path);
// a longer list spills to a std::vector that keeps its capacity across
// requests when the request object is reused by the connection.

#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

namespace ithaca::protocol {

class key_list {
 public:
  static constexpr std::size_t kInline = 24;

  void clear() {
    size_ = 0;
    spill_.clear();
  }

  void push_back(std::string_view key) {
    if (size_ < kInline) {
      inline_[size_] = key;
    } else {
      spill_.push_back(key);
    }
    ++size_;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  std::string_view operator[](std::size_t i) const { return i < kInline ? inline_[i] : spill_[i - kInline]; }

  std::string_view front() const { return (*this)[0]; }

  // Replaces key i (used when a meta key is base64-decoded into scratch).
  void set(std::size_t i, std::string_view key) {
    if (i < kInline) {
      inline_[i] = key;
    } else {
      spill_[i - kInline] = key;
    }
  }

 private:
  std::array<std::string_view, kInline> inline_{};
  std::vector<std::string_view> spill_;
  std::size_t size_ = 0;
};

}  // namespace ithaca::protocol
