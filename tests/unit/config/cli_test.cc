#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>
#include <initializer_list>
#include <vector>

#include "cli.h"

using namespace ithaca::config;
namespace kinds = ithaca::kinds;

namespace {

// Parses {"ithaca", args...}; returns the error ("" on success).
std::string parse(std::initializer_list<const char*> args, cli_options* out = nullptr) {
  std::vector<const char*> argv{"ithaca"};
  argv.insert(argv.end(), args.begin(), args.end());
  cli_options o;
  std::string error;
  bool ok = parse_args(static_cast<int>(argv.size()), argv.data(), o, &error);
  CHECK(ok == error.empty());
  if (out) *out = o;
  return error;
}

// defaults + flags, as `ithaca FLAGS` without --config would run.
config with_flags(std::initializer_list<const char*> args) {
  cli_options o;
  REQUIRE(parse(args, &o) == "");
  config c;
  apply_overrides(o, c);
  return c;
}

struct temp_file {
  explicit temp_file(const std::string& text) {
    char p[] = "/tmp/ithaca_cli_test_XXXXXX";
    int fd = mkstemp(p);
    REQUIRE(fd >= 0);
    close(fd);
    path = p;
    std::ofstream(path) << text;
  }
  ~temp_file() { unlink(path.c_str()); }
  std::string path;
};

}  // namespace

TEST_CASE("no arguments: nothing set") {
  cli_options o;
  CHECK(parse({}, &o) == "");
  CHECK(o.config_path.empty());
  CHECK_FALSE(o.port);
  CHECK_FALSE(o.listen);
  CHECK(o.verbose == 0);
}

TEST_CASE("ithaca's own options") {
  cli_options o;
  CHECK(parse({"--config", "a.yaml", "--check-config"}, &o) == "");
  CHECK(o.config_path == "a.yaml");
  CHECK(o.check_config);
  CHECK(parse({"--config=b.yaml"}, &o) == "");
  CHECK(o.config_path == "b.yaml");
  CHECK(parse({"--help"}, &o) == "");
  CHECK(o.help);
  CHECK(parse({"-h"}, &o) == "");
  CHECK(o.help);
  CHECK(parse({"--version"}, &o) == "");
  CHECK(o.version);
  CHECK(parse({"-V"}, &o) == "");
  CHECK(o.version);
  CHECK(parse({"--config"}) == "--config: missing value");
  CHECK(parse({"--check-config=yes"}) == "--check-config: takes no value");
  CHECK(usage().find("--check-config") != std::string::npos);
  CHECK(version_string().rfind("ithaca ", 0) == 0);
}

TEST_CASE("memcached flags, short, attached and long forms") {
  config c = with_flags({"-p", "0", "-t", "2", "-m", "128", "-c", "50", "-U", "11311", "-b", "64", "-A"});
  REQUIRE(c.listen.tcp.size() == 1);
  CHECK(c.listen.tcp[0] == tcp_address{"*", 0});
  CHECK(c.server.workers == 2);
  CHECK(c.cache.memory_limit == 128ull << 20);
  CHECK(c.server.max_connections == 50);
  CHECK(c.listen.udp_port == 11311);
  CHECK(c.listen.backlog == 64);
  CHECK(c.server.enable_shutdown);

  c = with_flags({"-p11212", "-t3", "-m2g"});
  CHECK(c.listen.tcp[0].port == 11212);
  CHECK(c.server.workers == 3);
  CHECK(c.cache.memory_limit == 2ull << 30);

  c = with_flags({"--port=11213", "--threads", "5", "--memory-limit=32", "--conn-limit=9", "--udp-port=0",
                  "--max-item-size=2m", "--listen-backlog=10", "--enable-shutdown", "--listen=127.0.0.1"});
  CHECK(c.listen.tcp == std::vector<tcp_address>{{"127.0.0.1", 11213}});
  CHECK(c.server.workers == 5);
  CHECK(c.cache.memory_limit == 32ull << 20);
  CHECK(c.server.max_connections == 9);
  CHECK(c.cache.item_size_max == 2ull << 20);
  CHECK(c.listen.backlog == 10);
  CHECK(c.server.enable_shutdown);
}

TEST_CASE("-I takes bytes or a k/m suffix, 1k..1024m, and caps the large value threshold") {
  CHECK(with_flags({"-I", "2m"}).cache.item_size_max == 2ull << 20);
  CHECK(with_flags({"-I", "4096"}).cache.item_size_max == 4096);
  config c = with_flags({"-I", "128k"});
  CHECK(c.cache.item_size_max == 128 * 1024);
  CHECK(c.cache.large_value_threshold == 128 * 1024);
  CHECK(parse({"-I", "512"}) == "-I: expected a size (512k, 64m, 1g) from 1 KiB to 1 GiB, got '512'");
  CHECK(parse({"-I", "2g"}) == "-I: expected a size (512k, 64m, 1g) from 1 KiB to 1 GiB, got '2g'");
}

TEST_CASE("-l: addresses, ports and -p") {
  config c = with_flags({"-l", "127.0.0.1,[::1]:11300", "-p", "11400"});
  CHECK(c.listen.tcp == std::vector<tcp_address>{{"127.0.0.1", 11400}, {"::1", 11300}});
  c = with_flags({"-l", "10.0.0.1", "-l", "10.0.0.2:5"});
  CHECK(c.listen.tcp == std::vector<tcp_address>{{"10.0.0.1", 11211}, {"10.0.0.2", 5}});
  c = with_flags({"-l", "::1"});
  CHECK(c.listen.tcp == std::vector<tcp_address>{{"::1", 11211}});
  CHECK(parse({"-l", "127.0.0.1:x"}) == "-l: bad address '127.0.0.1:x': port must be an integer from 0 to 65535");
  CHECK(parse({"-l", ""}) == "-l: bad address '': empty host");
}

TEST_CASE("-s: one unix socket instead of the network") {
  config c = with_flags({"-s", "/tmp/ithaca.sock"});
  CHECK(c.listen.tcp.empty());
  CHECK(c.listen.unix_paths == std::vector<std::string>{"/tmp/ithaca.sock"});
  CHECK(c.listen.udp_port == 0);
  CHECK(parse({"-s", "/tmp/a.sock", "-p", "1"}).rfind("-s: ", 0) == 0);
}

TEST_CASE("-a: the unix sockets' mode in octal, memcached's default 700") {
  CHECK(with_flags({}).listen.unix_mode == 0700);
  CHECK(with_flags({"-s", "/tmp/a.sock", "-a", "600"}).listen.unix_mode == 0600);
  CHECK(with_flags({"--unix-mask=0660"}).listen.unix_mode == 0660);
  CHECK(with_flags({"-a0"}).listen.unix_mode == 0);
  CHECK(with_flags({"-a", "777"}).listen.unix_mode == 0777);
  for (const char* bad : {"800", "1777", "07777", "rwx", "", "-1", "0x1ff", " 700"}) {
    CAPTURE(bad);
    CHECK(parse({"-a", bad}) ==
          std::string("-a: expected an octal mode from 0 to 777 (such as 700), got '") + bad + "'");
  }
}

TEST_CASE("-v, -vv, -vvv") {
  CHECK(with_flags({}).logging.level == log_level::Warn);
  CHECK(with_flags({"-v"}).logging.level == log_level::Info);
  CHECK(with_flags({"-vv"}).logging.level == log_level::Debug);
  CHECK(with_flags({"-vvv"}).logging.level == log_level::Trace);
  CHECK(with_flags({"-v", "-v"}).logging.level == log_level::Debug);
  CHECK(with_flags({"-vvvv"}).logging.level == log_level::Trace);
  CHECK(with_flags({"--verbose"}).logging.level == log_level::Info);
  config c = with_flags({"-Avv"});
  CHECK(c.server.enable_shutdown);
  CHECK(c.logging.level == log_level::Debug);
}

TEST_CASE("bad and refused flags") {
  CHECK(parse({"-t", "many"}) == "-t: expected an integer from 1 to 256, got 'many'");
  CHECK(parse({"--threads=0"}) == "--threads: expected an integer from 1 to 256, got '0'");
  CHECK(parse({"-p", "65536"}) == "-p: expected an integer from 0 to 65535, got '65536'");
  CHECK(parse({"-c", "-1"}) == "-c: expected an integer from 1 to 1048576, got '-1'");
  CHECK(parse({"-m", "0"}).rfind("-m: expected megabytes", 0) == 0);
  CHECK(parse({"-p"}) == "-p: missing value");
  CHECK(parse({"-x"}) == "unknown option '-x' (see -h)");
  CHECK(parse({"--frobnicate"}) == "unknown option '--frobnicate' (see -h)");
  CHECK(parse({"serve"}) == "unexpected argument 'serve' (see -h)");
  CHECK(parse({"-u"}) == "-u: missing value");
  CHECK(parse({"-P", ""}) == "-P: expected a file name");
}

TEST_CASE("memcached's process flags: -d -u -P -r -k -L") {
  cli_options o;
  REQUIRE(parse({"-d", "-u", "memcache", "-P", "/run/m.pid", "-r", "-k", "-L"}, &o) == "");
  CHECK(o.daemonize);
  config c = with_flags({"-d", "-u", "memcache", "-P", "/run/m.pid", "-r", "-k", "-L"});
  CHECK(c.process.user == "memcache");
  CHECK(c.process.pid_file == "/run/m.pid");
  CHECK(c.process.core_dumps);
  CHECK(c.process.lock_memory);
  CHECK(c.process.large_pages);
  c = with_flags(
      {"--daemon", "--user=nobody", "--pidfile=x.pid", "--enable-coredumps", "--lock-memory", "--enable-largepages"});
  CHECK(c.process.user == "nobody");
  CHECK(c.process.pid_file == "x.pid");
  CHECK(c.process.core_dumps);
  CHECK(c.process.lock_memory);
  CHECK(c.process.large_pages);
  REQUIRE(parse({"-vdrkL"}, &o) == "");  // bundled, as getopt takes them
  CHECK(o.daemonize);
  CHECK(o.verbose == 1);
  c = with_flags({});
  CHECK(c.process == process_config{});
}

TEST_CASE("the file's process: section, and the flags over it") {
  temp_file f(
      "process:\n  pid_file: /run/ithaca.pid\n  user: nobody\n  core_dumps: true\n"
      "  lock_memory: true\n  large_pages: true\n");
  cli_options o;
  REQUIRE(parse({"--config", f.path.c_str(), "-u", "memcache"}, &o) == "");
  config c;
  std::string error;
  REQUIRE(make_config(o, c, &error));
  CHECK(c.process.pid_file == "/run/ithaca.pid");
  CHECK(c.process.user == "memcache");
  CHECK(c.process.core_dumps);
  CHECK(c.process.lock_memory);
  CHECK(c.process.large_pages);
}

TEST_CASE("memcached mode: argv[0] named memcached, or --memcached first") {
  auto run = [](std::vector<const char*> argv, cli_options* out = nullptr) {
    cli_options o;
    std::string error;
    parse_args(static_cast<int>(argv.size()), argv.data(), o, &error);
    if (out) *out = o;
    return error;
  };
  cli_options o;
  CHECK(run({"/usr/libexec/ithaca/memcached", "-p", "11311", "-u", "memcache"}, &o) == "");
  CHECK(o.memcached_mode);
  CHECK(*o.port == 11311);
  CHECK(run({"memcached", "--port=11311"}, &o) == "");
  CHECK(o.memcached_mode);
  CHECK(run({"ithaca", "--memcached", "-p", "1"}, &o) == "");
  CHECK(o.memcached_mode);
  CHECK(run({"ithaca", "-p", "1"}, &o) == "");
  CHECK_FALSE(o.memcached_mode);
  CHECK(run({"memcachedx", "-p", "1"}, &o) == "");
  CHECK_FALSE(o.memcached_mode);
  // ithaca's own options are unknown there.
  CHECK(run({"memcached", "--config", "/etc/ithaca/ithaca.yaml"}) == "unknown option '--config' (see -h)");
  CHECK(run({"ithaca", "--memcached", "--check-config"}) == "unknown option '--check-config' (see -h)");
  CHECK(run({"ithaca", "--memcached", "--metrics-listen=1.2.3.4"}).rfind("unknown option", 0) == 0);
  // Only as the first argument.
  CHECK(run({"ithaca", "-p", "1", "--memcached"}) == "unknown option '--memcached' (see -h)");
}

TEST_CASE("-l: memcached 1.6's prefixes, several addresses, '*'") {
  config c = with_flags({"-l", "proto[ascii]:tag[x]:127.0.0.1:11311", "-p", "11211"});
  REQUIRE(c.listen.tcp.size() == 1);
  CHECK(c.listen.tcp[0].host == "127.0.0.1");
  CHECK(c.listen.tcp[0].port == 11311);
  CHECK(c.listen.tcp[0].protocol == kinds::binding_protocol::Ascii);
  CHECK(c.listen.tcp[0].tag == "x");
  CHECK(c.listen.inter == "proto[ascii]:tag[x]:127.0.0.1:11311");
  c = with_flags({"-l", "proto[binary]:127.0.0.1,proto[negotiating]:[::1]:5;tag_abc_:10.0.0.1", "-p", "7"});
  REQUIRE(c.listen.tcp.size() == 3);
  CHECK(c.listen.tcp[0].protocol == kinds::binding_protocol::Binary);
  CHECK(c.listen.tcp[0].port == 7);
  CHECK(c.listen.tcp[1].host == "::1");
  CHECK(c.listen.tcp[1].port == 5);
  CHECK(c.listen.tcp[1].protocol == kinds::binding_protocol::Negotiating);
  CHECK(c.listen.tcp[2].tag == "abc");
  CHECK(c.listen.tcp[2].port == 7);
  // With TLS prefixes before (memcached's order).
  c = with_flags({"-l", "notls:proto[ascii]:127.0.0.1:1"});
  CHECK(c.listen.tcp[0].notls);
  CHECK(c.listen.tcp[0].protocol == kinds::binding_protocol::Ascii);
  // Repeated: bound once, shown once.
  c = with_flags({"-l", "127.0.0.1", "-l", "127.0.0.1", "-l", "127.0.0.2,127.0.0.1"});
  CHECK(c.listen.tcp.size() == 2);
  CHECK(c.listen.inter == "127.0.0.1,127.0.0.2,127.0.0.1");
  // Every interface.
  c = with_flags({"-l", "*"});
  CHECK(c.listen.tcp[0].host == "*");
  // memcached's words.
  CHECK(parse({"-l", "proto[ascii:127.0.0.1"}) == "-l: Invalid protocol spec: \"[ascii:127.0.0.1\"");
  CHECK(parse({"-l", "tag[]:127.0.0.1"}) == "-l: Listener tags must be between 1 and 8 characters: \"\"");
  CHECK(parse({"-l", "tag[123456789]:127.0.0.1"}) ==
        "-l: Listener tags must be between 1 and 8 characters: \"123456789\"");
  CHECK(parse({"-l", "tag[x:127.0.0.1"}) == "-l: Invalid tag in socket config: \"[x:127.0.0.1\"");
  CHECK(parse({"-l", "proto[proxy]:127.0.0.1"}).rfind("-l: proto[proxy]: ", 0) == 0);
  // A name memcached ignores: accepted, negotiating, with a note.
  cli_options o;
  REQUIRE(parse({"-l", "proto[meta]:127.0.0.1"}, &o) == "");
  CHECK((*o.listen)[0].address.protocol == kinds::binding_protocol::Negotiating);
  REQUIRE(o.listen_warnings.size() == 1);
  CHECK(o.listen_warnings[0].rfind("-l: proto[meta]: not a protocol memcached knows", 0) == 0);
}

TEST_CASE("-o: memcached's extended options, with their meaning or a note") {
  cli_options o;
  REQUIRE(parse({"-o", "hashpower=24,idle_timeout=30,no_lru_crawler,no_hashexpand"}, &o) == "");
  CHECK(o.notes.empty());
  config c;
  apply_overrides(o, c);
  CHECK(c.cache.hash_power == 24);
  CHECK(c.server.idle_timeout_ms == 30000);
  CHECK(!c.cache.lru_crawler);
  CHECK(!c.cache.hash_expand);
  c = with_flags({"-o", "lru_crawler"});
  CHECK(c.cache.lru_crawler);
  CHECK(c.cache.hash_expand);

  // extstore's ext_path: the file's directory and its size.
  c = with_flags({"-o", "ext_path=/var/tmp/extstore:2g,ext_item_size=4096"});
  CHECK(c.cache.large_value_dir == "/var/tmp");
  CHECK(c.cache.large_value_disk_limit == 2 * kGiB);
  CHECK(c.cache.large_value_threshold == 4096);

  // ithaca's own: cache.eviction.
  CHECK(config{}.cache.eviction == cache_eviction::S3fifo);
  c = with_flags({"-o", "eviction=clock"});
  CHECK(c.cache.eviction == cache_eviction::Clock);
  c = with_flags({"-o", "eviction=s3fifo"});
  CHECK(c.cache.eviction == cache_eviction::S3fifo);
  CHECK(parse({"-o", "eviction=lru"}, &o).find("eviction: expected s3fifo or clock") != std::string::npos);

  // Accepted with a note each; silent where ithaca does what memcached does.
  REQUIRE(parse({"-o", "modern,maxconns_fast,hot_lru_pct=30,slab_automove=2,hash_algorithm=xxh3"}, &o) == "");
  REQUIRE(o.notes.size() == 3);
  CHECK(o.notes[0].rfind("-o hot_lru_pct=30: accepted, no effect: ", 0) == 0);
  CHECK(o.notes[1].rfind("-o slab_automove=2: accepted, no effect: ", 0) == 0);
  CHECK(o.notes[2].rfind("-o hash_algorithm=xxh3: ", 0) == 0);
  REQUIRE(parse({"-N", "4"}, &o) == "");
  CHECK(o.notes.size() == 1);

  // memcached's words where it refuses.
  CHECK(parse({"-o", "hashpower=5"}) == "-o: Initial hashtable multiplier of 5 is too low");
  CHECK(parse({"-o", "hashpower"}) == "-o: Missing numeric argument for hashpower");
  CHECK(parse({"-o", "bogus_opt"}) == "-o: Illegal suboption \"bogus_opt\"");
  CHECK(parse({"-o", "hot_lru_pct=90"}) == "-o: hot_lru_pct must be > 1 and < 80");
  CHECK(parse({"-o", "slab_automove=3"}) == "-o: slab_automove must be between 0 and 2");
  CHECK(parse({"-o", "tail_repair_time=5"}) == "-o: Cannot set tail_repair_time to less than 10 seconds");
  CHECK(parse({"-o", "hash_algorithm=md5"}) == "-o: Unknown hash_algorithm option (jenkins, murmur3, xxh3)");
  CHECK(parse({"-o", "slab_chunk_max=2048"}) == "-o: slab_chunk_max must be specified in kilobytes.");
  CHECK(parse({"-o", "ext_path=/tmp/x"}).rfind("-o: must supply size to ext_path", 0) == 0);
  CHECK(parse({"-o", "ext_threads=many"}) == "-o: could not parse argument to ext_threads");
  CHECK(parse({"-o", "proxy_config=routelib"}).rfind("-o: proxy_config: memcached's Lua proxy", 0) == 0);
}

TEST_CASE("-M -C -F -D -R -B: the flags that change replies") {
  config c = with_flags({});
  CHECK(c.cache.evictions);
  CHECK(c.cache.cas_enabled);
  CHECK(c.server.enable_flush_all);
  CHECK(c.server.prefix_delimiter == ':');
  CHECK(!c.server.detail_enabled);
  CHECK(c.server.reqs_per_event == 20);
  CHECK(c.server.binding == kinds::binding_protocol::Negotiating);
  c = with_flags({"-M", "-C", "-F", "-D", "/x", "-R", "5", "-B", "binary"});
  CHECK(!c.cache.evictions);
  CHECK(!c.cache.cas_enabled);
  CHECK(!c.server.enable_flush_all);
  CHECK(c.server.prefix_delimiter == '/');  // memcached takes the first character
  CHECK(c.server.detail_enabled);           // -D turns per-prefix stats on
  CHECK(c.server.reqs_per_event == 5);
  CHECK(c.server.binding == kinds::binding_protocol::Binary);
  c = with_flags({"--disable-evictions", "--disable-cas", "--disable-flush-all", "--max-reqs-per-event=9",
                  "--protocol=ascii", "-D."});
  CHECK(!c.cache.evictions);
  CHECK(!c.cache.cas_enabled);
  CHECK(!c.server.enable_flush_all);
  CHECK(c.server.reqs_per_event == 9);
  CHECK(c.server.binding == kinds::binding_protocol::Ascii);
  CHECK(c.server.prefix_delimiter == '.');
  CHECK(with_flags({"-B", "auto"}).server.binding == kinds::binding_protocol::Negotiating);
  CHECK(parse({"-B", "foo"}) ==
        "-B: Invalid value for binding protocol: foo -- should be one of auto, binary, or ascii");
  CHECK(parse({"-R", "0"}).rfind("-R: Number of requests per event must be greater than 0", 0) == 0);
  CHECK(parse({"-R", "x"}).rfind("-R: Number of requests per event must be greater than 0", 0) == 0);
  CHECK(parse({"-D", ""}) == "-D: No delimiter specified");
}

TEST_CASE("-f and -n: memcached's size classes") {
  config c = with_flags({"-f", "1.5", "-n", "100"});
  CHECK(c.cache.slab_growth_factor == 1.5);
  CHECK(c.cache.slab_min_size == 100);
  c = with_flags({"--slab-growth-factor=2", "--slab-min-size=16"});
  CHECK(c.cache.slab_growth_factor == 2.0);
  CHECK(c.cache.slab_min_size == 16);
  c = with_flags({});
  CHECK(c.cache.slab_growth_factor == 1.25);
  CHECK(c.cache.slab_min_size == 48);
  CHECK(parse({"-f", "1"}) == "-f: Factor must be greater than 1 (and at most 100), got '1'");
  CHECK(parse({"-f", "1.2x"}).rfind("-f: Factor must be greater than 1", 0) == 0);
  CHECK(parse({"-n", "0"}) == "-n: expected an integer from 1 to 524288, got '0'");
}

TEST_CASE("precedence: defaults < file < flags") {
  temp_file f(
      "listen:\n  tcp: [127.0.0.1:11311, 127.0.0.2:11312]\nserver:\n  workers: 8\n"
      "cache:\n  memory_limit: 256m\nlogging:\n  level: error\n");
  cli_options o;
  REQUIRE(parse({"--config", f.path.c_str()}, &o) == "");
  config c;
  std::string error;
  REQUIRE(make_config(o, c, &error));
  CHECK(c.server.workers == 8);                 // file
  CHECK(c.cache.memory_limit == 256ull << 20);  // file
  CHECK(c.server.max_connections == 1024);      // default
  CHECK(c.logging.level == log_level::Error);   // file

  REQUIRE(parse({"--config", f.path.c_str(), "-t", "2", "-p", "0", "-v"}, &o) == "");
  REQUIRE(make_config(o, c, &error));
  CHECK(c.server.workers == 2);  // flag
  CHECK(c.listen.tcp == std::vector<tcp_address>{{"127.0.0.1", 0}, {"127.0.0.2", 0}});
  CHECK(c.cache.memory_limit == 256ull << 20);  // file
  CHECK(c.logging.level == log_level::Info);    // flag

  // -l without a port keeps the file's first port.
  REQUIRE(parse({"--config", f.path.c_str(), "-l", "10.1.1.1"}, &o) == "");
  REQUIRE(make_config(o, c, &error));
  CHECK(c.listen.tcp == std::vector<tcp_address>{{"10.1.1.1", 11311}});
}

TEST_CASE("make_config validates after the flags") {
  cli_options o;
  config c;
  std::string error;
  REQUIRE(parse({"-m", "1"}, &o) == "");
  CHECK_FALSE(make_config(o, c, &error));
  CHECK(error == "command line: item_size_max (1 MiB) must not exceed half of memory_limit (1 MiB)");
}

TEST_CASE("--check-config") {
  std::string message;
  cli_options o;
  REQUIRE(parse({"--check-config"}, &o) == "");
  CHECK(check_config(o, &message) == 0);
  CHECK(message == "configuration OK");

  temp_file good("server:\n  workers: 2\n");
  REQUIRE(parse({"--check-config", "--config", good.path.c_str()}, &o) == "");
  CHECK(check_config(o, &message) == 0);
  CHECK(message == "configuration OK");

  temp_file bad("server:\n  workers: 2\n  memory_limit: 1g\n");
  REQUIRE(parse({"--check-config", "--config", bad.path.c_str()}, &o) == "");
  CHECK(check_config(o, &message) == 1);
  CHECK(message == bad.path + ":3: unknown key 'memory_limit' in section 'server'");

  REQUIRE(parse({"--check-config", "--config", good.path.c_str(), "-m", "1"}, &o) == "");
  CHECK(check_config(o, &message) == 1);
  CHECK(message ==
        "with the command-line flags: item_size_max (1 MiB) must not exceed half of "
        "memory_limit (1 MiB)");

  REQUIRE(parse({"--check-config", "--config", "/nonexistent.yaml"}, &o) == "");
  CHECK(check_config(o, &message) == 1);
  CHECK(message == "/nonexistent.yaml: cannot open: No such file or directory");
}

TEST_CASE("reload on change: an mcrouter config's default, the YAML key, mcrouter's --disable-reload-configs") {
  const char* json = "{\"pools\": {\"A\": {\"servers\": [\"127.0.0.1:11211\"]}}, \"route\": \"PoolRoute|A\"}\n";
  temp_file mcrouter(json);
  temp_file plain("logging:\n  level: info\n");
  temp_file keyed("server:\n  reload_on_change: true\n");
  auto loaded = [](std::initializer_list<const char*> args) {
    cli_options o;
    REQUIRE(parse(args, &o) == "");
    config c;
    std::string error;
    REQUIRE(make_config(o, c, &error));
    return c;
  };
  config c = loaded({"--config", mcrouter.path.c_str()});
  CHECK(c.server.reload_on_change);                             // mcrouter watches its file
  CHECK(c.sources == std::vector<std::string>{mcrouter.path});  // absolute already (/tmp/...)
  CHECK_FALSE(loaded({"--config", mcrouter.path.c_str(), "--disable-reload-configs"}).server.reload_on_change);
  CHECK_FALSE(loaded({"--config", plain.path.c_str()}).server.reload_on_change);  // ithaca's YAML: SIGHUP only
  CHECK(loaded({"--config", keyed.path.c_str()}).server.reload_on_change);
  CHECK_FALSE(loaded({"--config", keyed.path.c_str(), "--disable-reload-configs"}).server.reload_on_change);
  CHECK(loaded({}).sources.empty());  // no file, nothing to watch
  // A relative --config is kept absolute: -d changes the directory to /.
  char cwd[4096];
  REQUIRE(getcwd(cwd, sizeof cwd) != nullptr);
  REQUIRE(chdir("/tmp") == 0);
  const std::string relative = "./" + plain.path.substr(std::string("/tmp/").size());
  config from_tmp = loaded({"--config", relative.c_str()});
  REQUIRE(chdir(cwd) == 0);
  CHECK(from_tmp.sources == std::vector<std::string>{plain.path});
}

TEST_CASE("an mcrouter config's @import files are its sources too, after the file itself") {
  temp_file pools("{\"A\": {\"servers\": [\"127.0.0.1:11211\"]}}\n");
  const std::string name = pools.path.substr(std::string("/tmp/").size());
  temp_file main_file("{\"pools\": \"@import(" + name + ")\", \"route\": \"PoolRoute|A\"}\n");
  cli_options o;
  REQUIRE(parse({"--config", main_file.path.c_str()}, &o) == "");
  config c;
  std::string error;
  REQUIRE_MESSAGE(make_config(o, c, &error), error);
  CHECK(c.sources == std::vector<std::string>{main_file.path, pools.path});
  CHECK(c.server.reload_on_change);
}
