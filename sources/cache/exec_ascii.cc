// Classic text commands: get gets gat gats, the storage commands, incr decr,
// delete, touch, flush_all. Replies and
// counters follow memcached 1.6.18 (checked against it, see
// tests/functional/test_ascii_commands.py and test_ascii_diff.py).
#include <string_view>

#include "command_class.h"
#include "exec_internal.h"
#include "exec_store.h"
#include "exec_watch.h"
#include "exec_value.h"
#include "prefix_stats.h"
#include "reply.h"
#include "text_replies.h"

namespace ithaca::cache {

namespace {

using protocol::ascii_status;
using protocol::command;
using protocol::command_class;

// get gets gat gats: one VALUE per hit, in request order, then END. False if
// the replies outgrew the high-water mark and could not be drained (close).
bool retrieve(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  const bool touch = req.cmd == command::Gat || req.cmd == command::Gats;
  const bool with_cas = req.cmd == command::Gets || req.cmd == command::Gats;
  store::get_options opts = pinned_get_options();
  opts.touch = touch;
  opts.exptime = req.exptime;
  opts.count_as_touch = touch;
  for (std::size_t i = 0; i < req.keys.size(); ++i) {
    const std::string_view key = req.keys[i];
    // memcached counts gat keys as touches only, get keys as gets only.
    (touch ? ctx.counters.cmd_touch : ctx.counters.cmd_get).add();
    store::get_result& res = scratch_get_result();
    ctx.store.get(key, ctx.now, opts, res);
    watch_fetch(key, res, ctx);
    stats::prefix_stats::instance().record_get(key, res.status == store::get_status::Hit);
    if (res.status != store::get_status::Hit) continue;
    const uint32_t flags = res.flags;
    const uint64_t cas = res.cas;
    value_bytes v;
    if (!take_value(res, v)) continue;  // temp file unreadable: answered as a miss
    protocol::encode_ascii_value(out, key, flags, v.data, with_cas ? &cas : nullptr, std::move(v.owner));
    // One line may name the same large key thousands of times.
    if (!drain_if_full(out, ctx)) return false;
  }
  protocol::encode_ascii_status(out, ascii_status::End);
  // memcached transmits its queued replies after every get; a later get that
  // fails on a bad key culls only what was queued after this point.
  out.mark_sent();
  return true;
}

void store_value(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  ctx.counters.cmd_set.add();
  stats::prefix_stats::instance().record_set(req.key());
  store::store_options opts;
  if (req.cmd == command::Cas) opts.compare_cas = req.cas;
  store::store_result res;
  const store::store_mode mode = store_mode_of(req.cmd);
  watch_lookup(req.key(), ctx);
  ctx.store.set(req.key(), mode, req.value, req.flags, req.exptime, ctx.now, opts, res);
  watch_stored(req.key(), mode, res, req.exptime, req.flags, req.value.size(), ctx);
  if (mode == store::store_mode::Set) unlink_after_failed_set(res.status, req.key(), ctx);
  if (req.noreply) return;
  switch (res.status) {
    case store::store_status::Stored: return encode_ascii_status(out, ascii_status::Stored);
    case store::store_status::NotStored: return encode_ascii_status(out, ascii_status::NotStored);
    case store::store_status::Exists: return encode_ascii_status(out, ascii_status::Exists);
    case store::store_status::NotFound: return encode_ascii_status(out, ascii_status::NotFound);
    case store::store_status::TooLarge: return encode_ascii_line(out, protocol::kReplyTooLarge);
    case store::store_status::OutOfMemory: return encode_ascii_line(out, kReplyOutOfMemoryStoring);
    case store::store_status::BadKey: return encode_ascii_line(out, protocol::kReplyBadFormat);
  }
}

void arithmetic(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  store::arith_result res;
  const auto op = req.cmd == command::Incr ? store::arith_op::Incr : store::arith_op::Decr;
  watch_lookup(req.key(), ctx);  // memcached logs its lookup; an incr is no item_store
  ctx.store.arithmetic(req.key(), op, req.delta, ctx.now, {}, res);
  if (req.noreply) return;
  switch (res.status) {
    case store::arith_status::Ok: return encode_ascii_number(out, res.value);
    case store::arith_status::NotFound: return encode_ascii_status(out, ascii_status::NotFound);
    case store::arith_status::NonNumeric: return encode_ascii_line(out, protocol::kReplyNonNumeric);
    case store::arith_status::Exists: return encode_ascii_status(out, ascii_status::Exists);
    case store::arith_status::OutOfMemory: return encode_ascii_line(out, protocol::kReplyOutOfMemory);
    case store::arith_status::BadKey: return encode_ascii_line(out, protocol::kReplyBadFormat);
  }
}

void remove(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  stats::prefix_stats::instance().record_delete(req.key());
  const watch_before before = watch_lookup(req.key(), ctx);
  const store::remove_status st = ctx.store.remove(req.key(), ctx.now);
  if (st == store::remove_status::Deleted) watch_deleted(req.key(), "delete", before);
  if (req.noreply) return;
  switch (st) {
    case store::remove_status::Deleted: return encode_ascii_status(out, ascii_status::Deleted);
    case store::remove_status::NotFound: return encode_ascii_status(out, ascii_status::NotFound);
    case store::remove_status::Exists: return encode_ascii_status(out, ascii_status::Exists);
    case store::remove_status::BadKey: return encode_ascii_line(out, protocol::kReplyBadFormat);
    case store::remove_status::OutOfMemory: return encode_ascii_line(out, protocol::kReplyOutOfMemory);
  }
}

void touch(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  ctx.counters.cmd_touch.add();
  const store::touch_status st = ctx.store.touch(req.key(), req.exptime, ctx.now);
  if (req.noreply) return;
  switch (st) {
    case store::touch_status::Touched: return encode_ascii_status(out, ascii_status::Touched);
    case store::touch_status::NotFound: return encode_ascii_status(out, ascii_status::NotFound);
    case store::touch_status::BadKey: return encode_ascii_line(out, protocol::kReplyBadFormat);
  }
}

}  // namespace

exec_action execute_ascii(const protocol::request& req, protocol::out_buffer& out, exec_context& ctx) {
  switch (protocol::classify(req)) {
    case command_class::Retrieve:
      if (!retrieve(req, out, ctx)) return exec_action::Close;
      break;
    case command_class::Store: store_value(req, out, ctx); break;
    case command_class::Arithmetic: arithmetic(req, out, ctx); break;
    case command_class::Delete: remove(req, out, ctx); break;
    case command_class::Touch: touch(req, out, ctx); break;
    case command_class::Flush:
      flush(req.has_flush_delay ? req.flush_delay : 0, ctx);
      if (!req.noreply) encode_ascii_status(out, ascii_status::Ok);
      break;
    default:
      // A command the request loop sends elsewhere (flow/server_commands.h):
      // say what memcached says to a command it does not know.
      encode_ascii_status(out, ascii_status::Error);
      break;
  }
  return exec_action::Continue;
}

}  // namespace ithaca::cache
