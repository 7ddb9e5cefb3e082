#pragma once

#include <cstddef>

#include "binding_protocol.h"

namespace ithaca::protocol {

struct parser_settings {
  // Largest value accepted (memcached -I, item_size_max). A larger value is
  // refused with "object too large" and its bytes are swallowed. memcached
  // counts the item header and key against this limit too; the store applies
  // the precise limit, the parser only refuses what can never fit.
  std::size_t item_size_max = 1024 * 1024;
  // The longest text command line, its newline included: a line whose
  // newline is not among its first max_line_length bytes closes the
  // connection without a reply. memcached 1.6.18 reads into a 16 KiB buffer
  // (READ_BUFFER_SIZE) and serves any line that arrives whole in it, up to
  // 16384 bytes; a 16385-byte line closes. (It also closes a line of which
  // more than 2048 bytes arrived in one read without the newline: that
  // depends on how the network cut the line, so we do not copy it; a line
  // closes here the same way however it arrives.)
  std::size_t max_line_length = 16 * 1024;
  // A line starting with "get " or "gets " (a multiget) may be longer:
  // memcached grows its buffer for it without bound. We bound it, and
  // close beyond (a deviation, to survive hostile clients).
  std::size_t max_get_line_length = 1024 * 1024;  // at least max_line_length
  // memcached decides the protocol from the first byte of a connection and
  // keeps it: a binary connection whose next packet has another magic is
  // closed; on a text connection 0x80 is just a byte of a bad command.
  // false: decide per request (0x80 = binary, anything else = text).
  bool lock_protocol = true;
  // memcached's binding protocol (-B for every listener, -l proto[ascii|binary]: for one):
  // Negotiating tells the protocols apart by the first byte; Ascii and
  // Binary speak that one from the first byte on, whatever it is (a text
  // line on a binary listener is a bad magic: closed; 0x80 on an ascii one
  // is a byte of a bad command), as memcached's listeners do.
  // (kinds/binding_protocol.h, the config's -B and -l proto[...] too.)
  using binding = kinds::binding_protocol;
  binding binding_protocol = binding::Negotiating;
  // -S: SASL_AUTH and SASL_STEP are requests (the mechanism as the key, the
  // data as the value) for the server to answer; off, memcached answers
  // them "Unknown command". -S binds the binary protocol, -Y the ascii one
  // (binding_protocol above, set with them: server/instance.cc).
  bool sasl = false;
  // An mcrouter config (config.source.mcrouter): text errors as mcrouter's
  // server answers them, since its clients match on them. A key over 250
  // bytes is "CLIENT_ERROR bad key" (the connection goes on; a storage
  // command's value is swallowed as always); a line mcrouter's parser could
  // not read (unknown command, bad command line, bad data chunk) is
  // "CLIENT_ERROR malformed request" and the connection closes, as
  // McServerSession::parseError does: what follows cannot be framed. Off:
  // memcached's words and behaviour.
  bool mcrouter_replies = false;
};

}  // namespace ithaca::protocol
