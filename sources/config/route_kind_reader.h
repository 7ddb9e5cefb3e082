// Reading one route node of a registered kind (route_kind_info.h) from either
// file format: the generic part walks the kind's description (its children,
// its options, which are required) and the format's reader supplies what
// differs between ithaca's YAML and mcrouter's JSON: how a key's value is
// spelled and checked (a duration "10s" or an integer of seconds; YAML's
// yes/no), how children are read (mcrouter's lists flatten and take short
// forms), and the words of its messages. So a kind's module writes its
// options once and both readers read them.
// [the thread loading the config: main at start-up, a blocking-pool thread at
// SIGHUP; no lock] Internal to the config library and the kinds' modules.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "route_kind_info.h"
#include "router_config.h"

namespace ithaca::config {

class route_kind_reader {
 public:
  // Reads the node of kind `k` (its `type` already read) into `r`: r.module,
  // r.options (the format's defaults, then what the node says), the children
  // of each slot, then the kind's finish(). Mistakes are recorded through the
  // format's fail(); reading goes on so one pass reports the first of them.
  void read(const route_kind_info& k, route_config& r);
  // Only the options of kind `k` into `r` (r.module, r.options): a node the
  // reader makes around children of its own (mcrouter's PoolRoute `rates`).
  void read_options(const route_kind_info& k, route_config& r);

  const route_kind_info& kind() const { return *kind_; }
  virtual route_format format() const = 0;
  // "an all_sync route" (YAML) or "AllSyncRoute" (mcrouter), for messages.
  std::string what() const;

  // ---- the format's part. Each value reader returns true when the key is
  // present and its value valid (then `out` is set), records an error
  // when the value is wrong, and leaves `out` alone when the key is absent.
  // `key` is the option's spelling in this format.
  virtual bool has(const char* key) = 0;
  virtual bool seconds(const char* key, std::uint32_t& out) = 0;  // up to 30 days
  virtual bool flag(const char* key, bool& out) = 0;
  virtual bool choice(const char* key, std::span<const char* const> names, int& out) = 0;
  virtual bool text(const char* key, std::string& out) = 0;
  // Reads the routes of `slot` (written under `key`) into r.children with
  // the slot's role; a missing required slot is an error.
  virtual void children(const char* key, const child_slot& slot, route_config& r) = 0;
  // An error at the node, or at `key` (an option's spelling in this format).
  virtual void fail(std::string message) = 0;
  virtual void fail_at(const char* key, std::string message) = 0;

  // ---- for a Custom option's reader (option_spec::read) and a kind's
  // finish(): the raw value as both formats are parsed (yaml-cpp reads
  // mcrouter's JSON too) and the format's means of reading routes in it.
  // The value of `key` (marked as read), or nullptr when absent.
  virtual const YAML::Node* value(const char* key) = 0;
  // An error at `at` (a node inside the route node).
  virtual void fail_node(const YAML::Node& at, std::string message) = 0;
  // The one route written at `n` (YAML: a route or a shorthand; mcrouter:
  // exactly one route of what may be a list or a short form; `what` names
  // the place in its message), with `role`.
  virtual route_config route_at(const YAML::Node& n, const char* role, const char* what) = 0;
  // The routes written at `n` as a list (mcrouter's lists flatten, a string
  // is a short form or a named handle), each with `role`. mcrouter only.
  virtual std::vector<route_config> routes_at(const YAML::Node& n, const char* role) = 0;
  // Refuses the keys of the mapping `map` that are not `keys` (and a key
  // given twice) in the format's words; `what` names the mapping.
  virtual void check_keys(const YAML::Node& map, const std::string& what, std::initializer_list<const char*> keys) = 0;
  // Whether `n` could be read as a route without an error (mcrouter: a
  // string naming no handle and no route type cannot): for a kind that skips
  // such an entry as mcrouter does (a PoolRoute's shadows). YAML: true.
  virtual bool routable(const YAML::Node& n) {
    (void)n;
    return true;
  }
  // YAML's number under `key` of `map`, in [lo, hi] (above lo when
  // `open_lo`); true when present and valid, else "KEY: expected EXPECTED,
  // got ..." when present.
  bool number_in(const YAML::Node& map, const char* key, double& out, double lo, double hi, const char* expected,
                 bool open_lo);

 protected:
  ~route_kind_reader() = default;

 private:
  const route_kind_info* kind_ = nullptr;
};

// "a random route", "an all_sync route", "an l1l2 route".
std::string a_kind(std::string_view name);

// The spelling of an option or a slot in `format` (nullptr: it has none there).
const char* spelling(const option_spec& o, route_format format);
const char* spelling(const child_slot& s, route_format format);

}  // namespace ithaca::config
