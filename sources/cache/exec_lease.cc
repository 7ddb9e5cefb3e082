// mcrouter's ascii leases (lease-get, lease-set) on the store's lease support,
// against the two failures of look-aside caching that Facebook's memcache
// paper describes:
//  - stale sets: a miss hands out a 64-bit token; a delete or a newer set
//    invalidates it, and a lease-set with an invalidated token is refused;
//  - thundering herds: one token per key per lease_interval; readers that
//    come in between are told to wait (token 1) and retry.
//
// Wire format (see encode_lease_value in reply.h; mcrouter's convention):
//   lease-get <key>
//     hit:                 VALUE <key> <flags> <bytes>\r\n<data>\r\nEND\r\n
//     miss, token issued:  LVALUE <key> <token> <flags> 0\r\n\r\nEND\r\n
//     miss, wait:          LVALUE <key> 1 0 0\r\n\r\nEND\r\n
//     stale (md I / ms I): LVALUE <key> <token or 1> <flags> <bytes>\r\n<stale data>\r\nEND\r\n
//   lease-set <key> <token> <flags> <exptime> <bytes> [noreply]\r\n<data>\r\n
//     STORED, or NOT_STORED when the token is not (any longer) valid.
//
// Stale values: a key invalidated with md I (or an ms I that lost its CAS
// race) keeps its value, marked stale. lease-get shows it to every reader;
// the first one gets a token to refill it, the others "wait". That token is
// the stale item's CAS with the top bit set (kStaleTokenTag): the store's
// lease tokens live in lease placeholders, which a stale item is not, so a
// lease-set first tries the token as a placeholder token and then as "the
// stale item's CAS". Counter CAS values never reach 2^63, so a tagged token
// is never 0, 1 or 2, the values mcrouter reserves (an explicit ms E CAS with
// the top bit set makes a token that is refused: safe, if unhelpful).
//
// Thread: a worker's client coroutine; nothing here suspends.
#include <memory>
#include <string>

#include "exec_internal.h"
#include "text_replies.h"
#include "reply.h"

namespace ithaca::cache {
namespace {

using protocol::out_buffer;
using protocol::request;

constexpr uint64_t kWaitToken = 1;  // mcrouter: "hot miss, retry shortly"
constexpr uint64_t kStaleTokenTag = uint64_t{1} << 63;

// mcrouter's `lease-get`: one store::get with `lease` set, answered as a
// value, a fresh token (LVALUE with an empty value), a hot-miss token 1 (wait
// and retry), or a stale value with a refill token. [worker, client coroutine;
// the store takes the key's bucket lock inside the call, nothing is held here]
// One store call; a large value is read on the blocking pool (the coroutine
// waits, up to 30 s; a failed read is answered with an error line).
exec_action lease_get(const request& req, out_buffer& out, exec_context& ctx) {
  ctx.counters.cmd_get.add();
  store::get_options o;
  o.lease = true;
  o.item_cas = true;  // a stale hit's token is its CAS, also with cas off (-C)
  // One result per call: small values fit in its inline buffer and the reply
  // copies them; leases are not the hot path worth a shared buffer.
  store::get_result res;
  ctx.store.get(req.key(), ctx.now, o, res);
  switch (res.status) {
    case store::get_status::BadKey: encode_ascii_line(out, protocol::kReplyBadFormat); return exec_action::Continue;
    case store::get_status::Miss:
      // No token could be handed out (no memory for the placeholder): a
      // plain miss; the client fills without a lease.
      encode_ascii_status(out, protocol::ascii_status::End);
      return exec_action::Continue;
    case store::get_status::LeaseToken:
      encode_lease_value(out, req.key(), res.lease_token, 0, {});
      return exec_action::Continue;
    case store::get_status::LeaseWait:
      encode_lease_value(out, req.key(), kWaitToken, 0, {});
      return exec_action::Continue;
    case store::get_status::Hit: break;
  }
  if (res.large) {
    // Files are read through blocking_call: this coroutine may suspend; res
    // is local, so nothing it refers to is shared.
    store::large_value_ref ref = std::move(res.large);
    if (!read_large_value(ref, res.value)) {
      encode_ascii_line(out, protocol::kReplyReadFailed);
      return exec_action::Continue;
    }
  }
  if (!res.stale) {
    // out_buffer references values above its copy threshold: hand it the
    // string to keep until written.
    std::shared_ptr<const void> owner;
    std::string_view data = res.value;
    if (data.size() > out_buffer::kCopyThreshold) {
      auto holder = std::make_shared<std::string>(std::move(res.value));
      data = *holder;
      owner = std::move(holder);
    }
    encode_ascii_value(out, req.key(), res.flags, data, nullptr, std::move(owner));
    encode_ascii_status(out, protocol::ascii_status::End);
    return exec_action::Continue;
  }
  const std::string_view data = res.value;
  // encode_lease_value copies the data: fine for a stale read, which is rare.
  if (res.win) {
    encode_lease_value(out, req.key(), res.cas | kStaleTokenTag, res.flags, data);
  } else {
    encode_lease_value(out, req.key(), kWaitToken, res.flags, data);
  }
  return exec_action::Continue;
}

// A lease-set whose token names a stale item: stores only if the key still
// holds that very stale item (same CAS). An item's CAS changes on every
// write, including md I, so "stale with CAS c" cannot turn into "fresh with
// CAS c": checking staleness first and then storing with compare-CAS c is
// as good as doing both at once.
void set_over_stale(const request& req, exec_context& ctx, store::store_result& r) {
  const uint64_t cas = req.lease_token & ~kStaleTokenTag;
  store::get_options peek;
  peek.want_value = false;
  peek.bump = false;
  peek.item_cas = true;  // the token is the item's CAS, also with cas off (-C)
  store::get_result cur;
  ctx.store.get(req.key(), ctx.now, peek, cur);
  if (cur.status != store::get_status::Hit || !cur.stale || cur.cas != cas) {
    r.status = store::store_status::NotStored;
    return;
  }
  store::store_options o;
  o.compare_cas = cas;
  o.item_cas = true;
  ctx.store.set(req.key(), store::store_mode::Cas, req.value, req.flags, req.exptime, ctx.now, o, r);
  if (r.status != store::store_status::Stored && r.status != store::store_status::TooLarge &&
      r.status != store::store_status::OutOfMemory) {
    r.status = store::store_status::NotStored;  // raced with a newer write
  }
}

exec_action lease_set(const request& req, out_buffer& out, exec_context& ctx) {
  ctx.counters.cmd_set.add();
  store::store_result r;
  if (req.lease_token == 0) {
    // 0 is "no lease" to the store (a plain set); no client holds token 0.
    r.status = store::store_status::NotStored;
  } else {
    store::store_options o;
    o.lease_token = req.lease_token;
    ctx.store.set(req.key(), store::store_mode::Set, req.value, req.flags, req.exptime, ctx.now, o, r);
    if (r.status == store::store_status::NotStored && (req.lease_token & kStaleTokenTag) != 0) {
      set_over_stale(req, ctx, r);
    }
  }
  if (r.status == store::store_status::NotStored) ctx.counters.lease_sets_refused.add();
  if (req.noreply) return exec_action::Continue;
  switch (r.status) {
    case store::store_status::Stored: encode_ascii_status(out, protocol::ascii_status::Stored); break;
    case store::store_status::NotStored:
    case store::store_status::Exists:
    case store::store_status::NotFound: encode_ascii_status(out, protocol::ascii_status::NotStored); break;
    case store::store_status::TooLarge: encode_ascii_line(out, protocol::kReplyTooLarge); break;
    case store::store_status::OutOfMemory: encode_ascii_line(out, protocol::kReplyOutOfMemoryStoring); break;
    case store::store_status::BadKey: encode_ascii_line(out, protocol::kReplyBadFormat); break;
  }
  return exec_action::Continue;
}

// mcrouter's `metaget <key>`: the item's expiry as a unix time (0: never),
// in mcrouter's META line; a miss is END. A read: no lease, no touch, the
// value not copied. [worker, client coroutine; the store locks inside]
exec_action metaget(const request& req, out_buffer& out, exec_context& ctx) {
  ctx.counters.cmd_get.add();
  store::get_options o;
  o.want_value = false;
  store::get_result res;
  ctx.store.get(req.key(), ctx.now, o, res);
  if (res.status == store::get_status::BadKey) {
    encode_ascii_line(out, protocol::kReplyBadFormat);
    return exec_action::Continue;
  }
  if (res.status == store::get_status::Hit) {
    const int64_t now_unix = ctx.now.wall_base + static_cast<int64_t>(ctx.now.ms / 1000);
    protocol::encode_metaget(out, req.key(), res.ttl < 0 ? 0 : now_unix + res.ttl);
  }
  encode_ascii_status(out, protocol::ascii_status::End);
  return exec_action::Continue;
}

}  // namespace

exec_action execute_lease(const request& req, out_buffer& out, exec_context& ctx) {
  if (req.cmd == protocol::command::LeaseSet) return lease_set(req, out, ctx);
  if (req.cmd == protocol::command::McMetaget) return metaget(req, out, ctx);
  return lease_get(req, out, ctx);
}

}  // namespace ithaca::cache
