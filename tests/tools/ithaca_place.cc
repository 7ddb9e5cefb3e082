// ithaca_place: prints, for each key read from stdin (one per line), the
// index of the server a pool would send it to.
//
//   ithaca_place [--distribution KIND] [--hash KIND] [--hash-tag XY] [--hash-stop]
//                [--down I,J,...] SERVER...
//
// SERVER is twemproxy's server syntax, one argument each (quote the space):
// "host:port:weight[ name]" or "/path/to/socket:weight[ name]". The defaults
// are twemproxy's: ketama and fnv1a_64. --down lists servers (0-based, in the
// order given) taken out as twemproxy's auto_eject_hosts does: the
// distribution is rebuilt over the others (make_live_distribution) and the
// printed indices still count every server. Exit status 2 on a usage error.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "distribution/distribution.h"
#include "key_hash_part.h"

using namespace ithaca::proxy;

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "ithaca_place: %s\n"
               "usage: ithaca_place [--distribution KIND] [--hash KIND] [--hash-tag XY] [--hash-stop] "
               "[--down I,J,...] 'host:port:weight[ name]'...\n",
               why.c_str());
  std::exit(2);
}

bool parse_u32(std::string_view s, std::uint64_t max, std::uint32_t& out) {
  if (s.empty() || s.size() > 10) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > max) return false;
  out = static_cast<std::uint32_t>(v);
  return true;
}

// twemproxy's conf_add_server, read from the end: an optional name after the
// last space, the weight after the last ':', then (not for a unix socket
// path, which starts with '/') the port after the previous ':'.
server_spec parse_server(std::string_view item, distribution_kind kind) {
  std::string_view name;
  if (const auto sp = item.rfind(' '); sp != std::string_view::npos) {
    name = item.substr(sp + 1);
    item = item.substr(0, sp);
  }
  const auto wc = item.rfind(':');
  if (wc == std::string_view::npos) usage("server '" + std::string(item) + "' has no :weight");
  std::uint32_t weight = 0;
  if (!parse_u32(item.substr(wc + 1), 0xFFFFFFFFu, weight) || weight == 0) {
    usage("server '" + std::string(item) + "' has a bad weight");
  }
  std::string_view host = item.substr(0, wc);
  std::uint32_t port = 0;
  if (!item.starts_with('/')) {
    const auto pc = host.rfind(':');
    if (pc == std::string_view::npos || !parse_u32(host.substr(pc + 1), 65535, port) || port == 0) {
      usage("server '" + std::string(item) + "' has no valid :port");
    }
    host = host.substr(0, pc);
  }
  return {server_point_name(kind, host, static_cast<std::uint16_t>(port), name), weight};
}

}  // namespace

int main(int argc, char** argv) {
  distribution_kind dist = distribution_kind::Ketama;
  hash_kind hash = hash_kind::Fnv1a_64;
  key_hash_options options;
  std::vector<std::string_view> items;
  std::vector<bool> down;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) usage(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--distribution") {
      if (!from_string(value(), dist)) {
        usage("unknown distribution '" + std::string(argv[i]) + "'");
      }
    } else if (arg == "--hash") {
      if (!from_string(value(), hash)) usage("unknown hash '" + std::string(argv[i]) + "'");
    } else if (arg == "--hash-tag") {
      options.hash_tag = value();
      if (!valid_hash_tag(options.hash_tag)) usage("a hash tag has two characters");
    } else if (arg == "--down") {
      std::string_view list = value();
      while (!list.empty()) {
        const auto comma = list.find(',');
        std::uint32_t index = 0;
        if (!parse_u32(list.substr(0, comma), 0xFFFF, index)) usage("bad --down list");
        if (down.size() <= index) down.resize(index + 1);
        down[index] = true;
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
      }
    } else if (arg == "--hash-stop") {
      options.hash_stop = true;
    } else if (arg.starts_with("--")) {
      usage("unknown option " + std::string(arg));
    } else {
      items.push_back(arg);
    }
  }
  if (items.empty()) usage("no servers");
  std::vector<server_spec> servers;
  for (auto item : items) servers.push_back(parse_server(item, dist));

  if (down.size() > servers.size()) usage("--down names a server past the list");
  std::vector<std::uint32_t> live;
  for (std::uint32_t i = 0; i < servers.size(); ++i) {
    if (i >= down.size() || !down[i]) live.push_back(i);
  }

  std::string error;
  auto d = make_live_distribution(dist, servers, live, hash, &error);
  if (!d) usage(error);

  std::ios::sync_with_stdio(false);
  std::string line;
  std::string out;
  while (std::getline(std::cin, line)) {
    out += std::to_string(d->locate(key_hash_part(line, options)));
    out += '\n';
    if (out.size() > 65536) {
      std::cout << out;
      out.clear();
    }
  }
  std::cout << out << std::flush;
  return 0;
}
