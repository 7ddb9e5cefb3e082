// The contract check the three parser targets share (fuzz_text, fuzz_meta,
// fuzz_binary): the stream goes through protocol::parser whole, in the
// pieces the input's split seed names and (where bytewise_due says so,
// fuzz_input.h) byte by byte, as a connection feeds it (unconsumed bytes
// stay at the front, each read is appended), and:
//   - consumed <= input; Ok and non-closing errors make progress;
//   - NeedMore consumes only bytes of a value being swallowed, and asking
//     again with the same bytes answers NeedMore without consuming;
//   - every view of a request points into the input it was parsed from (or
//     the request's own scratch for a base64 key); a value accepted fits
//     item_size_max;
//   - the requests and errors are the same however the stream was cut (a
//     line over max_line_length closes the connection whether or not its
//     newline has arrived).
// Any breach aborts (fuzz_check.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ithaca::fuzz {

// Which protocol family a target aims at. Only the binary one changes the
// input: its stream always starts with the binary magic, so mutated seeds
// stay binary connections.
enum class parser_family : std::uint8_t { Text, Meta, Binary };

void run_parser_contract(parser_family family, const std::uint8_t* data, std::size_t size);

}  // namespace ithaca::fuzz
