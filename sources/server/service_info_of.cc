#include "service_info_of.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "hash/hash_functions.h"
#include "spool_dir.h"

namespace ithaca::server {

namespace {

// The config's MD5 in hex (mcrouter's Md5Hash: 32 lower-case digits), from the MD5 the
// ketama placement computes (proxy/hash): reading a config must not load OpenSSL
// (net/openssl_loader.h).
std::string md5_hex(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t b : proxy::md5_digest(text)) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0x0f]);
  }
  return out;
}

std::string service_join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

std::string service_json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

// The first of mcrouter's standalone options below (standalone_options_list.h).
constexpr const char* kFirstStandaloneOption = "listen_addresses";

// mcrouter's options ithaca has, in mcrouter's order (mcrouter_options_list.h,
// then standalone_options_list.h), valued as mcrouter prints them (a flag
// 0/1, a list comma-joined).
std::vector<std::pair<std::string, std::string>> service_mcrouter_options(const config::config& c,
                                                                          const std::string& path) {
  std::vector<std::pair<std::string, std::string>> o;
  o.emplace_back("asynclog_disable", "0");  // an mcrouter PoolRoute's reliable deletes are on
  o.emplace_back("async_spool", config::spool_dir_of(c));
  o.emplace_back("num_proxies", std::to_string(c.server.workers));
  o.emplace_back("big_value_split_threshold", "0");
  o.emplace_back("pem_cert_path", c.router.tls.chain_cert);
  o.emplace_back("pem_key_path", c.router.tls.key);
  o.emplace_back("pem_ca_path", c.router.tls.ca_cert);
  o.emplace_back("config", path.empty() ? "" : "file:" + path);
  o.emplace_back("config_file", path);
  std::vector<std::string> hosts, ports;
  for (const config::tcp_address& a : c.listen.tcp) {
    hosts.push_back(a.host);
    ports.push_back(std::to_string(a.port));
  }
  o.emplace_back("listen_addresses", service_join(hosts));
  o.emplace_back("ports", service_join(ports));
  o.emplace_back("unix_domain_sock", c.listen.unix_paths.empty() ? "" : c.listen.unix_paths.front());
  o.emplace_back("max_conns", std::to_string(c.server.max_connections));
  o.emplace_back("tcp_listen_backlog", std::to_string(c.listen.backlog));
  return o;
}

// mcrouter's ProxyConfigBuilder::buildGlobalParams, as far as ithaca has
// them: its fixed ones (no routing prefix: the default route mcrouter
// starts with) and "mcrouter-option-NAME" for each integer or flag option.
std::vector<std::pair<std::string, std::string>> service_global_params(
    const std::vector<std::pair<std::string, std::string>>& options, const config::config& c, std::uint32_t hostid) {
  std::vector<std::pair<std::string, std::string>> g = {
      {"default-cluster", service_json_string(".")},
      {"default-region", service_json_string(".")},
      {"default-route", service_json_string("/././")},
      {"hostid", std::to_string(hostid)},
      {"num-proxies", std::to_string(c.server.workers)},
      {"router-info-name", service_json_string("Memcache")},
      {"router-name", service_json_string("unknown")},
      {"service-name", service_json_string("unknown")},
      {"service-router-capable", "0"},
  };
  for (const auto& [name, value] : options) {
    if (name == kFirstStandaloneOption) break;  // the standalone ones are not libmcrouter's
    const bool number = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    if (number) g.emplace_back("mcrouter-option-" + name, service_json_string(value));
  }
  std::sort(g.begin(), g.end());
  return g;
}

std::uint32_t service_first_address_hash() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return 0;
  std::uint32_t h = 0;
  for (ifaddrs* a = list; a != nullptr && h == 0; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    const unsigned char* bytes = nullptr;
    std::size_t n = 0;
    if (a->ifa_addr->sa_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
      const std::uint32_t ip = ntohl(in->sin_addr.s_addr);
      if ((ip >> 24) == 127 || (ip >> 16) == 0xa9fe) continue;  // loopback, 169.254/16
      bytes = reinterpret_cast<const unsigned char*>(&in->sin_addr);
      n = 4;
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ifa_addr);
      if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) || IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr)) continue;
      bytes = in6->sin6_addr.s6_addr;
      n = 16;
    } else {
      continue;
    }
    std::uint32_t f = 2166136261u;
    for (std::size_t i = 0; i < n; ++i) f = (f ^ bytes[i]) * 16777619u;
    h = f == 0 ? 1 : f;
  }
  freeifaddrs(list);
  return h;
}

}  // namespace

std::uint32_t host_id() {
  static const std::uint32_t id = service_first_address_hash();  // once: mcrouter's is fixed at start
  return id;
}

std::shared_ptr<const commands::service_info> service_info_of(const config::config& c, const std::string& path) {
  auto info = std::make_shared<commands::service_info>();
  info->config_file = path;
  info->text = c.source.text;
  info->md5 = path.empty() ? "" : md5_hex(c.source.text);
  info->preprocessed = c.source.preprocessed.empty() ? c.source.text : c.source.preprocessed;
  info->mcrouter = c.source.mcrouter;
  info->hostid = host_id();
  info->options = service_mcrouter_options(c, path);
  info->global_params = service_global_params(info->options, c, info->hostid);
  return info;
}

}  // namespace ithaca::server
