// memcached's command counters for a routed request: what memcached would have
// counted had the client sent the request to it directly (cmd_get, get_hits,
// get_misses, cmd_set, cas_*, delete_*, incr_*, decr_*, cmd_touch, touch_*,
// cmd_flush), worked out from the outcome the client got
// (protocol::routed_result), so `stats` and memcached_commands_total count
// the traffic a router passes as they would on the memcached behind it.
//
// Counted once per client request, by its final outcome: a failover's second
// try, a shadow's copy or an all-sync's fan-out are one request; a flush_all
// sent to every server is one flush. A request no server answered (failed,
// refused, an error line, a non-numeric incr) counts nothing, as memcached
// counts nothing for a command it does not carry out. A meta request passed
// through to a meta backend (outcome Raw) is read by its reply's code, with
// memcached's quiet-mode rules for an empty reply (mg q hides EN, ms q HD,
// md q HD, ma q its success).
//
// Thread: the client's worker (the counters are that worker's, one writer).
#pragma once

#include "counters.h"
#include "request.h"
#include "routed_result.h"

namespace ithaca::stats {

void count_routed(const protocol::request& req, const protocol::routed_result& result, command_counters& c);

}  // namespace ithaca::stats
