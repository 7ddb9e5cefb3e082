#include "pool_route.h"

#include "command_class.h"
#include "handle_walk.h"
#include "route_kind.h"
#include "delete_spool.h"
#include "worker_backends.h"

namespace ithaca::route {

namespace {
// The frame state of a request whose keys went out with their routing prefix
// (keep_routing_prefix): resume() narrows them again. Reliable deletes' frames
// hold a server index, always below it.
constexpr std::uint32_t kNarrowKeys = UINT32_MAX;

// keep_routing_prefix: each key's view widened over the routing prefix that
// lies just before it (request.h), or narrowed back (`by` negative).
void shift_keys(protocol::request& req, std::ptrdiff_t by) {
  for (std::size_t i = 0; i < req.keys.size(); ++i) {
    const std::string_view k = req.keys[i];
    req.keys.set(i,
                 std::string_view(k.data() - by, static_cast<std::size_t>(static_cast<std::ptrdiff_t>(k.size()) + by)));
  }
}
}  // namespace

pool_route::pool_route(std::string name, std::shared_ptr<const proxy::pool> pool, bool reliable_deletes)
    : route(std::move(name)), pool_(std::move(pool)), reliable_(reliable_deletes) {}

// Sends the request to the server(s) of the pool that hold its keys and
// answers Pending (the backend readers fill slot.result; the last call_done
// readies the slot). One key: one call (a delete with reliable_deletes first
// pushes a frame, so resume() may spool it); several: one call per server,
// keys grouped by a counting sort that keeps each server's keys in request
// order; flush_all: every server, if the pool allows it. [the client's
// worker; never blocks, no lock: submit() only queues on the worker's own
// connections] Work is O(keys + servers).
dispatch_status dispatch_flush(request_slot& slot, dispatch_env& env,
                               std::span<const std::shared_ptr<const proxy::pool>> pools) {
  slot.result.prepare(slot.req);
  for (const auto& p : pools) {
    if (p->allow_flush()) continue;
    slot.result.outcome = protocol::routed_outcome::Refused;
    // mcrouter's words (its precheck without --enable-flush-cmd); the
    // pool's allow_flush is the YAML's switch, --enable-flush-cmd mcrouter's.
    slot.result.text = "SERVER_ERROR Command disabled";
    slot.result.bstatus = protocol::binary_status::NotSupported;
    return dispatch_status::Pending;  // no calls: ready at once, in order
  }
  const std::uint64_t tag = slot.client_tag();
  for (const auto& p : pools) {
    for (const auto& s : p->servers()) env.backends->conn(s, tag).submit(slot, {}, p->pool_group());
  }
  return dispatch_status::Pending;
}

dispatch_status pool_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::request& req = slot.req;
  slot.result.prepare(req);
  const auto& servers = pool_->servers();
  proxy::worker_backends& backends = *env.backends;
  const std::uint64_t tag = slot.client_tag();
  if (req.cmd == protocol::command::FlushAll) return dispatch_flush(slot, env, std::span(&pool_, 1));
  // auto_eject_hosts with a server down: the live servers' ring.
  const proxy::distribution* live = pool_->auto_eject() ? backends.placement(pool_) : nullptr;
  auto locate = [&](std::string_view key) { return live ? pool_->locate(key, *live) : pool_->locate(key); };
  const std::size_t n = req.keys.size();
  // keep_routing_prefix: placed by the key without its routing prefix (as
  // mcrouter hashes), sent with it; narrowed back when the calls are done.
  auto keep_prefix = [&] {
    if (!pool_->keep_routing_prefix() || req.routing_prefix.empty()) return;
    const auto len = static_cast<std::ptrdiff_t>(req.routing_prefix.size());
    slot.push_frame(slot_frame{this, kNarrowKeys, 0, len});
    shift_keys(slot.req, len);
  };
  if (n <= 1 || servers.size() == 1) {
    const std::size_t at = locate(req.key());
    keep_prefix();
    if (reliable_ && protocol::classify(req) == protocol::command_class::Delete) {
      // Come back to resume() with the call's result: which server it was.
      slot.push_frame(slot_frame{this, static_cast<std::uint32_t>(at), 0, 0});
    }
    backends.conn(servers[at], tag).submit(slot, {}, pool_->pool_group());
    return dispatch_status::Pending;
  }
  // Several keys: group their indexes by server (a counting sort keeps each
  // server's keys in request order), one call per server.
  slot.server_of.resize(n);
  std::vector<std::uint32_t>& order = slot.key_order;
  order.assign(n, 0);
  // counts[s + 1] = keys on server s; then prefix sums: group s starts at
  // counts[s]. The scratch vectors keep their capacity in the slot.
  std::vector<std::uint32_t>& counts = slot.group_start;
  counts.assign(servers.size() + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    slot.server_of[i] = locate(req.keys[i]);
    ++counts[slot.server_of[i] + 1];
  }
  for (std::size_t s = 1; s < counts.size(); ++s) counts[s] += counts[s - 1];
  for (std::size_t i = 0; i < n; ++i) {
    // server_of[i] becomes the next free place of its group.
    const std::uint32_t s = slot.server_of[i];
    slot.server_of[i] = counts[s]++;
    order[slot.server_of[i]] = static_cast<std::uint32_t>(i);
  }
  // counts[s] now ends group s; shift back so counts[s] starts it again.
  for (std::size_t s = counts.size() - 1; s > 0; --s) counts[s] = counts[s - 1];
  counts[0] = 0;
  keep_prefix();
  for (std::size_t s = 0; s < servers.size(); ++s) {
    const std::uint32_t begin = counts[s], end = counts[s + 1];
    if (begin == end) continue;
    backends.conn(servers[s], tag)
        .submit(slot, std::span<const std::uint32_t>(order.data() + begin, end - begin), pool_->pool_group());
  }
  return dispatch_status::Pending;
}

namespace {

// A delete's result that is spooled: no reply, or the server's SERVER_ERROR
// (mcrouter's DestinationRoute spools every failover-error result, its
// server's errors among them, and answers NOT_FOUND; a CLIENT_ERROR is the
// client's to see).
bool pool_route_spools(const protocol::routed_result& r) {
  switch (r.outcome) {
    case protocol::routed_outcome::Failed: return true;
    case protocol::routed_outcome::ErrorLine: return std::string_view(r.text).starts_with("SERVER_ERROR");
    case protocol::routed_outcome::Raw: return std::string_view(r.raw).starts_with("SERVER_ERROR");
    default: return false;
  }
}

}  // namespace

// [reliable_deletes] Two steps on the delete's frame (its `count`):
// kCallDone, the backend call is done: a delete that got no reply (or a
// SERVER_ERROR: pool_route_spools() above) is handed
// to the spool and its slot parked in this worker's spool_waits (one more
// call: Pending) until the spool machine has written the record, or not, or
// the pool's timeout passed; kSpoolAnswered, that wait is over: the outcome
// is NotFound if the record is in the file (mcrouter's answer to a spooled
// delete), else still the failure. A delete the spool cannot take at all is
// answered with the failure at once. [the slot's worker; never blocks]
dispatch_status pool_route::resume(request_slot& slot, dispatch_env& env) const {
  enum : std::uint32_t { kCallDone = 0, kSpoolAnswered = 1 };
  slot_frame& frame = slot.top_frame();
  if (frame.state == kNarrowKeys) {
    shift_keys(slot.req, -frame.saved);
    return dispatch_status::Done;
  }
  if (frame.count == kSpoolAnswered) {
    if (slot.result.outcome == protocol::routed_outcome::NotFound) {
      route_counters::add(counters().deletes_spooled);
    } else {
      route_counters::add(counters().deletes_dropped);
    }
    return dispatch_status::Done;
  }
  if (!pool_route_spools(slot.result)) return dispatch_status::Done;
  const auto& server = pool_->servers()[frame.state];
  proxy::delete_spool* spool = proxy::delete_spool::current();
  if (spool == nullptr) {
    proxy::count_spool_drop(*server);
  } else {
    const auto timeout = static_cast<mm::millis>(server->settings().timeout_ms);
    if (env.backends->spool_waiting().park(slot, *spool, server, slot.req.key(), mm::deadline_after(timeout))) {
      frame.count = kSpoolAnswered;
      return dispatch_status::Pending;
    }
  }
  route_counters::add(counters().deletes_dropped);  // counted per server where it was refused
  return dispatch_status::Done;
}

}  // namespace ithaca::route

namespace ithaca::route {

std::uint32_t pool_route::server_for(std::string_view key, proxy::worker_backends* backends) const {
  if (pool_->auto_eject() && backends != nullptr) {
    if (const proxy::distribution* live = backends->placement(pool_)) return pool_->locate(key, *live);
  }
  return pool_->locate(key);
}

std::string pool_destination_name(const proxy::pool& p, std::size_t i) {
  const proxy::backend_server& s = *p.servers()[i];
  return "host|pool=" + p.name() + "|id=" + std::to_string(i) + "|ap=" + s.address() + ":" + s.protocol_name() + ":" +
         (s.settings().tls.enabled ? "ssl" : "plain") +
         ":notcompressed|timeout=" + std::to_string(s.settings().timeout_ms) + "ms|keep_routing_prefix=false|msb=0";
}

namespace {

// mcrouter's name of a pool's hash function (HashSelector's "hash|NAME");
// ithaca's own distributions by their own names.
std::string pool_hash_name(proxy::distribution_kind k) {
  switch (k) {
    case proxy::distribution_kind::Ch3: return "Ch3";
    case proxy::distribution_kind::WeightedCh3: return "WeightedCh3";
    case proxy::distribution_kind::McrouterCrc32: return "Crc32";
    default: return std::string(kinds::to_string(k));
  }
}

}  // namespace

void pool_route::walk_handles(const protocol::request& req, handle_walk& w) const {
  const auto& servers = pool_->servers();
  int levels = 0;
  if (reliable_) {
    // mcrouter's asynclog takes the route's name, else the pool's.
    const std::string& n = name();
    w.line("asynclog:" + (n.starts_with("pool:") ? pool_->name() : n));
    w.enter();
    ++levels;
  }
  if (servers.size() > 1) {  // mcrouter's HashRoute of one child is that child
    w.line("selection|hash|" + pool_hash_name(pool_->placement()));
    w.enter();
    ++levels;
  }
  if (req.cmd == protocol::command::FlushAll) {
    for (std::size_t i = 0; i < servers.size(); ++i) w.line(pool_destination_name(*pool_, i));
  } else {
    w.line(pool_destination_name(*pool_, server_for(req.key(), w.backends())));
  }
  for (; levels > 0; --levels) w.leave();
}

}  // namespace ithaca::route

// ---- the kind: options, build. mcrouter's PoolRoute and "Pool|A" are read
// by the mcrouter reader (config/mcrouter_routes.cc), which places the pool
// its own way and makes these nodes.

namespace ithaca::route {

namespace {

struct pool_options final : config::route_options {
  std::string pool;
  bool reliable_deletes = false;
};

constexpr config::option_spec kPoolOptions[] = {
    config::pool_option<&pool_options::pool>("pool", nullptr, "the name of a pool under `pools:`"),
    config::flag_option<&pool_options::reliable_deletes>(
        "reliable_deletes", nullptr,
        "a delete its server could not take is spooled and replayed (mcrouter's asynclog)"),
};

const route* build_pool(tree_builder& b, const config::route_config& r) {
  const auto& o = config::options_of<pool_options>(r);
  std::shared_ptr<const proxy::pool> p = b.pool(o.pool);
  if (!p) return b.fail(r, "names pool '" + o.pool + "', which is not under `pools:`");
  return b.add<pool_route>(r.name.empty() ? "pool:" + o.pool : r.name, std::move(p), o.reliable_deletes);
}

constexpr config::route_kind_info kPoolInfo{
    "pool",
    nullptr,
    "a pool's servers by key hash (mcrouter's PoolRoute)",
    {},
    kPoolOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<pool_options>(); },
};

}  // namespace

extern constinit const kind_module kPoolKind{kPoolInfo, build_pool};

}  // namespace ithaca::route
