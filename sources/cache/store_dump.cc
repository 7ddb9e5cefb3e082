#include "store_dump.h"

#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include "backend_encode.h"
#include "base64.h"
#include "machinarium.h"
#include "slab_classes.h"
#include "store_time.h"
#include "watch_events.h"

namespace ithaca::cache {

namespace {

// Buckets per walk step: small enough that a step's lines stay a few KiB on
// a normally loaded table and the worker's other clients wait little.
constexpr uint64_t kBucketsPerStep = 1024;

// memcached's crawler_metadump_eval line. Formatted under the bucket lock:
// numbers go straight into `out` (no temporary strings).
void append_meta_line(std::string& out, const store::item_meta& m, unsigned cls, uint64_t size, int64_t wall_base) {
  out += "key=";
  stats::watch::append_uri_encoded(out, m.key);
  out += " exp=";
  if (m.deadline == store::kNever) {
    out += "-1";
  } else {
    protocol::append_signed(out, store::deadline_to_unix(m.deadline, wall_base));
  }
  out += " la=";
  protocol::append_signed(out, store::deadline_to_unix(m.atime, wall_base));
  out += " cas=";
  protocol::append_decimal(out, m.cas);
  out += m.fetched ? " fetch=yes" : " fetch=no";
  out += " cls=";
  protocol::append_decimal(out, cls);
  out += " size=";
  protocol::append_decimal(out, size);
  out += " flags=";
  protocol::append_decimal(out, m.flags);
  out += " \n";  // 1.6.45 ends each field, the last one too, with a space
}

// memcached's crawler_mgdump_eval line: a binary key in base64 with b.
void append_mg_line(std::string& out, const store::item_meta& m) {
  out += "mg ";
  if (m.key_binary) {
    std::array<char, protocol::base64_encoded_size(store::kKeyMax)> enc;
    const std::size_t n = protocol::base64_encode(m.key, enc);
    out.append(enc.data(), n);
    out += " b\r\n";
  } else {
    out.append(m.key);
    out += "\r\n";
  }
}

// memcached's item_cachedump line: the value's length and the expiry in unix
// seconds (0: never).
void append_cachedump_line(std::string& out, const store::item_meta& m, int64_t wall_base) {
  out += "ITEM ";
  out.append(m.key);
  out += " [";
  protocol::append_decimal(out, m.value_len);
  out += " b; ";
  if (m.deadline == store::kNever) {
    out += '0';
  } else {
    protocol::append_signed(out, store::deadline_to_unix(m.deadline, wall_base));
  }
  out += " s]\r\n";
}

// One line kept for the answer: where it is in `text`, and its item's order.
struct kept_line {
  uint64_t order;
  std::size_t begin, size;
  bool operator>(const kept_line& o) const { return order > o.order; }
};

}  // namespace

// The walk formats each item of the class into lines_ under its bucket lock
// (as dump() does), then, with no lock held, keeps the newest lines in a
// min-heap by order: over the count or the byte budget, the oldest goes. The
// heap's text is compacted when the dropped lines outweigh the kept ones, so
// it stays within twice the budget. [the client's coroutine; yields between
// bucket ranges]
bool store_dump::cachedump(unsigned cls, unsigned limit, protocol::out_buffer& out) {
  const store::slab_classes& table = ctx_.store.classes();
  // memcached's buffer ends "END\r\n\0" within its 2 MB.
  constexpr std::size_t kBudget = commands::kCachedumpBytes - 6;
  std::string text;             // the kept lines' bytes (and dropped ones until compacted)
  std::vector<kept_line> heap;  // min-heap by order (std::greater)
  std::size_t kept_bytes = 0;
  std::vector<uint64_t> orders;  // one range's items, in lines_'s order
  uint64_t next = 0;
  do {
    lines_.clear();
    orders.clear();
    const store::store_now now = ctx_.now;
    next = ctx_.store.scan_meta(next, kBucketsPerStep, now, [&](const store::item_meta& m) {
      if (m.key_binary) return;  // memcached does not print binary keys
      if (table.item_class(m.key.size(), m.flags, m.value_len) != cls) return;
      append_cachedump_line(lines_, m, now.wall_base);
      orders.push_back(m.order);
    });
    std::size_t at = 0;
    for (const uint64_t order : orders) {
      const std::size_t end = lines_.find('\n', at) + 1;
      heap.push_back({order, text.size(), end - at});
      text.append(lines_, at, end - at);
      std::push_heap(heap.begin(), heap.end(), std::greater<>{});
      kept_bytes += end - at;
      at = end;
      while (!heap.empty() && ((limit != 0 && heap.size() > limit) || kept_bytes > kBudget)) {
        std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
        kept_bytes -= heap.back().size;
        heap.pop_back();
      }
    }
    if (text.size() > 2 * kBudget) {
      std::string compact;
      compact.reserve(kept_bytes);
      for (kept_line& k : heap) {
        const std::size_t begin = compact.size();
        compact.append(text, k.begin, k.size);
        k.begin = begin;
      }
      text.swap(compact);
    }
    if (next != 0) {
      mm::yield();
      if (mm::coroutine_cancelled()) return false;
    }
  } while (next != 0);
  // Newest first, as memcached walks its LRU from the head. The answer is at
  // most 2 MB: it is not drained mid-way (it may be going to a holding buffer
  // behind replies still in flight, which cannot be drained); the request loop
  // drains it after, as any reply.
  std::sort(heap.begin(), heap.end(), std::greater<>{});
  for (const kept_line& k : heap) out.append(std::string_view(text).substr(k.begin, k.size));
  out.append("END\r\n");
  return true;
}

bool store_dump::dump(commands::dump_format format, const commands::class_set& classes, protocol::out_buffer& out) {
  out.append("OK\r\n");
  const store::slab_classes& table = ctx_.store.classes();
  uint64_t next = 0;
  do {
    lines_.clear();
    const store::store_now now = ctx_.now;
    next = ctx_.store.scan_meta(next, kBucketsPerStep, now, [&](const store::item_meta& m) {
      const uint64_t size = table.item_total(m.key.size(), m.flags, m.value_len);
      const unsigned cls = table.class_for(size);
      if (cls >= classes.size() || !classes.test(cls)) return;
      if (format == commands::dump_format::Meta) {
        append_meta_line(lines_, m, cls, size, now.wall_base);
      } else {
        append_mg_line(lines_, m);
      }
    });
    out.append(lines_);
    if (!drain_if_full(out, ctx_)) return false;
    if (next != 0) {
      mm::yield();
      if (mm::coroutine_cancelled()) return false;
    }
  } while (next != 0);
  out.append(format == commands::dump_format::Meta ? "END\r\n" : "EN\r\n");
  return true;
}

}  // namespace ithaca::cache
