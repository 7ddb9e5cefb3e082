// A route kind's configuration side, as its module describes it
// (route/routes/KIND_route.cc): its names in ithaca's YAML and in mcrouter's
// JSON, its children and its options, each with a one-line doc. Both config
// readers read every registered kind from this description
// (route_kind_reader.h), so a kind's options are written in one place, its
// module, whichever file format names them.
//
// The registry is filled by the route layer (route::register_route_kinds),
// once, before any config is read [main at start-up, a test's main]: config
// cannot include the modules, which hold the runtime routes above it.
// Read-only afterwards, from any thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace ithaca::config {

// Which file a route node came from: how its keys are spelled, what its
// values look like (a duration "10s" or an integer of seconds) and which
// defaults and messages apply.
enum class route_format : std::uint8_t { Yaml, Mcrouter };

// Every kind's options derive from this (a plain struct of fields with their
// defaults); the kind's build function casts back to its own type.
struct route_options {
  virtual ~route_options() = default;
};

enum class option_type : std::uint8_t {
  Seconds,  // std::uint32_t: YAML a duration in whole seconds (10s, 5m, 0), mcrouter an integer; up to 30 days
  Flag,     // bool
  Choice,   // int: the index of one of `choices`
  Text,     // std::string, one line
  Custom,   // read by the option's own function (option_spec::read) from the
            // raw value: nested mappings, lists, per-class tables
};

class route_kind_reader;
struct route_config;

// One option of a kind. Made by the helpers below, which tie it to the
// field of the kind's options it fills.
struct option_spec {
  const char* name;      // ithaca's YAML key
  const char* mcrouter;  // mcrouter's JSON key; nullptr: not in mcrouter files
  option_type type;
  const char* doc;  // one line: what it means (errors quote it)
  bool required = false;
  std::span<const char* const> choices = {};  // Choice: the names, by index
  void* (*field)(route_options&) = nullptr;   // where the value goes (not Custom)
  // Text: the value names a pool under `pools:` (route_check.cc checks it).
  bool names_pool = false;
  // Custom: reads the value of `key` (its spelling in the reader's format)
  // into the options; shows what it read (describe_options); and a value each
  // format accepts, as that format spells it (docs, and the registry's test;
  // a Text option may give one too).
  void (*read)(route_kind_reader& in, const char* key, route_config& r, route_options& out) = nullptr;
  std::string (*show)(const route_options& o) = nullptr;
  const char* yaml_sample = nullptr;
  const char* mcrouter_sample = nullptr;
};

namespace detail {
template <class O, class T>
O owner_of(T O::*);
template <class O, class T>
T member_of(T O::*);
template <auto Field, class T>
inline constexpr bool is_field_of = std::is_same_v<decltype(member_of(Field)), T>;
template <auto Field>
void* field_of(route_options& o) {
  using owner = decltype(owner_of(Field));
  return &(static_cast<owner&>(o).*Field);
}
}  // namespace detail

template <auto Field>
constexpr option_spec seconds_option(const char* name, const char* mcrouter, const char* doc, bool required = false) {
  static_assert(detail::is_field_of<Field, std::uint32_t>);
  return {name, mcrouter, option_type::Seconds, doc, required, {}, &detail::field_of<Field>};
}
template <auto Field>
constexpr option_spec flag_option(const char* name, const char* mcrouter, const char* doc) {
  static_assert(detail::is_field_of<Field, bool>);
  return {name, mcrouter, option_type::Flag, doc, false, {}, &detail::field_of<Field>};
}
template <auto Field>
constexpr option_spec choice_option(const char* name, const char* mcrouter, std::span<const char* const> choices,
                                    const char* doc) {
  static_assert(detail::is_field_of<Field, int>);
  return {name, mcrouter, option_type::Choice, doc, false, choices, &detail::field_of<Field>};
}
// `sample`: a value both formats accept (the registry's test writes it;
// without one it writes "text").
template <auto Field>
constexpr option_spec text_option(const char* name, const char* mcrouter, const char* doc, bool required = false,
                                  const char* sample = nullptr) {
  static_assert(detail::is_field_of<Field, std::string>);
  option_spec o{name, mcrouter, option_type::Text, doc, required, {}, &detail::field_of<Field>};
  o.yaml_sample = sample;
  o.mcrouter_sample = sample;
  return o;
}
// A Text option whose value is the name of a pool under `pools:`.
template <auto Field>
constexpr option_spec pool_option(const char* name, const char* mcrouter, const char* doc) {
  option_spec o = text_option<Field>(name, mcrouter, doc, true);
  o.names_pool = true;
  return o;
}
// An option its kind reads itself (a table, a list of entries): `read` gets
// the reader, through which it sees the raw value and reports errors.
constexpr option_spec custom_option(const char* name, const char* mcrouter, const char* doc,
                                    void (*read)(route_kind_reader&, const char*, route_config&, route_options&),
                                    std::string (*show)(const route_options&), const char* yaml_sample,
                                    const char* mcrouter_sample, bool required = false) {
  option_spec o{name, mcrouter, option_type::Custom, doc, required};
  o.read = read;
  o.show = show;
  o.yaml_sample = yaml_sample;
  o.mcrouter_sample = mcrouter_sample;
  return o;
}

// Where a kind's children are written: one key holding a route, or a list
// of them. The children read from it carry `role` (route_config::role).
struct child_slot {
  const char* role;
  const char* name;      // YAML key
  const char* mcrouter;  // mcrouter key; nullptr: not in mcrouter files
  bool list;             // a list of routes (else exactly one)
  unsigned min;          // a list: at least this many (YAML; mcrouter: see collapse)
  // mcrouter's own words when the key is missing ("ModifyExptimeRoute: no
  // target"); nullptr: "TYPE: no KEY route".
  const char* mcrouter_missing = nullptr;
  // A list slot: YAML also takes one route written without a list.
  bool single_ok = false;
  // A list slot: at most this many (0: no limit), which the kind's finish()
  // checks in its format's words (mcrouter's ShadowRoute takes a list of one).
  unsigned max = 0;
};

struct route_kind_info {
  const char* name;      // ithaca's `type:` ("all_sync")
  const char* mcrouter;  // mcrouter's type ("AllSyncRoute"); nullptr: none
  const char* summary;   // one line, for the README-style lists and hints
  std::span<const child_slot> children;
  std::span<const option_spec> options;
  // A new options object holding the kind's defaults for `format` (mcrouter's
  // defaults differ for some options: MissFailoverRoute's
  // return_best_on_error is false there).
  std::shared_ptr<route_options> (*make_options)(route_format format);
  // mcrouter's reductions of a list kind (its children under `children`, or
  // the short form "TYPE|..."): none, no child is a NullRoute, or also one
  // child is that child (makeNullOrSingletonRoute).
  // ScalarIsChild: a string in place of the object is the route it names
  // (OperationSelectorRoute's "if not an object, the route itself").
  enum class collapse : std::uint8_t { None, EmptyIsNull, NullOrSingleton, ScalarIsChild };
  collapse mcrouter_collapse = collapse::None;
  // After the generic reading: the kind's own checks across options and
  // children (errors through the reader), and mcrouter's reductions
  // (ModifyExptimeRoute with action min and exptime 0 is its target).
  // nullptr: none.
  void (*finish)(route_kind_reader& reader, route_config& r) = nullptr;
  // mcrouter: a string in place of the object ("ErrorRoute|text") is the
  // value of this Text option (its mcrouter spelling); nullptr: an object
  // (or, for a list kind, the short form's children) is required.
  const char* mcrouter_scalar = nullptr;
};

// Registration [main, before any config is read]. Names must be unique.
void register_route_kind(const route_kind_info& k);
// Every registered kind, in registration order.
std::span<const route_kind_info* const> route_kinds();
const route_kind_info* find_route_kind(std::string_view name);
const route_kind_info* find_mcrouter_kind(std::string_view mcrouter_type);

// A node of registered kind `name` made by a reader or the builder rather
// than read from a file (mcrouter's NullRoute for a list with no child, an
// ErrorRoute where no operation policy applies, the builder's fallbacks):
// `format`'s defaults, then `values` for Text options and Flag options
// ("true" or "false") by their ithaca name.
route_config module_node(std::string_view name, route_format format, int line,
                         std::initializer_list<std::pair<const char*, std::string>> values = {});

// The options of a node of a registered kind, as its module's type.
template <class O>
const O& options_of(const route_config& r);

// "l1l2 exptime=60": a node's kind and options, for tests and logs.
std::string describe_options(const route_config& r);

// A Custom option's show() for one describe_options leaves out (mcrouter's
// alone, which are refused or only checked).
std::string show_nothing(const route_options&);

// r becomes its only child (its role cleared): mcrouter's reductions of a
// route with one child where it needs more ("a list of one is its route").
void become_only_child(route_config& r);

// A number as describe_options shows it: "0.5", "1000" (%g).
std::string number_text(double v);

// The pool a node's kind names (a Text option marked names_pool), or
// nullptr: a kind that names none.
const std::string* pool_named(const route_config& r);

}  // namespace ithaca::config

#include "router_config.h"

template <class O>
const O& ithaca::config::options_of(const route_config& r) {
  return static_cast<const O&>(*r.options);
}
