// mcrouter's request counts (its cmd_TYPE_count, `stats`): each request the
// request loop sends to the connection's route, by mcrouter's request type,
// as mcrouter counts what reaches its proxy (Proxy::addRouteTask, before any
// routing). mcrouter splits a multi-key get into one request per key, so
// each key of a get, gets, gat or gats counts; the meta commands count as
// the classic one they stand for (mg a get, ms a set, md a delete, ma an
// incr or decr). Server commands (stats, version, ...) and introspection
// gets count nothing, as in mcrouter.
//
// Thread: the client's worker (the counters are that worker's, one writer).
#pragma once

#include "counters.h"
#include "request.h"

namespace ithaca::stats {

void count_mcrouter_request(const protocol::request& req, command_counters& c);

}  // namespace ithaca::stats
