"""Per-class statistics (`stats slabs`, `stats items`) and `slabs reassign` /
`slabs automove`, against a real memcached as the oracle.

ithaca allocates with malloc but counts every item in the size class memcached
would put it in (store/slab_classes.h), so after the same workload the classes,
chunk sizes, chunks and item counts are memcached's, and Debian's memcached-tool
shows the same rows for both.
"""

import os
import re
import subprocess
import time

import pytest

from conftest import HOST
from mcwire import Conn, parse_stats

MEMCACHED_TOOL_PATHS = ("/usr/share/memcached/scripts/memcached-tool", "/usr/bin/memcached-tool")


def memcached_tool():
    for path in MEMCACHED_TOOL_PATHS:
        if os.path.exists(path):
            return path
    pytest.fail("memcached-tool is not installed (Debian's memcached package ships it)", pytrace=False)


def stat_list(conn, group):
    """[(name, value), ...] in the server's order."""
    reply = conn.call(b"stats %s\r\n" % group.encode())
    out = []
    for line in reply.split(b"\r\n"):
        if line.startswith(b"STAT "):
            _, name, value = line.decode().split(" ", 2)
            out.append((name, value))
    return out


def workload(conn):
    """100 items of 100 bytes, 50 of 5,000, one of 600,000 (chunked in memcached),
    then reads, deletes, arithmetic, cas and touches that each class counts."""
    for i in range(100):
        assert conn.call(b"set a%03d 0 0 100\r\n%s\r\n" % (i, b"x" * 100)) == b"STORED\r\n"
    for i in range(50):
        assert conn.call(b"set b%03d 0 0 5000\r\n%s\r\n" % (i, b"y" * 5000)) == b"STORED\r\n"
    assert conn.call(b"set big 0 0 600000\r\n%s\r\n" % (b"z" * 600000)) == b"STORED\r\n"
    for i in range(10):
        assert conn.call(b"get a%03d\r\n" % i).startswith(b"VALUE ")
    for i in range(3):
        assert conn.call(b"get b%03d\r\n" % i).startswith(b"VALUE ")
    assert conn.call(b"get nothing\r\n") == b"END\r\n"
    for i in range(90, 100):
        assert conn.call(b"delete a%03d\r\n" % i) == b"DELETED\r\n"
    assert conn.call(b"set n 7 0 2\r\n10\r\n") == b"STORED\r\n"
    assert conn.call(b"incr n 5\r\n") == b"15\r\n"
    assert conn.call(b"decr n 1\r\n") == b"14\r\n"
    cas = conn.call(b"gets a001\r\n").split(b"\r\n")[0].split()[4]
    assert conn.call(b"cas a001 0 0 100 %s\r\n%s\r\n" % (cas, b"w" * 100)) == b"STORED\r\n"
    assert conn.call(b"cas a001 0 0 100 %s\r\n%s\r\n" % (cas, b"v" * 100)) == b"EXISTS\r\n"
    assert conn.call(b"touch b000 1000\r\n") == b"TOUCHED\r\n"
    assert conn.call(b"gat 1000 b001\r\n").startswith(b"VALUE ")


def run_tool(server, mode):
    out = subprocess.run([memcached_tool(), f"{HOST}:{server.port}", mode], capture_output=True,
                         text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    return out.stdout


def display_rows(text):
    """memcached-tool display: {class: (item_size, pages, count, full)}."""
    rows = {}
    for line in text.splitlines()[1:]:
        f = line.split()
        # #  Item_Size  Max_age   Pages   Count   Full?  Evicted Evict_Time OOM
        rows[int(f[0])] = (f[1], int(f[3]), int(f[4]), f[5])
    return rows


SLAB_ARGS = [[], ["-f", "1.5", "-n", "100"]]


@pytest.mark.parametrize("args", SLAB_ARGS, ids=["default", "f1.5-n100"])
def test_memcached_tool_display_shows_memcacheds_classes(args, ithaca_factory, memcached_factory):
    ours = ithaca_factory(args=args)
    oracle = memcached_factory(args=args)
    for server in (ours, oracle):
        with Conn(HOST, server.port) as c:
            workload(c)
    want = display_rows(run_tool(oracle, "display"))
    got = display_rows(run_tool(ours, "display"))
    # Sanity: the workload's classes are there, with the chunked item's three.
    assert len(want) >= 4, want
    assert got == want


def test_memcached_tool_stats_reads_ithaca(ithaca, memcached):
    fields = []
    for server in (ithaca, memcached):
        with Conn(HOST, server.port) as c:
            workload(c)
        text = run_tool(server, "stats")
        fields.append(dict(line.split() for line in text.splitlines()[1:]))
    for name in ("curr_items", "get_hits", "get_misses", "touch_hits", "cas_hits",
                 "cas_badval", "delete_hits", "incr_hits", "decr_hits", "cmd_set"):
        assert fields[0][name] == fields[1][name], name
    assert fields[0]["curr_items"] == str(100 - 10 + 50 + 1 + 1)


def settled_oracle_slabs(server, ours, timeout=2.0):
    """memcached frees a replaced item's chunk once the last response that
    referenced it is written, a moment after the reply: read its `stats slabs`
    until the chunk figures agree with ours or `timeout` passes (then the last
    reading, for the assertion to show)."""
    deadline = time.monotonic() + timeout
    with Conn(HOST, server.port) as c:
        while True:
            slabs = stat_list(c, "slabs")
            if slabs == ours or time.monotonic() > deadline:
                return slabs
            theirs = {n: v for n, v in slabs if n.endswith("_chunks")}
            if theirs == {n: v for n, v in ours if n.endswith("_chunks")}:
                return slabs
            time.sleep(0.02)


def test_stats_slabs_and_items_names_order_and_values_match_memcached(ithaca, memcached):
    got, want = {}, {}
    for server, into in ((ithaca, got), (memcached, want)):
        with Conn(HOST, server.port) as c:
            workload(c)
        with Conn(HOST, server.port) as c:
            into["slabs"] = stat_list(c, "slabs")
            into["items"] = stat_list(c, "items")
    want["slabs"] = settled_oracle_slabs(memcached, got["slabs"])
    for group in ("slabs", "items"):
        assert [n for n, _ in got[group]] == [n for n, _ in want[group]], group
    # Every per-class slab figure is memcached's (its pages too: nothing was freed
    # across a page here); total_malloced is ithaca's own bytes.
    slabs_got, slabs_want = dict(got["slabs"]), dict(want["slabs"])
    for name, value in slabs_want.items():
        if name != "total_malloced":
            assert slabs_got[name] == value, name
    items_got, items_want = dict(got["items"]), dict(want["items"])
    same = ("number", "mem_requested", "evicted", "evicted_nonzero", "outofmemory", "reclaimed",
            "expired_unfetched", "evicted_unfetched", "tailrepairs", "age_warm")
    for name, value in items_want.items():
        if name.split(":")[2] in same:
            assert items_got[name] == value, name
    # One CLOCK, no segments: every item counts as cold, every hit as a hit to cold.
    for name, value in items_got.items():
        cls, field = name.split(":")[1:]
        if field == "number_cold":
            assert value == items_got[f"items:{cls}:number"]
        if field == "hits_to_cold":
            assert value == slabs_got[f"{cls}:get_hits"]


def test_stats_reset_clears_class_counters_not_items(ithaca):
    with Conn(HOST, ithaca.port) as c:
        workload(c)
        before = parse_stats(c.call(b"stats slabs\r\n"))
        # 100 sets and both cas (memcached counts every store that got memory).
        assert before["4:cmd_set"] == "102" and before["4:get_hits"] == "11", before
        assert c.call(b"stats reset\r\n") == b"RESET\r\n"
        slabs = parse_stats(c.call(b"stats slabs\r\n"))
        items = parse_stats(c.call(b"stats items\r\n"))
        assert slabs["4:cmd_set"] == "0" and slabs["4:get_hits"] == "0"
        assert slabs["4:used_chunks"] == before["4:used_chunks"]
        assert items["items:4:number"] == "90"
        assert c.call(b"get a000\r\n").startswith(b"VALUE ")
        assert parse_stats(c.call(b"stats slabs\r\n"))["4:get_hits"] == "1"


def test_a_store_over_an_expired_item_counts_a_reclaim(ithaca):
    """memcached's t/issue_163.t: a set that takes the place of an expired item
    counts it in its class's `reclaimed` (memcached: the store reused the
    expired item's memory)."""
    with Conn(HOST, ithaca.port) as c:
        assert c.call(b"set key 0 1 66560\r\n%s\r\n" % (b"A" * 66560)) == b"STORED\r\n"
        # A probe stored after it, with the same exptime, expires no sooner:
        # poll the probe (reading `key` would unlink it, which is no reclaim).
        assert c.call(b"set probe 0 1 1\r\nx\r\n") == b"STORED\r\n"
        deadline = time.monotonic() + 5
        while c.call(b"get probe\r\n") != b"END\r\n":
            assert time.monotonic() < deadline, "probe never expired"
            time.sleep(0.05)
        assert c.call(b"set key 0 0 66570\r\n%s\r\n" % (b"B" * 66570)) == b"STORED\r\n"
        items = parse_stats(c.call(b"stats items\r\n"))
        general = parse_stats(c.call(b"stats\r\n"))
    # By this store, or by the GC sweep if it passed first (then also the crawler's).
    assert items["items:31:reclaimed"] == "1"
    assert items["items:31:expired_unfetched"] == "1"
    assert items["items:31:crawler_reclaimed"] in ("0", "1")
    assert items["items:31:number"] == "1"
    # The probe counts one too if the sweep passed between its expiry and the
    # get that found it gone (its class, empty now, is not listed).
    assert general["reclaimed"] in ("1", "2")


def test_a_class_stays_in_stats_slabs_once_it_had_an_item_as_memcacheds(ithaca, memcached):
    """memcached lists a class in `stats slabs` while it has pages, and keeps
    its pages when its items go; `stats items` lists only classes with items."""
    for server in (ithaca, memcached):
        with Conn(HOST, server.port) as c:
            assert parse_stats(c.call(b"stats slabs\r\n"))["active_slabs"] == "0"
            assert c.call(b"stats items\r\n") == b"END\r\n"
            assert c.call(b"set k 0 0 5000\r\n%s\r\n" % (b"q" * 5000)) == b"STORED\r\n"
            items = parse_stats(c.call(b"stats items\r\n"))
            assert {k.split(":")[1] for k in items} == {"19"}
            assert c.call(b"delete k\r\n") == b"DELETED\r\n"
            assert c.call(b"stats items\r\n") == b"END\r\n"
        # memcached frees the chunk once the delete's reply is written: a moment.
        deadline = time.monotonic() + 2
        with Conn(HOST, server.port) as c:
            while True:
                slabs = parse_stats(c.call(b"stats slabs\r\n"))
                if slabs.get("19:used_chunks") == "0" or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            assert slabs["active_slabs"] == "1", server.name
            assert (slabs["19:used_chunks"], slabs["19:total_pages"], slabs["19:free_chunks"]) == ("0", "1", "184")


def test_stats_sizes_answers_as_memcached_without_track_sizes(ithaca, memcached):
    for server in (ithaca, memcached):
        with Conn(HOST, server.port) as c:
            workload(c)
            assert c.call(b"stats sizes\r\n") == b"STAT sizes_status disabled\r\nEND\r\n"
    assert "sizes_status" in run_tool(ithaca, "sizes")


def test_settings_report_the_class_parameters_as_memcached(ithaca_factory, memcached_factory):
    args = ["-f", "1.5", "-n", "100"]
    keys = ("growth_factor", "chunk_size", "slab_chunk_max", "item_size_max")
    values = []
    for server in (ithaca_factory(args=args), memcached_factory(args=args)):
        with Conn(HOST, server.port) as c:
            s = parse_stats(c.call(b"stats settings\r\n"))
            values.append({k: s[k] for k in keys})
    assert values[0] == values[1] == {"growth_factor": "1.50", "chunk_size": "100",
                                      "slab_chunk_max": "524288", "item_size_max": "1048576"}


def test_evictions_are_counted_in_their_class(ithaca_factory):
    # A small table, so a store's sampled eviction finds items to evict.
    server = ithaca_factory(args=["-m", "2", "-I", "512k"], config_text="cache:\n  hash_power: 8\n")
    with Conn(HOST, server.port) as c:
        for i in range(800):
            assert c.call(b"set e%04d 0 100 5000\r\n%s\r\n" % (i, b"e" * 5000)) == b"STORED\r\n"
        general = parse_stats(c.call(b"stats\r\n"))
        items = parse_stats(c.call(b"stats items\r\n"))
    assert int(general["evictions"]) > 0
    assert items["items:19:evicted"] == general["evictions"]
    assert items["items:19:evicted_nonzero"] == general["evictions"]  # all had an exptime
    assert items["items:19:evicted_unfetched"] == general["evicted_unfetched"]
    assert int(items["items:19:number"]) == int(general["curr_items"])


# --- slabs reassign / automove -------------------------------------------------

def replies(conn, commands):
    """Sends each command, then `mn`; returns the replies before MN (a silenced
    command adds none)."""
    out = []
    for cmd in commands:
        conn.send(cmd + b"\r\n")
    conn.send(b"mn\r\n")
    while True:
        line = conn.read_line()
        if line == b"MN\r\n":
            return out
        out.append(line.decode().rstrip("\r\n"))


# Where Debian's 1.6.18 (slab reassignment on, its default) answers as 1.6.45.
SHARED = [b"slabs reassign 5 5", b"slabs reassign 1 99", b"slabs reassign 99 1", b"slabs reassign -2 1",
          b"slabs reassign x 2", b"slabs reassign 1", b"slabs automove 0", b"slabs automove 1",
          b"slabs automove 2", b"slabs automove 3", b"slabs automove x", b"slabs automove ratio 0.5",
          b"slabs automove ratio", b"slabs automove 1 noreply", b"slabs", b"slabs foo"]


def test_slabs_answers_match_memcached_where_they_agree(ithaca, memcached):
    with Conn(HOST, ithaca.port) as a, Conn(HOST, memcached.port) as b:
        got = replies(a, SHARED)
        assert got == replies(b, SHARED)
    assert got[:6] == ["SAME src and dst class are identical", "BADCLASS invalid src or dst class id",
                       "BADCLASS invalid src or dst class id", "BADCLASS invalid src or dst class id",
                       "CLIENT_ERROR bad command line format", "ERROR"]


def test_slabs_answers_pinned_to_1_6_45(ithaca):
    with Conn(HOST, ithaca.port) as c:
        # 1.6.45 reads the sub-command as a prefix, and has freeratio and window.
        assert replies(c, [b"slabs re 5 5", b"slabs a 2", b"slabs automove rat 0.1",
                           b"slabs automove freeratio 0.2", b"slabs automove f x",
                           b"slabs automove window 30", b"slabs automove window 2",
                           b"slabs automove window 1801", b"slabs automove window",
                           b"slabs automove window -5", b"slabs automove -1", b"slabs automove +1"]) == [
            "SAME src and dst class are identical", "OK", "OK", "OK", "ERROR", "OK",
            "CLIENT_ERROR automove window too low or too high",
            "CLIENT_ERROR automove window too low or too high",
            "CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format",
            "CLIENT_ERROR bad command line format", "CLIENT_ERROR bad command line format"]
        # A last "noreply" silences every answer, errors too (1.6.18 printed them).
        assert replies(c, [b"slabs reassign 1 2 noreply", b"slabs automove 9 noreply",
                           b"slabs foo noreply"]) == []


def test_slabs_reassign_moves_nothing_and_keeps_items(ithaca):
    """memcached's t/slabs-cas.t: a reassign of a class's page must not change
    the CAS of what stays. ithaca's memory is shared by every class, so the
    reassign has nothing to move: OK at once, items and CAS untouched."""
    with Conn(HOST, ithaca.port) as c:
        for i in range(1, 61):
            assert c.call(b"set bfoo%d 0 0 70000\r\n%s\r\n" % (i, b"x" * 70000)) == b"STORED\r\n"
        assert parse_stats(c.call(b"stats items\r\n"))["items:31:number"] == "60"
        cas = c.call(b"gets bfoo5\r\n").split(b"\r\n")[0].split()[4]
        for i in range(6, 61):
            assert c.call(b"delete bfoo%d\r\n" % i) == b"DELETED\r\n"
        assert replies(c, [b"slabs reassign 31 5", b"slabs reassign -1 5", b"slabs reassign 31 0"]) == [
            "OK", "OK", "OK"]
        assert c.call(b"gets bfoo5\r\n").split(b"\r\n")[0].split()[4] == cas
        assert parse_stats(c.call(b"stats items\r\n"))["items:31:number"] == "5"
        assert parse_stats(c.call(b"stats\r\n"))["evictions"] == "0"
