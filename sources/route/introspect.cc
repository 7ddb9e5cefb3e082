#include "introspect.h"

#include <ctime>
#include <optional>
#include <vector>

#include "handle_walk.h"
#include "introspect_info.h"
#include "pool_route.h"
#include "worker_backends.h"

namespace ithaca::route {

namespace {

// mcrouter's request names (carbon's Request::name) and, under __ithaca__.,
// the meta commands.
std::optional<protocol::request> request_named(std::string_view op, std::string_view key, bool ithaca_names) {
  using protocol::command;
  struct entry {
    std::string_view name;
    command cmd;
  };
  static constexpr entry kNames[] = {
      {"get", command::Get},
      {"gets", command::Gets},
      {"set", command::Set},
      {"add", command::Add},
      {"replace", command::Replace},
      {"append", command::Append},
      {"prepend", command::Prepend},
      {"cas", command::Cas},
      {"delete", command::Delete},
      {"incr", command::Incr},
      {"decr", command::Decr},
      {"touch", command::Touch},
      {"gat", command::Gat},
      {"gats", command::Gats},
      {"lease-get", command::LeaseGet},
      {"lease-set", command::LeaseSet},
      {"metaget", command::McMetaget},
      {"flushall", command::FlushAll},
  };
  static constexpr entry kMetaNames[] = {
      {"mg", command::MetaGet}, {"ms", command::MetaSet}, {"md", command::MetaDelete}, {"ma", command::MetaArithmetic}};
  protocol::request r;
  bool found = false;
  for (const entry& e : kNames) {
    if (e.name == op) {
      r.cmd = e.cmd;
      found = true;
    }
  }
  if (!found && ithaca_names) {
    for (const entry& e : kMetaNames) {
      if (e.name == op) {
        r.cmd = e.cmd;
        r.proto = protocol::protocol_kind::Meta;
        found = true;
      }
    }
  }
  if (!found) return std::nullopt;
  if (r.cmd != command::FlushAll) r.keys.push_back(key);
  return r;
}

// The servers `r` sends `req` to, appended to `out`. True if the route
// answers: a route with no server of its own (local, null, error) does, a
// pool if its server is up (a down one fails fast and is not listed, as
// mcrouter lists no TKO destination), a composite if any target does.
bool collect_servers(const route& r, const protocol::request& req, proxy::worker_backends* backends,
                     std::vector<std::string>& out, int depth) {
  if (depth > 64) return false;  // trees are acyclic (the builder refuses cycles); a bound all the same
  if (const auto* p = dynamic_cast<const pool_route*>(&r)) {
    const auto& servers = p->pool().servers();
    if (req.cmd == protocol::command::FlushAll) {
      bool any = false;
      for (const auto& s : servers) {
        if (!s->up()) continue;
        out.push_back(s->address());
        any = true;
      }
      return any;
    }
    const auto& s = servers[p->server_for(req.key(), backends)];
    if (!s->up()) return false;
    out.push_back(s->address());
    return true;
  }
  const std::vector<const route*> targets = r.targets_for(req);
  if (targets.empty()) return true;
  // A routing prefix taken off: the targets see the rest of the key.
  protocol::request rest;
  const protocol::request* down = &req;
  if (const std::size_t n = r.prefix_taken_off(req); n > 0) {
    rest = req;
    rest.routing_prefix = req.key().substr(0, n);
    rest.keys.set(0, req.key().substr(n));
    down = &rest;
  }
  if (r.tries_in_turn(req)) {
    for (const route* t : targets) {
      if (collect_servers(*t, *down, backends, out, depth + 1)) return true;
    }
    return false;
  }
  bool any = false;
  for (const route* t : targets) any = collect_servers(*t, *down, backends, out, depth + 1) || any;
  return any;
}

// Splits "cmd(args)" (mcrouter's service-info syntax): `route` and
// `route_handles` take OP and KEY split at the first comma (a key may hold
// commas); the rest split at every comma.
struct parsed_command {
  std::string_view cmd;
  std::vector<std::string_view> args;
};

parsed_command parse_command(std::string_view s) {
  parsed_command out{s, {}};
  const std::size_t open = s.find('(');
  if (open == std::string_view::npos || s.back() != ')') return out;
  out.cmd = s.substr(0, open);
  std::string_view args = s.substr(open + 1, s.size() - open - 2);
  if (args.empty()) return out;
  if (out.cmd.starts_with("route")) {
    const std::size_t comma = args.find(',');
    if (comma != std::string_view::npos) {
      out.args.push_back(args.substr(0, comma));
      out.args.push_back(args.substr(comma + 1));
    }
    return out;
  }
  for (;;) {
    const std::size_t comma = args.find(',');
    out.args.push_back(args.substr(0, comma));
    if (comma == std::string_view::npos) break;
    args.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace

std::string introspection_answer(std::string_view key, const route& root, const route_tree* tree,
                                 const commands::server_context& ctx, proxy::worker_backends* backends) {
  const bool ithaca_names = key.starts_with(kIthacaPrefix);
  key.remove_prefix(ithaca_names ? kIthacaPrefix.size() : kMcrouterPrefix.size());
  const parsed_command c = parse_command(key);
  const std::string error = "ERROR: ";
  if (c.cmd == "route" || c.cmd == "route_handles") {
    const bool handles = c.cmd == "route_handles";
    if (c.args.size() != 2) return error + std::string(c.cmd) + ": 2 args expected";
    auto req = request_named(c.args[0], c.args[1], ithaca_names);
    if (!req) return error + "route: unknown request " + std::string(c.args[0]);
    std::string value;
    if (handles) {
      // mcrouter's ProxyRoute shows its RootRoute first, then the tree.
      handle_walk w(value, backends);
      w.line("root");
      w.child(root, *req);
      value.pop_back();  // the last "\n", as mcrouter strips it
      return value;
    }
    std::vector<std::string> servers;
    collect_servers(root, *req, backends, servers, 0);
    for (const std::string& s : servers) {
      if (!value.empty()) value += "\r\n";
      value += s;
    }
    return value;
  }
  if (auto answer = service_info_answer(c.cmd, c.args, tree, ctx)) return *answer;
  return error + "unknown command: " + std::string(c.cmd);
}

void answer_introspection(const protocol::request& req, const route& root, const route_tree* tree,
                          const commands::server_context& ctx, proxy::worker_backends* backends,
                          protocol::routed_result& scratch, protocol::out_buffer& out) {
  scratch.prepare(req);
  scratch.outcome = protocol::routed_outcome::Hits;
  for (std::size_t i = 0; i < req.keys.size(); ++i) {
    scratch.set_hit(i, 0, 0, introspection_answer(req.keys[i], root, tree, ctx, backends));
  }
  protocol::render_routed_reply(req, scratch, out);
}

}  // namespace ithaca::route
