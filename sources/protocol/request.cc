#include "request.h"

namespace ithaca::protocol {

request& request::operator=(const request& other) {
  if (this == &other) return *this;
  cmd = other.cmd;
  proto = other.proto;
  keys = other.keys;
  value = other.value;
  flags = other.flags;
  exptime = other.exptime;
  cas = other.cas;
  delta = other.delta;
  initial = other.initial;
  lease_token = other.lease_token;
  flush_delay = other.flush_delay;
  has_flush_delay = other.has_flush_delay;
  verbosity = other.verbosity;
  memlimit_mb = other.memlimit_mb;
  args = other.args;
  routing_prefix = other.routing_prefix;
  noreply = other.noreply;
  opcode = other.opcode;
  opaque = other.opaque;
  binary_with_key = other.binary_with_key;
  meta = other.meta;
  meta_key_binary = other.meta_key_binary;
  scratch = other.scratch;
  // A key in the scratch: a decoded base64 meta key, or one a route rewrote
  // there (routes/shard_split_route.cc).
  if (!keys.empty() && (meta_key_binary || other.keys.front().data() == other.scratch.data())) {
    keys.set(0, std::string_view(scratch.data(), other.keys.front().size()));
  }
  return *this;
}

void request::clear() {
  // keys keeps its spill capacity; everything else goes back to defaults.
  keys.clear();
  cmd = command::Unknown;
  proto = protocol_kind::Ascii;
  value = {};
  flags = 0;
  exptime = 0;
  cas = 0;
  delta = 0;
  initial = 0;
  lease_token = 0;
  flush_delay = 0;
  has_flush_delay = false;
  verbosity = 0;
  memlimit_mb = 0;
  args = {};
  routing_prefix = {};
  noreply = false;
  opcode = 0;
  opaque = 0;
  binary_with_key = false;
  meta.clear();
  meta_key_binary = false;
}

}  // namespace ithaca::protocol
