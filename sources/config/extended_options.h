// memcached's `-o` sub-options (memcached 1.6.45's list, extstore's ext_*
// included), outside the TLS ones (tls_config.h). Each is checked with
// memcached's words; then it either sets what it means in ithaca (hashpower,
// idle_timeout, [no_]lru_crawler, no_hashexpand, ext_path, ext_item_size; and ithaca's own
// eviction=s3fifo|clock, cache.eviction) or is accepted
// with a note saying what ithaca does instead, which the start logs (`stats
// settings` shows what ithaca does). One that names memcached's Lua proxy is
// refused: ithaca's router is configured in YAML.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ithaca::config {

struct config;

// What the -o options given set (empty = not given), applied over the file's
// settings by apply_extended(); and the notes for the start's log.
struct extended_settings {
  std::optional<unsigned> hash_power;              // hashpower=N (2^N buckets)
  std::optional<uint64_t> idle_timeout_ms;         // idle_timeout=SECONDS
  std::optional<bool> lru_crawler;                 // lru_crawler / no_lru_crawler
  std::optional<bool> hash_expand;                 // no_hashexpand: false
  std::optional<std::string> large_value_dir;      // ext_path=FILE:SIZE: FILE's directory
  std::optional<uint64_t> large_value_disk_limit;  // ... and SIZE
  std::optional<uint64_t> large_value_threshold;   // ext_item_size=BYTES
  std::optional<bool> eviction_clock;              // eviction=clock|s3fifo (ithaca's own)
  // "-o hot_lru_pct=30: accepted, no effect: ...", one per option given
  // that ithaca takes without doing what memcached does with it.
  std::vector<std::string> notes;
};

// Takes one sub-option (NAME or NAME=VALUE; has_value tells "name=" from
// "name"). False with *error in memcached's words ("Illegal suboption
// \"x\"", "Initial hashtable multiplier of 5 is too low") when memcached
// would refuse it, or for the Lua proxy's options. [any thread]
bool parse_extended_option(std::string_view name, std::string_view value, bool has_value, extended_settings& out,
                           std::string* error);

// The settings `e` gives, over `c`'s. [the thread loading the config]
void apply_extended(const extended_settings& e, config& c);

}  // namespace ithaca::config
