#include "routed_counts.h"

#include <algorithm>
#include <string_view>

#include "command_class.h"

namespace ithaca::stats {

namespace {

using protocol::command;
using protocol::protocol_kind;
using protocol::request;
using protocol::routed_outcome;
using protocol::routed_result;

// memcached counts gat, gats, binary touch and GAT, and mg with T as touches
// (touch_cmds, touch_hits / touch_misses), not as gets (proto_text.c
// process_get_command, process_mget_command; proto_bin.c process_bin_touch).
bool counts_as_touch(const request& req) {
  switch (req.cmd) {
    case command::Gat:
    case command::Gats:
    case command::Touch:  // only binary touch is a retrieval (command_class.h)
      return true;
    case command::MetaGet: return req.meta.has('T');
    default: return false;
  }
}

// Whether memcached stores it as a cas command (NREAD_CAS: cas_hits, cas_badval,
// cas_misses): ascii cas; a binary set/add/replace with a CAS; ms with C in set or
// replace mode (exec_meta.cc and exec_binary.cc map them the same way).
bool counts_as_cas(const request& req) {
  switch (req.proto) {
    case protocol_kind::Ascii: return req.cmd == command::Cas;
    case protocol_kind::Binary: return req.cas != 0 && req.cmd != command::Append && req.cmd != command::Prepend;
    case protocol_kind::Meta:
      return req.meta.has('C') && (req.meta.mode == 0 || req.meta.mode == 'S' || req.meta.mode == 'R');
  }
  return false;
}

bool is_decr(const request& req) {
  if (req.cmd == command::MetaArithmetic) return req.meta.mode == 'D' || req.meta.mode == '-';
  return req.cmd == command::Decr;
}

void lookup(const request& req, bool hit, command_counters& c) {
  if (counts_as_touch(req)) {
    c.cmd_touch.add();
    (hit ? c.routed_touch_hits : c.routed_touch_misses).add();
  } else {
    c.cmd_get.add();
    (hit ? c.routed_get_hits : c.routed_get_misses).add();
  }
}

// A store the server carried out (stored or refused by its own rule).
void stored(const request& req, routed_outcome o, command_counters& c) {
  c.cmd_set.add();
  if (!counts_as_cas(req)) return;
  switch (o) {
    case routed_outcome::Stored: c.routed_cas_hits.add(); break;
    case routed_outcome::Exists: c.routed_cas_badval.add(); break;
    case routed_outcome::NotFound: c.routed_cas_misses.add(); break;
    default: break;
  }
}

void arithmetic(const request& req, bool hit, command_counters& c) {
  if (is_decr(req)) {
    (hit ? c.routed_decr_hits : c.routed_decr_misses).add();
  } else {
    (hit ? c.routed_incr_hits : c.routed_incr_misses).add();
  }
}

// Each key of a retrieval answered as Hits: found or not. The keys of a server
// that failed among others were looked up nowhere (their number is
// failed_keys; which ones is not kept, and a failed key is never found).
void retrieval(const request& req, const routed_result& r, command_counters& c) {
  std::size_t found = 0;
  for (std::size_t i = 0; i < r.key_count(); ++i) found += r.hit(i).found ? 1 : 0;
  const std::size_t asked = r.key_count() - std::min<std::size_t>(r.failed_keys, r.key_count());
  for (std::size_t i = 0; i < found; ++i) lookup(req, true, c);
  for (std::size_t i = found; i < asked; ++i) lookup(req, false, c);
}

// A meta reply passed through as it came: its code, or what quiet mode hid.
void meta_passthrough(const request& req, std::string_view raw, command_counters& c) {
  const std::string_view code = raw.substr(0, 2);
  switch (req.cmd) {
    case command::MetaGet:
      if (code == "VA" || code == "HD")
        lookup(req, true, c);
      else if (code == "EN" || raw.empty())
        lookup(req, false, c);
      return;
    case command::MetaSet: {
      routed_outcome o = routed_outcome::Pending;
      if (code == "HD" || raw.empty())
        o = routed_outcome::Stored;
      else if (code == "NS")
        o = routed_outcome::NotStored;
      else if (code == "EX")
        o = routed_outcome::Exists;
      else if (code == "NF")
        o = routed_outcome::NotFound;
      if (o != routed_outcome::Pending) stored(req, o, c);
      return;
    }
    case command::MetaDelete:
      if (code == "HD" || raw.empty())
        c.routed_delete_hits.add();
      else if (code == "NF")
        c.routed_delete_misses.add();
      return;
    case command::MetaArithmetic:
      if (code == "VA" || code == "HD" || raw.empty())
        arithmetic(req, true, c);
      else if (code == "NF")
        arithmetic(req, false, c);
      return;
    default: return;  // mn, me: no counter
  }
}

}  // namespace

void count_routed(const request& req, const routed_result& r, command_counters& c) {
  if (req.proto == protocol_kind::Meta) c.cmd_meta.add();
  if (r.outcome == routed_outcome::Raw) return meta_passthrough(req, r.raw, c);
  switch (protocol::classify(req)) {
    case protocol::command_class::Retrieve:
      if (r.outcome == routed_outcome::Hits) retrieval(req, r, c);
      if (r.outcome == routed_outcome::LeaseToken) lookup(req, false, c);  // lease-get's miss
      return;
    case protocol::command_class::Store:
      if (r.outcome == routed_outcome::Stored || r.outcome == routed_outcome::NotStored ||
          r.outcome == routed_outcome::Exists || r.outcome == routed_outcome::NotFound)
        stored(req, r.outcome, c);
      return;
    case protocol::command_class::Delete:
      if (r.outcome == routed_outcome::Deleted) c.routed_delete_hits.add();
      if (r.outcome == routed_outcome::NotFound) c.routed_delete_misses.add();
      return;
    case protocol::command_class::Arithmetic:
      if (r.outcome == routed_outcome::Number) arithmetic(req, true, c);
      if (r.outcome == routed_outcome::NotFound) arithmetic(req, false, c);
      return;
    case protocol::command_class::Touch:
      if (r.outcome == routed_outcome::Touched || r.outcome == routed_outcome::NotFound) {
        c.cmd_touch.add();
        (r.outcome == routed_outcome::Touched ? c.routed_touch_hits : c.routed_touch_misses).add();
      }
      return;
    case protocol::command_class::Flush:
      if (r.outcome == routed_outcome::Ok) c.cmd_flush.add();
      return;
    default: return;
  }
}

}  // namespace ithaca::stats
