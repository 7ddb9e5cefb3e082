#include "parser.h"

#include <algorithm>

#include "binary_format.h"

namespace ithaca::protocol {

// One named result, initialized from a prvalue and returned on every path:
// it is built in the caller's slot (a copy of it stalled on store forwarding).
parse_result parser::parse(std::string_view input, request& out) {
  parse_result r = swallow_ > 0 || input.empty() ? parse_after_swallow(input, out) : parse_one(input, out);
  if (r.swallow > 0) {
    const std::size_t rest = input.size() - r.consumed;
    const std::size_t now = std::min(r.swallow, rest);
    r.consumed += now;
    swallow_ = r.swallow - now;
    r.swallow = 0;
  }
  return r;
}

// A request at the front of non-empty `input`, nothing being swallowed.
parse_result parser::parse_one(std::string_view input, request& out) {
  const bool binary_byte = static_cast<unsigned char>(input[0]) == kBinaryRequestMagic;
  mode m = binary_byte ? mode::Binary : mode::Text;
  if (locked()) {
    if (mode_ == mode::Undecided) mode_ = m;
    m = mode_;
  }
  return m == mode::Binary ? binary_.parse(input, out) : text_.parse(input, out);
}

// Discards what is left of a refused value first, then parses what follows
// (its r.swallow is folded by the caller; only r.consumed counts the skip).
parse_result parser::parse_after_swallow(std::string_view input, request& out) {
  const std::size_t skipped = std::min(swallow_, input.size());
  swallow_ -= skipped;
  input.remove_prefix(skipped);
  if (swallow_ > 0 || input.empty()) return parse_result::need_more(skipped);
  parse_result r = parse_one(input, out);
  r.consumed += skipped;
  return r;
}

bool parser::closes_partial_line(std::string_view rest) const {
  constexpr std::size_t kPartialLineMax = 2048;  // memcached's try_read_command_ascii
  constexpr std::size_t kLeadingSpacesMax = 100;
  if (rest.size() <= kPartialLineMax || awaiting_data()) return false;
  const bool binary_byte = static_cast<unsigned char>(rest[0]) == kBinaryRequestMagic;
  const mode m = locked() && mode_ != mode::Undecided ? mode_ : (binary_byte ? mode::Binary : mode::Text);
  if (m == mode::Binary || rest.find('\n') != std::string_view::npos) return false;
  const std::size_t start = std::min(rest.find_first_not_of(' '), rest.size());
  if (start > kLeadingSpacesMax) return true;
  const std::string_view line = rest.substr(start);
  return !line.starts_with("get ") && !line.starts_with("gets ");
}

}  // namespace ithaca::protocol
