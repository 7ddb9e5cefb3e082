// The `key_split` route (mcrouter's KeySplitRoute): each key is kept as
// `replicas` copies, replica 0 under the key itself and replica I under
// "KEY::I" (with a hash stop, "ROUTINGKEY::I|#|rest"), so a hot key's load
// spreads over the servers those keys hash to. Each router host uses one
// replica, its id modulo `replicas` (mcrouter: its host id; ithaca: a hash of
// the host name). A get reads that replica (with first_hit: every replica,
// answering with the first hit in replica order, else the last reply); a set
// writes it (with all_sync: every replica, the others in the background); a
// delete reaches every replica; anything else goes to the host's replica. A
// key too long to take the suffix (over 250 bytes with it) passes unchanged.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "async_runner.h"
#include "command_class.h"
#include "hash/hash_functions.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

constexpr std::uint32_t kKeySplitMinReplicas = 2;
constexpr std::uint32_t kKeySplitMaxReplicas = 1000;
constexpr std::size_t kKeySplitMaxKey = 250;  // memcached's; mcrouter checks key + "::999" against its 255

std::uint32_t key_split_host_id() {
  static const std::uint32_t id = [] {
    std::array<char, 256> name{};
    if (gethostname(name.data(), name.size() - 1) != 0) return std::uint32_t{0};
    return proxy::spooky_v2_hash32(std::string_view(name.data()), 0);
  }();
  return id;
}

// Replica `id` of `key` into `out`: "KEY::ID", or "ROUTINGKEY::ID|#|rest".
bool key_split_key(std::string_view key, std::uint32_t id, std::span<char> out, std::size_t& size) {
  char tail[16];
  const int n = std::snprintf(tail, sizeof tail, "::%u", static_cast<unsigned>(id));
  if (n <= 0 || key.size() + static_cast<std::size_t>(n) > std::min(out.size(), kKeySplitMaxKey)) return false;
  const std::size_t stop = std::min(key.find("|#|"), key.size());
  std::copy(key.begin(), key.begin() + static_cast<std::ptrdiff_t>(stop), out.begin());
  std::copy(tail, tail + n, out.begin() + static_cast<std::ptrdiff_t>(stop));
  std::copy(key.begin() + static_cast<std::ptrdiff_t>(stop), key.end(),
            out.begin() + static_cast<std::ptrdiff_t>(stop) + n);
  size = key.size() + static_cast<std::size_t>(n);
  return true;
}

class key_split_route final : public route {
 public:
  key_split_route(std::string name, const route& target, std::uint32_t replicas, bool all_sync, bool first_hit)
      : route(std::move(name)), target_(target), replicas_(replicas), all_sync_(all_sync), first_hit_(first_hit) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "key_split"; }
  std::vector<const route*> children() const override { return {&target_}; }

 private:
  enum : std::uint32_t { kOne, kFirstHit };
  // Copies of the request for the other replicas, in the background.
  void send_others(const protocol::request& req, std::uint32_t mine, dispatch_env& env) const;

  const route& target_;
  std::uint32_t replicas_;
  bool all_sync_;
  bool first_hit_;
};

void key_split_route::send_others(const protocol::request& req, std::uint32_t mine, dispatch_env& env) const {
  for (std::uint32_t id = 0; id < replicas_; ++id) {
    if (id == mine) continue;
    protocol::request copy = req;
    std::size_t size = 0;
    if (id > 0) {
      if (!key_split_key(req.key(), id, copy.scratch, size)) continue;
      copy.keys.set(0, std::string_view(copy.scratch.data(), size));
    }
    if (env.async != nullptr && env.async->send(target_, copy)) {
      route_counters::add(counters().async_sent);
    } else {
      route_counters::add(counters().async_dropped);
    }
  }
}

dispatch_status key_split_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::request& req = slot.req;
  const protocol::command_class c = protocol::classify(req);
  if (req.keys.empty() || c == protocol::command_class::Flush) return target_.dispatch(slot, env);
  for (std::size_t i = 0; i < req.keys.size(); ++i) {
    if (req.keys[i].size() + 5 > kKeySplitMaxKey) return target_.dispatch(slot, env);  // "::999" would not fit
  }
  const std::uint32_t mine = key_split_host_id() % replicas_;
  const bool one_key = req.keys.size() == 1;
  if (c == protocol::command_class::Retrieve && first_hit_ && one_key && req.cmd == protocol::command::Get) {
    slot.push_frame(slot_frame{this, kFirstHit, 0, 0});
    for (std::uint32_t id = 0; id < replicas_; ++id) {
      request_slot& child = slot.child(id);
      std::size_t size = 0;
      if (id > 0 && key_split_key(req.key(), id, child.req.scratch, size)) {
        child.req.keys.set(0, std::string_view(child.req.scratch.data(), size));
      }
      slot.add_call();
      dispatch_child(target_, child, env);
    }
    return dispatch_status::Pending;
  }
  if (one_key && (c == protocol::command_class::Delete || (all_sync_ && req.cmd == protocol::command::Set))) {
    send_others(req, mine, env);
  }
  if (mine == 0) return target_.dispatch(slot, env);
  // This host's replica: a child slot per key, under its replica key.
  slot.push_frame(slot_frame{this, kOne, 0, 0});
  for (std::size_t i = 0; i < req.keys.size(); ++i) {
    const auto which = static_cast<std::uint32_t>(i);
    request_slot& child = slot.child_for_keys(i, std::span<const std::uint32_t>(&which, 1));
    std::size_t size = 0;
    if (key_split_key(child.req.keys[0], mine, child.req.scratch, size)) {
      child.req.keys.set(0, std::string_view(child.req.scratch.data(), size));
    }
    slot.add_call();
    dispatch_child(target_, child, env);
  }
  return dispatch_status::Pending;
}

dispatch_status key_split_route::resume(request_slot& slot, dispatch_env&) const {
  const std::size_t n = slot.children_in_use();
  if (n == 0) return dispatch_status::Done;
  const bool retrieval = protocol::classify(slot.req) == protocol::command_class::Retrieve;
  std::size_t pick = 0;  // the child whose answer the parent takes
  if (slot.top_frame().state == kFirstHit) {
    pick = n - 1;  // no hit: the last reply, as mcrouter's
    for (std::size_t i = 0; i < n; ++i) {
      const protocol::routed_result& r = slot.child_at(i).result;
      if (r.outcome == protocol::routed_outcome::Hits && r.key_count() > 0 && r.hit(0).found) {
        pick = i;
        break;
      }
    }
  } else if (n > 1 || !retrieval) {
    if (!retrieval) {
      std::swap(slot.result, slot.child_at(0).result);
      return dispatch_status::Done;
    }
    slot.result.prepare(slot.req);
    for (std::size_t i = 0; i < n; ++i) merge_hits(slot.result, slot.child_at(i).result, slot.child_at(i).key_map);
    slot.result.forget_raw_pieces();  // the servers' VALUE lines name the copies' keys
    return dispatch_status::Done;
  }
  request_slot& c = slot.child_at(pick);
  if (!retrieval || c.result.outcome != protocol::routed_outcome::Hits) {
    std::swap(slot.result, c.result);
    return dispatch_status::Done;
  }
  slot.result.prepare(slot.req);
  const std::uint32_t first = 0;
  merge_hits(slot.result, c.result, std::span<const std::uint32_t>(&first, 1));
  slot.result.forget_raw_pieces();  // the servers' VALUE lines name the copies' keys
  return dispatch_status::Done;
}

// ---- the kind: options, how the config formats spell them, build.

struct key_split_options final : config::route_options {
  std::string replicas;  // 2 to 1000 (Text: the formats' integers alike)
  bool all_sync = false;
  bool first_hit = false;
};

bool key_split_replicas(const std::string& text, std::uint32_t& out) {
  unsigned long v = 0;
  char* end = nullptr;
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  v = std::strtoul(text.c_str(), &end, 10);
  if (*end != '\0' || v < kKeySplitMinReplicas || v > kKeySplitMaxReplicas) return false;
  out = static_cast<std::uint32_t>(v);
  return true;
}

void finish_key_split(config::route_kind_reader& in, config::route_config& r) {
  std::uint32_t n = 0;
  if (!key_split_replicas(config::options_of<key_split_options>(r).replicas, n)) {
    in.fail_at("replicas", "KeySplitRoute: replicas is not an integer from 2 to 1000");
  }
  if (in.format() == config::route_format::Mcrouter && !in.has("all_sync")) {
    in.fail("KeySplitRoute: all_sync not specified");
  }
}

constexpr config::child_slot kKeySplitSlots[] = {
    {"destination", "destination", "destination", false, 1, "KeySplitRoute: no destination route"},
};
constexpr config::option_spec kKeySplitOptions[] = {
    config::text_option<&key_split_options::replicas>("replicas", "replicas",
                                                      "copies of each key (2 to 1000): KEY, KEY::1, ...", true, "3"),
    config::flag_option<&key_split_options::all_sync>("all_sync", "all_sync",
                                                      "a set writes every replica (else this host's)"),
    config::flag_option<&key_split_options::first_hit>(
        "first_hit", "first_hit", "a get reads every replica and answers the first hit (else this host's)"),
};

const route* build_key_split(tree_builder& b, const config::route_config& r) {
  const route* target = b.child(r, "destination", true);
  if (target == nullptr) return nullptr;
  const auto& o = config::options_of<key_split_options>(r);
  std::uint32_t n = 0;
  if (!key_split_replicas(o.replicas, n)) return b.fail(r, "replicas must be from 2 to 1000");
  return b.add<key_split_route>(b.name_of(r), *target, n, o.all_sync, o.first_hit);
}

constexpr config::route_kind_info kKeySplitInfo{
    "key_split",
    "KeySplitRoute",
    "keeps each key as several replicas under derived keys, one per router host",
    kKeySplitSlots,
    kKeySplitOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<key_split_options>();
    },
    config::route_kind_info::collapse::None,
    finish_key_split,
};

}  // namespace

extern constinit const kind_module kKeySplitKind{kKeySplitInfo, build_key_split};

}  // namespace ithaca::route
