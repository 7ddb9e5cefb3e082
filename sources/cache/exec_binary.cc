// The binary protocol's opcodes. Every status, body and CAS matches memcached
// 1.6.18 with SASL off (see tests/functional/test_binary.py, differential
// against it). These packets double as the replication stream (SetQ,
// DeleteQ), so quiet variants must stay silent on success and only then.
#include <array>
#include <string_view>

#include "binary_format.h"
#include "command_class.h"
#include "exec_internal.h"
#include "exec_store.h"
#include "exec_value.h"
#include "exec_watch.h"
#include "prefix_stats.h"
#include "reply.h"

namespace ithaca::cache {

namespace {

using protocol::binary_status;
using protocol::command;

// The incr/decr expiration that means "do not create a missing item".
constexpr uint32_t kNoVivify = 0xffffffff;

// The body of a store refused for memory (memcached 1.6.45, proto_bin.c).
constexpr std::string_view kOutOfMemoryStoring = "Out of memory allocating item";

void reply_ok(protocol::out_buffer& out, const protocol::request& req, uint64_t cas = 0, std::string_view value = {}) {
  protocol::encode_binary(out, req.opcode, req.opaque, binary_status::NoError, cas, {}, {}, value);
}

// Get, GetQ, GetK, GetKQ, GAT, GATQ, GATK, GATKQ and Touch. Quiet variants say
// nothing on a miss; Touch answers with the flags but no value.
void binary_retrieve(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  const bool touch = req.cmd != command::Get;
  const bool touch_only = req.cmd == command::Touch;
  (touch ? ctx.counters.cmd_touch : ctx.counters.cmd_get).add();
  store::get_options opts = pinned_get_options();
  opts.touch = touch;
  opts.exptime = req.exptime;
  opts.count_as_touch = touch;
  opts.want_value = !touch_only;
  store::get_result& res = scratch_get_result();
  ctx.store.get(req.key(), ctx.now, opts, res);
  watch_fetch(req.key(), res, ctx);
  value_bytes v;
  const bool hit = res.status == store::get_status::Hit;
  stats::prefix_stats::instance().record_get(req.key(), hit);
  const uint32_t flags = res.flags;
  const uint64_t cas = res.cas;
  if (hit && !touch_only && !take_value(res, v)) {
    protocol::encode_binary_error(out, req, binary_status::OutOfMemory);  // temp file unreadable
    return;
  }
  if (!hit) {
    if (!req.noreply) protocol::encode_binary_error(out, req, binary_status::KeyNotFound);
    return;
  }
  if (touch_only) {
    std::array<char, 4> extras;
    protocol::store_be32(extras.data(), flags);
    protocol::encode_binary(out, req.opcode, req.opaque, binary_status::NoError, cas,
                            std::string_view(extras.data(), extras.size()), {}, {});
    return;
  }
  protocol::encode_binary_get(out, req, flags, cas, v.data, std::move(v.owner));
}

// Set/Add/Replace with a CAS become a CAS store, as in memcached; Append and
// Prepend compare the CAS but keep their mode. memcached -C (cas off) drops a
// store's CAS: a plain store, whatever the packet carried.
void binary_store_value(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  ctx.counters.cmd_set.add();
  stats::prefix_stats::instance().record_set(req.key());
  store::store_mode mode = store_mode_of(req.cmd);
  store::store_options opts;
  opts.compare_cas = ctx.store.cas_enabled() ? req.cas : 0;
  const bool concat = mode == store::store_mode::Append || mode == store::store_mode::Prepend;
  if (opts.compare_cas != 0 && !concat) mode = store::store_mode::Cas;
  store::store_result res;
  watch_lookup(req.key(), ctx);
  ctx.store.set(req.key(), mode, req.value, req.flags, req.exptime, ctx.now, opts, res);
  watch_stored(req.key(), mode, res, req.exptime, req.flags, req.value.size(), ctx);
  if (req.cmd == command::Set) unlink_after_failed_set(res.status, req.key(), ctx);
  binary_status st = binary_status::NoError;
  switch (res.status) {
    case store::store_status::Stored:
      if (!req.noreply) reply_ok(out, req, res.cas);
      return;
    case store::store_status::NotStored:
      // memcached words a refused add as "exists" and a refused replace as
      // "not found"; only append/prepend say "not stored".
      st = req.cmd == command::Add       ? binary_status::KeyExists
           : req.cmd == command::Replace ? binary_status::KeyNotFound
                                         : binary_status::ItemNotStored;
      break;
    case store::store_status::Exists: st = binary_status::KeyExists; break;
    case store::store_status::NotFound: st = binary_status::KeyNotFound; break;
    case store::store_status::TooLarge: st = binary_status::ValueTooLarge; break;
    case store::store_status::OutOfMemory:
      // memcached's words for a store it found no memory for (its out_of_memory()
      // strips "SERVER_ERROR " for binary).
      protocol::encode_binary(out, req.opcode, req.opaque, binary_status::OutOfMemory, 0, {}, {}, kOutOfMemoryStoring);
      return;
    case store::store_status::BadKey: st = binary_status::InvalidArguments; break;
  }
  protocol::encode_binary_error(out, req, st);
}

void binary_remove(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  stats::prefix_stats::instance().record_delete(req.key());
  store::remove_options opts;
  opts.compare_cas = req.cas;
  binary_status st = binary_status::NoError;
  // memcached's binary delete logs its lookup, and no deletion line.
  watch_lookup(req.key(), ctx);
  switch (ctx.store.remove(req.key(), ctx.now, opts)) {
    case store::remove_status::Deleted:
      if (!req.noreply) reply_ok(out, req);  // memcached answers a delete with CAS 0
      return;
    case store::remove_status::NotFound: st = binary_status::KeyNotFound; break;
    case store::remove_status::Exists: st = binary_status::KeyExists; break;
    case store::remove_status::BadKey: st = binary_status::InvalidArguments; break;
    case store::remove_status::OutOfMemory: st = binary_status::OutOfMemory; break;
  }
  protocol::encode_binary_error(out, req, st);
}

// A missing key is created with `initial` (returned as is, no delta applied)
// unless the expiration is kNoVivify.
void binary_arithmetic(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  store::arith_options opts;
  opts.compare_cas = req.cas;
  opts.vivify = static_cast<uint32_t>(req.exptime) != kNoVivify;
  opts.initial = req.initial;
  opts.vivify_exptime = req.exptime;
  store::arith_result res;
  const auto op = req.cmd == command::Incr ? store::arith_op::Incr : store::arith_op::Decr;
  watch_lookup(req.key(), ctx);  // memcached logs its lookup
  ctx.store.arithmetic(req.key(), op, req.delta, ctx.now, opts, res);
  binary_status st = binary_status::NoError;
  switch (res.status) {
    case store::arith_status::Ok:
      if (!req.noreply) protocol::encode_binary_number(out, req, res.value, res.cas);
      return;
    case store::arith_status::NotFound: st = binary_status::KeyNotFound; break;
    case store::arith_status::NonNumeric: st = binary_status::DeltaBadValue; break;
    case store::arith_status::Exists: st = binary_status::KeyExists; break;
    case store::arith_status::OutOfMemory: st = binary_status::OutOfMemory; break;
    case store::arith_status::BadKey: st = binary_status::InvalidArguments; break;
  }
  protocol::encode_binary_error(out, req, st);
}

}  // namespace

exec_action execute_binary(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  switch (protocol::classify(req)) {
    case protocol::command_class::Retrieve:  // Get, GAT and Touch
      binary_retrieve(req, out, ctx);
      break;
    case protocol::command_class::Store: binary_store_value(req, out, ctx); break;
    case protocol::command_class::Delete: binary_remove(req, out, ctx); break;
    case protocol::command_class::Arithmetic: binary_arithmetic(req, out, ctx); break;
    case protocol::command_class::Flush:
      flush(req.has_flush_delay ? req.flush_delay : 0, ctx);
      if (!req.noreply) reply_ok(out, req);
      break;
    default:
      // Server commands go elsewhere (flow/server_commands.h).
      protocol::encode_binary_error(out, req, binary_status::UnknownCommand);
      break;
  }
  return exec_action::Continue;
}

}  // namespace ithaca::cache
