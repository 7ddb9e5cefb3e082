#pragma once
// What a distribution needs to know about one server: the string its points
// are hashed from and its weight. The pool builds these from its config.

#include <cstdint>
#include <string>
#include <string_view>

namespace ithaca::proxy {

struct server_spec {
  // What ketama hashes into continuum points ("<name>-<i>"), rendezvous
  // scores by, and ketama and modula order the servers by (as twemproxy
  // does). Use server_point_name() (distribution.h) or the two functions
  // below so placement matches those programs.
  std::string name;
  // Relative share of the keys, >= 1. ketama: points on the continuum in
  // proportion; modula: `weight` consecutive slots of hash % total_weight;
  // jump: `weight` buckets; rendezvous: the weighted score; random: ignored
  // (twemproxy ignores it too).
  std::uint32_t weight = 1;
  // weighted_ch3 only: the share of its ch3 keys the server keeps, in
  // [0, 1], as mcrouter's WeightedCh3 `weights` give it. Negative (unset):
  // weight over the largest weight in the list.
  double fraction = -1.0;
};

// twemproxy's name for a server ("host:port:weight [name]" in its config,
// nc_conf.c conf_add_server): the configured `name` if there is one, else the
// host alone when the port is 11211 ("for backward compatibility with
// libmemcached"), else "host:port". A unix socket (port 0 here) gets its path
// and a ':' ("/run/mc.sock:"), a quirk of twemproxy's parser kept so that
// placement matches. `host` is used as written in the config.
std::string twemproxy_server_name(std::string_view host, std::uint16_t port, std::string_view name = {});

// libmemcached's ketama point prefix (hosts.cc update_continuum): the host
// alone on port 11211, else "host:port"; a unix socket (port 0) is "path:0".
// libmemcached has no server names.
std::string libmemcached_server_name(std::string_view host, std::uint16_t port);

}  // namespace ithaca::proxy
