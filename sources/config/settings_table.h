// `stats settings`, one row per line in memcached's order (memcached
// 1.6.45's names and value formats where the concept exists), then ithaca's
// own, and what the Prometheus page shows of each: adding a setting is one
// row here. settings_stats.cc prints every row, reading it with its `read`
// expression; the page (metrics/page_memcached.cc) shows the rows with a
// family; the functional test (tests/functional/test_counter_tables.py)
// reads this file and checks every row on both.
//
// A row: X(name, type, family, help, page read, labels, when, read), the
// columns of stats/stat_row.h (None / "": not on the page); this header
// includes nothing, because config sits below stats/ (the page makes the
// rows into stat_rows, where both are in reach).
//   when, read: expressions in settings_stats.cc over `c` (the config), `l`
//   (its listeners), `f` (settings_facts: what only the running server
//   knows), `router` (the router role), `n` (a number's text), `yes_no` and
//   that file's formatters.
// [any thread; constant]
#pragma once

// clang-format off
#define ITHACA_SETTINGS_STATS(X) \
  /* memcached 1.6.45's, in its order (extstore's omitted, as a memcached */ \
  /* built without it does). Where ithaca has the setting, its value; where */ \
  /* the mechanism does not exist here (slab page mover, segmented LRU, */ \
  /* crawler, SASL), what memcached prints with it switched off, else its */ \
  /* default. The port, the backend, stats detail, the crawler and the */ \
  /* class table are the running server's (`f`). */ \
  X("maxbytes", None, "", "", Number, "", true, n(c.cache.memory_limit)) \
  X("maxconns", Gauge, "memcached_max_connections", "Maximum number of clients allowed.", Number, "", true, \
    n(c.server.max_connections)) \
  X("tcpport", None, "", "", Number, "", true, n(f.tcp_port)) \
  X("udpport", None, "", "", Number, "", true, n(l.udp_port)) \
  X("inter", None, "", "", Number, "", true, interfaces(l)) \
  X("verbosity", None, "", "", Number, "", true, n(static_cast<uint64_t>(verbosity(c.logging.level)))) \
  X("oldest", None, "", "", Number, "", true, "0") \
  X("evictions", None, "", "", Number, "", true, c.cache.evictions ? "on" : "off") \
  X("domain_socket", None, "", "", Number, "", true, l.unix_paths.empty() ? "NULL" : l.unix_paths.front()) \
  X("umask", None, "", "", Number, "", true, octal(l.unix_mode)) \
  X("shutdown_command", None, "", "", Number, "", true, yes_no(c.server.enable_shutdown)) \
  /* The size-class table ithaca reports its items in (stats slabs). */ \
  X("growth_factor", None, "", "", Number, "", true, fixed2(c.cache.slab_growth_factor)) \
  X("chunk_size", None, "", "", Number, "", true, n(c.cache.slab_min_size)) \
  X("num_threads", None, "", "", Number, "", true, n(c.server.workers)) \
  X("num_threads_per_udp", None, "", "", Number, "", true, n(c.server.workers)) \
  X("stat_key_prefix", None, "", "", Number, "", true, std::string(1, c.server.prefix_delimiter)) \
  X("detail_enabled", None, "", "", Number, "", true, yes_no(f.detail_enabled)) \
  X("reqs_per_event", None, "", "", Number, "", true, n(c.server.reqs_per_event)) \
  X("cas_enabled", None, "", "", Number, "", true, yes_no(c.cache.cas_enabled)) \
  X("tcp_backlog", None, "", "", Number, "", true, n(l.backlog)) \
  X("binding_protocol", None, "", "", Number, "", true, binding_name(c)) \
  X("auth_enabled_sasl", None, "", "", Number, "", true, yes_no(c.server.sasl)) \
  X("auth_enabled_ascii", None, "", "", Number, "", true, c.server.auth_file.empty() ? "no" : c.server.auth_file) \
  X("item_size_max", None, "", "", Number, "", true, n(c.cache.item_size_max)) \
  /* over -c a connection is refused at once */ \
  X("maxconns_fast", None, "", "", Number, "", true, "yes") \
  X("hashpower_init", None, "", "", Number, "", true, n(c.cache.hash_power)) \
  /* slabs reassign answers OK (one shared pool: nothing to move) */ \
  X("slab_reassign", None, "", "", Number, "", true, "yes") \
  X("slab_automove", None, "", "", Number, "", true, "0") \
  X("slab_automove_ratio", None, "", "", Number, "", true, "0.80") \
  X("slab_automove_window", None, "", "", Number, "", true, "10") \
  X("slab_chunk_max", None, "", "", Number, "", true, n(f.slab_chunk_max)) \
  /* metadump / mgdump; crawl's work is the GC sweep's. Live: `lru_crawler */ \
  /* enable|disable` switch it: the running server says (`f`). */ \
  X("lru_crawler", None, "", "", Number, "", true, yes_no(f.lru_crawler)) \
  X("lru_crawler_sleep", None, "", "", Number, "", true, "100") \
  X("lru_crawler_tocrawl", None, "", "", Number, "", true, "0") \
  X("tail_repair_time", None, "", "", Number, "", true, "0") \
  X("flush_enabled", None, "", "", Number, "", true, yes_no(c.server.enable_flush_all)) \
  X("dump_enabled", None, "", "", Number, "", true, yes_no(c.server.enable_dumping)) \
  /* a per-start seeded 64-bit hash (store/hash.h) */ \
  X("hash_algorithm", None, "", "", Number, "", true, "ithaca-seeded") \
  X("lru_maintainer_thread", None, "", "", Number, "", true, "no") \
  /* one CLOCK per store, no hot/warm/cold */ \
  X("lru_segmented", None, "", "", Number, "", true, "no") \
  X("hot_lru_pct", None, "", "", Number, "", true, "20") \
  X("warm_lru_pct", None, "", "", Number, "", true, "40") \
  X("hot_max_factor", None, "", "", Number, "", true, "0.20") \
  X("warm_max_factor", None, "", "", Number, "", true, "2.00") \
  X("temp_lru", None, "", "", Number, "", true, "no") \
  X("temporary_ttl", None, "", "", Number, "", true, "61") \
  /* memcached counts idle_timeout in seconds; round up so 1ms is not "off". */ \
  X("idle_timeout", None, "", "", Number, "", true, n((c.server.idle_timeout_ms + 999) / 1000)) \
  X("watcher_logbuf_size", None, "", "", Number, "", true, "262144") \
  X("worker_logbuf_size", None, "", "", Number, "", true, "65536") \
  X("read_buf_mem_limit", None, "", "", Number, "", true, "0") \
  X("track_sizes", None, "", "", Number, "", true, "no") \
  X("inline_ascii_response", None, "", "", Number, "", true, "no") \
  /* As a memcached built with TLS prints them, on or off. */ \
  X("ssl_enabled", None, "", "", Number, "", true, yes_no(c.tls.enabled)) \
  X("ssl_chain_cert", None, "", "", Number, "", true, or_null(c.tls.chain_cert, "(null)")) \
  X("ssl_key", None, "", "", Number, "", true, or_null(c.tls.key, "(null)")) \
  X("ssl_verify_mode", None, "", "", Number, "", true, n(openssl_verify_flags(c.tls.verify_mode))) \
  X("ssl_keyformat", None, "", "", Number, "", true, n(static_cast<uint64_t>(c.tls.keyformat))) \
  X("ssl_ciphers", None, "", "", Number, "", true, or_null(c.tls.ciphers, "NULL")) \
  X("ssl_ca_cert", None, "", "", Number, "", true, or_null(c.tls.ca_cert, "NULL")) \
  X("ssl_wbuf_size", None, "", "", Number, "", true, n(c.tls.wbuf_size)) \
  X("ssl_session_cache", None, "", "", Number, "", true, yes_no(c.tls.session_cache)) \
  X("ssl_kernel_tls", None, "", "", Number, "", true, yes_no(c.tls.kernel_tls)) \
  X("ssl_min_version", None, "", "", Number, "", true, min_version_text(c.tls.min_version)) \
  /* the router role is the proxy */ \
  X("proxy_enabled", None, "", "", Number, "", true, yes_no(router)) \
  X("proxy_uring_enabled", None, "", "", Number, "", true, \
    yes_no(router && c.server.backend != io_backend::Epoll && f.uring_running)) \
  X("num_napi_ids", None, "", "", Number, "", true, "0") \
  X("memory_file", None, "", "", Number, "", true, c.cache.memory_file.empty() ? "(null)" : c.cache.memory_file) \
  X("client_flags_size", None, "", "", Number, "", true, "4") \
  /* ithaca's */ \
  X("io_backend", None, "", "", Number, "", true, f.io_backend) \
  X("hash_power", None, "", "", Number, "", true, n(c.cache.hash_power)) \
  X("gc_interval_ms", None, "", "", Number, "", true, n(c.cache.gc_interval_ms)) \
  X("large_value_threshold", None, "", "", Number, "", true, n(c.cache.large_value_threshold)) \
  X("large_value_disk_limit", None, "", "", Number, "", true, n(c.cache.large_value_disk_limit)) \
  X("large_value_dir", None, "", "", Number, "", true, c.cache.large_value_dir) \
  X("lease_interval_ms", None, "", "", Number, "", true, n(c.cache.lease_interval_ms)) \
  X("idle_timeout_ms", None, "", "", Number, "", true, n(c.server.idle_timeout_ms)) \
  X("stack_size", None, "", "", Number, "", true, n(c.server.stack_size)) \
  X("read_buffer_size", None, "", "", Number, "", true, n(c.server.read_buffer_size)) \
  X("log_level", None, "", "", Number, "", true, to_string(c.logging.level)) \
  X("log_async_queue", None, "", "", Number, "", true, n(c.logging.async_queue)) \
  /* memcached's -P -u -r -k -L, which its stats settings do not show (`process:`) */ \
  X("pid_file", None, "", "", Number, "", true, or_null(c.process.pid_file, "NULL")) \
  X("user", None, "", "", Number, "", true, or_null(c.process.user, "NULL")) \
  X("core_dumps", None, "", "", Number, "", true, yes_no(c.process.core_dumps)) \
  X("lock_memory", None, "", "", Number, "", true, yes_no(c.process.lock_memory)) \
  X("large_pages", None, "", "", Number, "", true, yes_no(c.process.large_pages)) \
  /* ithaca's cache.eviction (-o eviction=) */ \
  X("eviction_policy", None, "", "", Number, "", true, \
    c.cache.eviction == cache_eviction::Clock ? "clock" : "s3fifo")
// clang-format on
