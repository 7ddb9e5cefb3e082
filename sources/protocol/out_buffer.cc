#include "out_buffer.h"

#include <memory>

namespace ithaca::protocol {

void out_buffer::open_tail(std::size_t n) {
  if (n > cap_ - len_) {
    std::size_t cap = cap_ < 4096 ? 4096 : cap_;
    while (cap - len_ < n) cap *= 2;
    auto grown = std::make_unique_for_overwrite<char[]>(cap);
    if (len_ != 0) std::memcpy(grown.get(), buf_.get(), len_);
    buf_ = std::move(grown);
    cap_ = cap;
  }
  if (!tail_open_) {
    segment s;
    s.offset = len_;
    segments_.push_back(std::move(s));
    tail_open_ = true;
  }
}

void out_buffer::append_slow(std::string_view bytes) {
  if (bytes.empty()) return;
  std::memcpy(tail_room(bytes.size()), bytes.data(), bytes.size());
  commit(bytes.size());
}

void out_buffer::append_value(std::string_view bytes, value_owner owner) {
  if (bytes.size() <= kCopyThreshold || !owner) {
    append(bytes);
  } else {
    append_ref(bytes, std::move(owner));
  }
}

void out_buffer::append_ref(std::string_view bytes, value_owner owner) {
  if (bytes.empty()) return;
  segment s;
  s.external = true;
  s.data = bytes.data();
  s.length = bytes.size();
  s.owner = std::move(owner);
  segments_.push_back(std::move(s));
  tail_open_ = false;
  size_ += bytes.size();
  appended_ += bytes.size();
}

void out_buffer::splice(out_buffer& from) {
  for (std::size_t i = from.head_; i < from.segments_.size(); ++i) {
    segment& seg = from.segments_[i];
    const std::size_t skip = i == from.head_ ? from.head_offset_ : 0;
    const std::string_view bytes(from.data_of(seg) + skip, seg.length - skip);
    if (seg.external) {
      append_ref(bytes, std::move(seg.owner));
    } else {
      append(bytes);
    }
  }
  from.consume(from.size());
}

std::span<const iovec> out_buffer::iovecs(std::size_t max) {
  iov_.clear();
  for (std::size_t i = head_; i < segments_.size() && iov_.size() < max; ++i) {
    const segment& s = segments_[i];
    const std::size_t skip = i == head_ ? head_offset_ : 0;
    iovec v;
    v.iov_base = const_cast<char*>(data_of(s) + skip);
    v.iov_len = s.length - skip;
    iov_.push_back(v);
  }
  return iov_;
}

void out_buffer::consume(std::size_t n) {
  if (n > size_) n = size_;
  size_ -= n;
  while (n > 0 && head_ < segments_.size()) {
    segment& s = segments_[head_];
    const std::size_t left = s.length - head_offset_;
    if (n < left) {
      head_offset_ += n;
      return;
    }
    n -= left;
    s.owner.reset();
    ++head_;
    head_offset_ = 0;
  }
  if (size_ == 0) {
    // Everything written: reuse the storage for the next batch.
    if (cap_ > kKeepCapacity) {
      buf_.reset();
      cap_ = 0;
    }
    reset_storage();
  }
}

void out_buffer::reset_storage() {
  len_ = 0;
  tail_open_ = false;
  segments_.clear();
  head_ = 0;
  head_offset_ = 0;
}

void out_buffer::drop_unsent() {
  // Bytes already consumed (written) cannot be taken back.
  const std::size_t consumed = appended_ - size_;
  const std::size_t keep_until = mark_ > consumed ? mark_ : consumed;
  std::size_t n = appended_ - keep_until;
  appended_ -= n;
  size_ -= n;
  while (n > 0) {
    segment& s = segments_.back();
    const std::size_t skip = segments_.size() - 1 == head_ ? head_offset_ : 0;
    const std::size_t cut = n < s.length - skip ? n : s.length - skip;
    s.length -= cut;
    n -= cut;
    if (!s.external && s.offset + s.length + cut == len_) len_ = s.offset + s.length;
    if (s.length == skip && segments_.size() - 1 > head_) segments_.pop_back();
  }
  if (size_ == 0) {
    reset_storage();
    return;
  }
  const segment& last = segments_.back();
  tail_open_ = !last.external && last.offset + last.length == len_;
}

std::string out_buffer::str() const {
  std::string s;
  s.reserve(size_);
  for (std::size_t i = head_; i < segments_.size(); ++i) {
    const segment& seg = segments_[i];
    const std::size_t skip = i == head_ ? head_offset_ : 0;
    s.append(data_of(seg) + skip, seg.length - skip);
  }
  return s;
}

}  // namespace ithaca::protocol
