// mcrouter's command line: `ithaca --mcrouter ARGS` (or ithaca started under
// the name `mcrouter`) takes the flags an mcrouter deployment passes, with
// their meaning where ithaca has one, into the same cli_options the rest of
// the start reads (cli.h). The flags ithaca's own command line shares with
// mcrouter (--route-prefix, --config-params, --pem-*, --big-value-*, ...)
// have their readers here too.
#pragma once

#include <string>
#include <string_view>

namespace ithaca::config {

struct cli_options;

// Parses argv[first..argc-1] as mcrouter does (getopt_long: `--name value`,
// `--name=value`, toggles with an optional `=value`, short options of its
// own letters): -p/--port (repeatable), --listen-addresses, --listen-sock-fd,
// --config file:PATH or JSON, -f/--config-file, --config-str, -R, -L, -t,
// -r, --timeouts-until-tko, --num-proxies/--proxy-threads, --enable-flush-cmd,
// --allow-only-gets, --validate-config, -V, -h, and the rest of mcrouter's
// options accepted with a note when ithaca has nothing they would change.
// An option mcrouter does not know is noted ("Unrecognized option"), as
// mcrouter logs it and goes on. False with *error on a malformed value.
// [main thread, before anything starts; pure]
bool parse_mcrouter_args(int argc, const char* const* argv, int first, cli_options& out, std::string* error);

// Readers of the flags both command lines take (the signature of cli.cc's
// option table: the value, the option as spelled, for messages).
bool on_pem_cert(cli_options& o, std::string_view v, const std::string& n, std::string* e);
bool on_pem_key(cli_options& o, std::string_view v, const std::string& n, std::string* e);
bool on_pem_ca(cli_options& o, std::string_view v, const std::string& n, std::string* e);
bool on_route_prefix(cli_options& o, std::string_view v, const std::string& n, std::string* e);
bool on_config_params(cli_options& o, std::string_view v, const std::string& n, std::string* e);
bool on_send_invalid_route(cli_options& o, std::string_view v, const std::string& n, std::string* e);
bool on_disable_reload_configs(cli_options& o, std::string_view v, const std::string& n, std::string* e);
bool on_big_value_threshold(cli_options& o, std::string_view v, const std::string& n, std::string* e);
bool on_big_value_batch(cli_options& o, std::string_view v, const std::string& n, std::string* e);
bool on_big_value_hide(cli_options& o, std::string_view v, const std::string& n, std::string* e);
bool on_enable_logging_route(cli_options& o, std::string_view v, const std::string& n, std::string* e);

}  // namespace ithaca::config
