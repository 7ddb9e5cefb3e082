#include "read_only_route.h"

#include "reply.h"

namespace ithaca::route {

namespace {
constexpr std::string_view kReadOnly = "SERVER_ERROR read-only replica: writes go to the master";
}  // namespace

bool read_only_route::is_write(const protocol::request& req) {
  using protocol::command;
  switch (req.cmd) {
    case command::Get:
    case command::Gets:
    case command::MetaDebug:
      return false;
    case command::MetaGet:
      // mg with T (touch), N (vivify on miss) or E changes the item.
      return req.meta.has('T') || req.meta.has('N') || req.meta.has('E');
    default:
      // Every other command a route sees modifies: set add replace append
      // prepend cas incr decr delete touch gat gats flush_all lease-get
      // (its miss creates a placeholder) lease-set ms md ma.
      return true;
  }
}

dispatch_status read_only_route::dispatch(request_slot& slot, dispatch_env& env) const {
  if (!is_write(slot.req)) return child_.dispatch(slot, env);
  if (slot.req.proto == protocol::protocol_kind::Binary) {
    protocol::encode_binary(env.out, slot.req.opcode, slot.req.opaque, protocol::binary_status::NotSupported, 0,
                            {}, {}, kReadOnly.substr(std::string_view("SERVER_ERROR ").size()));
  } else {
    protocol::encode_ascii_line(env.out, kReadOnly);
  }
  return dispatch_status::Done;
}

}  // namespace ithaca::route
