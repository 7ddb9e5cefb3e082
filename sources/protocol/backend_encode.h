#pragma once
// Bytes of backend requests (router role), appended to a backend
// connection's write buffer: the pieces backend_call puts together. Pure
// functions, no state; nothing here looks at replies.

#include <cstdint>
#include <string>
#include <string_view>

#include "request.h"

namespace ithaca::protocol {

void append_decimal(std::string& out, std::uint64_t v);
void append_signed(std::string& out, std::int64_t v);

// The key can travel in a text command line as is: no space, control byte or
// DEL (binary clients and meta 'b' keys may hold any byte).
bool text_safe_key(std::string_view key);

// " <key>" for a meta command, base64-encoded when it is not text-safe or
// `force_base64`; true when the command then needs the 'b' flag.
bool append_meta_key(std::string& out, std::string_view key, bool force_base64 = false);

// "<verb> <key> <flags> <exptime> <bytes>[ <cas>]\r\n<data>\r\n".
void append_ascii_store(std::string& out, std::string_view verb, std::string_view key, std::uint32_t flags,
                        std::int64_t exptime, std::string_view data, const std::uint64_t* cas = nullptr);

// A meta client's own command (mg ms md ma me), re-encoded from the parsed
// request: its flags in the client's order with their tokens (q included),
// a 'b' key base64-encoded again, ms's value after the line.
void append_meta_passthrough(std::string& out, const request& req);

}  // namespace ithaca::protocol
