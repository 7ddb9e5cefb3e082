// One line of a counter group's table (general_stats.h, repl_stats_table.h,
// item_stats_table.h, slab_stats_table.h, router_stats_table.h,
// config/settings_table.h):
// what `stats` prints and what the Prometheus page (sources/metrics/) makes
// of it. The tables are X-macros whose rows also say how the server reads
// each value; this is the part of a row the page and the tests need.
// [any thread; constant data]
#pragma once

namespace ithaca::stats {

// The Prometheus type of a row's family; None: `stats` prints it, the page
// does not show it.
enum class prom_type { None, Counter, Gauge };

// How the page turns the stat's text into a sample.
enum class page_read {
  Number,            // the value as a number, with the row's labels ("k=v,k=v")
  Label,             // 1, with the value as the label named by the row's labels ("version")
  Millis,            // milliseconds shown as seconds
  Micros,            // microseconds shown as seconds
  SetsLessCas,       // cmd_set less cas_hits, cas_misses and cas_badval (memcached_exporter's sets)
  ClassSetsLessCas,  // a size class's cmd_set less its cas_hits and cas_badval (the exporter's per class)
  PerName,           // the row's lines NAME<x>, each a number labelled with x (the label named by the row's labels)
  Up,                // 1 if the text is "up", else 0
};

struct stat_row {
  const char* name;  // as `stats` prints it
  prom_type type;
  const char* prom;  // the family on the page ("": none)
  const char* help;
  page_read read;
  const char* labels;
};

// The help line memcached_exporter gives memcached_commands_total.
#define ITHACA_COMMANDS_HELP "Total number of all requests broken down by command (get, set, etc.) and status."

// A table's descriptor rows, from its X-macro (the `when` and `read` columns
// are the server's).
#define ITHACA_STAT_ROW(name, type, prom, help, page, labels, when, read) \
  ::ithaca::stats::stat_row{name, ::ithaca::stats::prom_type::type, prom, \
                            help, ::ithaca::stats::page_read::page, labels},

}  // namespace ithaca::stats
