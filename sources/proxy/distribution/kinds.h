#pragma once
// The concrete distributions (one .cc each) and the steps that build one.
// Private to sources/proxy: callers use make_distribution() and
// make_live_distribution().

#include <memory>
#include <span>
#include <vector>

#include "distribution/distribution.h"

namespace ithaca::proxy::detail {

// Checks a server list for `kind` (distribution.cc); sets *error on failure.
bool validate(distribution_kind kind, std::span<const server_spec> servers, hash_kind hash, std::string* error);

// Validates, orders the servers as the kind's model does (twemproxy's kinds:
// by name, shorter first), builds the kind, and wraps it so that pick()
// answers to_caller[index] (remapped.cc). to_caller has one entry per server.
std::unique_ptr<distribution> build(distribution_kind kind, std::vector<server_spec> servers,
                                    std::vector<std::uint32_t> to_caller, hash_kind hash, std::string* error);

// The kind over a validated list, in the list's order (distribution.cc).
std::unique_ptr<distribution> make_kind(distribution_kind kind, std::span<const server_spec> servers, hash_kind hash);

// Sum of the weights; validate() checked it fits 32 bits.
std::uint32_t total_weight(std::span<const server_spec> servers);

std::unique_ptr<distribution> make_ketama(distribution_kind kind, std::span<const server_spec> servers, hash_kind hash);
std::unique_ptr<distribution> make_modula(std::span<const server_spec> servers, hash_kind hash);
std::unique_ptr<distribution> make_random(std::span<const server_spec> servers, hash_kind hash);
std::unique_ptr<distribution> make_jump(std::span<const server_spec> servers, hash_kind hash);
std::unique_ptr<distribution> make_rendezvous(std::span<const server_spec> servers, hash_kind hash);
// ch3, weighted_ch3 and mcrouter_crc32 (ch3.cc).
std::unique_ptr<distribution> make_ch3(distribution_kind kind, std::span<const server_spec> servers, hash_kind hash);

}  // namespace ithaca::proxy::detail
