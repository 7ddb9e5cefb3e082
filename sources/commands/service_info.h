// What mcrouter's service-info keys (`__mcrouter__.*`, route/introspect.h)
// tell of the loaded configuration besides its route tree: the file's text
// and digest, the preprocessed config, mcrouter's options and global params
// as ithaca has them, the host id. Made once per load (start-up, each SIGHUP
// that applies a file: server/service_info_of.h) and shared read-only by
// every worker through the live settings. [any thread; immutable]
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ithaca::commands {

struct service_info {
  std::string config_file;  // --config's path; "" without one
  std::string text;         // the file as read
  std::string md5;          // of `text`, 32 lowercase hex digits ("" without a file)
  // mcrouter's preprocessed config (config::config_source::preprocessed),
  // else the file's text.
  std::string preprocessed;
  bool mcrouter = false;  // the file is an mcrouter JSON config
  // `options`: mcrouter's option names, in the order of its option lists
  // (libmcrouter's, then the standalone ones), with ithaca's values, for the
  // options ithaca has (README "Introspection" lists them).
  std::vector<std::pair<std::string, std::string>> options;
  // `global_params`: mcrouter's preprocessor parameters, each value already
  // JSON (a number, or a quoted string), by name.
  std::vector<std::pair<std::string, std::string>> global_params;
  std::uint32_t hostid = 0;
};

}  // namespace ithaca::commands
