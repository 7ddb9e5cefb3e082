// One request to one backend server on a connection of its own, and its
// answer line by line up to the line that ends it: the router's pool
// commands (server/pool_inspect.h) ask each server `stats items`,
// `stats slabs` (ended by END) and `lru_crawler metadump` (END) or
// `mgdump` (EN), outside the pipelined traffic, which has no place for an
// answer of many lines.
//
// Thread: the caller's coroutine on its worker; it suspends in the connect,
// the write and each read, each bounded: the connect by the pool's
// connect_timeout, the write and every read by its timeout (a long dump
// keeps going while lines keep coming).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "backend_server.h"

namespace ithaca::proxy {

struct query_result {
  bool ok = false;
  bool cancelled = false;  // the worker stops
  std::string error;       // when !ok: what failed, for the log ("connect: ...", "answered ...")
};

// Sends `request` to `s` and calls `on_line` with every line of the answer
// (its "\n" or "\r\n" included) before the one equal to `end` ("END\r\n").
// An answer line starting ERROR, CLIENT_ERROR, SERVER_ERROR or BUSY before
// any other line ends the query as failed with that line; on_line returning
// false ends it as failed too ("stopped"). Lines are at most 64 KiB (a
// longer one fails the query).
query_result query_server(const backend_server& s, std::string_view request, std::string_view end,
                          const std::function<bool(std::string_view line)>& on_line);

}  // namespace ithaca::proxy
