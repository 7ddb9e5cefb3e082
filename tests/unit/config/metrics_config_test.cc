// The metrics section, its flag, and the restart rule for it.
#include <doctest/doctest.h>

#include "cli.h"
#include "load.h"
#include "restart_only.h"

using namespace ithaca::config;

namespace {

std::string metrics_load(const std::string& yaml, config* out = nullptr) {
  config c;
  std::string error;
  bool ok = load_config_text(yaml, "ithaca.yaml", c, &error);
  CHECK(ok == error.empty());
  if (out) *out = c;
  return error;
}

std::string flags(std::vector<const char*> args, config& out) {
  args.insert(args.begin(), "ithaca");
  cli_options o;
  std::string error;
  if (!parse_args(static_cast<int>(args.size()), args.data(), o, &error)) return error;
  if (!make_config(o, out, &error)) return error;
  return "";
}

}  // namespace

TEST_CASE("metrics are off by default") {
  config c;
  CHECK_FALSE(c.metrics.enabled);
  CHECK(metrics_load("metrics: {}\n", &c) == "");
  CHECK_FALSE(c.metrics.enabled);
}

TEST_CASE("metrics.listen turns the page on; a missing port is memcached_exporter's 9150") {
  config c;
  CHECK(metrics_load("metrics:\n  listen: 127.0.0.1:9200\n", &c) == "");
  CHECK(c.metrics.enabled);
  CHECK(c.metrics.listen == tcp_address{"127.0.0.1", 9200});
  CHECK(metrics_load("metrics:\n  listen: '[::1]'\n", &c) == "");
  CHECK(c.metrics.listen == tcp_address{"::1", 9150});
  CHECK(metrics_load("metrics:\n  listen: ''\n", &c) == "");
  CHECK_FALSE(c.metrics.enabled);
}

TEST_CASE("a bad metrics.listen or an unknown key is refused with its line") {
  std::string e = metrics_load("metrics:\n  listen: 127.0.0.1:99999\n");
  CHECK(e.find("ithaca.yaml:2") != std::string::npos);
  CHECK(e.find("listen") != std::string::npos);
  e = metrics_load("metrics:\n  lisen: 127.0.0.1:1\n");
  CHECK(e.find("lisen") != std::string::npos);
}

TEST_CASE("--metrics-listen overrides the file") {
  config c;
  CHECK(flags({"--metrics-listen", "127.0.0.1:0"}, c) == "");
  CHECK(c.metrics.enabled);
  CHECK(c.metrics.listen == tcp_address{"127.0.0.1", 0});
  CHECK(flags({"--metrics-listen=localhost:9"}, c) == "");
  CHECK(c.metrics.listen == tcp_address{"localhost", 9});
  CHECK(flags({"--metrics-listen", "1.2.3.4:x"}, c).find("--metrics-listen") == 0);
}

TEST_CASE("a change of metrics.listen needs a restart") {
  config a;
  config b = a;
  b.metrics.enabled = true;
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"metrics.listen"});
  a = b;
  b.metrics.listen.port = 1;
  CHECK(restart_only_changes(a, b) == std::vector<std::string>{"metrics.listen"});
}
