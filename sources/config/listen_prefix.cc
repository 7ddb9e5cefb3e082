#include "listen_prefix.h"

#include <tuple>

#include "fail.h"

namespace ithaca::config {

namespace {

// "[NAME]" (or memcached's shell-friendly "_NAME_" where `underscore`) at the
// front of `rest`, then the ':' after it. Sets `name` and returns the bytes
// taken, or 0 when there is no closing bracket.
size_t bracketed(std::string_view rest, bool underscore, std::string_view& name) {
  if (rest.empty()) return 0;
  const char open = rest.front();
  if (open != '[' && !(underscore && open == '_')) return 0;
  const size_t close = rest.find(open == '[' ? ']' : '_', 1);
  if (close == std::string_view::npos) return 0;
  name = rest.substr(1, close - 1);
  // memcached skips one character after the bracket, assumed ':'.
  return close + 1 < rest.size() ? close + 2 : close + 1;
}

}  // namespace

bool parse_listen_prefix(std::string_view text, listen_prefix& out, std::string* error, std::string* warning) {
  listen_prefix p;
  std::string_view rest = text;
  for (auto [word, notls, peer] :
       {std::tuple{"notls:", true, peer_check::Default}, std::tuple{"btls:", false, peer_check::None},
        std::tuple{"mtls:", false, peer_check::Required}}) {
    if (rest.starts_with(word)) {
      p.notls = notls;
      p.peer = peer;
      rest.remove_prefix(std::string_view(word).size());
      break;
    }
  }
  if (rest.starts_with("proto[")) {
    std::string_view name;
    const size_t taken = bracketed(rest.substr(5), false, name);
    if (taken == 0) return fail(error, "Invalid protocol spec: \"" + std::string(rest.substr(5)) + "\"");
    if (name == "ascii") {
      p.protocol = kinds::binding_protocol::Ascii;
    } else if (name == "binary") {
      p.protocol = kinds::binding_protocol::Binary;
    } else if (name == "negotiating") {
      p.protocol = kinds::binding_protocol::Negotiating;
    } else if (name == "proxy") {
      return fail(error,
                  "proto[proxy]: ithaca's router role comes from the config file (pools:, route:, "
                  "listeners:), not from -l");
    } else if (warning) {
      *warning = "proto[" + std::string(name) +
                 "]: not a protocol memcached knows (ascii, binary, "
                 "negotiating); the listener negotiates, as memcached's does";
    }
    rest.remove_prefix(5 + taken);
  }
  if (rest.starts_with("tag[") || rest.starts_with("tag_")) {
    std::string_view name;
    const size_t taken = bracketed(rest.substr(3), true, name);
    if (taken == 0) return fail(error, "Invalid tag in socket config: \"" + std::string(rest.substr(3)) + "\"");
    if (name.empty() || name.size() > 8) {
      return fail(error, "Listener tags must be between 1 and 8 characters: \"" + std::string(name) + "\"");
    }
    p.tag = std::string(name);
    rest.remove_prefix(3 + taken);
  }
  p.length = text.size() - rest.size();
  out = std::move(p);
  return true;
}

}  // namespace ithaca::config
