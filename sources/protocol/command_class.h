// What a command does, decided in one place. The cache executor picks its
// handler by it, the backend codec its wire form, the request loop which
// commands the server answers itself, the read-only gate which ones write,
// the client bound which ones may be fetched twice, and the routes which
// operation class a request belongs to (prefix/operation selectors, rate
// limits, failover policies, gutter TTL caps).
#pragma once

#include <cstdint>

#include "op_class.h"
#include "request.h"

namespace ithaca::protocol {

enum class command_class : std::uint8_t {
  Retrieve,    // get gets gat gats, lease-get, mg; binary get*, gat*, and binary touch (it answers a value's flags)
  Store,       // set add replace append prepend cas, lease-set, ms
  Delete,      // delete, md
  Arithmetic,  // incr decr, ma
  Touch,       // ascii touch
  Flush,       // flush_all
  Debug,       // me: reads an item's metadata
  Server,      // answered by the server whatever the route: version verbosity stats quit
               // shutdown cache_memlimit watch slabs lru lru_crawler mn noop sasl, unknown
};

command_class classify(const request& r);

// The operation class a route selects by (kinds/op_class.h).
using kinds::op_class;
op_class operation_of(const request& r);

// Whether `r` changes the item it names (or the store): every store, delete,
// arithmetic, touch, gat, flush and lease-get (its miss leaves a placeholder),
// and an mg with T (touch), N (vivify) or E. A read-only replica refuses these.
bool modifies(const request& r);

// Whether `r` may reach its server twice with one reply: it changes nothing
// there and its second answer is the first's (get, gets, an mg without touch,
// vivify, recache win, hit-before or last-access flags).
bool can_fetch_again(const request& r);

// A get line that may carry several keys (get gets gat gats in ascii).
bool is_multikey_retrieval(const request& r);

}  // namespace ithaca::protocol
