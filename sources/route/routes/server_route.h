// The server route: commands the server answers itself (version, stats,
// verbosity, quit, shutdown, ...; protocol::command_class::Server), whatever
// the rest of the tree does. Every tree has one (route_tree::server()); the
// request loop sends those commands to it, in their place in the order.
#pragma once

#include "route.h"

namespace ithaca::route {

class server_route final : public route {
 public:
  server_route() : route("server") {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "server"; }
  bool answers_in_result() const override { return false; }
};

}  // namespace ithaca::route
