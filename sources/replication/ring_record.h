// What travels through the hand-off ring (mm::byte_queue) from the workers and
// the initial-sync scan to the fan-out machine: a 16-byte tag, then a record
// packet exactly as it goes on the wire (record.h). A value kept in a file
// (store large values) cannot be read under the bucket lock, so its record
// carries the SetQ without its value plus one reference on the file; the
// fan-out machine reads the value (off the lock, in order) and sends it whole.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace ithaca::store {
class large_value;
}

namespace ithaca::replication {

enum class ring_kind : uint8_t {
  Stream,    // a change: to every attached slave
  Sync,      // initial sync: one item, to the slave `sync_id` only
  SyncDone,  // initial sync of `sync_id` complete (no packet)
  Handover,  // takeover: the end of the stream for slave `sync_id` (no packet; server/takeover_server.h)
};

struct ring_tag {
  ring_kind kind = ring_kind::Stream;
  uint8_t large = 0;  // the packet is a SetQ prefix; `value` holds one reference
  uint16_t unused = 0;
  uint32_t sync_id = 0;  // Sync, SyncDone
  store::large_value* value = nullptr;
};
static_assert(sizeof(ring_tag) == 16);

inline ring_tag read_tag(std::string_view record) {
  ring_tag t;
  std::memcpy(&t, record.data(), sizeof t);
  return t;
}
inline std::string_view packet_of(std::string_view record) { return record.substr(sizeof(ring_tag)); }

}  // namespace ithaca::replication
