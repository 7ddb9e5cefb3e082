// A pool's servers as written, in ithaca's YAML and in a nutcracker.yml: one
// parser of an entry and one reader of a `servers:` list, so both dialects
// accept the same syntax and say the same words about a mistake. (An mcrouter
// file's servers are JSON strings with its own suffixes; mcrouter_pools.cc
// strips those and parses the rest with parse_backend_server.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "router_config.h"
#include "yaml_section.h"

namespace ithaca::config {

enum class server_syntax : std::uint8_t {
  // "host:port[:weight][ name]", "[v6]:port[:weight][ name]", "unix:/path[ name]".
  Ithaca,
  // The above, and twemproxy's unix socket "/path[:weight][ name]".
  Twemproxy,
  // The above, and port 0 written as such ("localhost:0"): mcrouter takes
  // it (its AccessPoint reads any port), and every connect to it is
  // refused, so the server is one that is always down (mcrouter's tests
  // use it for a server that cannot be reached).
  Mcrouter,
};

// Parses one server entry; false and *error ("bad server '...': why").
bool parse_backend_server(std::string_view text, backend_server& out, std::string* error,
                          server_syntax syntax = server_syntax::Ithaca);

// Reads `servers:` (a string or a list of strings) of the pool `p`, whose
// mapping is `pool_node`, into p.servers: each entry parsed, with its line;
// a bad entry ("bad server ..."), an address listed twice and an empty list
// are errors recorded in the section (the first bad entry ends the list).
// False when the key is absent or its value is not strings (string_list
// recorded that): the caller says what the pool needs.
bool read_server_list(section& s, const YAML::Node& pool_node, pool_config& p, server_syntax syntax);

}  // namespace ithaca::config
