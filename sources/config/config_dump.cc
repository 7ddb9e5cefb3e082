#include "config_dump.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "atomic_file.h"
#include "config_file.h"

namespace ithaca::config {

namespace {

// folly::uriEscape's ALL mode: unreserved bytes as they are, the rest %XX.
std::string dump_escape(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char ch : s) {
    if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
        ch == '.' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
  return out;
}

std::string dump_directory(const cli_options& cli) {
  return cli.config_dump_root + "/mcrouter/" + mcrouter_router_name(cli);
}

}  // namespace

std::string mcrouter_router_name(const cli_options& cli) {
  return cli.mcrouter_ports.empty() ? "0" : std::to_string(cli.mcrouter_ports.front());
}

std::string dumped_config_path(const cli_options& cli) {
  if (cli.config_dump_root.empty() || cli.config_path.empty()) return "";
  return dump_directory(cli) + "/file-" + dump_escape(cli.config_path);
}

bool dump_config(const cli_options& cli, const std::string& text, std::string* error) {
  const std::string path = dumped_config_path(cli);
  if (path.empty()) return true;
  if (!make_directories(dump_directory(cli), error)) return false;
  return write_file_atomically(path, text, 0664, error);
}

bool read_dumped_config(const cli_options& cli, std::string& text, std::string* why) {
  const std::string path = dumped_config_path(cli);
  if (path.empty()) {
    if (why) *why = "no --config-dump-root";
    return false;
  }
  if (cli.max_dumped_config_age_s == 0) {
    if (why) *why = "reading dumped configs is off (--max-dumped-config-age 0)";
    return false;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (why) *why = path + ": " + std::strerror(errno);
    return false;
  }
  const int64_t age = static_cast<int64_t>(std::time(nullptr)) - static_cast<int64_t>(st.st_mtime);
  if (age > static_cast<int64_t>(cli.max_dumped_config_age_s)) {
    if (why) {
      *why = path + " is too old to be trusted (" + std::to_string(age) + " s; --max-dumped-config-age " +
             std::to_string(cli.max_dumped_config_age_s) + ")";
    }
    return false;
  }
  return read_config_file(path, text, why);
}

}  // namespace ithaca::config
