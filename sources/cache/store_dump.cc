#include "store_dump.h"

#include <array>

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
  flow::watch::append_uri_encoded(out, m.key);
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

}  // namespace

bool store_dump::dump(flow::dump_format format, const flow::class_set& classes, protocol::out_buffer& out) {
  out.append("OK\r\n");
  const store::slab_classes& table = ctx_.store.classes();
  uint64_t next = 0;
  do {
    lines_.clear();
    const store::store_now now = ctx_.now;
    next = ctx_.store.scan_meta(next, kBucketsPerStep, now, [&](const store::item_meta& m) {
      const uint64_t size = store::slab_classes::item_total(m.key.size(), m.flags, m.value_len);
      const unsigned cls = table.class_for(size);
      if (cls >= classes.size() || !classes.test(cls)) return;
      if (format == flow::dump_format::Meta) {
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
  out.append(format == flow::dump_format::Meta ? "END\r\n" : "EN\r\n");
  return true;
}

}  // namespace ithaca::cache
