// Routes that answer without a server: `null` (mcrouter's NullRoute: a get
// misses, a store is NOT_STORED, the rest NOT_FOUND) and `error` (mcrouter's
// ErrorRoute: every request gets its SERVER_ERROR line). Both answer into
// the result, so any composite may hold them (a failover's last resort, an
// operation selector that refuses deletes).
#pragma once

#include <string>

#include "route.h"

namespace ithaca::route {

class null_route final : public route {
 public:
  explicit null_route(std::string name) : route(std::move(name)) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "null"; }
};

class error_route final : public route {
 public:
  // `message`: the line after "SERVER_ERROR " (or a whole error line).
  error_route(std::string name, std::string message);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "error"; }

 private:
  std::string line_;
};

}  // namespace ithaca::route
