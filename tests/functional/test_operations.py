"""Operating the server, over the wire and through its process: configuration
checks, SIGHUP reload, graceful shutdown, the connection limit, the stats
families, the idle timeout and both kernel backends."""

import re
import signal
import subprocess
import time

import pytest

from conftest import ithaca_binary
from mcwire import Conn, ConnectionClosed, parse_stats, server_version

MIB = 1024 * 1024


def stats(conn, arg=b""):
    reply = conn.call(b"stats" + (b" " + arg if arg else b"") + b"\r\n")
    assert reply.endswith(b"END\r\n"), reply
    return parse_stats(reply)


def stat_lines(reply):
    """Every line of a stats reply but the END: each must be 'STAT name value'."""
    lines = reply.split(b"\r\n")
    assert lines[-2:] == [b"END", b""], reply[-100:]
    body = lines[:-2]
    for line in body:
        assert re.fullmatch(rb"STAT [^ ]+ [^\r\n]*", line), line
    return body


def poll(predicate, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)
    return True


def alive(conn):
    return conn.call(b"version\r\n").startswith(b"VERSION ")


def assert_refused(server, count):
    """`count` new connections each get memcached's refusal, then are closed."""
    for _ in range(count):
        with Conn(*server.address) as extra:
            assert extra.read_line() == b"ERROR Too many open connections\r\n"
            assert extra.is_closed(wait=2)


def binary_or_fail():
    path, is_memcached = ithaca_binary()
    if is_memcached:
        pytest.fail("this test runs ithaca's --config/--check-config: not with ITHACA_BIN=memcached",
                    pytrace=False)
    return path


def run_check(args, cwd, timeout=10):
    return subprocess.run([binary_or_fail(), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


# --- configuration errors ---------------------------------------------------------

BAD_YAML = "server:\n  workers: 2\n  wrokers: 3\n"
BAD_LINE = 3


def test_check_config_reports_unknown_key_with_file_and_line(tmp_path):
    (tmp_path / "bad.yaml").write_text(BAD_YAML)
    r = run_check(["--config", "bad.yaml", "--check-config"], tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert re.search(rf"bad\.yaml:{BAD_LINE}: unknown key 'wrokers'", out), out
    assert "configuration OK" not in out


def test_check_config_accepts_a_good_file(tmp_path):
    (tmp_path / "good.yaml").write_text("server:\n  workers: 2\ncache:\n  memory_limit: 16m\n")
    r = run_check(["--config", "good.yaml", "--check-config"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "configuration OK" in r.stdout + r.stderr


def test_start_with_bad_config_fails_with_the_same_message(tmp_path):
    (tmp_path / "bad.yaml").write_text(BAD_YAML)
    r = run_check(["--config", "bad.yaml", "-l", "127.0.0.1", "-p", "0", "-U", "0"], tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert re.search(rf"bad\.yaml:{BAD_LINE}: unknown key 'wrokers'", out), out
    assert "listening on" not in out


# --- reload ----------------------------------------------------------------------------


def test_sighup_reload_and_refused_reload_keep_the_connection(ithaca_factory):
    # The GC logs what it reclaimed at debug level: that shows which level is in force.
    gc_line = re.compile(r"gc: visited \d+ reclaimed [1-9]")
    server = ithaca_factory(config_text="logging:\n  level: info\ncache:\n  gc_interval: 100ms\n")
    config_path = server.argv[server.argv.index("--config") + 1]
    with Conn(*server.address) as c:
        assert c.call(b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"
        assert c.call(b"set e1 0 1 1\r\nv\r\n") == b"STORED\r\n"
        assert poll(lambda: int(stats(c)["curr_items"]) == 1, 4), "e1 was never reclaimed"
        assert not gc_line.search(server.log), server.log  # info: no debug lines

        with open(config_path, "w") as f:
            f.write("logging:\n  level: debug\ncache:\n  gc_interval: 100ms\n")
        server.proc.send_signal(signal.SIGHUP)
        assert server.wait_for_log(re.compile(r"SIGHUP: .*ithaca-1\.yaml is valid"), 5), server.describe()
        assert c.call(b"get k\r\n") == b"VALUE k 0 1\r\nv\r\nEND\r\n"
        assert c.call(b"set e2 0 1 1\r\nv\r\n") == b"STORED\r\n"
        assert server.wait_for_log(gc_line, 4), "debug level not applied:\n" + server.describe()

        with open(config_path, "w") as f:
            f.write("logging:\n  level: info\n  levle: warn\n")
        server.proc.send_signal(signal.SIGHUP)
        m = server.wait_for_log(re.compile(r"reload refused.*ithaca-1\.yaml:3: unknown key 'levle'"), 5)
        assert m, server.describe()
        # The same connection, never dropped, still served.
        assert c.call(b"get k\r\n") == b"VALUE k 0 1\r\nv\r\nEND\r\n"
        assert server.proc.poll() is None
        assert int(stats(c)["total_connections"]) == 1


# --- graceful shutdown ----------------------------------------------------------------------


def test_sigterm_with_idle_connections_exits_0_and_clients_see_eof(ithaca_factory):
    server = ithaca_factory()
    conns = [Conn(*server.address) for _ in range(5)]
    try:
        for c in conns:
            assert alive(c)
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(5) == 0, server.describe()
        for c in conns:
            assert c.is_closed(wait=2)
    finally:
        for c in conns:
            c.close()


def test_shutdown_command_needs_A(ithaca_factory):
    server = ithaca_factory()
    with Conn(*server.address) as c:
        assert c.call(b"shutdown\r\n") == b"SERVER_ERROR: shutdown not enabled\r\n"
        assert alive(c)
    assert server.proc.poll() is None


def test_shutdown_command_with_A_stops_the_server(ithaca_factory):
    server = ithaca_factory(args=["-A"])
    with Conn(*server.address) as c, Conn(*server.address) as other:
        assert alive(other)
        c.send(b"shutdown\r\n")
        assert server.proc.wait(5) == 0, server.describe()
        assert c.is_closed(wait=2)
        assert other.is_closed(wait=2)


# --- connection limit --------------------------------------------------------------------------


def test_connection_limit_refuses_with_memcacheds_error(ithaca_factory):
    limit = 5
    server = ithaca_factory(args=["-c", str(limit)])
    held = []
    try:
        for _ in range(limit):
            c = Conn(*server.address)
            held.append(c)
            assert alive(c)  # the server has taken it in
        assert_refused(server, 3)
        for c in held:
            assert alive(c)
        s = stats(held[0])
        assert int(s["rejected_connections"]) == 3, s
        assert int(s["curr_connections"]) == limit, s
        assert int(s["max_connections"]) == limit, s
        # A slot freed is a slot available again.
        held.pop().close()
        deadline = time.monotonic() + 3
        while True:
            with Conn(*server.address) as again:
                try:
                    if alive(again):
                        break
                except ConnectionClosed:
                    pass
            assert time.monotonic() < deadline, "a freed slot was never reused"
            time.sleep(0.02)
    finally:
        for c in held:
            c.close()


def test_conn_limit_range_is_checked(tmp_path):
    assert run_check(["-c", "1048576", "--check-config"], tmp_path).returncode == 0
    for bad in ("0", "1048577", "x"):
        r = run_check(["-c", bad, "--check-config"], tmp_path)
        assert r.returncode != 0 and "-c" in r.stderr, (bad, r.stderr)


# --- stats ---------------------------------------------------------------------------------------


def test_stats_families_have_memcacheds_shape(ithaca_factory):
    server = ithaca_factory(args=["-t", "3", "-m", "16"])
    with Conn(*server.address) as c, Conn(*server.address) as c2:
        assert alive(c2)
        assert c.call(b"set a 0 0 1\r\n1\r\n") == b"STORED\r\n"
        assert c.call(b"get a\r\n").startswith(b"VALUE a")

        general = stat_lines(c.call(b"stats\r\n"))
        s = parse_stats(b"\r\n".join(general))
        assert int(s["threads"]) == 3
        assert int(s["limit_maxbytes"]) == 16 * MIB
        assert int(s["curr_connections"]) >= 2
        assert int(s["total_connections"]) >= 2
        assert s["io_backend"] in ("epoll", "io_uring")
        assert int(s["curr_items"]) == 1 and int(s["cmd_set"]) == 1 and int(s["get_hits"]) == 1

        settings = parse_stats(b"\r\n".join(stat_lines(c.call(b"stats settings\r\n"))))
        assert int(settings["maxbytes"]) == 16 * MIB
        assert int(settings["num_threads"]) == 3
        assert int(settings["tcpport"]) == server.port
        assert int(settings["maxconns"]) == int(s["max_connections"])

        items = stat_lines(c.call(b"stats items\r\n"))
        assert any(re.fullmatch(rb"STAT items:\d+:number 1", l) for l in items), items

        slabs = stat_lines(c.call(b"stats slabs\r\n"))
        names = [l.split()[1] for l in slabs]
        assert b"active_slabs" in names and b"total_malloced" in names, slabs

        conns = stat_lines(c.call(b"stats conns\r\n"))
        addrs = [l for l in conns if re.fullmatch(rb"STAT \d+:addr tcp:127\.0\.0\.1:\d+", l)]
        assert len(addrs) >= 2, conns

        assert c.call(b"stats reset\r\n") == b"RESET\r\n"
        after = stats(c)
        assert int(after["cmd_set"]) == 0 and int(after["get_hits"]) == 0, after
        assert int(after["curr_items"]) == 1  # a gauge is not reset


def test_stats_key_names_match_real_memcached(ithaca_factory, memcached):
    """Every field memcached 1.6.18 reports in `stats` and `stats settings`
    that ithaca claims to implement uses memcached's name."""
    server = ithaca_factory()
    with Conn(*server.address) as ours, Conn(*memcached.address) as theirs:
        for arg in (b"", b"settings"):
            mine = set(stats(ours, arg))
            real = set(stats(theirs, arg))
            core = {"pid", "uptime", "curr_connections", "total_connections", "rejected_connections",
                    "cmd_get", "cmd_set", "get_hits", "get_misses", "bytes", "curr_items",
                    "evictions", "limit_maxbytes", "threads"} if not arg else \
                   {"maxbytes", "maxconns", "tcpport", "num_threads", "item_size_max"}
            assert core <= real, core - real  # the oracle itself
            assert core <= mine, core - mine


# `stats settings` of memcached 1.6.45 (captured from it; built without
# extstore, whose ext_* fields a memcached without it omits too), in its order.
SETTINGS_1645 = [
    "maxbytes", "maxconns", "tcpport", "udpport", "inter", "verbosity", "oldest", "evictions",
    "domain_socket", "umask", "shutdown_command", "growth_factor", "chunk_size", "num_threads",
    "num_threads_per_udp", "stat_key_prefix", "detail_enabled", "reqs_per_event", "cas_enabled",
    "tcp_backlog", "binding_protocol", "auth_enabled_sasl", "auth_enabled_ascii", "item_size_max",
    "maxconns_fast", "hashpower_init", "slab_reassign", "slab_automove", "slab_automove_ratio",
    "slab_automove_window", "slab_chunk_max", "lru_crawler", "lru_crawler_sleep",
    "lru_crawler_tocrawl", "tail_repair_time", "flush_enabled", "dump_enabled", "hash_algorithm",
    "lru_maintainer_thread", "lru_segmented", "hot_lru_pct", "warm_lru_pct", "hot_max_factor",
    "warm_max_factor", "temp_lru", "temporary_ttl", "idle_timeout", "watcher_logbuf_size",
    "worker_logbuf_size", "read_buf_mem_limit", "track_sizes", "inline_ascii_response",
    "proxy_enabled", "proxy_uring_enabled", "num_napi_ids", "memory_file", "client_flags_size",
]
# What a memcached built with TLS adds, before proxy_enabled (ithaca prints them, on or off).
SETTINGS_TLS = [
    "ssl_enabled", "ssl_chain_cert", "ssl_key", "ssl_verify_mode", "ssl_keyformat", "ssl_ciphers",
    "ssl_ca_cert", "ssl_wbuf_size", "ssl_session_cache", "ssl_kernel_tls", "ssl_min_version",
]
_AT = SETTINGS_1645.index("proxy_enabled")
SETTINGS_1645_TLS = SETTINGS_1645[:_AT] + SETTINGS_TLS + SETTINGS_1645[_AT:]


def test_stats_settings_as_memcached_1_6_45(ithaca_factory, memcached):
    """Every field memcached 1.6.45 (built with TLS) prints in `stats settings`,
    in its order, then ithaca's own; with MEMCACHED_BIN naming a 1.6.45 the
    list is checked against it too (without its TLS fields if it has none)."""
    server = ithaca_factory()
    with Conn(*server.address) as c:
        mine = list(stats(c, b"settings"))
    assert mine[:len(SETTINGS_1645_TLS)] == SETTINGS_1645_TLS
    if server_version(memcached.address) >= (1, 6, 45):
        with Conn(*memcached.address) as c:
            real = [k for k in stats(c, b"settings") if not k.startswith("ext_") and k != "slab_automove_freeratio"]
        assert real in (SETTINGS_1645, SETTINGS_1645_TLS)


# --- idle timeout -------------------------------------------------------------------------------------


def test_idle_timeout_closes_only_the_idle_client(ithaca_factory):
    server = ithaca_factory(config_text="server:\n  idle_timeout: 300ms\n")
    with Conn(*server.address) as idle, Conn(*server.address) as active:
        assert alive(idle) and alive(active)
        deadline = time.monotonic() + 2.0
        closed = False
        while time.monotonic() < deadline and not closed:
            assert alive(active)
            closed = idle.is_closed(wait=0.05)
        assert closed, "the idle client was not closed within 2 s"
        # The active client keeps going past another full timeout.
        until = time.monotonic() + 0.6
        while time.monotonic() < until:
            assert alive(active)
            time.sleep(0.05)
    assert server.proc.poll() is None


# --- kernel backends --------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["epoll", "io_uring"])
def test_backend_smoke(ithaca_factory, backend):
    # Both backends are first class and CI must exercise both: on a machine
    # without io_uring, forcing it refuses to start and this test fails, loudly.
    server = ithaca_factory(config_text=f"server:\n  io_backend: {backend}\n")
    with Conn(*server.address) as c:
        assert stats(c)["io_backend"] == backend, server.log
        value = b"x" * 100_000
        for i in range(50):
            assert c.call(b"set k%d %d 0 %d\r\n%s\r\n" % (i, i, len(value), value)) == b"STORED\r\n"
        for i in range(50):
            assert c.call(b"get k%d\r\n" % i) == b"VALUE k%d %d %d\r\n%s\r\nEND\r\n" % (i, i, len(value), value)
        assert stats(c, b"settings")["io_backend"] == backend
