#pragma once
// A distribution maps a key to one server of a list. It is built once (at
// start-up, at reload, or when auto-ejection changes the live servers), then
// only read: it has no mutable state and any number of threads may call it at
// once (random keeps its generator thread-local).
//
// What each kind reads of a key (see pick()):
//   ketama, libmemcached_ketama, modula, jump   the key hash only
//   rendezvous                                   the hashed part only (its own
//                                                64-bit hash of part and server)
//   random                                       nothing
// "Hashed part" is key_hash_part(key, options) (key_hash_part.h): the whole
// key, or its hash tag / the part before a hash stop.
//
// How a pool uses it (built at config load or reload, or on an ejection, and
// shared read-only by every worker):
//     std::vector<server_spec> specs;   // per server, in config order:
//         // {server_point_name(kind, host, port, configured_name), weight}
//     auto dist = make_distribution(kind, specs, hash, &error);   // or nullptr
//     ... per key: std::uint32_t server = dist->locate(key_hash_part(key, options));

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "distribution/server_spec.h"
#include "distribution_kind.h"
#include "hash/hash_key.h"

namespace ithaca::proxy {

// The one distribution_kind (kinds/distribution_kind.h: its values and
// names), by the name the proxy's code has always used.
using kinds::distribution_kind;

class distribution {
 public:
  virtual ~distribution() = default;
  distribution(const distribution&) = delete;
  distribution& operator=(const distribution&) = delete;

  // The server for a key whose hashed part is `part` and whose
  // key_hash(part) is `hash`: an index into the server list this was built
  // from (for make_live_distribution: into the full list). A kind ignores
  // the input it does not read (table above), so a caller that knows the
  // kind may pass 0 or "" for it.
  virtual std::uint32_t pick(std::string_view part, std::uint32_t hash) const = 0;

  // twemproxy's key hash (server_pool_hash): 0 when the list has one server
  // or the part is empty, else hash_key(hash(), part).
  std::uint32_t key_hash(std::string_view part) const;
  // pick(part, key_hash(part)), hashing only for the kinds that read it.
  std::uint32_t locate(std::string_view part) const;

  distribution_kind kind() const { return kind_; }
  hash_kind hash() const { return hash_; }
  // Servers it chooses among (the live ones for make_live_distribution).
  std::uint32_t size() const { return size_; }
  // Whether pick() reads its `hash` argument.
  bool reads_hash() const;

 protected:
  distribution(distribution_kind kind, hash_kind hash, std::uint32_t size) : kind_(kind), hash_(hash), size_(size) {}

 private:
  distribution_kind kind_;
  hash_kind hash_;
  std::uint32_t size_;
};

// Builds a distribution over `servers` (copied as needed; the span may go
// away); pick() answers indices into `servers`, in the caller's order.
//
// Order: twemproxy sorts a pool's servers by name (shorter names first, then
// bytewise; nc_conf.c conf_validate_server) and numbers them in that order, so
// ketama and modula do the same internally: modula's slots and ketama's ties
// then fall as nutcracker's do whatever order the config lists them in.
// libmemcached_ketama, jump and rendezvous keep the list's order (libmemcached
// does not sort unless MEMCACHED_BEHAVIOR_SORT_HOSTS is set; for jump,
// appending to the list is the stable change).
//
// Returns nullptr and sets *error (if given) when the list is empty or longer
// than 65,536 servers, a weight is 0, the total weight does not fit the kind
// (2^32 - 1; jump 2^31 - 1), a name is empty, longer than 255 bytes or
// repeated (every kind but random and jump; twemproxy refuses repeated names
// too), or libmemcached_ketama is asked for a hash other than md5
// (libmemcached's weighted ketama always hashes keys with md5).
//
// Cost: ketama does ~40 md5 per server and sorts ~160 points per server
// (100 servers: well under a millisecond); the others are O(n log n) at most.
std::unique_ptr<distribution> make_distribution(distribution_kind kind, std::span<const server_spec> servers,
                                                hash_kind hash, std::string* error);

// The same over the servers listed in `live` (ascending indices into
// `servers`), with pick() returning indices into `servers`: what twemproxy's
// auto_eject_hosts does when a server is ejected or comes back. Its rebuilt
// continuum is exactly the one built from the live servers alone (it weighs by
// their total weight and count), so placement over the live servers still
// matches nutcracker's. Errors as make_distribution, and for an empty `live`
// or an index out of range or out of order.
std::unique_ptr<distribution> make_live_distribution(distribution_kind kind, std::span<const server_spec> servers,
                                                     std::span<const std::uint32_t> live, hash_kind hash,
                                                     std::string* error);

// The name the pool should give a server so that `kind` places keys as its
// model does: libmemcached_server_name() for libmemcached_ketama,
// twemproxy_server_name() for every other kind.
std::string server_point_name(distribution_kind kind, std::string_view host, std::uint16_t port,
                              std::string_view configured_name);

}  // namespace ithaca::proxy
