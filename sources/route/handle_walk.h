// `__mcrouter__.route_handles(OP,KEY)` (introspect.h) as mcrouter answers it:
// the route handles a request OP for KEY walks, one per line, each indented
// one space deeper than its parent (ServiceInfo's RouteHandleTraverser),
// under mcrouter's "root" line. Each route writes its own lines
// (route::walk_handles) through this walker, which keeps the depth:
//
//   root
//    all-sync
//     asynclog:A
//      host|pool=A|id=0|ap=127.0.0.1:11610:ascii:plain:notcompressed|timeout=1000ms|keep_routing_prefix=false|msb=0
//
// [the client coroutine answering the get; never waits]
#pragma once

#include <string>
#include <string_view>

#include "request.h"

namespace ithaca::proxy {
class worker_backends;
}

namespace ithaca::route {

class route;

class handle_walk {
 public:
  // `backends`: this worker's, for the live placement of an
  // auto_eject_hosts pool (may be null).
  handle_walk(std::string& out, proxy::worker_backends* backends) : out_(out), backends_(backends) {}

  // One line at the current depth.
  void line(std::string_view text);
  // One level deeper, and back (the lines of a node a route folds in).
  void enter() { ++depth_; }
  void leave() { --depth_; }
  // `r`'s lines one level deeper.
  void child(const route& r, const protocol::request& req);
  // `r`'s lines at this level: under a node mcrouter does not show (its
  // PrefixSelectorRoute, whose pick RootRoute makes itself).
  void same_level(const route& r, const protocol::request& req);
  proxy::worker_backends* backends() const { return backends_; }

 private:
  // Trees are acyclic (the builder refuses cycles); a bound all the same.
  static constexpr int kMaxDepth = 64;
  std::string& out_;
  proxy::worker_backends* backends_;
  int depth_ = 0;
  int nested_ = 0;  // same_level calls under way, in the bound too
};

// mcrouter's routeName() made from its type name: the type without "Route",
// its words lowercased and joined by '-' (AllSyncRoute -> all-sync,
// L1L2CacheRoute -> l1l2-cache, WarmUpRoute -> warm-up), as mcrouter names
// its parameterless kinds. [pure]
std::string mcrouter_handle_name(std::string_view type);

}  // namespace ithaca::route
