#include "server_list.h"

#include <algorithm>

#include "config.h"
#include "units.h"

namespace ithaca::config {

namespace {

constexpr const char* kBadWeight = "weight must be an integer from 1 to 1000000";

// A server's `:weight`: 1 to 1000000.
bool parse_weight(std::string_view text, uint32_t& out) {
  uint64_t w = 0;
  if (!parse_unsigned(text, w) || w < 1 || w > 1000000) return false;
  out = static_cast<uint32_t>(w);
  return true;
}

// twemproxy's unix socket "/path[:weight][ name]": read as ithaca's
// "unix:/path[ name]" with the weight taken off first.
bool parse_twemproxy_unix(std::string_view text, backend_server& out, std::string* error) {
  const size_t space = text.find_first_of(" \t");
  std::string spec(text.substr(0, space));
  const std::string_view rest = space == std::string_view::npos ? std::string_view() : text.substr(space);
  const size_t colon = spec.rfind(':');
  uint32_t weight = 1;
  if (colon != std::string::npos) {
    if (!parse_weight(std::string_view(spec).substr(colon + 1), weight)) {
      if (error) *error = "bad server '" + std::string(text) + "': " + kBadWeight;
      return false;
    }
    spec.resize(colon);
  }
  if (!parse_backend_server("unix:" + spec + std::string(rest), out, error)) return false;
  out.weight = weight;
  return true;
}

}  // namespace

// "host:port[:weight][ name]", "[v6]:port[:weight][ name]", "unix:/path[ name]"
// (and with twemproxy's syntax "/path[:weight][ name]").
bool parse_backend_server(std::string_view text, backend_server& out, std::string* error, server_syntax syntax) {
  auto fail = [&](const std::string& why) {
    if (error) *error = "bad server '" + std::string(text) + "': " + why;
    return false;
  };
  if (syntax == server_syntax::Twemproxy && text.starts_with("/")) return parse_twemproxy_unix(text, out, error);
  std::string_view spec = text;
  const size_t space = spec.find_first_of(" \t");
  if (space != std::string_view::npos) {
    std::string_view name = spec.substr(space);
    name.remove_prefix(std::min(name.find_first_not_of(" \t"), name.size()));
    if (name.empty() || name.find_first_of(" \t") != std::string_view::npos) {
      return fail("expected 'host:port[:weight] [name]'");
    }
    out.name = std::string(name);
    spec = spec.substr(0, space);
  }
  if (spec.starts_with("unix:")) {
    if (spec.size() <= 5 || spec[5] != '/') return fail("a unix socket path must be absolute");
    if (spec.size() - 5 > kMaxUnixPath) return fail("unix socket path too long");
    out.address = std::string(spec);
    out.written = std::string(text);
    return true;
  }
  // A weight is a third ':'-part after the port: "h:p:w" or "[v6]:p:w".
  std::string_view hostport = spec;
  const size_t close = spec.find(']');
  const size_t port_colon = spec.find(':', close == std::string_view::npos ? 0 : close);
  if (port_colon != std::string_view::npos) {
    const size_t weight_colon = spec.find(':', port_colon + 1);
    if (weight_colon != std::string_view::npos && (close != std::string_view::npos || spec.find(':') == port_colon)) {
      if (!parse_weight(spec.substr(weight_colon + 1), out.weight)) return fail(kBadWeight);
      hostport = spec.substr(0, weight_colon);
    }
  }
  tcp_address a;
  std::string why;
  if (!parse_tcp_address(hostport, 0, a, &why)) return fail(why);
  if (a.port == 0) {
    // Not written, or written as 0: only the first takes the default.
    parse_tcp_address(hostport, kDefaultPort, a, &why);
    if (a.port == 0 && syntax != server_syntax::Mcrouter) return fail("port 0 is not a server's port");
    out.port_written = a.port == 0;
  }
  out.address = to_string(a);
  out.written = std::string(text);
  return true;
}

bool read_server_list(section& s, const YAML::Node& pool_node, pool_config& p, server_syntax syntax) {
  std::vector<std::string> texts;
  std::vector<YAML::Mark> marks;
  if (!s.string_list("servers", texts, &marks)) return false;
  if (texts.empty()) {
    s.context().fail(pool_node.Mark(), "pool '" + p.name + "' has no servers");
    return true;
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    backend_server b;
    std::string why;
    if (!parse_backend_server(texts[i], b, &why, syntax)) {
      s.fail_value("servers", marks[i], why);
      return true;
    }
    b.line = marks[i].line + 1;
    for (const backend_server& other : p.servers) {
      if (other.address == b.address) {
        s.fail_value("servers", marks[i], "server " + b.address + " is listed twice in pool '" + p.name + "'");
        return true;
      }
    }
    p.servers.push_back(std::move(b));
  }
  return true;
}

}  // namespace ithaca::config
