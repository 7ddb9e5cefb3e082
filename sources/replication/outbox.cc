#include "outbox.h"

#include <algorithm>

namespace ithaca::replication {

void outbox::add_own(uint64_t at, std::string_view a, std::string_view b) {
  if (a.empty() && b.empty()) return;
  // Consecutive records at one position share an entry (the sync's items of
  // a scan step), unless a write may already point into it.
  if (own_.empty() || own_.back().at != at || own_.back().gathered) own_.push_back(own{at, {}});
  own_.back().bytes.append(a);
  own_.back().bytes.append(b);
  own_bytes_ += a.size() + b.size();
}

// Walks the slave's sequence from where it stands: own records due at the
// current stream position first, then the stream up to the next own record
// (or the log's end).
size_t outbox::gather(const stream_log& log, size_t max_bytes, size_t max_spans, std::vector<iovec>& spans,
                      std::vector<stream_log::pin>& pins) {
  uint64_t at = position_;
  size_t added = 0;
  auto next = own_.begin();
  while (added < max_bytes && spans.size() < max_spans) {
    if (next != own_.end() && next->at == at) {
      own& o = *next++;
      o.gathered = true;
      const size_t n = std::min(o.bytes.size() - o.sent, max_bytes - added);
      spans.push_back({o.bytes.data() + o.sent, n});
      added += n;
      continue;
    }
    const uint64_t stop = next != own_.end() ? next->at : log.end();
    const size_t n = log.gather(at, stop, max_bytes - added, max_spans - spans.size(), spans, pins);
    if (n == 0) break;
    at += n;
    added += n;
  }
  return added;
}

void outbox::consumed(size_t n) {
  while (n > 0) {
    if (!own_.empty() && own_.front().at == position_) {
      own& o = own_.front();
      const size_t k = std::min(n, o.bytes.size() - o.sent);
      o.sent += k;
      own_bytes_ -= k;
      n -= k;
      if (o.sent == o.bytes.size()) own_.pop_front();
      continue;
    }
    const uint64_t stop = own_.empty() ? UINT64_MAX : own_.front().at;
    const uint64_t k = std::min<uint64_t>(n, stop - position_);
    position_ += k;
    n -= static_cast<size_t>(k);
  }
}

}  // namespace ithaca::replication
