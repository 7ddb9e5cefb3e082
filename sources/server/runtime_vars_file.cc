#include "runtime_vars_file.h"

#include <memory>
#include <utility>

#include <spdlog/spdlog.h>

#include "config_file.h"
#include "machinarium.h"
#include "reload.h"
#include "runtime_vars.h"

namespace ithaca::server {

namespace {

// Applies what a read gave (`read_ok`: the file's text, else `error` says
// why not) and logs the outcome with `when` ("start", "SIGHUP", ...).
void runtime_vars_use(const std::string& path, bool read_ok, const std::string& text, std::string error,
                      std::string_view when) {
  if (!read_ok || !route::runtime_vars_apply(text, path, &error)) {
    spdlog::error("{}: runtime vars {}: {}; the running values stay", when, path, error);
    return;
  }
  spdlog::info("{}: runtime vars read from {}", when, path);
}

}  // namespace

void runtime_vars_load(const std::string& path) {
  std::string text, error;
  const bool ok = config::read_config_file(path, text, &error);
  runtime_vars_use(path, ok, text, std::move(error), "start");
}

void runtime_vars_reload(const std::string& path, std::string_view trigger) {
  struct result {
    std::string text, error;
    bool ok = false;
  };
  auto r = std::make_shared<result>();
  const mm::wait_status w = mm::blocking_call(
      [r, path] { r->ok = config::read_config_file(path, r->text, &r->error); }, kReloadReadTimeout);
  if (w == mm::wait_status::Cancelled) return;
  if (w != mm::wait_status::Ok) {
    spdlog::error("{}: runtime vars {}: not read within {} s; the running values stay", trigger, path,
                  kReloadReadTimeout / 1000);
    return;
  }
  // Applied here, on the pooler (slots are atomics; the registry's mutex
  // is a leaf held for no I/O).
  runtime_vars_use(path, r->ok, r->text, std::move(r->error), trigger);
}

}  // namespace ithaca::server
