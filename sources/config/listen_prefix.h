// memcached 1.6's prefixes on a -l item (and on a listen.tcp entry, spelled
// the same): "notls:", "btls:" or "mtls:" (TLS per listener), then
// "proto[ascii|binary|negotiating]:" (the protocol the listener speaks),
// then "tag[NAME]:" or "tag_NAME_:" (the listener's tag), then the address.
// memcached.c's server_sockets() reads them in that order; so does this.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "config.h"

namespace ithaca::config {

struct listen_prefix {
  size_t length = 0;  // bytes of the item the prefixes take (the address follows)
  bool notls = false;
  peer_check peer = peer_check::Default;
  kinds::binding_protocol protocol = kinds::binding_protocol::Negotiating;
  std::string tag;
};

// Reads the prefixes at the front of `text`. False with *error in memcached's
// words for a malformed one ("Invalid protocol spec: ...", "Listener tags
// must be between 1 and 8 characters: ..."). A protocol name memcached does
// not know is ignored as memcached ignores it (the listener negotiates), with
// a note in *warning (may be null). "proto[proxy]" is refused: the router role
// comes from the config file. [any thread]
bool parse_listen_prefix(std::string_view text, listen_prefix& out, std::string* error, std::string* warning = nullptr);

}  // namespace ithaca::config
