// mcrouter's service-info commands other than route and route_handles
// (introspect.h), each in mcrouter's format (ServiceInfo):
//
//   version               "VERSION ithaca" (mcrouter's "VERSION mcrouter":
//                         the version first, for libmemcached)
//   config_file           --config's path ("ERROR: no config file found!")
//   config_age            seconds since that file was last loaded
//   config_md5_digest     the MD5 of the file's text, hex
//   config_sources_info   {"config_file": PATH, "mcrouter_config": MD5}
//   preprocessed_config   the config as loaded: the JSON mcrouter's
//                         preprocessor makes of an mcrouter file once the
//                         loader fills config::config_source::preprocessed,
//                         else the file's text
//   options[(NAME)]       "NAME VALUE" per line, mcrouter's option names
//                         with ithaca's values (service_info.h); one by name
//   hostid                the host id, decimal (server/service_info_of.h)
//   pools                 {POOL: [DestinationRoute name of each server]}
//   verbosity[(N)]        the level `verbosity N` set; with N, "OLD -> N"
//   global_params         mcrouter's preprocessor parameters
//   failure_domains(POOL) {"HOST:PORT": "0()"} (ithaca has no failure domains)
//   get_bucket(KEY)       "" (ithaca has no bucketized routes to record)
// JSON answers are pretty-printed with sorted keys, as mcrouter's
// toPrettySortedJson. [the client coroutine; never waits]
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "route_tree.h"
#include "server_commands.h"

namespace ithaca::route {

// The answer to `cmd(args)`; nullopt when `cmd` is none of the above.
std::optional<std::string> service_info_answer(std::string_view cmd, const std::vector<std::string_view>& args,
                                               const route_tree* tree, const commands::server_context& ctx);

}  // namespace ithaca::route
