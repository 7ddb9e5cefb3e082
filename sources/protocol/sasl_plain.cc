#include "sasl_plain.h"

namespace ithaca::protocol {

bool split_sasl_plain(std::string_view data, sasl_plain_message& out) {
  const std::size_t first = data.find('\0');
  if (first == std::string_view::npos) return false;
  const std::size_t second = data.find('\0', first + 1);
  if (second == std::string_view::npos) return false;
  if (data.find('\0', second + 1) != std::string_view::npos) return false;
  out.authzid = data.substr(0, first);
  out.authcid = data.substr(first + 1, second - first - 1);
  out.password = data.substr(second + 1);
  return true;
}

}  // namespace ithaca::protocol
