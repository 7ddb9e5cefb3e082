// The master's side of what a slave sends back: heartbeat bytes ('\0', as
// yrmcds's slave sends one per interval) and, with `replication.ack: slave`,
// confirmation packets (the Noop responses of record.h). Bytes may arrive in
// any pieces; a packet split across reads is gathered here.
//
// Anything but '\0' outside a packet is taken as a heartbeat too (yrmcds
// gives the bytes no meaning), except 0x81, which starts a packet. A packet
// that is not a bare Noop response with status 0 is an Error: the slave is
// dropped (it must resync), since it does not speak the confirmation protocol.
//
// Thread: the fan-out machine, one reader per slave.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "record.h"

namespace ithaca::replication {

class ack_reader {
 public:
  enum class status : uint8_t { Ok, Error };

  // Consumes all of `in`. `confirmed` is raised to the highest position
  // confirmed in it (left alone when none is). Error: error() says why.
  status feed(std::string_view in, uint64_t& confirmed);
  const std::string& error() const { return error_; }

 private:
  char packet_[kAckSize];
  size_t have_ = 0;  // bytes of packet_ gathered; 0 outside a packet
  std::string error_;
};

}  // namespace ithaca::replication
