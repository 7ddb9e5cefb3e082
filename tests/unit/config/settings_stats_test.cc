#include <doctest/doctest.h>

#include <map>

#include "settings_stats.h"

using namespace ithaca::config;
namespace kinds = ithaca::kinds;

namespace {
std::map<std::string, std::string> as_map(const config& c) {
  std::map<std::string, std::string> m;
  // Not a structured binding: clang 14 cannot capture one in doctest's lambdas.
  for (const auto& kv : settings_stats(c)) {
    const std::string& k = kv.first;
    const std::string& v = kv.second;
    CHECK_MESSAGE(m.count(k) == 0, k);
    CHECK(k.find(' ') == std::string::npos);
    CHECK(v.find(' ') == std::string::npos);
    m[k] = v;
  }
  return m;
}
}  // namespace

TEST_CASE("stats settings: memcached's names and formats for the defaults") {
  config c;
  c.cache.large_value_dir = "/tmp";
  auto m = as_map(c);
  // As memcached 1.6.18 prints them with the same settings.
  CHECK(m["maxbytes"] == "67108864");
  CHECK(m["maxconns"] == "1024");
  CHECK(m["tcpport"] == "11211");
  CHECK(m["udpport"] == "0");
  CHECK(m["verbosity"] == "0");
  CHECK(m["evictions"] == "on");
  CHECK(m["domain_socket"] == "NULL");
  CHECK(m["shutdown_command"] == "no");
  CHECK(m["num_threads"] == "4");
  CHECK(m["cas_enabled"] == "yes");
  CHECK(m["tcp_backlog"] == "1024");
  CHECK(m["binding_protocol"] == "auto-negotiate");
  CHECK(m["item_size_max"] == "1048576");
  CHECK(m["growth_factor"] == "1.25");
  CHECK(m["chunk_size"] == "48");
  CHECK(m["slab_chunk_max"] == "524288");
  CHECK(m["idle_timeout"] == "0");
  CHECK(m["inter"] == "NULL");  // no -l: every interface, IPv4 and IPv6
  // ithaca's
  CHECK(m["io_backend"] == "auto");
  CHECK(m["hash_power"] == "16");
  CHECK(m["gc_interval_ms"] == "1000");
  CHECK(m["large_value_threshold"] == "262144");
  CHECK(m["large_value_dir"] == "/tmp");
  CHECK(m["lease_interval_ms"] == "10000");
  CHECK(m["pid_file"] == "NULL");
  CHECK(m["user"] == "NULL");
  CHECK(m["core_dumps"] == "no");
  CHECK(m["lock_memory"] == "no");
  CHECK(m["large_pages"] == "no");
}

TEST_CASE("stats settings: -l's text as memcached prints it, the process flags") {
  config c;
  c.listen.tcp = {{"127.0.0.1", 11311}};
  c.listen.inter = "proto[ascii]:tag[x]:127.0.0.1:11311,[::1]";
  c.process = {"/run/memcached/memcached.pid", "memcache", true, true, true};
  auto m = as_map(c);
  CHECK(m["inter"] == "proto[ascii]:tag[x]:127.0.0.1:11311,[::1]");
  CHECK(m["pid_file"] == "/run/memcached/memcached.pid");
  CHECK(m["user"] == "memcache");
  CHECK(m["core_dumps"] == "yes");
  CHECK(m["lock_memory"] == "yes");
  CHECK(m["large_pages"] == "yes");
}

TEST_CASE("stats settings follow the config") {
  config c;
  c.listen.tcp = {{"127.0.0.1", 11311}, {"::1", 11311}, {"10.0.0.1", 5}};
  c.listen.unix_paths = {"/run/ithaca.sock"};
  c.listen.udp_port = 11311;
  c.server.enable_shutdown = true;
  c.server.idle_timeout_ms = 1500;
  c.logging.level = log_level::Debug;
  auto m = as_map(c);
  CHECK(m["tcpport"] == "11311");
  CHECK(m["udpport"] == "11311");
  CHECK(m["inter"] == "127.0.0.1,[::1],10.0.0.1:5");
  CHECK(m["domain_socket"] == "/run/ithaca.sock");
  CHECK(m["umask"] == "700");  // memcached's name and "%o" form for -a
  CHECK(m["shutdown_command"] == "yes");
  CHECK(m["idle_timeout"] == "2");
  CHECK(m["verbosity"] == "2");
  c.listen.tcp.clear();
  m = as_map(c);
  CHECK(m["inter"] == "NULL");
  CHECK(m["tcpport"] == "0");
}

TEST_CASE("stats settings: -M -C -F -D -R -B as memcached prints them") {
  config c;
  auto m = as_map(c);
  CHECK(m["flush_enabled"] == "yes");
  CHECK(m["stat_key_prefix"] == ":");
  CHECK(m["detail_enabled"] == "no");
  CHECK(m["reqs_per_event"] == "20");
  c.cache.evictions = false;
  c.cache.cas_enabled = false;
  c.server.enable_flush_all = false;
  c.server.prefix_delimiter = '/';
  c.server.detail_enabled = true;
  c.server.reqs_per_event = 7;
  c.server.binding = kinds::binding_protocol::Ascii;
  m = as_map(c);
  CHECK(m["evictions"] == "off");
  CHECK(m["cas_enabled"] == "no");
  CHECK(m["eviction_policy"] == "s3fifo");
  c.cache.eviction = cache_eviction::Clock;
  CHECK(as_map(c)["eviction_policy"] == "clock");
  CHECK(m["flush_enabled"] == "no");
  CHECK(m["stat_key_prefix"] == "/");
  CHECK(m["detail_enabled"] == "yes");
  CHECK(m["reqs_per_event"] == "7");
  CHECK(m["binding_protocol"] == "ascii");
  c.server.binding = kinds::binding_protocol::Binary;
  CHECK(as_map(c)["binding_protocol"] == "binary");
}

TEST_CASE("stats settings: the running server's facts over the config's figures") {
  config c;
  settings_facts f = configured_facts(c);
  CHECK(f.tcp_port == 11211);
  f.tcp_port = 4000;
  f.io_backend = "epoll";
  f.uring_running = false;
  f.detail_enabled = true;
  f.lru_crawler = false;
  f.slab_chunk_max = 1234;
  std::map<std::string, std::string> m;
  for (const auto& kv : settings_stats(c, f)) m[kv.first] = kv.second;
  CHECK(m["tcpport"] == "4000");
  CHECK(m["io_backend"] == "epoll");
  CHECK(m["proxy_uring_enabled"] == "no");
  CHECK(m["detail_enabled"] == "yes");
  CHECK(m["lru_crawler"] == "no");
  CHECK(m["slab_chunk_max"] == "1234");
}
