"""Debian's memcached-tool (the Perl script of the memcached package) against
ithaca in both roles, its output compared with its output against a real
memcached that got the same traffic.

- display: `stats items` then `stats slabs`, one row per class. The cache role
  counts its items in memcached's classes; the router forwards both groups to
  its pools' servers and merges their answers (server/pool_inspect.h).
- stats: `stats`. Both roles answer it themselves; the router counts the
  routed commands by what the servers answered (stats/routed_counts.h), while
  its item counts are its own store's (none): the pools hold the items.
- dump: `lru_crawler metadump all`, then a `get` per key. The router forwards
  the metadump to every server of its pools and routes the gets.
"""

import re
import time

from conftest import HOST, free_port
from mcwire import Conn
from test_slab_stats import display_rows, run_tool

# The `stats` fields a command changes (memcached-tool prints them by name).
COMMAND_FIELDS = ("cmd_get", "cmd_set", "cmd_touch", "cmd_flush", "get_hits", "get_misses", "delete_hits",
                  "delete_misses", "incr_hits", "incr_misses", "decr_hits", "decr_misses", "cas_hits",
                  "cas_misses", "cas_badval", "touch_hits", "touch_misses")
ITEM_FIELDS = ("curr_items", "total_items", "bytes")


def traffic(c):
    """Items in four classes (one chunked in memcached), with flags and an
    expiry, hits, misses, arithmetic, cas, touches and deletes that stay
    within each class's pages (so memcached's page counts and ithaca's agree:
    test_exporter_parity.py covers a class that shrinks)."""
    for i in range(30):
        assert c.call(b"set s%02d %d 0 10\r\n%s\r\n" % (i, i, b"s" * 10)) == b"STORED\r\n"
    for i in range(12):
        assert c.call(b"set m%02d 0 1000 3000\r\n%s\r\n" % (i, b"m" * 3000)) == b"STORED\r\n"
    assert c.call(b"set huge 0 0 700000\r\n%s\r\n" % (b"h" * 700000)) == b"STORED\r\n"
    assert c.call(b"set n 0 0 2\r\n99\r\n") == b"STORED\r\n"
    assert c.call(b"incr n 1\r\n") == b"100\r\n"
    assert c.call(b"decr n 50\r\n") == b"50\r\n"
    c.send(b"get s00 s01 m00 nope\r\n")
    assert c.read_until(b"END\r\n").count(b"VALUE ") == 3
    c.send(b"gets s02\r\n")
    cas = c.read_until(b"END\r\n").split(b"\r\n")[0].split()[4]
    assert c.call(b"cas s02 2 0 10 %s\r\n%s\r\n" % (cas, b"S" * 10)) == b"STORED\r\n"
    assert c.call(b"cas s02 2 0 10 %s\r\n%s\r\n" % (cas, b"T" * 10)) == b"EXISTS\r\n"
    assert c.call(b"touch m01 500\r\n") == b"TOUCHED\r\n"
    assert c.call(b"touch nope 500\r\n") == b"NOT_FOUND\r\n"
    for i in range(25, 30):
        assert c.call(b"delete s%02d\r\n" % i) == b"DELETED\r\n"
    assert c.call(b"delete nope\r\n") == b"NOT_FOUND\r\n"


def stats_fields(text):
    """memcached-tool stats: its header, then {field: value}."""
    lines = text.splitlines()
    return lines[0], dict(line.split(None, 1) for line in lines[1:])


def dump_entries(text):
    """memcached-tool dump: {key: (flags, exptime, value)} from its add lines."""
    out = {}
    # run_tool reads text: its "\r\n" came back as "\n".
    for m in re.finditer(r"add (\S+) (\d+) (\d+) (\d+)\r?\n", text):
        start = m.end()
        out[m.group(1)] = (int(m.group(2)), int(m.group(3)), text[start:start + int(m.group(4))])
    return out


def same_dump(ours, theirs, apart=0.0):
    """`apart`: how many seconds after our traffic theirs began (their
    absolute expiry times are that much later)."""
    assert set(ours) == set(theirs)
    for k in theirs:
        flags, exp, value = ours[k]
        assert (flags, value) == (theirs[k][0], theirs[k][2]), k
        # An absolute expiry time (whole seconds), set `apart` seconds apart.
        assert abs(exp + apart - theirs[k][1]) <= 2, (k, exp, theirs[k][1], apart)


def same_display(ours, theirs):
    """Rows as test_slab_stats reads them (size, pages, count, full), and the
    whole header line."""
    assert ours.splitlines()[0] == theirs.splitlines()[0]
    assert display_rows(ours) == display_rows(theirs)


def run_all(server, modes=("display", "stats", "dump")):
    return {mode: run_tool(server, mode) for mode in modes}


def test_tool_against_the_cache_role_matches_memcached(ithaca, memcached):
    out, began = {}, {}
    for server in (ithaca, memcached):
        began[server.name] = time.time()
        with Conn(HOST, server.port, timeout=20) as c:
            traffic(c)
        out[server.name] = run_all(server)
    ours, theirs = out["ithaca"], out["memcached"]
    same_display(ours["display"], theirs["display"])
    assert len(display_rows(ours["display"])) >= 4
    head, fields = stats_fields(ours["stats"])
    their_head, their_fields = stats_fields(theirs["stats"])
    assert head.split()[1:] == their_head.split()[1:] == ["Field", "Value"]
    for name in COMMAND_FIELDS + ITEM_FIELDS:
        assert fields[name] == their_fields[name], name
    # memcached's traffic came after ithaca's and its tool runs (seconds under load).
    same_dump(dump_entries(ours["dump"]), dump_entries(theirs["dump"]), began["memcached"] - began["ithaca"])
    assert len(dump_entries(ours["dump"])) == 30 - 5 + 12 + 2


def router_config(*backends, protocol="auto"):
    servers = ", ".join(f"{HOST}:{b.port}" for b in backends)
    return f"""
pools:
  main:
    servers: [{servers}]
    protocol: {protocol}
route:
  type: pool
  pool: main
"""


def test_tool_against_the_router_matches_the_memcached_behind_it(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    # ascii: the backend then counts what the client sent (over meta the router
    # sends touch as `mg ... T`, whose miss memcached 1.6.18 counts as a get
    # miss; test_exporter_parity.py compares the meta case with a memcached
    # that got the traffic directly).
    router = ithaca_factory(config_text=router_config(backend, protocol="ascii"))
    with Conn(HOST, router.port, timeout=20) as c:
        traffic(c)
    # display and stats of both before either dump (the router's dump reads
    # every key back from the backend: gets the backend counts).
    ours, theirs = run_all(router, ("display", "stats")), run_all(backend, ("display", "stats"))
    ours["dump"], theirs["dump"] = run_tool(router, "dump"), run_tool(backend, "dump")
    # display: the backend's classes, forwarded.
    same_display(ours["display"], theirs["display"])
    assert len(display_rows(ours["display"])) >= 4
    # stats: the router's own, its commands counted as the backend counted them.
    head, fields = stats_fields(ours["stats"])
    assert head.split()[1:] == ["Field", "Value"]
    _, their_fields = stats_fields(theirs["stats"])
    for name in COMMAND_FIELDS:
        assert fields[name] == their_fields[name], name
    assert fields["curr_items"] == "0"  # the router holds no items: its pools do
    # dump: the backend's keys, read back through the router.
    same_dump(dump_entries(ours["dump"]), dump_entries(theirs["dump"]))
    assert len(dump_entries(ours["dump"])) == 30 - 5 + 12 + 2


def test_tool_against_a_router_of_two_servers_shows_both(ithaca_factory, memcached_factory):
    backends = [memcached_factory(), memcached_factory()]
    router = ithaca_factory(config_text=router_config(*backends))
    oracle = memcached_factory()
    began = []
    for server in (router, oracle):
        began.append(time.time())
        with Conn(HOST, server.port, timeout=20) as c:
            traffic(c)
    ours = run_all(router)
    # Each class's items are the two servers' together: the one memcached's count.
    rows, want = display_rows(ours["display"]), display_rows(run_tool(oracle, "display"))
    assert {n: r[2] for n, r in rows.items()} == {n: r[2] for n, r in want.items()}
    assert {n: r[0] for n, r in rows.items()} == {n: r[0] for n, r in want.items()}
    # Every key of both servers, once.
    same_dump(dump_entries(ours["dump"]), dump_entries(run_tool(oracle, "dump")), began[1] - began[0])


def test_router_answers_from_its_own_store_when_no_server_answers(ithaca_factory):
    nobody = free_port()  # nothing listens there
    router = ithaca_factory(config_text=f"""
pools:
  main:
    servers: [{HOST}:{nobody}]
route:
  type: pool
  pool: main
""")
    with Conn(HOST, router.port) as c:
        assert c.call(b"stats items\r\n") == b"END\r\n"
        assert c.call(b"stats slabs\r\n") == b"STAT active_slabs 0\r\nSTAT total_malloced 0\r\nEND\r\n"
        c.send(b"lru_crawler metadump all\r\n")
        assert c.read_until(b"END\r\n") == b"OK\r\nEND\r\n"
