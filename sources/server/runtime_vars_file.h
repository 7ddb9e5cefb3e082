// mcrouter's --runtime-vars-file (route/runtime_vars.h): read at start and
// again at every reload; the file is watched with the config (a change
// starts a reload, server/config_watch.h), so editing it takes effect about
// a second later, as mcrouter's file observer does. A file that cannot be
// read or is not a JSON object keeps the values running and logs why.
#pragma once

#include <string>
#include <string_view>

namespace ithaca::server {

// At start, on the main thread (before the machines run): a direct read.
void runtime_vars_load(const std::string& path);

// At a reload: read on the blocking pool within kReloadReadTimeout, then
// applied. [pooler machine, the "reload" coroutine; suspends]
void runtime_vars_reload(const std::string& path, std::string_view trigger);

}  // namespace ithaca::server
