// The `shard_split` route (mcrouter's ShardSplitRoute, and a PoolRoute's
// `shard_splits`): a key "A:SHARD:rest" whose shard (the decimal digits
// between its first two colons) is split N ways is kept as N copies, under
// the key itself and under "A:SHARDaa:rest", "A:SHARDba:rest", ... (mcrouter's
// two-letter suffix: offset 1 is "aa", 26 is "za", 27 is "ab"). A delete goes
// to every copy (the others in the background, as detached requests); any
// other request goes to the one copy this host uses: the host's id modulo N
// (mcrouter: its host id; ithaca: a hash of the host name), so one router
// reads and writes one copy and the copies spread the shard's load over
// routers. Keys with no shard, or a shard not split, pass unchanged.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "async_runner.h"
#include "command_class.h"
#include "hash/hash_functions.h"
#include "mcrouter_json.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

// One shard's split: its size, or a move from old_size to new_size over
// [start, start + period) seconds of the Unix clock, each host switching at
// its own point of it (mcrouter's ShardSplitter).
struct shard_split_info {
  std::uint32_t new_size = 1;
  std::uint32_t old_size = 1;
  std::int64_t start = 0;
  std::int64_t period = 0;
  bool fanout_deletes = true;
};

// mcrouter's kMaxSplits: 26 * 26 suffixes and the key itself.
constexpr std::uint32_t kShardSplitMax = 26 * 26 + 1;
constexpr std::uint32_t kShardSplitHostModulo = 16384;

// This host's id (mcrouter's globals::hostid()): a hash of its name, the same
// for every worker and every start on this host.
std::uint32_t shard_split_host_id() {
  static const std::uint32_t id = [] {
    std::array<char, 256> name{};
    if (gethostname(name.data(), name.size() - 1) != 0) return std::uint32_t{0};
    return proxy::spooky_v2_hash32(std::string_view(name.data()), 0);
  }();
  return id;
}

// mcrouter's getShardId: the text between a key's first two colons, ending
// in a digit (and then all digits, for a lookup to find it).
bool shard_split_shard_of(std::string_view key, std::string_view& shard) {
  const std::size_t first = key.find(':');
  if (first == std::string_view::npos) return false;
  const std::size_t second = key.find(':', first + 1);
  if (second == std::string_view::npos || second == first + 1) return false;
  const char last = key[second - 1];
  if (last < '0' || last > '9') return false;
  shard = key.substr(first + 1, second - first - 1);
  return true;
}

class shard_split_route final : public route {
 public:
  shard_split_route(std::string name, const route& target, std::map<std::string, shard_split_info, std::less<>> splits)
      : route(std::move(name)), target_(target), splits_(std::move(splits)) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "shard_split"; }
  std::vector<const route*> children() const override { return {&target_}; }

 private:
  // The split of `key`'s shard, or null: not split.
  const shard_split_info* split_of(std::string_view key, std::string_view& shard) const;
  // The split size this host uses now.
  static std::uint32_t size_now(const shard_split_info& s);

  const route& target_;
  std::map<std::string, shard_split_info, std::less<>> splits_;
};

const shard_split_info* shard_split_route::split_of(std::string_view key, std::string_view& shard) const {
  key = key.substr(0, key.find("|#|"));  // the routing key
  if (!shard_split_shard_of(key, shard)) return nullptr;
  auto it = splits_.find(shard);
  return it == splits_.end() ? nullptr : &it->second;
}

std::uint32_t shard_split_route::size_now(const shard_split_info& s) {
  if (s.old_size == s.new_size) return s.new_size;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (now < static_cast<double>(s.start)) return s.old_size;
  if (now > static_cast<double>(s.start + s.period)) return s.new_size;
  const double point = (now - static_cast<double>(s.start)) / static_cast<double>(s.period);
  const double host = static_cast<double>(shard_split_host_id() % kShardSplitHostModulo) / kShardSplitHostModulo;
  return host < point ? s.new_size : s.old_size;
}

// Copy `offset` of `key` (whose shard is `shard`, a view into it) into `out`:
// the key with the two letters after its shard. False if it would not fit.
bool shard_split_key(std::string_view key, std::string_view shard, std::uint32_t offset, std::span<char> out,
                     std::size_t& size) {
  if (key.size() + 2 > out.size()) return false;
  const std::size_t at = static_cast<std::size_t>(shard.data() + shard.size() - key.data());
  std::memcpy(out.data(), key.data(), at);
  out[at] = static_cast<char>('a' + (offset - 1) % 26);
  out[at + 1] = static_cast<char>('a' + (offset - 1) / 26);
  std::memcpy(out.data() + at + 2, key.data() + at, key.size() - at);
  size = key.size() + 2;
  return true;
}

dispatch_status shard_split_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::request& req = slot.req;
  const protocol::command_class c = protocol::classify(req);
  if (req.keys.empty() || c == protocol::command_class::Flush) return target_.dispatch(slot, env);
  // Each key its own copy: a child slot per key whose copy is not the key
  // itself; the rest goes as it is when every key is its own.
  bool any = false;
  std::vector<std::uint32_t> offsets(req.keys.size(), 0);
  for (std::size_t i = 0; i < req.keys.size(); ++i) {
    std::string_view shard;
    const shard_split_info* s = split_of(req.keys[i], shard);
    if (s == nullptr) continue;
    const std::uint32_t n = size_now(*s);
    if (n <= 1) continue;
    if (c == protocol::command_class::Delete && s->fanout_deletes) {
      // Every other copy in the background; the key itself answers.
      for (std::uint32_t k = 1; k < n; ++k) {
        protocol::request copy = req;
        std::size_t size = 0;
        if (!shard_split_key(req.keys[i], shard, k, copy.scratch, size)) break;
        copy.keys.set(0, std::string_view(copy.scratch.data(), size));
        if (env.async != nullptr && env.async->send(target_, copy)) {
          route_counters::add(counters().async_sent);
        } else {
          route_counters::add(counters().async_dropped);
        }
      }
      continue;
    }
    offsets[i] = shard_split_host_id() % n;
    any = any || offsets[i] != 0;
  }
  if (!any) return target_.dispatch(slot, env);
  slot.push_frame(slot_frame{this, 0, 0, 0});
  for (std::size_t i = 0; i < req.keys.size(); ++i) {
    const std::uint32_t which = static_cast<std::uint32_t>(i);
    request_slot& child = slot.child_for_keys(i, std::span<const std::uint32_t>(&which, 1));
    if (offsets[i] != 0) {
      std::string_view shard;
      split_of(child.req.keys[0], shard);
      std::size_t size = 0;
      if (shard_split_key(child.req.keys[0], shard, offsets[i], child.req.scratch, size)) {
        child.req.keys.set(0, std::string_view(child.req.scratch.data(), size));
      }
    }
    slot.add_call();
    dispatch_child(target_, child, env);
  }
  return dispatch_status::Pending;
}

// Every key's child answered. A get's hits are gathered under the client's
// keys, in its order (one key whose child failed: that child's error line);
// any other request has one key, one child, whose answer it takes.
dispatch_status shard_split_route::resume(request_slot& slot, dispatch_env&) const {
  const std::size_t n = slot.children_in_use();
  if (n == 0) return dispatch_status::Done;
  const bool retrieval = protocol::classify(slot.req) == protocol::command_class::Retrieve;
  if (!retrieval || (n == 1 && slot.child_at(0).result.outcome != protocol::routed_outcome::Hits)) {
    std::swap(slot.result, slot.child_at(0).result);
    return dispatch_status::Done;
  }
  slot.result.prepare(slot.req);
  for (std::size_t i = 0; i < n; ++i) merge_hits(slot.result, slot.child_at(i).result, slot.child_at(i).key_map);
  slot.result.forget_raw_pieces();  // the servers' VALUE lines name the copies' keys
  return dispatch_status::Done;
}

// ---- the kind: options, how the config formats spell them, build.

struct shard_split_options final : config::route_options {
  std::map<std::string, shard_split_info, std::less<>> splits;
  std::int64_t fanout = 0;  // mcrouter's split_shard_fanout (by a Thrift request's ids: none in memcache's)
};

// One split: a size (mcrouter caps it at 677 with a log line; ithaca too,
// silently) or {old_split_size, new_split_size, split_start, migration_period,
// fanout_deletes}. False: not one.
bool read_shard_split(const YAML::Node& v, shard_split_info& out) {
  auto size = [](const YAML::Node& n, std::uint32_t& s) {
    std::int64_t x = 0;
    if (!config::mcrouter::as_int(n, x) || x <= 0) return false;
    s = static_cast<std::uint32_t>(std::min<std::int64_t>(x, kShardSplitMax));
    return true;
  };
  if (v.IsScalar()) {
    if (!size(v, out.new_size)) return false;
    out.old_size = out.new_size;
    return true;
  }
  if (!v.IsMap()) return false;
  out.fanout_deletes = false;  // mcrouter's default for the object form
  if (v["old_split_size"] && !size(v["old_split_size"], out.old_size)) return false;
  if (v["new_split_size"] && !size(v["new_split_size"], out.new_size)) return false;
  if (const YAML::Node s = v["split_start"]; s && (!config::mcrouter::as_int(s, out.start) || out.start < 0)) {
    return false;
  }
  if (const YAML::Node p = v["migration_period"]; p && (!config::mcrouter::as_int(p, out.period) || out.period < 0)) {
    return false;
  }
  if (const YAML::Node f = v["fanout_deletes"]; f && !config::mcrouter::as_bool(f, out.fanout_deletes)) return false;
  return true;
}

void read_shard_splits(config::route_kind_reader& in, const char* key, config::route_config&,
                       config::route_options& opts) {
  auto& o = static_cast<shard_split_options&>(opts);
  const YAML::Node& v = *in.value(key);
  if (!v.IsMap()) {
    in.fail_at(key, "ShardSplitter: config is not an object");
    return;
  }
  for (const auto kv : v) {
    const std::string shard = kv.first.Scalar();
    shard_split_info s;
    if (!read_shard_split(kv.second, s)) {
      in.fail_node(kv.second, "ShardSplitter: split config for " + shard +
                                  " is not a size from 1 or an object of old_split_size, new_split_size, "
                                  "split_start, migration_period, fanout_deletes");
      continue;
    }
    if (s.new_size > 1 || s.old_size > 1) o.splits[shard] = s;  // 1: as if not listed
  }
}

std::string show_shard_splits(const config::route_options& opts) {
  std::string out;
  for (const auto& [shard, s] : static_cast<const shard_split_options&>(opts).splits) {
    if (!out.empty()) out += ',';
    out += shard + ":" + std::to_string(s.new_size);
    if (s.old_size != s.new_size) out += "(from " + std::to_string(s.old_size) + ")";
  }
  return out;
}

void read_shard_split_fanout(config::route_kind_reader& in, const char* key, config::route_config&,
                             config::route_options& opts) {
  auto& o = static_cast<shard_split_options&>(opts);
  if (!config::mcrouter::as_int(*in.value(key), o.fanout) || o.fanout < 0 || o.fanout > UINT32_MAX) {
    in.fail_at(key, "ShardSplitRoute \"split_shard_fanout\" is not integer");
  }
}

constexpr config::child_slot kShardSplitSlots[] = {
    {"destination", "destination", "destination", false, 1, "ShardSplitRoute: no destination route"},
};
constexpr config::option_spec kShardSplitOptions[] = {
    config::custom_option("shard_splits", "shard_splits",
                          "shard id -> copies (2 to 677), or {old_split_size, new_split_size, split_start, "
                          "migration_period, fanout_deletes}",
                          read_shard_splits, show_shard_splits, "{\"1\": 3}", "{\"1\": 3}", true),
    config::custom_option(nullptr, "split_shard_fanout",
                          "mcrouter's: spreads by a Thrift request's ids, which memcache requests have none of",
                          read_shard_split_fanout, config::show_nothing, nullptr, "0"),
};

const route* build_shard_split(tree_builder& b, const config::route_config& r) {
  const route* target = b.child(r, "destination", true);
  if (target == nullptr) return nullptr;
  return b.add<shard_split_route>(b.name_of(r), *target, config::options_of<shard_split_options>(r).splits);
}

constexpr config::route_kind_info kShardSplitInfo{
    "shard_split",
    "ShardSplitRoute",
    "keeps the keys of split shards as several copies, one per router host",
    kShardSplitSlots,
    kShardSplitOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<shard_split_options>();
    },
};

}  // namespace

extern constinit const kind_module kShardSplitKind{kShardSplitInfo, build_shard_split};

}  // namespace ithaca::route
