#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <sys/stat.h>

#include "config_file.h"
#include "load.h"

using namespace ithaca::config;
namespace kinds = ithaca::kinds;

namespace {

// Loads `yaml` as if from "ithaca.yaml"; returns the error ("" on success).
std::string load(const std::string& yaml, config* out = nullptr) {
  config c;
  std::string error;
  bool ok = load_config_text(yaml, "ithaca.yaml", c, &error);
  CHECK(ok == error.empty());
  if (out) *out = c;
  return error;
}

}  // namespace

TEST_CASE("defaults match memcached where the concept exists") {
  config c;
  REQUIRE(c.listen.tcp.size() == 1);
  CHECK(c.listen.tcp[0] == tcp_address{"*", 11211});  // 0.0.0.0 and [::]
  CHECK(c.listen.unix_paths.empty());
  CHECK(c.listen.udp_port == 0);
  CHECK(c.listen.backlog == 1024);
  CHECK(c.server.workers == 4);
  CHECK(c.server.backend == io_backend::Auto);
  CHECK(c.server.max_connections == 1024);
  CHECK(c.server.idle_timeout_ms == 0);
  CHECK_FALSE(c.server.enable_shutdown);
  CHECK(c.cache.memory_limit == 64ull << 20);
  CHECK(c.cache.item_size_max == 1ull << 20);
  CHECK(c.cache.large_value_threshold == 256ull << 10);
  CHECK(c.cache.hash_power == 16);
  CHECK(c.cache.gc_interval_ms == 1000);
  CHECK(c.cache.lease_interval_ms == 10000);
  CHECK(c.logging.level == log_level::Warn);
  CHECK(c.logging.file.empty());
  CHECK(c.logging.async_queue == 1024);
  validation_error v;
  CHECK(validate(c, &v));
}

TEST_CASE("large_value_dir defaults to $TMPDIR, else /tmp") {
  const char* saved = std::getenv("TMPDIR");
  std::string keep = saved ? saved : "";
  setenv("TMPDIR", "/var/tmp", 1);
  CHECK(cache_config::default_large_value_dir() == "/var/tmp");
  setenv("TMPDIR", "relative", 1);
  CHECK(cache_config::default_large_value_dir() == "/tmp");
  unsetenv("TMPDIR");
  CHECK(cache_config::default_large_value_dir() == "/tmp");
  if (saved) setenv("TMPDIR", keep.c_str(), 1);
}

TEST_CASE("the sample config/ithaca.yaml parses") {
  const char* path = std::getenv("ITHACA_SAMPLE_CONFIG");
  REQUIRE_MESSAGE(path != nullptr, "run through meson test (sets ITHACA_SAMPLE_CONFIG)");
  config c;
  std::string error;
  REQUIRE_MESSAGE(load_config(path, c, &error), error);
  REQUIRE(c.listen.tcp.size() == 1);
  CHECK(c.listen.tcp[0] == tcp_address{"127.0.0.1", 11211});
  CHECK(c.logging.level == log_level::Info);
  CHECK(c.server.workers == 4);
  CHECK(c.cache.memory_limit == 64ull << 20);
  CHECK(c.cache.gc_interval_ms == 1000);
  CHECK(c.cache.lease_interval_ms == 10000);
}

TEST_CASE("router: the reliable deletes' spool directory and bound") {
  config c;
  CHECK(load("", &c).empty());
  CHECK(c.router.spool_dir.empty());  // the default, chosen at start (spool_dir.h)
  CHECK(c.router.spool_max_size == 16ull * 1024 * 1024);
  CHECK_FALSE(c.router.spool_fsync);
  CHECK(load("router:\n  spool_dir: /var/spool/ithaca\n  spool_max_size: 1m\n  spool_fsync: true\n", &c).empty());
  CHECK(c.router.spool_dir == "/var/spool/ithaca");
  CHECK(c.router.spool_max_size == 1024 * 1024);
  CHECK(c.router.spool_fsync);
  CHECK(load("router:\n  spool_fsync: sometimes\n").starts_with("ithaca.yaml:2: spool_fsync:"));
  CHECK(load("router:\n  spool_max_size: 10\n").starts_with("ithaca.yaml:2: spool_max_size:"));
  CHECK(load("router:\n  spool: x\n").starts_with("ithaca.yaml:2:"));
}

TEST_CASE("an empty file gives the defaults") {
  config c;
  CHECK(load("", &c) == "");
  CHECK(c.server.workers == 4);
  CHECK(load("# only a comment\n", &c) == "");
  CHECK(load("cache:\n", &c) == "");
}

TEST_CASE("an empty file is refused where empty is not allowed (a reload)") {
  for (const char* text : {"", "  \n\n", "# only a comment\n", "---\n"}) {
    CAPTURE(text);
    config c;
    c.server.workers = 9;
    std::string error;
    CHECK_FALSE(load_config_text(text, "ithaca.yaml", c, &error, /*allow_empty=*/false));
    CHECK(error.starts_with("ithaca.yaml: the file is empty"));
    CHECK(c.server.workers == 9);  // untouched
  }
  config c;
  std::string error;
  CHECK(load_config_text("cache:\n", "ithaca.yaml", c, &error, false));  // a section: not empty
}

TEST_CASE("every key") {
  config c;
  std::string yaml = R"(
listen:
  tcp: ["10.0.0.1:11311", "[::1]:11212", localhost]
  unix: /run/ithaca.sock
  udp: 11211
  backlog: 511
server:
  workers: 8
  io_backend: epoll
  max_connections: 10000
  idle_timeout: 5m
  enable_shutdown: yes
  stack_size: 128k
  read_buffer_size: 32KiB
cache:
  memory_limit: 1g
  item_size_max: 2m
  large_value_threshold: 512k
  large_value_dir: /tmp
  hash_power: 18
  gc_interval: 500ms
  lease_interval: 2s
  slab_growth_factor: 1.5
  slab_min_size: 100
logging:
  level: debug
  file: /tmp/ithaca.log
  async_queue: 2048
)";
  REQUIRE(load(yaml, &c) == "");
  REQUIRE(c.listen.tcp.size() == 3);
  CHECK(c.listen.tcp[0] == tcp_address{"10.0.0.1", 11311});
  CHECK(c.listen.tcp[1] == tcp_address{"::1", 11212});
  CHECK(c.listen.tcp[2] == tcp_address{"localhost", 11211});
  CHECK(c.listen.unix_paths == std::vector<std::string>{"/run/ithaca.sock"});
  CHECK(c.listen.udp_port == 11211);
  CHECK(c.listen.backlog == 511);
  CHECK(c.server.workers == 8);
  CHECK(c.server.backend == io_backend::Epoll);
  CHECK(c.server.max_connections == 10000);
  CHECK(c.server.idle_timeout_ms == 300000);
  CHECK(c.server.enable_shutdown);
  CHECK(c.server.stack_size == 128 * 1024);
  CHECK(c.server.read_buffer_size == 32 * 1024);
  CHECK(c.cache.memory_limit == 1ull << 30);
  CHECK(c.cache.item_size_max == 2ull << 20);
  CHECK(c.cache.large_value_threshold == 512 * 1024);
  CHECK(c.cache.large_value_dir == "/tmp");
  CHECK(c.cache.hash_power == 18);
  CHECK(c.cache.gc_interval_ms == 500);
  CHECK(c.cache.lease_interval_ms == 2000);
  CHECK(c.cache.slab_growth_factor == 1.5);
  CHECK(c.cache.slab_min_size == 100);
  CHECK(c.logging.level == log_level::Debug);
  CHECK(c.logging.file == "/tmp/ithaca.log");
  CHECK(c.logging.async_queue == 2048);
}

TEST_CASE("unknown key: line number and suggestion") {
  CHECK(load("cache:\n  memory_limit: 64m\n\n  memory_limt: 32m\n") ==
        "ithaca.yaml:4: unknown key 'memory_limt' in section 'cache' (did you mean "
        "'memory_limit'?)");
  CHECK(load("server:\n  zzzzzz: 1\n") == "ithaca.yaml:2: unknown key 'zzzzzz' in section 'server'");
  CHECK(load("cach:\n  memory_limit: 64m\n") == "ithaca.yaml:1: unknown section 'cach' (did you mean 'cache'?)");
}

TEST_CASE("bad values name the key, the range and what was written") {
  CHECK(load("server:\n  io_backend: auto\n  workers: many\n") ==
        "ithaca.yaml:3: workers: expected an integer from 1 to 256, got 'many'");
  CHECK(load("server:\n  workers: 0\n") == "ithaca.yaml:2: workers: expected an integer from 1 to 256, got '0'");
  CHECK(load("server:\n  workers: 300\n") == "ithaca.yaml:2: workers: expected an integer from 1 to 256, got '300'");
  CHECK(load("server:\n  workers: [1, 2]\n") ==
        "ithaca.yaml:2: workers: expected an integer from 1 to 256, got a list");
  CHECK(load("server:\n  workers:\n") == "ithaca.yaml:2: workers: expected an integer from 1 to 256, got nothing");
  CHECK(load("cache:\n  memory_limit: lots\n") ==
        "ithaca.yaml:2: memory_limit: expected a size (512k, 64m, 1g) from 1 MiB to 4096 GiB, "
        "got 'lots'");
  CHECK(load("cache:\n  gc_interval: 1000\n") ==
        "ithaca.yaml:2: gc_interval: expected a duration (500ms, 2s, 1m) from 1ms to 1h, got "
        "'1000' (a unit is required: 1000ms or 1000s?)");
  CHECK(load("server:\n  io_backend: kqueue\n") ==
        "ithaca.yaml:2: io_backend: expected one of auto, io_uring or epoll, got 'kqueue'");
  CHECK(load("server:\n  enable_shutdown: maybe\n") ==
        "ithaca.yaml:2: enable_shutdown: expected true or false, got 'maybe'");
  CHECK(load("logging:\n  level: loud\n") ==
        "ithaca.yaml:2: level: expected one of trace, debug, info, warn, error or off, got "
        "'loud'");
  CHECK(load("listen:\n  tcp:\n    - 127.0.0.1:11211\n    - 127.0.0.1:99999\n") ==
        "ithaca.yaml:4: tcp: bad address '127.0.0.1:99999': port must be an integer from 0 to "
        "65535");
  CHECK(load("listen:\n  tcp: {a: b}\n") ==
        "ithaca.yaml:2: tcp: expected a string or a list of strings, got a mapping");
  CHECK(load("cache: 5\n") == "ithaca.yaml:1: section 'cache' must be a mapping of keys, got '5'");
  CHECK(load("- a\n- b\n") ==
        "ithaca.yaml:1: expected a mapping of sections (listen, server, cache, logging, replication, metrics, tls, "
        "router, "
        "process, takeover, pools, routes, route, listeners), "
        "got a list");
}

TEST_CASE("the first error in file order is reported") {
  CHECK(load("logging:\n  level: loud\nserver:\n  workers: many\n") ==
        "ithaca.yaml:2: level: expected one of trace, debug, info, warn, error or off, got "
        "'loud'");
  CHECK(load("server:\n  workrs: 4\n  workers: many\n") ==
        "ithaca.yaml:2: unknown key 'workrs' in section 'server' (did you mean 'workers'?)");
}

TEST_CASE("duplicate keys are refused") {
  CHECK(load("server:\n  workers: 2\n  workers: 3\n") ==
        "ithaca.yaml:3: duplicate key 'workers' in section 'server' (first set on line 2)");
}

TEST_CASE("YAML syntax errors carry the line") {
  std::string e = load("server:\n  workers: 4\n  stack_size: [64k\n");
  CHECK(e.rfind("ithaca.yaml:", 0) == 0);
  CHECK(e.find("ithaca.yaml:0:") == std::string::npos);
  e = load("server:\n  workers: 4\n bad indent: 1\n");
  CHECK(e.rfind("ithaca.yaml:3: ", 0) == 0);
  e = load("a: \"unterminated\n");
  CHECK(e.rfind("ithaca.yaml:", 0) == 0);
}

TEST_CASE("cross-field rules point at the line that set a value") {
  CHECK(load("cache:\n  item_size_max: 1m\n  large_value_threshold: 2m\n") ==
        "ithaca.yaml:3: large_value_threshold (2 MiB) must not exceed item_size_max (1 MiB)");
  CHECK(load("cache:\n  memory_limit: 1m\n") ==
        "ithaca.yaml:2: item_size_max (1 MiB) must not exceed half of memory_limit (1 MiB)");
  CHECK(load("listen:\n  tcp: []\n") == "ithaca.yaml:2: listen: no listeners (set listen.tcp or listen.unix)");
  CHECK(load("listen:\n  tcp: []\n  unix: /tmp/x.sock\n  udp: 11211\n") ==
        "ithaca.yaml:4: udp: needs a tcp host to bind to (udp uses the tcp hosts)");
  CHECK(load("cache:\n  large_value_dir: relative/dir\n") ==
        "ithaca.yaml:2: large_value_dir: expected an absolute path, got 'relative/dir'");
  CHECK(load("cache:\n  large_value_dir: /nonexistent/ithaca\n") ==
        "ithaca.yaml:2: large_value_dir: '/nonexistent/ithaca' is not a directory");
}

TEST_CASE("a lowered item_size_max lowers the default large_value_threshold") {
  config c;
  CHECK(load("cache:\n  item_size_max: 128k\n", &c) == "");
  CHECK(c.cache.large_value_threshold == 128 * 1024);
}

TEST_CASE("a failed load leaves the config unchanged") {
  config c;
  c.server.workers = 7;
  std::string error;
  CHECK_FALSE(load_config_text("server:\n  workers: 0\n", "x.yaml", c, &error));
  CHECK(c.server.workers == 7);
}

TEST_CASE("files: missing file, real file") {
  config c;
  std::string error;
  CHECK_FALSE(load_config("/nonexistent/ithaca.yaml", c, &error));
  CHECK(error == "/nonexistent/ithaca.yaml: cannot open: No such file or directory");

  char path[] = "/tmp/ithaca_config_test_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(path) << "server:\n  workers: 2\n  wrokers: 3\n";
  CHECK_FALSE(load_config(path, c, &error));
  CHECK(error == std::string(path) + ":3: unknown key 'wrokers' in section 'server' (did you mean 'workers'?)");
  std::ofstream(path) << "server:\n  workers: 2\n";
  CHECK(load_config(path, c, &error));
  CHECK(c.server.workers == 2);
  unlink(path);
}

TEST_CASE("files: only a regular file of at most 1 MiB is read, and nothing blocks") {
  config c;
  std::string error;
  char dir[] = "/tmp/ithaca_config_test_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string base(dir);
  const std::string fifo = base + "/fifo.yaml";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);  // no writer: a blocking open would never return
  CHECK_FALSE(load_config(fifo, c, &error));
  CHECK(error == fifo + " is a FIFO, not a regular file; refusing to read it");
  const std::string zero = base + "/zero.yaml";
  REQUIRE(symlink("/dev/zero", zero.c_str()) == 0);  // a read would never end
  CHECK_FALSE(load_config(zero, c, &error));
  CHECK(error == zero + " is a character device, not a regular file; refusing to read it");
  CHECK_FALSE(load_config(base, c, &error));
  CHECK(error == base + " is a directory, not a regular file; refusing to read it");
  const std::string big = base + "/big.yaml";
  std::string text = "server:\n  workers: 3\n";
  text.resize(kMaxConfigFileSize, '\n');  // exactly the cap: read
  std::ofstream(big) << text;
  CHECK(load_config(big, c, &error));
  CHECK(c.server.workers == 3);
  std::ofstream(big, std::ios::app) << "\n";  // one byte over
  CHECK_FALSE(load_config(big, c, &error));
  CHECK(error == big + " is larger than 1 MiB, the most a config file may hold; refusing to read it");
  for (const std::string& p : {fifo, zero, big}) unlink(p.c_str());
  rmdir(dir);
}

TEST_CASE("listen.unix_mode: octal, at most 777") {
  config c;
  CHECK(c.listen.unix_mode == 0700);
  REQUIRE(load("listen:\n  unix: [/tmp/a.sock]\n  unix_mode: 0660\n", &c) == "");
  CHECK(c.listen.unix_mode == 0660);
  REQUIRE(load("listen:\n  unix_mode: 755\n", &c) == "");
  CHECK(c.listen.unix_mode == 0755);
  CHECK(load("listen:\n  unix_mode: 0800\n") ==
        "ithaca.yaml:2: unix_mode: expected an octal mode from 0 to 777 (such as 0700), got '0800'");
  CHECK(load("listen:\n  unix_mode: [7]\n") == "ithaca.yaml:2: unix_mode: expected a string, got a list");
}

TEST_CASE("tcp addresses") {
  tcp_address a;
  std::string e;
  CHECK((parse_tcp_address("127.0.0.1", 11211, a, &e) && a == tcp_address{"127.0.0.1", 11211}));
  CHECK((parse_tcp_address("127.0.0.1:0", 11211, a, &e) && a == tcp_address{"127.0.0.1", 0}));
  CHECK((parse_tcp_address("[::1]:5", 11211, a, &e) && a == tcp_address{"::1", 5}));
  CHECK((parse_tcp_address("[::1]", 7, a, &e) && a == tcp_address{"::1", 7}));
  CHECK((parse_tcp_address("::1", 7, a, &e) && a == tcp_address{"::1", 7}));
  CHECK_FALSE(parse_tcp_address("", 7, a, &e));
  CHECK_FALSE(parse_tcp_address(":11211", 7, a, &e));
  CHECK_FALSE(parse_tcp_address("host:", 7, a, &e));
  CHECK_FALSE(parse_tcp_address("host:x", 7, a, &e));
  CHECK_FALSE(parse_tcp_address("[::1", 7, a, &e));
  CHECK(to_string(tcp_address{"::1", 5}) == "[::1]:5");
  CHECK(to_string(tcp_address{"10.0.0.1", 5}) == "10.0.0.1:5");
}

TEST_CASE("slab_growth_factor: a number above 1, as memcached -f") {
  CHECK(load("cache:\n  slab_growth_factor: 1\n").find("expected a number greater than 1") != std::string::npos);
  CHECK(load("cache:\n  slab_growth_factor: x\n").find("slab_growth_factor") != std::string::npos);
  CHECK(load("cache:\n  slab_min_size: 0\n").find("slab_min_size") != std::string::npos);
  config c;
  REQUIRE(load("cache:\n  slab_growth_factor: 2\n", &c) == "");
  CHECK(c.cache.slab_growth_factor == 2.0);
  CHECK(c.cache.slab_min_size == 48);
}

TEST_CASE("the keys of memcached's -M -C -F -D -R -B") {
  config c;
  REQUIRE(load("server:\n  enable_flush_all: false\n  prefix_delimiter: \"/\"\n  detail_enabled: true\n"
               "  reqs_per_event: 3\n  binding_protocol: binary\n"
               "cache:\n  evictions: false\n  cas_enabled: false\n",
               &c) == "");
  CHECK(!c.server.enable_flush_all);
  CHECK(c.server.prefix_delimiter == '/');
  CHECK(c.server.detail_enabled);
  CHECK(c.server.reqs_per_event == 3);
  CHECK(c.server.binding == kinds::binding_protocol::Binary);
  CHECK(!c.cache.evictions);
  CHECK(!c.cache.cas_enabled);
  CHECK(load("server:\n  prefix_delimiter: \"ab\"\n").find("expected one character") != std::string::npos);
  CHECK(c.cache.eviction == cache_eviction::S3fifo);
  REQUIRE(load("cache:\n  eviction: clock\n", &c) == "");
  CHECK(c.cache.eviction == cache_eviction::Clock);
  CHECK(load("cache:\n  eviction: lru\n").find("eviction") != std::string::npos);
  CHECK(load("server:\n  reqs_per_event: 0\n").find("reqs_per_event") != std::string::npos);
  CHECK(load("server:\n  binding_protocol: negotiate\n").find("binding_protocol") != std::string::npos);
}
