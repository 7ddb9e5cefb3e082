// memcached_*: memcached_exporter's names, types and labels
// (pkg/exporter/exporter.go), from `stats`, `stats settings`, `stats items`
// and `stats slabs` (the per-class families: page_slabs.cc).

#include "page_parts.h"

namespace ithaca::metrics {

namespace {

void memcached_general(prom_writer& w, const lookup& s) {
  w.add("memcached_up", G, "Could the memcached server be reached.", {}, 1);
  double v = 0;
  if (number(s, "uptime", v)) w.add("memcached_uptime_seconds", C, "Number of seconds since the server started.", {}, v);
  if (number(s, "time", v)) w.add("memcached_time_seconds", G, "current UNIX time according to the server.", {}, v);
  if (auto it = s.find("version"); it != s.end()) {
    w.add("memcached_version", G, "The version of this memcached server.", {{"version", it->second}}, 1);
  }
  add_figures(w, s, {
      {"rusage_user", "memcached_process_user_cpu_seconds_total", C, "Accumulated user time for this process."},
      {"rusage_system", "memcached_process_system_cpu_seconds_total", C, "Accumulated system time for this process."},
      {"bytes_read", "memcached_read_bytes_total", C, "Total number of bytes read by this server from network."},
      {"bytes_written", "memcached_written_bytes_total", C, "Total number of bytes sent by this server to network."},
      {"curr_connections", "memcached_current_connections", G, "Current number of open connections."},
      {"total_connections", "memcached_connections_total", C,
       "Total number of connections opened since the server started running."},
      {"rejected_connections", "memcached_connections_rejected_total", C,
       "Total number of connections rejected due to hitting the memcached's -c limit in maxconns_fast mode."},
      {"conn_yields", "memcached_connections_yielded_total", C,
       "Total number of connections yielded running due to hitting the memcached's -R limit."},
      {"bytes", "memcached_current_bytes", G, "Current number of bytes used to store items."},
      {"limit_maxbytes", "memcached_limit_bytes", G, "Number of bytes this server is allowed to use for storage."},
      {"curr_items", "memcached_current_items", G, "Current number of items stored by this instance."},
      {"total_items", "memcached_items_total", C, "Total number of items stored during the life of this instance."},
      {"evictions", "memcached_items_evicted_total", C,
       "Total number of valid items removed from cache to free memory for new items."},
      {"reclaimed", "memcached_items_reclaimed_total", C,
       "Total number of times an entry was stored using memory from an expired entry."},
      {"store_no_memory", "memcached_item_no_memory_total", C,
       "The number of times an item could not be stored due to no more memory."},
      {"accepting_conns", "memcached_accepting_connections", G,
       "The Memcached server is currently accepting new connections."},
  });
  // Commands by status, memcached_exporter's way.
  const char* kHelp = "Total number of all requests broken down by command (get, set, etc.) and status.";
  for (const char* op : {"get", "delete", "incr", "decr", "cas", "touch"}) {
    const std::string o(op);
    if (number(s, o + "_hits", v)) w.add("memcached_commands_total", C, kHelp, {{"command", o}, {"status", "hit"}}, v);
    if (number(s, o + "_misses", v)) w.add("memcached_commands_total", C, kHelp, {{"command", o}, {"status", "miss"}}, v);
  }
  if (number(s, "cas_badval", v)) w.add("memcached_commands_total", C, kHelp, {{"command", "cas"}, {"status", "badval"}}, v);
  if (number(s, "cmd_flush", v)) w.add("memcached_commands_total", C, kHelp, {{"command", "flush"}, {"status", "hit"}}, v);
  // cmd_set counts cas commands too (as memcached's does); the exporter
  // subtracts them.
  double set = 0, cas_hits = 0, cas_misses = 0, cas_badval = 0;
  if (number(s, "cmd_set", set) && number(s, "cas_hits", cas_hits) && number(s, "cas_misses", cas_misses) &&
      number(s, "cas_badval", cas_badval)) {
    const double sets = set - cas_hits - cas_misses - cas_badval;
    w.add("memcached_commands_total", C, kHelp, {{"command", "set"}, {"status", "hit"}}, sets > 0 ? sets : 0);
  }
}

void memcached_settings(prom_writer& w, const lookup& settings) {
  add_figures(w, settings, {{"maxconns", "memcached_max_connections", G, "Maximum number of clients allowed."}});
}

void memcached_slabs(prom_writer& w, const lookup& slabs) {
  add_figures(w, slabs,
              {{"total_malloced", "memcached_malloced_bytes", G, "Number of bytes of memory allocated to slab pages."}});
}
}  // namespace

void memcached_families(prom_writer& w, const page_input& in) {
  const lookup general = to_map(in.general);
  memcached_general(w, general);
  memcached_settings(w, to_map(in.settings));
  memcached_slabs(w, to_map(in.slabs));
  memcached_slab_families(w, in.items, in.slabs);
}

}  // namespace ithaca::metrics
