"""memcached's command line, as a user replacing memcached types it: -h lists
every flag, a bad flag is one line and a non-zero exit, and every `-o`
sub-option of memcached 1.6.45 is taken or refused as memcached takes or
refuses it, with the options that mean something in ithaca doing it. The
oracle is Debian's memcached (1.6.18), started with the same flags; the Lua
proxy's options, which Debian's build lacks, have fixed expectations."""

import re
import subprocess
import time

import pytest

from conftest import ithaca_binary, memcached_binary, root_args
from mcwire import Conn, parse_stats

# memcached 1.6.45's short flags (memcached.c's shortopts).
MEMCACHED_1_6_45_FLAGS = "aAZpsUmMckhiVrvdluPfntDLRCbBISFXWYeoN"

# Every -o sub-option of memcached 1.6.45 (subopts_tokens, TLS and extstore's
# included) with a value memcached takes, but the Lua proxy's.
ACCEPTED = [
    "maxconns_fast", "hashpower=20", "no_hashexpand", "slab_reassign", "slab_automove=1",
    "slab_automove_ratio=0.5", "slab_automove_window=30", "tail_repair_time=30",
    "hash_algorithm=xxh3", "lru_crawler", "lru_crawler_sleep=100", "lru_crawler_tocrawl=10",
    "lru_maintainer", "hot_lru_pct=20", "warm_lru_pct=40", "hot_max_factor=0.2",
    "warm_max_factor=2.0", "temporary_ttl=61", "idle_timeout=30", "watcher_logbuf_size=256",
    "worker_logbuf_size=64", "slab_sizes=100-200-300", "slab_chunk_max=512", "track_sizes",
    "no_inline_ascii_resp", "modern", "no_chunked_items", "no_slab_reassign",
    "no_slab_automove", "no_maxconns_fast", "inline_ascii_resp", "no_lru_crawler",
    "no_drop_privileges", "drop_privileges", "resp_obj_mem_limit",
    "read_buf_mem_limit=16", "sock_cookie_id=1", "ext_page_size=64", "ext_wbuf_size=4",
    "ext_threads=2", "ext_io_depth=2", "ext_path={tmp}/extstore:64m", "ext_item_size=512",
    "ext_item_age=10", "ext_low_ttl=10", "ext_recache_rate=100", "ext_compact_under=1",
    "ext_drop_under=1", "ext_max_sleep=100", "ext_max_frag=0.8", "ext_drop_unread",
    "slab_automove_freeratio=0.01",
]
# These turn the LRU maintainer off, which memcached's temporary_ttl needs:
# they are taken alone.
ACCEPTED_ALONE = ["no_lru_maintainer", "no_modern"]

# Values memcached refuses, each with its message (stderr or stdout).
REFUSED = [
    "hashpower=5", "slab_automove=3", "slab_automove_ratio=2", "slab_automove_window=1",
    "tail_repair_time=5", "hash_algorithm=md5", "lru_crawler_sleep=2000000", "hot_lru_pct=90",
    "warm_lru_pct=0", "hot_max_factor=0", "warm_max_factor=-1", "bogus_option", "hashpower",
]
# 1.6.45 refuses where 1.6.18 took it or said nothing (unit-tested in
# cli_test.cc): slab_chunk_max=0 or over 1024 (kilobytes), an ext_path
# without a size or with an unknown unit.


def run(argv, timeout=20):
    """Runs argv; (exit code or None if it was still running after
    `timeout` s and was killed, stdout + stderr). A server that should start
    is run with a short timeout; one that should exit gets 20 s (a
    sanitized binary on a loaded machine)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        return None, out


def ithaca_argv(*flags):
    path, _ = ithaca_binary()
    return [path, "-l", "127.0.0.1", "-p", "0", "-U", "0", *flags]


def memcached_argv(*flags):
    return [memcached_binary(), *root_args(), "-l", "127.0.0.1", "-p", "0", "-U", "0", *flags]


def test_help_lists_every_flag_of_memcached():
    rc, text = run([ithaca_binary()[0], "-h"])
    assert rc == 0, text
    _, theirs = run([memcached_binary(), "-h"])
    flags = set(MEMCACHED_1_6_45_FLAGS) | set(re.findall(r"^-(\w),", theirs, re.M))
    missing = sorted(f for f in flags if not re.search(rf"^\s+-{f}\b", text, re.M))
    assert not missing, f"ithaca -h does not list {missing}"
    # And the long forms memcached's help gives.
    longs = set(re.findall(r"--([a-z][a-z-]+)", theirs)) - {"extended"}
    missing_long = sorted(name for name in longs if f"--{name}" not in text)
    assert not missing_long, f"ithaca -h does not list {missing_long}"


@pytest.mark.parametrize("argv", [["-j"], ["--bogus"], ["-p"], ["-t", "0"], ["stray"]])
def test_a_bad_flag_is_one_line_and_a_usage_exit(argv):
    rc, text = run([ithaca_binary()[0], *argv])
    assert rc == 64, text
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert argv[0].lstrip("-") in lines[0]
    # memcached refuses the flags too. (A word that is no flag it ignores,
    # getopt's way; ithaca names it, as a typo there is likelier than intent.)
    if argv[0].startswith("-"):
        rc_mc, _ = run([memcached_binary(), *root_args(), *argv])
        assert rc_mc not in (0, None)


def test_version_and_license():
    rc, text = run([ithaca_binary()[0], "-V"])
    assert rc == 0 and re.fullmatch(r"ithaca \S+\n", text), text
    rc, text = run([ithaca_binary()[0], "-i"])
    assert rc == 0 and "Boost Software License" in text, text


def test_every_extended_option_memcached_takes_is_taken(tmp_path):
    """All of 1.6.45's -o options in one -o list, as memcached's -o takes a
    list: both servers start and serve; then each one alone in ithaca."""
    opts = ",".join(o.format(tmp=tmp_path) for o in ACCEPTED)
    rc_mc, out_mc = run(memcached_argv("-o", opts), timeout=1.5)
    assert rc_mc is None, f"memcached refused: {out_mc}"
    rc, out = run([*ithaca_argv("-o", opts), "--check-config"])
    assert rc == 0 and "configuration OK" in out, f"ithaca refused: {out}"
    for o in ACCEPTED_ALONE:
        rc_mc, out_mc = run(memcached_argv("-o", o), timeout=1.5)
        assert rc_mc is None, f"memcached refused -o {o}: {out_mc}"
    for o in ACCEPTED + ACCEPTED_ALONE:
        o = o.format(tmp=tmp_path)
        rc, out = run([*ithaca_argv("-o", o), "--check-config"], timeout=10)
        assert rc == 0 and "configuration OK" in out, f"-o {o}: ithaca refused: {out}"


@pytest.mark.parametrize("option", REFUSED)
def test_a_value_memcached_refuses_is_refused_with_its_words(option, tmp_path):
    option = option.format(tmp=tmp_path)
    rc_mc, out_mc = run(memcached_argv("-o", option))
    assert rc_mc not in (0, None), out_mc
    rc, out = run(ithaca_argv("-o", option))
    assert rc == 64, out
    said = out.strip().removeprefix("ithaca: -o: ")
    # memcached's first line of the complaint, word for word (1.6.45 added
    # to some: "and < 1800", a unit list in lower case).
    assert said.lower().startswith(out_mc.strip().splitlines()[0].lower()), (said, out_mc)


def test_the_lua_proxy_options():
    """Debian's memcached has no proxy (Illegal suboption): 1.6.45 built
    with it takes proxy_config=FILE as its whole configuration, which ithaca
    refuses with where its own is; the proxy's tuning options are accepted."""
    rc, out = run(ithaca_argv("-o", "proxy_config=routelib"))
    assert rc == 64 and "YAML config" in out, out
    rc, out = run([*ithaca_argv("-o", "proxy_arg=x,proxy_uring,proxy_memprofile"), "--check-config"])
    assert rc == 0 and "configuration OK" in out, out


def test_options_accepted_without_effect_are_logged(ithaca_factory):
    server = ithaca_factory(["-o", "hot_lru_pct=30,modern", "-N", "4"])
    assert server.logged("-o hot_lru_pct=30: accepted, no effect: ")
    assert server.logged("-N 4: accepted, no effect: ")
    assert "-o modern" not in server.log


def settings(server):
    c = Conn(server.host, server.port)
    try:
        return parse_stats(c.call(b"stats settings\r\n"))
    finally:
        c.close()


def stats(server):
    c = Conn(server.host, server.port)
    try:
        return parse_stats(c.call(b"stats\r\n"))
    finally:
        c.close()


def test_no_lru_crawler_until_enabled(ithaca_factory, memcached_factory):
    for server in (memcached_factory(["-o", "no_lru_crawler"]), ithaca_factory(["-o", "no_lru_crawler"])):
        assert settings(server)["lru_crawler"] == "no", server.name
        c = Conn(server.host, server.port)
        assert c.call(b"set k 0 0 1\r\nx\r\n") == b"STORED\r\n"
        assert c.call(b"lru_crawler metadump all\r\n") == b"CLIENT_ERROR lru crawler disabled\r\n", server.name
        assert c.call(b"lru_crawler crawl all\r\n") == b"CLIENT_ERROR lru crawler disabled\r\n", server.name
        assert c.call(b"lru_crawler enable\r\n") == b"OK\r\n", server.name
        assert settings(server)["lru_crawler"] == "yes", server.name
        # A crawler just enabled may still be on its first pass: memcached (and
        # ithaca) answer BUSY to a dump asked meanwhile; ask again, as a client does.
        deadline = time.monotonic() + 10
        while True:
            c.send(b"lru_crawler metadump all\r\n")
            first = c.read_line()
            if not first.startswith(b"BUSY") or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        dump = first if first.endswith(b"END\r\n") else first + c.read_until(b"END\r\n")
        # 1.6.45 (and ithaca) answer OK before the dump, 1.6.18 does not
        # (test_lru_crawler.py).
        dump = dump.removeprefix(b"OK\r\n")
        assert dump.startswith(b"key=k exp=-1 la="), (server.name, dump)
        c.close()


def test_hashpower_and_no_hashexpand(ithaca_factory, memcached_factory):
    """-o hashpower=12: 4,096 buckets; 10,000 items are over memcached's 1.5
    per bucket, so the table doubles, unless no_hashexpand."""
    n = 10_000
    servers = {
        "memcached": memcached_factory(["-o", "hashpower=12"]),
        "memcached no_hashexpand": memcached_factory(["-o", "hashpower=12,no_hashexpand"]),
        "ithaca": ithaca_factory(["-o", "hashpower=12"]),
        "ithaca no_hashexpand": ithaca_factory(["-o", "hashpower=12,no_hashexpand"]),
    }
    for name, server in servers.items():
        assert settings(server)["hashpower_init"] == "12", name
        c = Conn(server.host, server.port)
        c.send(b"".join(b"set key:%d 0 0 2 noreply\r\nvv\r\n" % i for i in range(n)))
        assert c.call(b"mn\r\n") == b"MN\r\n"
        c.close()
        assert int(stats(server)["curr_items"]) == n, name
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        levels = {name: int(stats(s)["hash_power_level"]) for name, s in servers.items()}
        if levels["memcached"] > 12 and levels["ithaca"] > 12:
            break
        time.sleep(0.2)
    assert levels["memcached"] == 13 and levels["ithaca"] == 13, levels
    assert levels["memcached no_hashexpand"] == 12 and levels["ithaca no_hashexpand"] == 12, levels


def test_idle_timeout_closes_an_idle_client(ithaca_factory, memcached_factory):
    for server in (memcached_factory(["-o", "idle_timeout=2"]), ithaca_factory(["-o", "idle_timeout=2"])):
        assert settings(server)["idle_timeout"] == "2", server.name
        idle = Conn(server.host, server.port)
        busy = Conn(server.host, server.port)
        assert idle.call(b"version\r\n").startswith(b"VERSION ")
        start = time.monotonic()
        closed_after = None
        while time.monotonic() - start < 8:
            assert busy.call(b"version\r\n").startswith(b"VERSION "), server.name
            if idle.is_closed(wait=0.5):
                closed_after = time.monotonic() - start
                break
        assert closed_after is not None and 1.5 <= closed_after <= 6, (server.name, closed_after)
        idle.close()
        busy.close()


def test_ext_path_puts_large_values_in_its_directory(ithaca_factory, tmp_path):
    """extstore's ext_path=FILE:SIZE and ext_item_size: the large-value file
    goes to FILE's directory, values over the size go there."""
    d = tmp_path / "ext"
    d.mkdir()
    server = ithaca_factory(["-o", f"ext_path={d}/extstore:64m,ext_item_size=2048"])
    s = settings(server)
    assert s["large_value_dir"] == str(d)
    assert s["large_value_disk_limit"] == str(64 << 20)
    assert s["large_value_threshold"] == "2048"
    c = Conn(server.host, server.port)
    value = b"v" * 4000
    assert c.call(b"set big 0 0 4000\r\n" + value + b"\r\n") == b"STORED\r\n"
    assert c.call(b"get big\r\n") == b"VALUE big 0 4000\r\n" + value + b"\r\nEND\r\n"
    assert int(stats(server)["large_values"]) == 1
    c.close()
