#include "backend_tls.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ithaca::config {

backend_tls merge_tls(const backend_tls& base, const backend_tls& over) {
  backend_tls t = base;
  t.enabled = over.enabled;
  if (!over.ca_cert.empty()) t.ca_cert = over.ca_cert;
  if (over.verify != tls_verify::Default) t.verify = over.verify;
  if (!over.chain_cert.empty()) t.chain_cert = over.chain_cert;
  if (!over.key.empty()) t.key = over.key;
  if (!over.server_name.empty()) t.server_name = over.server_name;
  if (over.min_version != 0) t.min_version = over.min_version;
  if (!over.ciphers.empty()) t.ciphers = over.ciphers;
  return t;
}

std::string describe(const backend_tls& t) {
  if (!t.enabled) return "off";
  std::string s = t.verify_peer() ? "on (verify" : "on (no verify";
  if (!t.chain_cert.empty()) s += ", client certificate";
  return s + ")";
}

bool check_tls_files(const backend_tls& t, std::string_view what, std::string* error) {
  const std::pair<const char*, const std::string*> files[] = {
      {"ca_cert", &t.ca_cert}, {"chain_cert", &t.chain_cert}, {"key", &t.key}};
  for (const auto& [name, path] : files) {
    if (path->empty() || ::access(path->c_str(), R_OK) == 0) continue;
    if (error) *error = std::string(what) + ": " + name + " " + *path + ": " + std::strerror(errno);
    return false;
  }
  if (!t.key.empty() && t.chain_cert.empty()) {
    if (error) *error = std::string(what) + ": key is given without chain_cert (the client certificate)";
    return false;
  }
  return true;
}

}  // namespace ithaca::config
