#include "request.h"

namespace ithaca::protocol {

void request::clear() {
    // keys keeps its spill capacity; everything else goes back to defaults.
    keys.clear();
    cmd = command::Unknown;
    proto = protocol_kind::Ascii;
    value = {};
    flags = 0;
    exptime = 0;
    cas = 0;
    delta = 0;
    initial = 0;
    lease_token = 0;
    flush_delay = 0;
    has_flush_delay = false;
    verbosity = 0;
    args = {};
    noreply = false;
    opcode = 0;
    opaque = 0;
    binary_with_key = false;
    meta.clear();
    meta_key_binary = false;
}

}  // namespace ithaca::protocol
