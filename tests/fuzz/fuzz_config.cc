// libFuzzer target: the config loader (config::load_config_text), the whole
// input as the YAML file. Checked: no exception or crash escapes; a loaded
// config passes validate() and can be printed (`stats settings`) and
// compared (the reload's restart-only check); a refused one leaves the
// running config untouched and names the file in its message; the same
// text always gives the same answer.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config.h"
#include "fuzz_check.h"
#include "load.h"
#include "restart_only.h"
#include "route_kind.h"
#include "settings_stats.h"

namespace {

using namespace ithaca::config;

constexpr unsigned kMarker = 77;  // a workers value no default has

// The route kinds' config side, before any input is read (as main does).
const bool kKindsRegistered = (ithaca::route::register_route_kinds(), true);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  config running;
  running.server.workers = kMarker;
  std::string error;
  const bool ok = load_config_text(text, "fuzz.yaml", running, &error);
  if (ok) {
    validation_error v;
    FUZZ_CHECK(validate(running, &v), "a loaded config fails validate()");
    FUZZ_CHECK(!settings_stats(running).empty(), "no settings to print");
    (void)restart_only_changes(config{}, running);
  } else {
    FUZZ_CHECK(running.server.workers == kMarker, "a refused config changed the running one");
    FUZZ_CHECK(error.starts_with("fuzz.yaml:"), "an error message without the file name");
  }
  config again;
  std::string error_again;
  FUZZ_CHECK(load_config_text(text, "fuzz.yaml", again, &error_again) == ok, "the same text loaded differently");
  FUZZ_CHECK(error_again == error, "the same text gave another error");
  return 0;
}
