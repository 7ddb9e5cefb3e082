#include "stats_files.h"

#include <unistd.h>

#include <charconv>
#include <map>
#include <memory>

#include <spdlog/spdlog.h>

#include "atomic_file.h"
#include "jsonm_value.h"
#include "config_dump.h"
#include "machinarium.h"

namespace ithaca::server {

namespace {

// A round's files that the blocking pool has not written by then are left
// to it (the next round waits for none of them).
constexpr mm::millis kStatsFilesWriteTimeoutMs = 5000;

// A `stats` value as JSON: a number when the whole text is one (integer or
// decimal), else a string.
std::string stats_files_value(const std::string& v) {
  if (v.empty()) return "\"\"";
  double d = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), d);
  const bool plain = v.find_first_not_of("-0123456789.") == std::string::npos;
  if (plain && r.ec == std::errc() && r.ptr == v.data() + v.size()) return v;
  return config::jsonm::json_quote(v);
}

// {"k": v, ...} pretty with sorted keys (mcrouter's toPrettySortedJson);
// the values are JSON already.
std::string stats_files_object(const std::map<std::string, std::string>& fields) {
  if (fields.empty()) return "{}\n";
  std::string out = "{\n";
  std::size_t i = 0;
  for (const auto& [k, v] : fields) {
    out += "  " + config::jsonm::json_quote(k) + ": " + v + (++i < fields.size() ? ",\n" : "\n");
  }
  return out + "}\n";
}

}  // namespace

stats_files_settings stats_files_settings_of(const config::cli_options& cli, unsigned workers) {
  stats_files_settings s;
  if (!cli.mcrouter_mode || cli.stats_root.empty() || cli.stats_logging_interval_ms == 0) return s;
  s.root = cli.stats_root;
  s.interval_ms = cli.stats_logging_interval_ms;
  s.prefix = "libmcrouter.mcrouter." + config::mcrouter_router_name(cli);
  std::map<std::string, std::string> opts;
  opts["default_route"] = config::jsonm::json_quote(cli.route_prefix.value_or("/././"));
  opts["config"] = config::jsonm::json_quote(cli.config_path.empty() ? cli.config_text : "file:" + cli.config_path);
  opts["num_proxies"] = config::jsonm::json_quote(std::to_string(workers));
  opts["stats_root"] = config::jsonm::json_quote(cli.stats_root);
  opts["stats_logging_interval"] = config::jsonm::json_quote(std::to_string(cli.stats_logging_interval_ms));
  opts["config_dump_root"] = config::jsonm::json_quote(cli.config_dump_root);
  opts["service_name"] = config::jsonm::json_quote("mcrouter");
  opts["router_name"] = config::jsonm::json_quote(config::mcrouter_router_name(cli));
  if (cli.server_timeout_ms)
    opts["server_timeout_ms"] = config::jsonm::json_quote(std::to_string(*cli.server_timeout_ms));
  if (cli.timeouts_until_tko)
    opts["timeouts_until_tko"] = config::jsonm::json_quote(std::to_string(*cli.timeouts_until_tko));
  opts["enable_flush_cmd"] = config::jsonm::json_quote(cli.enable_flush_cmd ? "1" : "0");
  opts["pid"] = config::jsonm::json_quote(std::to_string(::getpid()));
  s.startup_options = stats_files_object(opts);
  return s;
}

void stats_files_main(const stats_files_settings& settings, stats::stats_provider& stats, const live_cell& live) {
  bool warned = false;
  for (;;) {
    stats::stat_lines lines;
    stats.collect("", lines);
    std::map<std::string, std::string> fields;
    for (const auto& [name, value] : lines) fields[settings.prefix + "." + name] = stats_files_value(value);
    std::map<std::string, std::string> sources;
    const auto now = live.load();
    if (now && now->info && !now->info->md5.empty()) {
      sources["config_file"] = config::jsonm::json_quote(now->info->config_file);
      sources["mcrouter_config"] = config::jsonm::json_quote(now->info->md5);
    }
    auto files = std::make_shared<std::vector<std::pair<std::string, std::string>>>();
    const std::string base = settings.root + "/" + settings.prefix + ".";
    files->emplace_back(base + "stats", stats_files_object(fields));
    files->emplace_back(base + "startup_options", settings.startup_options);
    files->emplace_back(base + "config_sources_info", stats_files_object(sources));
    auto why = std::make_shared<std::string>();
    const mm::wait_status w = mm::blocking_call(
        [files, why, root = settings.root] {
          // The directory may be removed while running (mcrouter makes it again).
          if (!config::make_directories(root, why.get())) return;
          for (const auto& [path, text] : *files) {
            if (!config::write_file_atomically(path, text, 0664, why.get())) return;
          }
        },
        kStatsFilesWriteTimeoutMs);
    if (w == mm::wait_status::Cancelled) return;
    const bool failed = w != mm::wait_status::Ok || !why->empty();
    if (failed && !warned) {
      spdlog::warn("--stats-root: stats files not written: {}", w != mm::wait_status::Ok ? "timed out" : *why);
    } else if (!failed && warned) {
      spdlog::info("--stats-root: stats files are written again");
    }
    warned = failed;
    if (mm::sleep(static_cast<mm::millis>(settings.interval_ms)) == mm::wait_status::Cancelled) return;
  }
}

}  // namespace ithaca::server
