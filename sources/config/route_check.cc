#include "route_check.h"

#include <algorithm>
#include <map>

#include "route_kind_info.h"
#include "yaml_section.h"

namespace ithaca::config {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

struct route_checker {
  const router_config& rc;
  std::vector<route_problem> problems;
  std::vector<std::string> pool_names;
  std::vector<std::string> route_names;
  std::map<std::string, const route_config*> named;

  void node(const route_config& r) {
    const std::string* pool = pool_named(r);
    if (pool != nullptr && std::find(pool_names.begin(), pool_names.end(), *pool) == pool_names.end()) {
      problems.push_back({r.line, "route names pool '" + *pool + "', which is not under `pools:`" +
                                      (pool_names.empty() ? std::string(" (there are none)")
                                                          : " (pools: " + joined(pool_names) + ")")});
    }
    if (r.is_ref() && named.find(r.name) == named.end()) {
      std::string hint = closest_key(r.name, route_names);
      problems.push_back({r.line, "route refers to '" + r.name + "', which is not under `routes:`" +
                                      (!hint.empty()         ? " (did you mean '" + hint + "'?)"
                                       : route_names.empty() ? std::string(" (there are none)")
                                                             : " (routes: " + joined(route_names) + ")")});
    }
    for (const route_config& c : r.children) node(c);
  }

  // The refs a tree makes, in order, with where each was written.
  static void refs_of(const route_config& r, std::vector<const route_config*>& out) {
    if (r.is_ref()) out.push_back(&r);
    for (const route_config& c : r.children) refs_of(c, out);
  }

  // Depth-first over the named routes; a ref back to a route on the path is
  // a cycle, reported once at the ref that closes it.
  enum class mark { New, OnPath, Done };
  std::map<std::string, mark> state;
  std::vector<std::string> path;

  void visit(const std::string& name) {
    state[name] = mark::OnPath;
    path.push_back(name);
    std::vector<const route_config*> refs;
    refs_of(*named[name], refs);
    for (const route_config* ref : refs) {
      auto it = named.find(ref->name);
      if (it == named.end()) continue;  // reported by node()
      const mark m = state[ref->name];
      if (m == mark::OnPath) {
        std::string loop;
        auto from = std::find(path.begin(), path.end(), ref->name);
        for (auto p = from; p != path.end(); ++p) loop += *p + " -> ";
        problems.push_back({ref->line, "named routes refer to each other in a cycle: " + loop + ref->name});
      } else if (m == mark::New) {
        visit(ref->name);
      }
    }
    path.pop_back();
    state[name] = mark::Done;
  }
};

}  // namespace

std::vector<route_problem> check_route_tree(const router_config& rc) {
  route_checker c{rc, {}, {}, {}, {}, {}, {}};
  for (const pool_config& p : rc.pools) c.pool_names.push_back(p.name);
  for (const route_config& r : rc.named_routes) {
    c.route_names.push_back(r.name);
    c.named.emplace(r.name, &r);
  }
  if (rc.has_route) c.node(rc.route);
  for (const route_config& r : rc.named_routes) c.node(r);
  for (const listener_route& l : rc.listeners) c.node(l.route);
  for (const route_config& r : rc.named_routes) {
    if (c.state[r.name] == route_checker::mark::New) c.visit(r.name);
  }
  return c.problems;
}

}  // namespace ithaca::config
