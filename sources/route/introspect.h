// Introspection keys: a get for `__mcrouter__.CMD` (mcrouter's service info,
// its ServiceInfo) or `__ithaca__.CMD` (the same commands under ithaca's
// name) is answered by the server itself, never sent to a backend, in
// whichever protocol the get came (ascii get/gets, mg, binary get): a hit
// whose value is the answer, in mcrouter's words and formats.
//
//   route(OP,KEY)          the servers a request OP for KEY is sent to, one
//                          "host:port" per line ("\r\n" between), as mcrouter
//                          records them: selectors pick their child; a
//                          failover stops at the first child that reaches a
//                          server that is up; a server marked down gets
//                          nothing; the other composites reach every child
//                          their targets_for() names (all_*: every one).
//   route_handles(OP,KEY)  the route handles that request walks under
//                          mcrouter's "root", one per line, indented one
//                          space per level, with mcrouter's names
//                          (handle_walk.h: all-sync, failover:NAME,
//                          asynclog:POOL, selection|hash|Ch3, the server's
//                          host|pool=...|id=...|ap=...|timeout=...ms line).
//   the rest               introspect_info.h: version, config_file,
//                          config_age, config_md5_digest, options,
//                          config_sources_info, preprocessed_config, hostid,
//                          pools, verbosity, global_params,
//                          failure_domains(POOL), get_bucket(KEY).
// Anything else answers "ERROR: unknown command: CMD"; a bad OP "ERROR:
// route: unknown request OP" (mcrouter's words). OP is mcrouter's request
// name (get, gets, set, add, replace, append, prepend, cas, delete, incr,
// decr, touch, gat, gats, lease-get, lease-set, metaget, flushall); under
// `__ithaca__.` the meta names mg ms md ma too.
//
// Where: the request loop checks each parsed get before it dispatches
// (request_loop.cc), so it works on every listener's root and in both roles.
// A get is answered here only when ALL its keys are introspection keys; a get
// mixing them with ordinary keys goes to the route as it is. An ordinary key
// costs one look at its first byte.
#pragma once

#include <string>
#include <string_view>

#include "out_buffer.h"
#include "request.h"
#include "route.h"
#include "route_tree.h"
#include "routed_result.h"
#include "server_commands.h"

namespace ithaca::route {

inline constexpr std::string_view kMcrouterPrefix = "__mcrouter__.";
inline constexpr std::string_view kIthacaPrefix = "__ithaca__.";

// Whether `key` names an introspection command. [pure]
inline bool is_introspection_key(std::string_view key) {
  return key.size() > 2 && key[0] == '_' && key[1] == '_' &&
         (key.starts_with(kMcrouterPrefix) || key.starts_with(kIthacaPrefix));
}

// Whether the request loop answers `req` itself: a get (ascii get/gets, mg,
// binary get) whose every key is an introspection key. [pure; the first
// check fails on the first byte of an ordinary key]
inline bool is_introspection(const protocol::request& req) {
  if (req.keys.empty() || !is_introspection_key(req.key())) return false;
  using protocol::command;
  if (req.cmd != command::Get && req.cmd != command::Gets && req.cmd != command::MetaGet) return false;
  for (std::size_t i = 1; i < req.keys.size(); ++i) {
    if (!is_introspection_key(req.keys[i])) return false;
  }
  return true;
}

// The answer to one introspection key (the prefix included), walking `root`
// (the connection's tree root) for route/route_handles; `tree` (its tree,
// for `pools` and `failure_domains`; null: none). `backends`: this worker's,
// for the live placement of an auto_eject_hosts pool (may be null).
// [the client coroutine; never waits]
std::string introspection_answer(std::string_view key, const route& root, const route_tree* tree,
                                 const commands::server_context& ctx, proxy::worker_backends* backends);

// Answers `req` (is_introspection) into `out` in its protocol; `scratch`
// holds the values meanwhile.
void answer_introspection(const protocol::request& req, const route& root, const route_tree* tree,
                          const commands::server_context& ctx, proxy::worker_backends* backends,
                          protocol::routed_result& scratch, protocol::out_buffer& out);

}  // namespace ithaca::route
