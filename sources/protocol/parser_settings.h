#pragma once

#include <cstddef>

namespace ithaca::protocol {

struct parser_settings {
    // Largest value accepted (memcached -I, item_size_max). A larger value is
    // refused with "object too large" and its bytes are swallowed. memcached
    // counts the item header and key against this limit too; the store applies
    // the precise limit, the parser only refuses what can never fit.
    std::size_t item_size_max = 1024 * 1024;
    // A text connection whose buffer holds more than this without a newline is
    // closed without a reply, unless the line starts with "get " or "gets "
    // (memcached 1.6.18: 2048 bytes; 2047 waits, 2049 closes).
    std::size_t max_line_length = 2048;
    // Multiget lines may be longer; memcached grows its buffer without bound.
    // We bound it, and close beyond (a deviation, to survive hostile clients).
    std::size_t max_get_line_length = 1024 * 1024;
    // memcached decides the protocol from the first byte of a connection and
    // keeps it: a binary connection whose next packet has another magic is
    // closed; on a text connection 0x80 is just a byte of a bad command.
    // false: decide per request (0x80 = binary, anything else = text).
    bool lock_protocol = true;
};

}  // namespace ithaca::protocol
