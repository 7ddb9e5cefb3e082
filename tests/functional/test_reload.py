"""Settings that change while the server runs: SIGHUP reloads and memcached's
cache_memlimit command. Each test first shows the old setting in force, then
reloads, then shows the new one in force on a connection that stayed open."""

import re
import signal

import pytest

from mcwire import Conn
from test_operations import MIB, alive, assert_refused, poll, stats

TOO_LARGE = b"SERVER_ERROR object too large for cache\r\n"


def config_path_of(server):
    return server.argv[server.argv.index("--config") + 1]


def reload_with(server, config_text, applied=None):
    """Rewrites the server's config file, sends SIGHUP and waits for the log
    line that says the file was applied (and, if given, that `applied` was in
    it). Returns the server log up to then."""
    with open(config_path_of(server), "w") as f:
        f.write(config_text)
    marker = re.compile(r"SIGHUP: \S+ is valid; applied: (.*)")
    before = len(marker.findall(server.log))
    server.proc.send_signal(signal.SIGHUP)
    assert poll(lambda: len(marker.findall(server.log)) > before, 5), server.describe()
    line = marker.findall(server.log)[before]
    if applied is not None:
        assert applied in line, line
    return server.log


def set_value(conn, key, size):
    return conn.call(b"set %s 0 0 %d\r\n%s\r\n" % (key, size, b"x" * size))


# --- cache.memory_limit -------------------------------------------------------------------------


def test_sighup_lowering_memory_limit_evicts_down_to_it(ithaca_factory):
    conf = "logging:\n  level: info\ncache:\n  gc_interval: 100ms\n  memory_limit: {}\n"
    server = ithaca_factory(config_text=conf.format("64m"), memory_flag=False)
    with Conn(*server.address) as c:
        # ~40 MB of items: well above the 16 MiB to come, under the 64 MiB now.
        value = b"v" * 1000
        batch = b"".join(b"set key:%d 0 0 1000 noreply\r\n%s\r\n" % (i, value) for i in range(40000))
        assert c.exchange_until_sentinel(batch + b"version\r\n") == []
        s = stats(c)
        assert int(s["limit_maxbytes"]) == 64 * MIB, s
        assert int(stats(c, b"slabs")["total_malloced"]) > 32 * MIB, s
        assert int(s["evictions"]) == 0, s

        reload_with(server, conf.format("16m"), applied="cache.memory_limit 64 MiB -> 16 MiB")
        s = stats(c)
        assert int(s["limit_maxbytes"]) == 16 * MIB, s
        assert stats(c, b"settings")["maxbytes"] == str(16 * MIB)
        # The GC sweep (every 100ms) evicts the coldest items until usage is
        # under the new limit; the same connection keeps being served meanwhile.
        assert poll(lambda: alive(c) and int(stats(c, b"slabs")["total_malloced"]) <= 16 * MIB, 5), stats(c)
        s = stats(c)
        assert int(s["evictions"]) > 0, s
        assert set_value(c, b"after", 100) == b"STORED\r\n"
        assert c.call(b"get after\r\n") == b"VALUE after 0 100\r\n" + b"x" * 100 + b"\r\nEND\r\n"
        assert int(stats(c)["total_connections"]) == 1


# --- cache.item_size_max ------------------------------------------------------------------------


def test_sighup_changes_item_size_max_both_ways(ithaca_factory):
    conf = "logging:\n  level: info\ncache:\n  item_size_max: {}\n"
    server = ithaca_factory(config_text=conf.format("512k"))
    size = 600 * 1024
    with Conn(*server.address) as c:
        assert set_value(c, b"big", size) == TOO_LARGE
        assert stats(c, b"settings")["item_size_max"] == str(512 * 1024)

        reload_with(server, conf.format("2m"), applied="cache.item_size_max 512 KiB -> 2 MiB")
        assert stats(c, b"settings")["item_size_max"] == str(2 * MIB)
        assert set_value(c, b"big", size) == b"STORED\r\n"
        assert c.call(b"get big\r\n") == b"VALUE big 0 %d\r\n%s\r\nEND\r\n" % (size, b"x" * size)

        reload_with(server, conf.format("512k"), applied="cache.item_size_max 2 MiB -> 512 KiB")
        assert stats(c, b"settings")["item_size_max"] == str(512 * 1024)
        # Refused again, and (as memcached does for a too-large set) the old item goes.
        assert set_value(c, b"big", size) == TOO_LARGE
        assert c.call(b"get big\r\n") == b"END\r\n"
        assert set_value(c, b"small", 1000) == b"STORED\r\n"


# --- server.max_connections ---------------------------------------------------------------------


def test_sighup_lowering_max_connections_refuses_new_ones_only(ithaca_factory):
    conf = "logging:\n  level: info\nserver:\n  max_connections: {}\n"
    server = ithaca_factory(config_text=conf.format(10))
    held = [Conn(*server.address) for _ in range(4)]
    try:
        for c in held:
            assert alive(c)
        reload_with(server, conf.format(3), applied="server.max_connections 10 -> 3")
        assert_refused(server, 2)
        # The four already open stay open and served.
        for c in held:
            assert alive(c)
        s = stats(held[0])
        assert int(s["max_connections"]) == 3, s
        assert int(s["rejected_connections"]) == 2, s
        assert stats(held[0], b"settings")["maxconns"] == "3"

        reload_with(server, conf.format(10), applied="server.max_connections 3 -> 10")
        with Conn(*server.address) as again:
            assert alive(again)
    finally:
        for c in held:
            c.close()


# --- server.idle_timeout ------------------------------------------------------------------------


def test_sighup_setting_idle_timeout_closes_idle_connections(ithaca_factory):
    server = ithaca_factory(config_text="logging:\n  level: info\n")
    with Conn(*server.address) as old, Conn(*server.address) as active:
        assert alive(old) and alive(active)
        assert not old.is_closed(wait=0.5)  # no idle timeout yet
        reload_with(server, "logging:\n  level: info\nserver:\n  idle_timeout: 300ms\n",
                    applied="server.idle_timeout 0ms -> 300ms")
        assert stats(active, b"settings")["idle_timeout_ms"] == "300"
        # A connection takes the new timeout at its next wait: after this request.
        assert alive(old)
        with Conn(*server.address) as new:
            assert alive(new)
            closed = {"old": False, "new": False}

            def both_closed():
                assert alive(active)
                closed["old"] = closed["old"] or old.is_closed(wait=0.02)
                closed["new"] = closed["new"] or new.is_closed(wait=0.02)
                return closed["old"] and closed["new"]

            assert poll(both_closed, 3), closed
        assert alive(active)


# --- restart-only settings ----------------------------------------------------------------------


def test_sighup_with_restart_only_changes_warns_and_applies_the_rest(ithaca_factory):
    conf = ("logging:\n  level: info\n"
            "server:\n  max_connections: {conns}\n  read_buffer_size: {rbuf}\n"
            "cache:\n  hash_power: {hp}\n  lease_interval: {lease}\n  gc_interval: {gc}\n")
    server = ithaca_factory(config_text=conf.format(conns=100, rbuf="16k", hp=16, lease="10s", gc="1s"))
    with Conn(*server.address) as c:
        assert set_value(c, b"k", 10) == b"STORED\r\n"
        log = reload_with(server, conf.format(conns=50, rbuf="32k", hp=17, lease="2s", gc="200ms"))
        warning = re.search(r"SIGHUP: (.*) changed; needs a restart", log)
        assert warning, log
        assert warning.group(1).split(", ") == ["server.read_buffer_size", "cache.hash_power"], log
        applied = re.search(r"applied: (.*)", log).group(1)
        for change in ("cache.lease_interval 10s -> 2s", "cache.gc_interval 1s -> 200ms",
                       "server.max_connections 100 -> 50"):
            assert change in applied, applied
        # The live ones are in force, the restart-only ones kept their values.
        s = stats(c)
        assert int(s["max_connections"]) == 50, s
        assert int(s["hash_power_level"]) == 16, s
        settings = stats(c, b"settings")
        assert settings["hash_power"] == "16", settings
        assert settings["read_buffer_size"] == str(16 * 1024), settings
        assert settings["lease_interval_ms"] == "2000", settings
        assert settings["gc_interval_ms"] == "200", settings
        # The cron picked up the new period: several sweeps within a second.
        runs = int(stats(c)["gc_runs"])
        assert poll(lambda: int(stats(c)["gc_runs"]) >= runs + 3, 2), stats(c)
        assert c.call(b"get k\r\n") == b"VALUE k 0 10\r\n" + b"x" * 10 + b"\r\nEND\r\n"
    assert server.proc.poll() is None


def test_sighup_with_an_unchanged_file_applies_nothing(ithaca_factory):
    conf = "logging:\n  level: info\nserver:\n  max_connections: 77\n"
    server = ithaca_factory(config_text=conf)
    log = reload_with(server, conf, applied="no live setting changed")
    assert "needs a restart" not in log, log
    with Conn(*server.address) as c:
        assert int(stats(c)["max_connections"]) == 77


# --- files that must not reset the running settings ----------------------------------------------


def refuse_reload_with(server, config_text):
    """Rewrites the config file, sends SIGHUP and waits for the line saying
    the reload was refused. Returns that line."""
    with open(config_path_of(server), "w") as f:
        f.write(config_text)
    marker = re.compile(r"SIGHUP: reload refused, keeping the running configuration: (.*)")
    before = len(marker.findall(server.log))
    server.proc.send_signal(signal.SIGHUP)
    assert poll(lambda: len(marker.findall(server.log)) > before, 5), server.describe()
    return marker.findall(server.log)[before]


@pytest.mark.parametrize("text", ["", "\n  \n", "# emptied by a truncated write\n\n", "---\n"])
def test_sighup_with_an_empty_file_is_refused(ithaca_factory, text):
    """An empty file (what a truncated write leaves) would put every live
    setting back to its default: the reload is refused with a clear error and
    nothing changes, not the memory limit nor the items kept under it."""
    conf = "logging:\n  level: info\nserver:\n  max_connections: 77\ncache:\n  memory_limit: 200m\n"
    server = ithaca_factory(config_text=conf, memory_flag=False)
    with Conn(*server.address) as c:
        value = b"v" * 1000
        batch = b"".join(b"set key:%d 0 0 1000 noreply\r\n%s\r\n" % (i, value) for i in range(80000))
        assert c.exchange_until_sentinel(batch + b"version\r\n") == []
        line = refuse_reload_with(server, text)
        assert "empty" in line and config_path_of(server) in line, line
        s = stats(c)
        assert int(s["limit_maxbytes"]) == 200 * MIB, s
        assert int(s["max_connections"]) == 77, s
        assert int(s["curr_items"]) == 80000 and int(s["evictions"]) == 0, s
    assert "is valid; applied" not in server.log
    # The same file is fine at start-up: the defaults.
    empty = ithaca_factory(config_text=text)
    with Conn(*empty.address) as c:
        assert int(stats(c)["max_connections"]) == 1024


def test_sighup_logs_what_changed_when_the_level_goes_up_to_warn(ithaca_factory):
    """The line naming the changes is logged at info even when the same file
    raises the log level to warn (it would otherwise be filtered out by the
    level it announces)."""
    conf = "logging:\n  level: {}\nserver:\n  max_connections: {}\n"
    server = ithaca_factory(config_text=conf.format("info", 77))
    reload_with(server, conf.format("warn", 78), applied="server.max_connections 77 -> 78")
    with Conn(*server.address) as c:
        assert int(stats(c)["max_connections"]) == 78


# --- cache_memlimit -----------------------------------------------------------------------------

MEMLIMIT_FORMS = [
    b"cache_memlimit 100",
    b"cache_memlimit",
    b"cache_memlimit abc",
    b"cache_memlimit 0",
    b"cache_memlimit 7",
    b"cache_memlimit 8",
    b"cache_memlimit -5",
    b"cache_memlimit -0",
    b"cache_memlimit +9",
    b"cache_memlimit 0x10",
    b"cache_memlimit 12abc",
    b"cache_memlimit 9\t",
    b"cache_memlimit  50 ",
    b"cache_memlimit 100 foo",
    b"cache_memlimit 100 noreply",
    b"cache_memlimit 1 noreply",
    b"cache_memlimit abc noreply",
    b"cache_memlimit noreply",
    b"cache_memlimit 100 noreply extra",
    b"cache_memlimit 1000000000",
    b"cache_memlimit 1000000001",
    b"cache_memlimit 99999999999",
    b"cache_memlimit 4294967296",
    b"cache_memlimit 4294967304",
    b"cache_memlimit 18446744073709551615",
    b"cache_memlimit 18446744073709551616",
    b"cache_memlimit -4294967287",
    b"CACHE_MEMLIMIT 10",
]


def memlimit_replies(server):
    """Each form's reply bytes (b"" for none), each followed by a meta no-op so
    that a silent reply is told apart from a slow one."""
    out = []
    with Conn(*server.address) as c:
        for form in MEMLIMIT_FORMS:
            c.send(form + b"\r\nmn\r\n")
            raw = c.read_until(b"MN\r\n")
            out.append((form, raw[:-len(b"MN\r\n")]))
    return out


def test_cache_memlimit_replies_match_memcached(ithaca_factory, memcached):
    ours = memlimit_replies(ithaca_factory())
    theirs = memlimit_replies(memcached)
    assert ours == theirs
    # Every kind of reply was exercised.
    replies = {r for _f, r in theirs}
    for expected in (b"OK\r\n", b"ERROR\r\n", b"",
                     b"MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m\r\n",
                     b"MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes\r\n"):
        assert expected in replies, expected


def test_cache_memlimit_sets_the_live_limit(ithaca_factory, memcached):
    for server in (ithaca_factory(), memcached):
        with Conn(*server.address) as c:
            assert int(stats(c)["limit_maxbytes"]) == 64 * MIB
            assert c.call(b"cache_memlimit 100\r\n") == b"OK\r\n"
            assert int(stats(c)["limit_maxbytes"]) == 100 * MIB
            assert stats(c, b"settings")["maxbytes"] == str(100 * MIB)
            assert c.call(b"cache_memlimit 7\r\n").startswith(b"MEMLIMIT_TOO_SMALL")
            assert int(stats(c)["limit_maxbytes"]) == 100 * MIB


def test_cache_memlimit_lowered_evicts(ithaca_factory):
    server = ithaca_factory(config_text="cache:\n  gc_interval: 100ms\n")
    with Conn(*server.address) as c:
        value = b"v" * 1000
        batch = b"".join(b"set key:%d 0 0 1000 noreply\r\n%s\r\n" % (i, value) for i in range(30000))
        assert c.exchange_until_sentinel(batch + b"version\r\n") == []
        assert int(stats(c, b"slabs")["total_malloced"]) > 24 * MIB
        assert c.call(b"cache_memlimit 8\r\n") == b"OK\r\n"
        assert poll(lambda: int(stats(c, b"slabs")["total_malloced"]) <= 8 * MIB, 5), stats(c)
        assert int(stats(c)["evictions"]) > 0


def test_sighup_resets_a_cache_memlimit_to_the_file(ithaca_factory):
    conf = "logging:\n  level: info\ncache:\n  memory_limit: 64m\n"
    server = ithaca_factory(config_text=conf, memory_flag=False)
    with Conn(*server.address) as c:
        assert c.call(b"cache_memlimit 100\r\n") == b"OK\r\n"
        reload_with(server, conf, applied="cache.memory_limit 100 MiB -> 64 MiB")
        assert int(stats(c)["limit_maxbytes"]) == 64 * MIB
