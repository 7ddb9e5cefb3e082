// Makes what the `__mcrouter__.*` keys tell of a loaded configuration
// (commands/service_info.h): at start-up and at each SIGHUP that applies a
// file, beside the live settings it is published with. [main or the
// pooler; reads the network interfaces once per process for the host id]
#pragma once

#include <memory>
#include <string>

#include "config.h"
#include "service_info.h"

namespace ithaca::server {

std::shared_ptr<const commands::service_info> service_info_of(const config::config& c, const std::string& path);

// mcrouter's host id: a hash of this host's first address that is neither
// loopback nor link-local (0 without one), the same for the process's life.
// mcrouter hashes it with folly's IPAddress hash; ithaca with 32-bit FNV-1a
// over the address bytes, so the number differs and only its use (stable,
// per host) is the same.
std::uint32_t host_id();

}  // namespace ithaca::server
