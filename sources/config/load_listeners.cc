#include "load_listeners.h"

#include "load_router.h"

namespace ithaca::config {

namespace {
constexpr range kListenerClientsRange{0, 1u << 20};
}  // namespace

bool parse_listener_address(std::string_view text, std::string& out, std::string* error) {
  if (text.starts_with("unix:")) {
    if (text.size() == 5 || text[5] != '/') {
      if (error) *error = "a unix listener is unix:/absolute/path, got '" + std::string(text) + "'";
      return false;
    }
    out = std::string(text);
    return true;
  }
  tcp_address a;
  if (!parse_tcp_address(text, kDefaultPort, a, error)) return false;
  out = to_string(a);
  return true;
}

void parse_listeners(const YAML::Node& node, load_context& ctx, router_config& out) {
  for (std::size_t i = 0; i < node.size(); i++) {
    const YAML::Node& item = node[i];
    const std::string where = "listeners[" + std::to_string(i) + "]";
    if (!item.IsMap()) {
      ctx.fail(item.Mark(), where + " is a mapping with `listen:` and `route:`, got " + describe_node(item));
      continue;
    }
    section s(ctx, where, item);
    listener_route l;
    l.line = item.Mark().line + 1;
    std::string address;
    s.string("listen", address);
    if (const YAML::Mark* m = ctx.mark_of(where + ".listen")) {
      std::string why;
      if (!parse_listener_address(address, l.address, &why)) s.fail_value("listen", *m, why);
    } else {
      ctx.fail(item.Mark(), where + " needs `listen:` (host:port or unix:/path)");
    }
    s.integer("backlog", l.backlog, kBacklogRange);
    s.integer("max_connections", l.max_clients, kListenerClientsRange);
    if (const YAML::Node* route = s.mapping("route")) {
      // The route as `route:` reads it, checked against the pools and the
      // named routes read so far (load.cc reads both before `listeners:`).
      router_config tree;
      tree.pools = out.pools;
      tree.named_routes = out.named_routes;
      parse_route(*route, ctx, tree);
      check_router(*route, ctx, tree);
      l.route = std::move(tree.route);
    } else if (!ctx.mark_of(where + ".route")) {
      ctx.fail(item.Mark(), where + " needs `route:` (the tree its clients are served by)");
    }
    s.finish();
    out.listeners.push_back(std::move(l));
  }
}

}  // namespace ithaca::config
