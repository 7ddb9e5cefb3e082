#include "extended_options.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "config.h"
#include "fail.h"

namespace ithaca::config {

namespace {

// One option's handler: the value (empty without one), whether "=" was
// given, what to fill, the error.
struct option_call {
  std::string_view name;
  std::string_view value;
  bool has_value;
  extended_settings& out;
  std::string* error;
};
using handler = bool (*)(option_call& c);

// What ithaca does instead of what memcached does with the option.
constexpr const char* kNoSlabs = "ithaca allocates items with malloc: there are no slab pages to reassign or move";
constexpr const char* kNoSegments =
    "ithaca's store evicts by one CLOCK: it has no hot, warm, cold or temporary LRU segments";
constexpr const char* kOwnHash = "ithaca hashes keys with its own per-start seeded 64-bit hash";
constexpr const char* kCrawlerPace =
    "ithaca's dumps stream without pausing, and the GC sweep (cache.gc_interval) reclaims "
    "expired items";
constexpr const char* kWatchBuffers = "each ithaca watcher has a fixed 64 KiB buffer";
constexpr const char* kExtstore =
    "ithaca keeps values above cache.large_value_threshold in one unlinked temp file in "
    "cache.large_value_dir, evicting the coldest beyond cache.large_value_disk_limit";
constexpr const char* kClasses = "ithaca's size classes only count items for `stats slabs`; -f and -n shape them";

void note(option_call& c, const char* what) {
  std::string line = "-o ";
  line.append(c.name);
  if (c.has_value) line.append("=").append(c.value);
  line.append(": accepted, no effect: ").append(what);
  c.out.notes.push_back(std::move(line));
}

// memcached's "Missing X argument" family: the option needs "=VALUE".
bool need_value(option_call& c, const char* missing) {
  if (c.has_value && !c.value.empty()) return true;
  return fail(c.error, std::string(missing));
}

// memcached's safe_strtoul / safe_strtol: a decimal number, nothing after it.
bool number(std::string_view v, int64_t& out) {
  if (v.empty()) return false;
  std::string text(v);
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  out = n;
  return true;
}
bool real(std::string_view v, double& out) {
  if (v.empty()) return false;
  std::string text(v);
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return *end == '\0';
}

// "could not parse argument to X" when the value is not a number in [lo, hi].
bool numeric(option_call& c, int64_t lo, int64_t hi, int64_t& n) {
  std::string name(c.name);
  if (!need_value(c, ("Missing " + name + " argument").c_str())) return false;
  if (!number(c.value, n) || n < lo || n > hi) {
    return fail(c.error, "could not parse argument to " + name);
  }
  return true;
}

// A number checked as memcached checks it, then a note.
bool numeric_note(option_call& c, int64_t lo, int64_t hi, const char* what) {
  int64_t n = 0;
  if (!numeric(c, lo, hi, n)) return false;
  note(c, what);
  return true;
}

bool silent(option_call&) { return true; }

// --- with a meaning in ithaca ---

bool hashpower(option_call& c) {
  if (!need_value(c, "Missing numeric argument for hashpower")) return false;
  int64_t n = 0;
  if (!number(c.value, n)) return fail(c.error, "Missing numeric argument for hashpower");
  if (n < 12) {
    return fail(c.error, "Initial hashtable multiplier of " + std::to_string(n) + " is too low");
  }
  if (n > 32) {
    return fail(c.error, "Initial hashtable multiplier of " + std::to_string(n) +
                             " is too high\nChoose a value based on \"STAT hash_power_level\" from a "
                             "running instance");
  }
  c.out.hash_power = static_cast<unsigned>(n);
  return true;
}

bool idle_timeout(option_call& c) {
  if (!need_value(c, "Missing numeric argument for idle_timeout")) return false;
  int64_t s = 0;
  if (!number(c.value, s) || s < 0 || static_cast<uint64_t>(s) > kIdleTimeoutRange.max / 1000) {
    return fail(c.error, "idle_timeout: expected seconds from 0 to " + std::to_string(kIdleTimeoutRange.max / 1000) +
                             ", got '" + std::string(c.value) + "'");
  }
  c.out.idle_timeout_ms = static_cast<uint64_t>(s) * 1000;
  return true;
}

bool no_hashexpand(option_call& c) {
  c.out.hash_expand = false;
  return true;
}

// ithaca's own (memcached has no such option): cache.eviction.
bool eviction_policy_option(option_call& c) {
  if (c.value == "s3fifo" || c.value == "clock") {
    c.out.eviction_clock = c.value == "clock";
    return true;
  }
  return fail(c.error, "eviction: expected s3fifo or clock, got '" + std::string(c.value) + "'");
}

bool lru_crawler_on(option_call& c) {
  c.out.lru_crawler = true;
  return true;
}
bool lru_crawler_off(option_call& c) {
  c.out.lru_crawler = false;
  return true;
}

// ext_path=FILE:SIZE[:BUCKET], SIZE with m, g, t or p (memcached's
// storage_conf_parse): FILE's directory holds ithaca's large-value file, SIZE
// is its disk budget.
bool ext_path(option_call& c) {
  if (!need_value(c, "missing argument to ext_path, ie: ext_path=/d/file:5G")) return false;
  std::string_view v = c.value;
  const size_t colon = v.find(':');
  const std::string_view file = v.substr(0, colon);
  std::string_view size = colon == std::string_view::npos ? std::string_view{} : v.substr(colon + 1);
  std::string_view bucket;
  if (const size_t second = size.find(':'); second != std::string_view::npos) {
    bucket = size.substr(second + 1);
    size = size.substr(0, second);
  }
  const char* kSizeHelp = "must supply size to ext_path, ie: ext_path=/f/e:64m (m|g|t|p supported)";
  if (file.empty() || size.empty()) {
    return fail(c.error, "must supply size to ext_path, ie: ext_path=/f/e:64m (M|G|T|P supported)");
  }
  if (size.size() < 2) return fail(c.error, kSizeHelp);
  uint64_t unit = 0;
  switch (std::tolower(static_cast<unsigned char>(size.back()))) {
    case 'm': unit = kMiB; break;
    case 'g': unit = kGiB; break;
    case 't': unit = kGiB * 1024; break;
    case 'p': unit = kGiB * 1024 * 1024; break;
    default: return fail(c.error, kSizeHelp);
  }
  uint64_t n = 0;
  if (!parse_unsigned(size.substr(0, size.size() - 1), n) || n == 0 || n > kLargeValueDiskLimitRange.max / unit) {
    return fail(c.error, kSizeHelp);
  }
  static constexpr std::string_view kBuckets[] = {"compact", "lowttl", "chunked", "default", "coldcompact", "old"};
  if (!bucket.empty()) {
    bool known = false;
    for (std::string_view b : kBuckets) known = known || b == bucket;
    if (!known) return fail(c.error, "Unknown extstore bucket: " + std::string(bucket));
  }
  const size_t slash = file.rfind('/');
  c.out.large_value_dir = slash == std::string_view::npos ? std::string(".")
                          : slash == 0                    ? std::string("/")
                                                          : std::string(file.substr(0, slash));
  c.out.large_value_disk_limit = std::max<uint64_t>(n * unit, kLargeValueDiskLimitRange.min);
  c.out.notes.push_back("-o ext_path=" + std::string(c.value) +
                        ": ithaca keeps large values in an unlinked temp file in " + *c.out.large_value_dir +
                        " (not in " + std::string(file) + "), up to " + format_size(*c.out.large_value_disk_limit));
  return true;
}

bool ext_item_size(option_call& c) {
  int64_t n = 0;
  if (!numeric(c, 0, static_cast<int64_t>(kLargeValueThresholdRange.max), n)) return false;
  c.out.large_value_threshold = std::max<uint64_t>(static_cast<uint64_t>(n), kLargeValueThresholdRange.min);
  return true;
}

// --- checked, then a note ---

bool no_maxconns_fast(option_call& c) {
  note(c, "ithaca refuses a connection over -c at once (maxconns_fast stays yes)");
  return true;
}
bool slab_reassign_off(option_call& c) {
  note(c, kNoSlabs);
  return true;
}
bool slab_automove(option_call& c) {
  if (c.has_value) {
    int64_t n = 0;
    if (!number(c.value, n) || n < 0 || n > 2) return fail(c.error, "slab_automove must be between 0 and 2");
  }
  note(c, kNoSlabs);
  return true;
}
bool slab_automove_ratio(option_call& c) {
  if (!need_value(c, "Missing slab_automove_ratio argument")) return false;
  double r = 0;
  if (!real(c.value, r) || r <= 0 || r > 1) return fail(c.error, "slab_automove_ratio must be > 0 and < 1");
  note(c, kNoSlabs);
  return true;
}
bool slab_automove_window(option_call& c) {
  if (!need_value(c, "Missing slab_automove_window argument")) return false;
  int64_t n = 0;
  if (!number(c.value, n) || n < 3 || n > 1800) {
    return fail(c.error, "slab_automove_window must be > 2 and < 1800");
  }
  note(c, kNoSlabs);
  return true;
}
bool tail_repair_time(option_call& c) {
  if (!need_value(c, "Missing numeric argument for tail_repair_time")) return false;
  int64_t n = 0;
  if (!number(c.value, n) || n < 10) {
    return fail(c.error, "Cannot set tail_repair_time to less than 10 seconds");
  }
  note(c, "ithaca's items hold no references that a crashed request could leak");
  return true;
}
bool hash_algorithm(option_call& c) {
  if (!need_value(c, "Missing hash_algorithm argument")) return false;
  if (c.value != "jenkins" && c.value != "murmur3" && c.value != "xxh3") {
    return fail(c.error, "Unknown hash_algorithm option (jenkins, murmur3, xxh3)");
  }
  note(c, kOwnHash);
  return true;
}
bool lru_crawler_sleep(option_call& c) {
  if (!need_value(c, "Missing lru_crawler_sleep value")) return false;
  int64_t n = 0;
  if (!number(c.value, n) || n < 0 || n > 1000000) {
    return fail(c.error, "LRU crawler sleep must be between 0 and 1 second");
  }
  note(c, kCrawlerPace);
  return true;
}
bool lru_crawler_tocrawl(option_call& c) {
  if (!need_value(c, "Missing lru_crawler_tocrawl value")) return false;
  int64_t n = 0;
  if (!number(c.value, n) || n < 0 || n > 0xffffffffll) {
    return fail(c.error, "lru_crawler_tocrawl takes a numeric 32bit value");
  }
  note(c, kCrawlerPace);
  return true;
}
bool segments_note(option_call& c) {
  note(c, kNoSegments);
  return true;
}
// hot_lru_pct / warm_lru_pct: 1..79, memcached's words.
bool lru_pct(option_call& c) {
  const std::string name(c.name);
  if (!need_value(c, ("Missing " + name + " argument").c_str())) return false;
  int64_t n = 0;
  if (!number(c.value, n) || n < 1 || n >= 80) return fail(c.error, name + " must be > 1 and < 80");
  note(c, kNoSegments);
  return true;
}
bool lru_factor(option_call& c) {
  const std::string name(c.name);
  if (!need_value(c, ("Missing " + name + " argument").c_str())) return false;
  double f = 0;
  if (!real(c.value, f) || f <= 0) return fail(c.error, name + " must be > 0");
  note(c, kNoSegments);
  return true;
}
bool temporary_ttl(option_call& c) {
  int64_t n = 0;
  if (!numeric(c, 0, 0x7fffffff, n)) return false;
  note(c, kNoSegments);
  return true;
}
bool logbuf_size(option_call& c) { return numeric_note(c, 0, 0xffffffffll / 1024, kWatchBuffers); }
// slab_sizes=A-B-C: increasing sizes (memcached's _parse_slab_sizes).
bool slab_sizes(option_call& c) {
  if (!need_value(c, "Missing slab_sizes argument")) return false;
  std::string_view v = c.value;
  int64_t last = 0;
  while (true) {
    const size_t dash = v.find('-');
    int64_t n = 0;
    if (!number(v.substr(0, dash), n) || n <= last) {
      return fail(c.error,
                  "slab_sizes: expected increasing sizes separated by '-', got '" + std::string(c.value) + "'");
    }
    last = n;
    if (dash == std::string_view::npos) break;
    v.remove_prefix(dash + 1);
  }
  note(c, kClasses);
  return true;
}
bool slab_chunk_max(option_call& c) {
  if (!need_value(c, "Missing slab_chunk_max argument")) return false;
  int64_t n = 0;
  if (!number(c.value, n)) return fail(c.error, "could not parse argument to slab_chunk_max");
  if (n <= 0) return fail(c.error, "slab_chunk_max must be >= 0");
  if (n > 1024) return fail(c.error, "slab_chunk_max must be specified in kilobytes.");
  note(c, kClasses);
  return true;
}
bool track_sizes(option_call& c) {
  note(c, "ithaca keeps no histogram of item sizes (`stats sizes` answers sizes_status disabled)");
  return true;
}
bool no_modern(option_call& c) {
  note(c, "ithaca has no 1.4.x behaviour to go back to");
  return true;
}
bool no_chunked_items(option_call& c) {
  note(c, "ithaca stores each value in one piece (large ones in the large-value file)");
  return true;
}
bool drop_privileges(option_call& c) {
  note(c, "ithaca installs no seccomp filter");
  return true;
}
bool resp_obj_mem_limit(option_call& c) {
  note(c, "DEPRECATED in memcached too: resp_obj_mem_limit no longer used. See read_buf_mem_limit");
  return true;
}
bool read_buf_mem_limit(option_call& c) {
  return numeric_note(c, 0, 0xffffffffll,
                      "ithaca's per-client read buffers have no shared limit (server.read_buffer_size "
                      "is where each starts)");
}
bool proxy_config(option_call& c) {
  return fail(c.error,
              "proxy_config: memcached's Lua proxy is not part of ithaca; give the "
              "router's pools and routes in the YAML config (--config; README, "
              "\"Routing\")");
}
bool proxy_note(option_call& c) {
  note(c, "ithaca's router takes no Lua (its pools and routes are in the YAML config)");
  return true;
}
bool sock_cookie_id(option_call& c) {
  note(c, "ithaca sets no cookie id on its sockets");
  return true;
}
bool ext_note(option_call& c) {
  int64_t n = 0;
  const std::string name(c.name);
  if (!need_value(c, ("Missing " + name + " argument").c_str())) return false;
  double f = 0;
  if (!number(c.value, n) && !real(c.value, f)) return fail(c.error, "could not parse argument to " + name);
  note(c, kExtstore);
  return true;
}

struct sub_option {
  const char* name;
  handler handle;
};

// memcached 1.6.45's subopts_tokens (the TLS ones are tls_config.h's) and
// extstore's storage_read_config, in their order.
constexpr sub_option kSubOptions[] = {
    {"maxconns_fast", silent},
    {"hashpower", hashpower},
    {"no_hashexpand", no_hashexpand},
    {"slab_reassign", silent},
    {"slab_automove", slab_automove},
    {"slab_automove_ratio", slab_automove_ratio},
    {"slab_automove_window", slab_automove_window},
    {"tail_repair_time", tail_repair_time},
    {"hash_algorithm", hash_algorithm},
    {"lru_crawler", lru_crawler_on},
    {"lru_crawler_sleep", lru_crawler_sleep},
    {"lru_crawler_tocrawl", lru_crawler_tocrawl},
    {"lru_maintainer", segments_note},
    {"hot_lru_pct", lru_pct},
    {"warm_lru_pct", lru_pct},
    {"hot_max_factor", lru_factor},
    {"warm_max_factor", lru_factor},
    {"temporary_ttl", temporary_ttl},
    {"idle_timeout", idle_timeout},
    {"watcher_logbuf_size", logbuf_size},
    {"worker_logbuf_size", logbuf_size},
    {"slab_sizes", slab_sizes},
    {"slab_chunk_max", slab_chunk_max},
    {"track_sizes", track_sizes},
    {"no_inline_ascii_resp", silent},  // no-ops in memcached 1.6.45 too
    {"modern", silent},
    {"no_modern", no_modern},
    {"no_chunked_items", no_chunked_items},
    {"no_slab_reassign", slab_reassign_off},
    {"no_slab_automove", silent},  // ithaca moves nothing either
    {"no_maxconns_fast", no_maxconns_fast},
    {"inline_ascii_resp", silent},
    {"no_lru_crawler", lru_crawler_off},
    {"no_lru_maintainer", silent},  // what ithaca is like anyway
    {"no_drop_privileges", silent},
    {"drop_privileges", drop_privileges},
    {"resp_obj_mem_limit", resp_obj_mem_limit},
    {"read_buf_mem_limit", read_buf_mem_limit},
    {"proxy_config", proxy_config},
    {"proxy_arg", proxy_note},
    {"proxy_uring", silent},  // the router uses io_uring where the kernel has it
    {"proxy_memprofile", proxy_note},
    {"sock_cookie_id", sock_cookie_id},
    {"ext_page_size", ext_note},
    {"ext_wbuf_size", ext_note},
    {"ext_threads", ext_note},
    {"ext_io_depth", ext_note},
    {"ext_path", ext_path},
    {"ext_item_size", ext_item_size},
    {"ext_item_age", ext_note},
    {"ext_low_ttl", ext_note},
    {"ext_recache_rate", ext_note},
    {"ext_compact_under", ext_note},
    {"ext_drop_under", ext_note},
    {"ext_max_sleep", ext_note},
    {"ext_max_frag", ext_note},
    {"ext_drop_unread", silent},  // a flag: ithaca rewrites nothing
    {"slab_automove_freeratio", ext_note},
    {"eviction", eviction_policy_option},  // ithaca's own, last
};

}  // namespace

bool parse_extended_option(std::string_view name, std::string_view value, bool has_value, extended_settings& out,
                           std::string* error) {
  for (const sub_option& o : kSubOptions) {
    if (name != o.name) continue;
    option_call c{name, value, has_value, out, error};
    return o.handle(c);
  }
  std::string line = "Illegal suboption \"";
  line.append(name);
  if (has_value) line.append("=").append(value);
  return fail(error, line.append("\""));
}

void apply_extended(const extended_settings& e, config& c) {
  if (e.hash_power) c.cache.hash_power = *e.hash_power;
  if (e.idle_timeout_ms) c.server.idle_timeout_ms = *e.idle_timeout_ms;
  if (e.lru_crawler) c.cache.lru_crawler = *e.lru_crawler;
  if (e.hash_expand) c.cache.hash_expand = *e.hash_expand;
  if (e.large_value_dir) c.cache.large_value_dir = *e.large_value_dir;
  if (e.large_value_disk_limit) c.cache.large_value_disk_limit = *e.large_value_disk_limit;
  if (e.large_value_threshold) c.cache.large_value_threshold = *e.large_value_threshold;
  if (e.eviction_clock) c.cache.eviction = *e.eviction_clock ? cache_eviction::Clock : cache_eviction::S3fifo;
}

}  // namespace ithaca::config
