// The `modify_key` route (mcrouter's ModifyKeyRoute): the target sees each
// key rewritten; the client's reply keeps its own keys.
//   replace_key_prefix  a key starting with it has it replaced by
//                       ensure_key_prefix;
//   ensure_key_prefix   otherwise a key not starting with it gets it in
//                       front (with modify_inplace, in place of as many of
//                       the key's first bytes);
//   set_routing_prefix  the key's routing prefix becomes this ("" none);
//   set_key_suffix      appended to every key.
// A rewritten key that is not a valid key (empty, over 250 bytes, a space or
// a control byte) is answered `SERVER_ERROR ModifyKeyRoute: invalid key:
// ...` (one key; in a multi-key get that key is a miss), as mcrouter's
// LOCAL_ERROR. A multi-key get is sent as one request per key (mcrouter
// routes each key on its own) and its hits merged back in order.
//
// TODO(routing prefixes): ithaca's keys carry no routing prefix yet
// ("/region/cluster/key"): a key is all "key without route", so
// set_routing_prefix puts its prefix in front of every key and never
// replaces one the client sent. Once the request layer splits a key's
// routing prefix, modified_key() must take it from there.
#include <optional>
#include <string>
#include <string_view>

#include "command_class.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"
#include "yaml_section.h"

namespace ithaca::route {

namespace {

struct modify_key_options final : config::route_options {
  std::string routing_prefix;
  bool has_routing_prefix = false;  // set_routing_prefix given (even "")
  std::string key_prefix;
  std::string replace_prefix;
  bool has_replace_prefix = false;
  std::string key_suffix;
  bool modify_inplace = false;
};

class modify_key_route final : public route {
 public:
  modify_key_route(std::string name, const route& target, const modify_key_options& o)
      : route(std::move(name)), target_(target), o_(o) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "modify_key"; }
  std::vector<const route*> children() const override { return {&target_}; }

  // The key the target sees, or nullopt when it is the client's.
  std::optional<std::string> modified_key(std::string_view key) const;

 private:
  // Writes key i's rewritten key into child `c` (its only key, in its
  // scratch); false and an error in c.result when it is not a valid key.
  bool set_child_key(request_slot& c, std::string_view key) const;
  const route& target_;
  modify_key_options o_;
};

// Why `key` is not one memcached takes, or nullptr.
const char* modify_key_invalid(std::string_view key) {
  if (key.empty()) return "invalid key: missing";
  if (key.size() > protocol::kMaxKeyLength) return "invalid key: too long";
  for (const char ch : key) {
    const auto b = static_cast<unsigned char>(ch);
    if (b <= 0x20 || b == 0x7f) return "invalid key: contains space or control character";
  }
  return nullptr;
}

}  // namespace

std::optional<std::string> modify_key_route::modified_key(std::string_view key) const {
  // TODO(routing prefixes): the key's own routing prefix and the rest.
  const std::string_view own_prefix;
  std::string_view rest = key;
  const std::string_view rp = o_.has_routing_prefix ? std::string_view(o_.routing_prefix) : own_prefix;
  const std::string_view prefix = o_.key_prefix;
  if (o_.has_replace_prefix && rest.starts_with(o_.replace_prefix)) {
    rest.remove_prefix(o_.replace_prefix.size());
    return std::string(rp).append(prefix).append(rest).append(o_.key_suffix);
  }
  if (!rest.starts_with(prefix)) {
    if (o_.modify_inplace && rest.size() >= prefix.size()) rest.remove_prefix(prefix.size());
    return std::string(rp).append(prefix).append(rest).append(o_.key_suffix);
  }
  if (o_.has_routing_prefix && rp != own_prefix) return std::string(rp).append(rest).append(o_.key_suffix);
  if (!o_.key_suffix.empty()) return std::string(key).append(o_.key_suffix);
  return std::nullopt;
}

bool modify_key_route::set_child_key(request_slot& c, std::string_view key) const {
  const std::optional<std::string> k = modified_key(key);
  const std::string_view use = k ? std::string_view(*k) : key;
  if (const char* why = modify_key_invalid(use)) {
    refuse(c.req, c.result, std::string("SERVER_ERROR ModifyKeyRoute: ") + why,
           protocol::binary_status::InvalidArguments);
    return false;
  }
  std::copy(use.begin(), use.end(), c.req.scratch.begin());
  c.req.keys.clear();
  c.req.keys.push_back(std::string_view(c.req.scratch.data(), use.size()));
  // A meta key sent base64 ('b') is decoded in scratch already: the new one
  // is plain bytes there too, re-encoded by the codec when it must be.
  return true;
}

dispatch_status modify_key_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::request& req = slot.req;
  bool changes = false;
  for (std::size_t i = 0; i < req.keys.size() && !changes; ++i) changes = modified_key(req.keys[i]).has_value();
  bool invalid = false;
  for (std::size_t i = 0; i < req.keys.size() && !changes && !invalid; ++i) {
    invalid = modify_key_invalid(req.keys[i]) != nullptr;
  }
  if (!changes && !invalid) return target_.dispatch(slot, env);
  slot.push_frame({this, 0, static_cast<std::uint32_t>(req.keys.size()), 0});
  if (req.keys.size() == 1) {
    request_slot& c = slot.child(0);
    if (!set_child_key(c, req.keys[0])) {
      slot.result = c.result;
      slot.pop_frame();
      return dispatch_status::Pending;  // no calls: ready at once, in order
    }
    slot.add_call();
    dispatch_child(target_, c, env);
    return dispatch_status::Pending;
  }
  // A multi-key get: one child per key.
  slot.result.prepare(req);
  slot.result.outcome = protocol::routed_outcome::Hits;
  for (std::uint32_t i = 0; i < req.keys.size(); ++i) {
    request_slot& c = slot.child(i);
    c.key_map.assign(1, i);
    if (!set_child_key(c, req.keys[i])) continue;  // resume: a failed miss
    slot.add_call();
    dispatch_child(target_, c, env);
  }
  return dispatch_status::Pending;
}

// Key i's answer from child `c` (its only key), without the VALUE line the
// server sent, which names the rewritten key: the client's reply is
// rendered anew with its own key.
void modify_key_copy_hit(protocol::routed_result& into, std::size_t i, const protocol::routed_result& from) {
  if (from.outcome != protocol::routed_outcome::Hits) {
    into.set_failed(i, true);
    ++into.failed_keys;
    return;
  }
  const protocol::routed_result::key_hit& h = from.hit(0);
  if (h.found) into.set_hit(i, h.flags, h.cas, from.data(h));
  if (h.failed) {
    into.set_failed(i, true);
    ++into.failed_keys;
  }
}

dispatch_status modify_key_route::resume(request_slot& slot, dispatch_env&) const {
  const std::uint32_t n = slot.top_frame().count;
  if (n == 1) {
    const protocol::routed_result& from = slot.child_at(0).result;
    if (from.outcome == protocol::routed_outcome::Hits) {
      slot.result.prepare(slot.req);
      slot.result.outcome = protocol::routed_outcome::Hits;
      modify_key_copy_hit(slot.result, 0, from);
    } else {
      slot.result = from;
    }
    return dispatch_status::Done;
  }
  for (std::uint32_t i = 0; i < n; ++i) modify_key_copy_hit(slot.result, i, slot.child_at(i).result);
  return dispatch_status::Done;
}

// ---- the kind: options, how the config formats spell them, build.

namespace {

constexpr config::child_slot kModifyKeySlots[] = {
    {"target", "target", "target", false, 1, "ModifyKeyRoute: no target"},
};
bool modify_key_routing_prefix_ok(std::string_view p);

// set_routing_prefix: "" or "/region/cluster/", and whether it was given.
void modify_key_read_routing_prefix(config::route_kind_reader& in, const char* key, config::route_config&,
                                    config::route_options& opts) {
  auto& o = static_cast<modify_key_options&>(opts);
  const YAML::Node& v = *in.value(key);
  const std::string text = v.IsScalar() ? v.Scalar() : "";
  if (!v.IsScalar() || !modify_key_routing_prefix_ok(text)) {
    in.fail_node(v, in.format() == config::route_format::Yaml
                        ? "set_routing_prefix: expected \"\" or a routing prefix (/region/cluster/), got " +
                              config::describe_node(v)
                        : "ModifyKeyRoute: set_routing_prefix: '" + text + "' is not a routing prefix");
    return;
  }
  o.routing_prefix = text;
  o.has_routing_prefix = true;
}
std::string modify_key_show_routing_prefix(const config::route_options& opts) {
  const auto& o = static_cast<const modify_key_options&>(opts);
  return o.has_routing_prefix ? "\"" + o.routing_prefix + "\"" : std::string();
}

// replace_key_prefix: any text (checked by finish), and whether it was given.
void modify_key_read_replace(config::route_kind_reader& in, const char* key, config::route_config&,
                             config::route_options& opts) {
  auto& o = static_cast<modify_key_options&>(opts);
  if (in.text(key, o.replace_prefix)) o.has_replace_prefix = true;
}
std::string modify_key_show_replace(const config::route_options& opts) {
  const auto& o = static_cast<const modify_key_options&>(opts);
  return o.has_replace_prefix ? "\"" + o.replace_prefix + "\"" : std::string();
}

constexpr config::option_spec kModifyKeyOptions[] = {
    config::custom_option("set_routing_prefix", "set_routing_prefix",
                          "the routing prefix every key gets (/region/cluster/, or \"\" for none)",
                          modify_key_read_routing_prefix, modify_key_show_routing_prefix, "/a/b/", "\"/a/b/\""),
    config::text_option<&modify_key_options::key_prefix>("ensure_key_prefix", "ensure_key_prefix",
                                                         "a prefix every key must start with (added when missing)"),
    config::custom_option("replace_key_prefix", "replace_key_prefix",
                          "a key prefix replaced by ensure_key_prefix where a key has it", modify_key_read_replace,
                          modify_key_show_replace, "\"old:\"", "\"old:\""),
    config::text_option<&modify_key_options::key_suffix>("set_key_suffix", "set_key_suffix", "appended to every key"),
    config::flag_option<&modify_key_options::modify_inplace>(
        "modify_inplace", "modify_inplace",
        "ensure_key_prefix overwrites the key's first bytes instead of going in front"),
};

bool modify_key_routing_prefix_ok(std::string_view p) {
  if (p.empty()) return true;
  // "/region/cluster/": three slashes, two non-empty parts.
  if (p.size() < 5 || p.front() != '/' || p.back() != '/') return false;
  const std::size_t mid = p.find('/', 1);
  return mid != std::string_view::npos && mid > 1 && mid + 1 < p.size() - 1 && p.find('/', mid + 1) == p.size() - 1 &&
         modify_key_invalid(p) == nullptr;
}

void finish_modify_key(config::route_kind_reader& reader, config::route_config& r) {
  const auto& o = config::options_of<modify_key_options>(r);
  const bool yaml = reader.format() == config::route_format::Yaml;
  auto bad = [&](const char* key, const std::string& why) {
    if (yaml) {
      reader.fail_at(key, std::string(key) + ": " + why);
    } else {
      reader.fail("ModifyKeyRoute: " + why);
    }
  };
  struct part {
    const char* key;
    const char* what;
    const std::string* value;
  };
  for (const part& p : {part{"ensure_key_prefix", "key prefix", &o.key_prefix},
                        part{"replace_key_prefix", "key prefix", &o.replace_prefix},
                        part{"set_key_suffix", "key suffix", &o.key_suffix}}) {
    if (const char* why = p.value->empty() ? nullptr : modify_key_invalid(*p.value)) {
      bad(p.key, std::string("invalid ") + p.what + " '" + *p.value + "', " + why);
    }
  }
  // mcrouter refuses modify_inplace written beside replace_key_prefix; ithaca
  // only when it is on (false changes nothing).
  if (o.modify_inplace && o.has_replace_prefix) {
    bad("modify_inplace", "replace_key_prefix and modify_inplace cannot be used together");
  }
}

const route* build_modify_key(tree_builder& b, const config::route_config& r) {
  const route* target = b.child(r, "target", true);
  if (target == nullptr) return nullptr;
  return b.add<modify_key_route>(b.name_of(r), *target, config::options_of<modify_key_options>(r));
}

constexpr config::route_kind_info kModifyKeyInfo{
    "modify_key",
    "ModifyKeyRoute",
    "rewrites keys: a prefix ensured or replaced, a suffix, a routing prefix",
    kModifyKeySlots,
    kModifyKeyOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<modify_key_options>();
    },
    config::route_kind_info::collapse::None,
    finish_modify_key,
};

}  // namespace

extern constinit const kind_module kModifyKeyKind{kModifyKeyInfo, build_modify_key};

}  // namespace ithaca::route
