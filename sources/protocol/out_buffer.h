#pragma once
// Replies of a batch of pipelined requests, ready for one writev. Small
// pieces (status lines, headers) are copied into one contiguous buffer; large
// values are referenced where they are, without a copy. The caller keeps a
// referenced value alive until consume() has passed it, or hands an `owner`
// (e.g. the store's item reference) that out_buffer holds until then.
//
// Protocol-agnostic and single-threaded: one per connection, used only by the
// connection's coroutine.

#include <sys/uio.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "value_owner.h"

namespace ithaca::protocol {

class out_buffer {
 public:
  // Values up to this size are copied: up to here a copy costs the sender
  // no more CPU than an iovec entry of its own (measured with writev to a
  // socket, 128 B to 4 KiB, hot and cold values: the crossover lies between
  // 2 and 4 KiB; INTERNALS.md, "The protocol layer"). A copied value's owner
  // is released at once, so a small hit's pin lasts no longer than the copy.
  static constexpr std::size_t kCopyThreshold = 2048;
  // After a batch is fully written, copy storage above this is given back, so
  // one huge multi-get does not pin its reply's memory to an idle connection.
  static constexpr std::size_t kKeepCapacity = 64 * 1024;

  // Copies `bytes`. Inline while the copied run at the end has room: a
  // reply is several small appends ("VA ", a number, "\r\n", the value, ...),
  // and an out-of-line call each was 8% of a pipelined meta get.
  void append(std::string_view bytes) {
    const std::size_t n = bytes.size();
    if (tail_open_ && n <= cap_ - len_) [[likely]] {
      if (n != 0) std::memcpy(buf_.get() + len_, bytes.data(), n);
      len_ += n;
      segments_.back().length += n;
      size_ += n;
      appended_ += n;
      return;
    }
    append_slow(bytes);
  }
  void append(char c) { append(std::string_view(&c, 1)); }
  // Room for `n` more copied bytes at the end, to format into in place;
  // commit(k <= n) then appends the first k. Nothing else may touch the
  // buffer in between.
  char* tail_room(std::size_t n) {
    if (!tail_open_ || n > cap_ - len_) open_tail(n);
    return buf_.get() + len_;
  }
  void commit(std::size_t k) {
    len_ += k;
    segments_.back().length += k;
    size_ += k;
    appended_ += k;
  }
  // Appends a value: referenced if it is large and `owner` keeps it alive,
  // else copied (a value with no owner lives in a buffer its caller reuses).
  void append_value(std::string_view bytes, value_owner owner = {});
  // Always references `bytes` (lifetime as described above).
  void append_ref(std::string_view bytes, value_owner owner = {});

  // Moves everything unconsumed in `from` to the end of this buffer (copied
  // pieces are copied, referenced ones keep their owners) and empties it.
  void splice(out_buffer& from);

  // Bytes not yet consumed.
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The unconsumed bytes as at most `max` iovecs (IOV_MAX is 1024 on Linux).
  // Valid until the next append or consume.
  std::span<const iovec> iovecs(std::size_t max = 1024);

  // Marks n bytes written (after a possibly partial writev).
  void consume(std::size_t n);

  // memcached transmits its queued replies at fixed points (after every
  // text get) and, when a multi-get fails on a bad key, culls the replies it
  // has not transmitted yet. mark_sent() records such a point; drop_unsent()
  // removes what was appended after the last mark and is still unconsumed.
  void mark_sent() { mark_ = appended_; }
  void drop_unsent();

  // Bytes reserved for copied pieces (tests, memory accounting).
  std::size_t storage_capacity() const { return cap_; }

  // Everything unconsumed, copied out (tests).
  std::string str() const;

 private:
  struct segment {
    bool external = false;
    std::size_t offset = 0;  // into copy_ when !external
    std::size_t length = 0;
    const char* data = nullptr;  // when external
    value_owner owner;
  };
  const char* data_of(const segment& s) const { return s.external ? s.data : buf_.get() + s.offset; }
  void append_slow(std::string_view bytes);
  // Makes the last segment a copied one ending at len_, with room for n more.
  void open_tail(std::size_t n);
  void reset_storage();

  // The copied pieces, back to back (not zeroed on growth: a std::string
  // would zero what resize() adds and call out of line to append).
  std::unique_ptr<char[]> buf_;
  std::size_t len_ = 0;  // bytes of buf_ in use
  std::size_t cap_ = 0;  // bytes of buf_
  // The last segment is a copied one that ends at len_: append extends it.
  bool tail_open_ = false;
  std::vector<segment> segments_;
  std::size_t head_ = 0;         // first unconsumed segment
  std::size_t head_offset_ = 0;  // bytes of it already consumed
  std::size_t size_ = 0;
  std::size_t appended_ = 0;  // bytes ever appended (a logical position)
  std::size_t mark_ = 0;      // appended_ at the last mark_sent()
  std::vector<iovec> iov_;
};

}  // namespace ithaca::protocol
