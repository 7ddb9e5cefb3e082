#include "read_only_route.h"

#include "command_class.h"
#include "reply.h"

namespace ithaca::route {

namespace {
constexpr std::string_view kReadOnly = "SERVER_ERROR read-only replica: writes go to the master";
}  // namespace

dispatch_status read_only_route::dispatch(request_slot& slot, dispatch_env& env) const {
  if (!protocol::modifies(slot.req)) return child_.dispatch(slot, env);
  if (slot.req.proto == protocol::protocol_kind::Binary) {
    protocol::encode_binary(env.out, slot.req.opcode, slot.req.opaque, protocol::binary_status::NotSupported, 0, {}, {},
                            kReadOnly.substr(std::string_view("SERVER_ERROR ").size()));
  } else {
    protocol::encode_ascii_line(env.out, kReadOnly);
  }
  return dispatch_status::Done;
}

}  // namespace ithaca::route
