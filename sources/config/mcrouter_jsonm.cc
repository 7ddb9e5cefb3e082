#include "mcrouter_jsonm.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <map>
#include <stdexcept>

#include "config_file.h"
#include "jsonm_hash.h"
#include "jsonm_preprocessor.h"

namespace ithaca::config {

// A 32-bit id of this host: its first address that is neither loopback nor
// link-local, hashed (0 when it has none, as mcrouter's).
uint32_t mcrouter_hostid() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return 0;
  uint32_t id = 0;
  for (ifaddrs* a = list; a != nullptr && id == 0; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    if (a->ifa_addr->sa_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
      const uint32_t host = ntohl(in->sin_addr.s_addr);
      if ((host >> 24) == 127 || (host >> 16) == 0xA9FE) continue;
      id = static_cast<uint32_t>(jsonm::twang_mix64(host));
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ifa_addr);
      if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) || IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr)) continue;
      id = static_cast<uint32_t>(jsonm::spooky_hash64(
          std::string_view(reinterpret_cast<const char*>(&in6->sin6_addr), sizeof in6->sin6_addr), 0));
    }
  }
  freeifaddrs(list);
  return id;
}

namespace {

std::string mcrouter_one_line(std::string s) {
  for (size_t at; (at = s.find(":\n")) != std::string::npos;) s.replace(at, 2, ": ");
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

}  // namespace

std::map<std::string, jsonm::value> mcrouter_global_params(const mcrouter_params& p) {
  using jsonm::value;
  std::map<std::string, value> g;
  // "/region/cluster/" (--route-prefix, checked by the routing_prefix route).
  std::string route = p.default_route.empty() ? std::string("/././") : p.default_route;
  if (!route.starts_with("/")) route.insert(route.begin(), '/');
  if (!route.ends_with("/")) route.push_back('/');
  const size_t mid = route.find('/', 1);
  g["default-route"] = value::string(route);
  g["default-region"] = value::string(route.substr(1, mid == std::string::npos ? 0 : mid - 1));
  g["default-cluster"] =
      value::string(mid == std::string::npos ? std::string() : route.substr(mid + 1, route.size() - mid - 2));
  g["hostid"] = value::integer(mcrouter_hostid());
  g["router-name"] = value::string("unknown");
  g["service-name"] = value::string("unknown");
  g["service-router-capable"] = value::integer(0);
  g["router-info-name"] = value::string("Memcache");
  g["num-proxies"] = value::integer(p.workers);
  for (const auto& [name, v] : p.config_params) g.emplace(name, value::string(v));  // mcrouter's emplace: no override
  return g;
}

bool mcrouter_expand(const std::string& text, const std::string& path, const mcrouter_params& params, jsonm::value& out,
                     std::string* message, int* line, std::vector<std::string>* imported) {
  jsonm::options o;
  o.globals = mcrouter_global_params(params);
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  o.import = [folder, imported](const std::string& p) {
    std::string file = p.starts_with("file:") ? p.substr(5) : (p.starts_with("/") ? p : folder + p);
    if (imported) imported->push_back(file);
    std::string content;
    std::string why;
    if (!read_config_file(file, content, &why)) throw std::runtime_error("Can not read " + p + ": " + why);
    return content;
  };
  try {
    out = jsonm::expand_config(text, o);
    return true;
  } catch (const jsonm::error& e) {
    if (line) *line = e.line;
    if (message) *message = mcrouter_one_line(e.what());
    return false;
  }
}

}  // namespace ithaca::config
