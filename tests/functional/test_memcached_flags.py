"""memcached's flags that change replies (issue 30): -M, -C, -F, -D, -R, -B,
and `stats cachedump` with -X. Each test starts a real memcached (Debian's
1.6.18) and ithaca with the same flags and compares the replies of the same
exchanges; where 1.6.45 answers otherwise than 1.6.18 (`stats detail` under
-X) the expectation is 1.6.45's, from its source. The router role is tested
where a flag means something there: -F refuses flush_all at the router, -B
and -R apply to the router's clients, -C leaves the servers' CAS values alone
(they are the servers' to give), `stats cachedump` asks the pools."""

import re
import socket
import subprocess
import time

import pytest

import mcwire
from conftest import HOST, free_port, root_args
from mcwire import Conn
from replica import dump, master_config, repl_port_of, slave_config
from replica import stats as repl_stats

SENTINEL = b"version\r\n"


def replies(server, data):
    """The reply units of the ascii/meta requests in `data`, sent at once."""
    with Conn(server.host, server.port) as c:
        return c.exchange_until_sentinel(data + SENTINEL)


def binary(server, packets):
    """(opcode, status, cas, body) of each binary response up to a Noop's."""
    with Conn(server.host, server.port) as c:
        out = c.binary_batch(packets)
    return [(r["opcode"], r["status"], r["cas"], r["extras"] + r["key"] + r["value"]) for r in out]


def stats(server, group=b""):
    with Conn(server.host, server.port) as c:
        c.send(b"stats " + group + b"\r\n" if group else b"stats\r\n")
        return mcwire.parse_stats(c.read_until(b"END\r\n"))


def binary_stats(server, group=b""):
    with Conn(server.host, server.port) as c:
        out = c.binary_batch([mcwire.pack_request(mcwire.OP_STAT, key=group)])
    return {r["key"].decode(): r["value"].decode() for r in out if r["opcode"] == mcwire.OP_STAT and r["key"]}


def pair(ithaca_factory, memcached_factory, args):
    return ithaca_factory(args), memcached_factory(args)


def router_config(backend):
    return f"""
pools:
  main:
    servers: [{HOST}:{backend.port}]
    protocol: ascii
route:
  type: pool
  pool: main
"""


# --- stats settings --------------------------------------------------------------------

FLAG_SETTINGS = ["evictions", "cas_enabled", "flush_enabled", "stat_key_prefix", "detail_enabled",
                 "reqs_per_event", "binding_protocol"]


@pytest.mark.parametrize("args", [
    [],
    ["-M", "-C", "-F", "-D", "/", "-R", "7", "-B", "ascii"],
    ["--disable-evictions", "--disable-cas", "--disable-flush-all", "--max-reqs-per-event=3",
     "--protocol=auto"],
    ["-B", "binary"],
], ids=["defaults", "short", "long", "binary"])
def test_stats_settings_name_the_flags_as_memcached_does(ithaca_factory, memcached_factory, args):
    ours, theirs = pair(ithaca_factory, memcached_factory, args)
    ask = binary_stats if "binary" in args else (lambda s, g: stats(s, g))
    want = ask(theirs, b"settings")
    got = ask(ours, b"settings")
    assert {k: got.get(k) for k in FLAG_SETTINGS} == {k: want[k] for k in FLAG_SETTINGS}


def test_the_yaml_keys_set_what_the_flags_set(ithaca_factory):
    ours = ithaca_factory(config_text="""
server:
  enable_flush_all: false
  prefix_delimiter: "/"
  detail_enabled: true
  reqs_per_event: 5
  binding_protocol: ascii
cache:
  evictions: false
  cas_enabled: false
""")
    got = stats(ours, b"settings")
    assert {k: got[k] for k in FLAG_SETTINGS} == {
        "evictions": "off", "cas_enabled": "no", "flush_enabled": "no", "stat_key_prefix": "/",
        "detail_enabled": "yes", "reqs_per_event": "5", "binding_protocol": "ascii"}


# --- -M ----------------------------------------------------------------------------------

VALUE = b"v" * 1000


def fill(server):
    """Sets 1000-byte values until one is refused; (keys stored, the refusal)."""
    with Conn(server.host, server.port) as c:
        for i in range(20000):
            r = c.call(b"set k%d 0 0 %d\r\n%s\r\n" % (i, len(VALUE), VALUE))
            if r != b"STORED\r\n":
                return i, r
    pytest.fail(f"{server.name}: 20000 values of 1000 bytes stored under -m 2 -M")


def test_disable_evictions_refuses_a_store_and_keeps_what_is_stored(ithaca_factory, memcached_factory):
    ours, theirs = pair(ithaca_factory, memcached_factory, ["-M", "-m", "2"])
    outcome = {}
    for server in (ours, theirs):
        n, refusal = fill(server)
        assert n > 500, (server.name, n)
        refused_binary = binary(server, [mcwire.S(b"bk", VALUE)])
        keys = b" ".join(b"k%d" % i for i in range(0, n, max(1, n // 60)))
        got = replies(server, b"get " + keys + b"\r\n" +
                      b"ms zz 1000 T0\r\n" + VALUE + b"\r\n" +
                      b"set k0 0 0 1000\r\n" + b"w" * 1000 + b"\r\n" + b"get k0\r\n")
        values = mcwire.parse_values(got[0])
        assert len(values) == len(keys.split()) and all(v[2] == VALUE for v in values), (server.name, got[0][:200])
        # The key whose new value did not fit is gone, not left with its old value.
        # (A value of another size would not do: memcached gives a class its first
        # page over the limit, so a 2000-byte value fits in a full -m 2.)
        outcome[server.name] = (refusal, got[1:], refused_binary)
        s = stats(server)
        assert s["evictions"] == "0", server.name
        assert stats(server, b"settings")["evictions"] == "off"
    assert outcome[ours.name] == outcome[theirs.name]
    assert outcome[ours.name][0] == b"SERVER_ERROR out of memory storing object\r\n"
    assert outcome[ours.name][1][-1] == b"END\r\n"
    assert outcome[ours.name][2][0][1:] == (mcwire.ST_ENOMEM, 0, b"Out of memory allocating item")


def test_disable_evictions_still_reclaims_flushed_items(ithaca_factory, memcached_factory):
    ours, theirs = pair(ithaca_factory, memcached_factory, ["-M", "-m", "2"])
    for server in (ours, theirs):
        n, _ = fill(server)
        got = replies(server, b"flush_all\r\n" + b"".join(
            b"set n%d 0 0 %d\r\n%s\r\n" % (i, len(VALUE), VALUE) for i in range(n // 2)))
        assert got == [b"OK\r\n"] + [b"STORED\r\n"] * (n // 2), server.name


def wait_until(check, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what} within {timeout}s"
        time.sleep(0.02)


def test_a_slave_under_disable_evictions_drops_what_does_not_fit(ithaca_factory):
    """The decision for replication: a slave with -M does not evict for its
    master's sets; a set that does not fit is not stored and the slave drops
    its copy of the key, so it never serves a value the master replaced."""
    master = ithaca_factory(config_text=master_config(free_port()))
    slave = ithaca_factory(["-M", "-m", "2"], config_text=slave_config(repl_port_of(master)))
    # Synced (an empty store) before the writes: each set then reaches the slave once.
    wait_until(lambda: repl_stats(master.address)["repl_syncs_done"] == "1", "the slave synced")
    n = 3000
    replies(master, b"".join(b"set k%d 0 0 %d\r\n%s\r\n" % (i, len(VALUE), VALUE) for i in range(n)))
    wait_until(lambda: int(repl_stats(slave.address)["repl_updated"]) >= n, "the slave applied every set")
    refused = int(repl_stats(slave.address)["repl_sets_refused"])
    assert refused > 0
    keys = [b"k%d" % i for i in range(n)]
    held = dump(slave.address, keys)
    assert 0 < len(held) == n - refused
    assert all(v == (0, VALUE) for v in held.values())
    assert repl_stats(slave.address)["evictions"] == "0"
    # A key the slave holds, replaced on the master by a value that does not fit here.
    kept = min(held, key=lambda k: int(k[1:]))
    replies(master, b"set %s 0 0 2000\r\n%s\r\n" % (kept, b"w" * 2000))
    wait_until(lambda: int(repl_stats(slave.address)["repl_sets_refused"]) > refused, "the refusal")
    assert kept not in dump(slave.address, [kept])


def test_evictions_on_by_default_make_room(ithaca_factory):
    ours = ithaca_factory(["-m", "2"])
    with Conn(ours.host, ours.port) as c:
        for i in range(5000):
            assert c.call(b"set k%d 0 0 %d\r\n%s\r\n" % (i, len(VALUE), VALUE)) == b"STORED\r\n"
    assert int(stats(ours)["evictions"]) > 0
    assert stats(ours, b"settings")["evictions"] == "on"


# --- -C ----------------------------------------------------------------------------------

CAS_EXCHANGE = (
    b"set a 0 0 1\r\nx\r\n"
    b"gets a\r\n"
    b"cas a 0 0 1 0\r\ny\r\n"
    b"cas a 0 0 1 1\r\ny\r\n"
    b"cas zz 0 0 1 1\r\ny\r\n"
    b"mg a c v\r\n"
    b"ms a 1 c\r\nz\r\n"
    b"ms a 1 C0\r\nz\r\n"
    b"ms a 1 C5\r\nz\r\n"
    b"ms b 1 C5\r\nz\r\n"
    b"ms a 1 MA C5\r\nq\r\n"
    b"mg a v\r\n"
    b"set n 0 0 1\r\n5\r\n"
    b"ma n C5\r\n"
    b"ma n c\r\n"
    b"md n C5\r\n"
    b"md n C0\r\n"
    b"md n\r\n"
    b"ms a 1 I C5\r\nw\r\n"
    b"mg a v c\r\n"
    b"gats 0 a\r\n"
    b"set k 0 0 40\r\n" + b"4" * 40 + b"\r\n"
)

CAS_BINARY = [
    mcwire.S(b"k", b"v"),
    mcwire.G(b"k", op=mcwire.OP_GETK),
    mcwire.S(b"k", b"v2", cas=5),
    mcwire.S(b"k9", b"v2", cas=5),
    mcwire.pack_request(mcwire.OP_DELETE, key=b"k", cas=5),
    mcwire.pack_request(mcwire.OP_APPEND, key=b"k", value=b"zz", cas=5),
    mcwire.G(b"k"),
    mcwire.S(b"n", b"7"),
    mcwire.A(b"n", 1, cas=5),
    mcwire.A(b"n", 1),
    mcwire.T(b"k", 0, op=mcwire.OP_GAT),
]


def test_disable_cas_answers_as_memcached_does(ithaca_factory, memcached_factory):
    ours, theirs = pair(ithaca_factory, memcached_factory, ["-C"])
    got = {}
    for server in (ours, theirs):
        ascii_part = replies(server, CAS_EXCHANGE)
        binary_part = binary(server, CAS_BINARY)
        s = stats(server)
        items = {k: v for k, v in stats(server, b"items").items() if k.endswith(":number")}
        got[server.name] = (ascii_part, binary_part, {k: s[k] for k in ("cas_misses", "cas_hits", "cas_badval")},
                            items, s["bytes"])
    assert got[ours.name] == got[theirs.name]
    ascii_part, binary_part = got[ours.name][:2]
    assert ascii_part[1] == b"VALUE a 0 1 0\r\nx\r\nEND\r\n"
    assert all(cas == 0 for _, _, cas, _ in binary_part)
    # A 40-byte value is in class 1 only without the item's 8 bytes of CAS.
    assert "items:1:number" in got[ours.name][3]


def test_cas_is_on_by_default(ithaca):
    got = replies(ithaca, b"set a 0 0 1\r\nx\r\ngets a\r\n")
    assert mcwire.parse_values(got[1])[0][3] != 0
    assert binary(ithaca, [mcwire.S(b"b", b"v")])[0][2] != 0


def test_a_router_passes_its_servers_cas_through(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    router = ithaca_factory(["-C"], config_text=router_config(backend))
    got = replies(router, b"set a 0 0 1\r\nx\r\ngets a\r\n")
    cas = mcwire.parse_values(got[1])[0][3]
    assert cas != 0
    assert replies(router, b"cas a 0 0 1 %d\r\ny\r\nget a\r\n" % cas) == [b"STORED\r\n",
                                                                          b"VALUE a 0 1\r\ny\r\nEND\r\n"]


# --- -F ----------------------------------------------------------------------------------

FLUSH_EXCHANGE = (b"set a 0 0 1\r\nx\r\nflush_all\r\nflush_all 0\r\nflush_all noreply\r\n"
                  b"flush_all 10 noreply\r\nflush_all bad\r\nget a\r\n")
FLUSH_BINARY = [mcwire.pack_request(mcwire.OP_FLUSH), mcwire.pack_request(mcwire.OP_FLUSHQ),
                mcwire.pack_request(mcwire.OP_FLUSH, extras=mcwire.EXP.pack(0))]


def test_disable_flush_all_refuses_every_flush(ithaca_factory, memcached_factory):
    ours, theirs = pair(ithaca_factory, memcached_factory, ["-F"])
    got = {}
    for server in (ours, theirs):
        got[server.name] = (replies(server, FLUSH_EXCHANGE), binary(server, FLUSH_BINARY),
                            stats(server)["cmd_flush"], stats(server, b"settings")["flush_enabled"])
    assert got[ours.name] == got[theirs.name]
    ascii_part, binary_part, _, _ = got[ours.name]
    assert ascii_part[1] == b"CLIENT_ERROR flush_all not allowed\r\n"
    assert ascii_part[-1] == b"VALUE a 0 1\r\nx\r\nEND\r\n"
    assert binary_part[0][1] == 0x20 and binary_part[0][3] == b"Auth failure."


def test_flush_all_works_without_the_flag(ithaca):
    assert replies(ithaca, b"set a 0 0 1\r\nx\r\nflush_all\r\nget a\r\n") == [b"STORED\r\n", b"OK\r\n", b"END\r\n"]


def test_a_router_with_disable_flush_all_refuses_it_itself(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    router = ithaca_factory(["-F"], config_text=router_config(backend))
    assert replies(router, b"set a 0 0 1\r\nx\r\nflush_all\r\n") == [b"STORED\r\n",
                                                                     b"CLIENT_ERROR flush_all not allowed\r\n"]
    assert binary(router, [mcwire.pack_request(mcwire.OP_FLUSH)])[0][:2] == (mcwire.OP_FLUSH, 0x20)
    assert replies(backend, b"get a\r\n") == [b"VALUE a 0 1\r\nx\r\nEND\r\n"]


# --- -D ----------------------------------------------------------------------------------

DETAIL_EXCHANGE = (b"set a/1 0 0 1\r\nx\r\nset b/2 0 0 1\r\nx\r\nget a/1 a/2 b/2 c:3 d\r\ngets b/9\r\n"
                   b"delete a/1\r\nmg a/1 v\r\nincr b/2 1\r\ntouch a/1 0\r\ngat 0 b/2\r\n")


def detail_dump(server):
    """The PREFIX lines, sorted (memcached lists them in its hash order)."""
    with Conn(server.host, server.port) as c:
        c.send(b"stats detail dump\r\n")
        lines = c.read_until(b"END\r\n").split(b"\r\n")
    assert lines[-2:] == [b"END", b""], lines
    return sorted(lines[:-2])


def test_prefix_delimiter_counts_by_its_character_from_the_start(ithaca_factory, memcached_factory):
    ours, theirs = pair(ithaca_factory, memcached_factory, ["-D", "/"])
    got = {}
    for server in (ours, theirs):
        got[server.name] = (replies(server, DETAIL_EXCHANGE), detail_dump(server))
    assert got[ours.name] == got[theirs.name]
    assert got[ours.name][1] == [b"PREFIX a get 2 hit 1 set 1 del 1", b"PREFIX b get 3 hit 2 set 1 del 0"]


def test_without_the_flag_detail_is_off_and_the_delimiter_a_colon(ithaca_factory, memcached_factory):
    ours, theirs = pair(ithaca_factory, memcached_factory, [])
    got = {}
    for server in (ours, theirs):
        first = detail_dump(server)
        replies(server, b"stats detail on\r\nset p:1 0 0 1\r\nx\r\nset p/1 0 0 1\r\nx\r\n")
        got[server.name] = (first, detail_dump(server))
    assert got[ours.name] == got[theirs.name] == ([], [b"PREFIX p get 0 hit 0 set 1 del 0"])


def test_a_router_counts_prefixes_by_the_delimiter_too(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    router = ithaca_factory(["-D", "/"], config_text=router_config(backend))
    replies(router, DETAIL_EXCHANGE)
    assert detail_dump(router) == [b"PREFIX a get 2 hit 1 set 1 del 1", b"PREFIX b get 3 hit 2 set 1 del 0"]


# --- -R ----------------------------------------------------------------------------------

PIPELINE = b"".join(b"set k%d 0 0 1\r\nx\r\n" % i for i in range(50)) + b"".join(b"get k%d\r\n" % i
                                                                                 for i in range(50))


def yields(server):
    return int(stats(server)["conn_yields"])


def test_reqs_per_event_answers_a_pipeline_whole_and_yields(ithaca_factory, memcached_factory):
    ours, theirs = pair(ithaca_factory, memcached_factory, ["-R", "1"])
    got = {}
    for server in (ours, theirs):
        got[server.name] = replies(server, PIPELINE)
        assert yields(server) > 0, server.name
    assert got[ours.name] == got[theirs.name]
    assert len(got[ours.name]) == 100 and got[ours.name][-1] == b"VALUE k49 0 1\r\nx\r\nEND\r\n"


def test_a_pipeline_shorter_than_reqs_per_event_does_not_yield(ithaca):
    before = yields(ithaca)
    assert len(replies(ithaca, b"".join(b"get k%d\r\n" % i for i in range(10)))) == 10
    assert yields(ithaca) == before


def test_a_router_with_reqs_per_event_answers_in_full_and_yields(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    router = ithaca_factory(["-R", "1"], config_text=router_config(backend))
    got = replies(router, PIPELINE)
    assert got == replies(backend, PIPELINE)
    assert yields(router) > 0


# --- -B ----------------------------------------------------------------------------------

def raw_answer(server, data, wait=1.0):
    """What the server sends back to `data` within `wait` s, and whether it
    closed the connection."""
    with Conn(server.host, server.port) as c:
        c.send(data)
        closed = c.is_closed(wait)
        return bytes(c.buf), closed


BINARY_GET_NOOP = mcwire.G(b"k") + mcwire.pack_request(mcwire.OP_NOOP)  # the Noop's opcode is '\n'


def test_binding_ascii_reads_a_binary_packet_as_a_bad_command(ithaca_factory, memcached_factory):
    ours, theirs = pair(ithaca_factory, memcached_factory, ["-B", "ascii"])
    got = {}
    for server in (ours, theirs):
        got[server.name] = (raw_answer(server, BINARY_GET_NOOP), replies(server, b"mn\r\nset a 0 0 1\r\nx\r\n"))
    assert got[ours.name] == got[theirs.name]
    assert got[ours.name][0] == (b"ERROR\r\n", False)
    assert got[ours.name][1] == [b"MN\r\n", b"STORED\r\n"]


def test_binding_binary_refuses_text(ithaca_factory, memcached_factory):
    ours, theirs = pair(ithaca_factory, memcached_factory, ["-B", "binary"])
    got = {}
    for server in (ours, theirs):
        got[server.name] = (raw_answer(server, b"get k\r\n"),  # under a header's 24 bytes: waits
                            raw_answer(server, b"get kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\r\n"),
                            binary(server, [mcwire.G(b"k")]))
    assert got[ours.name] == got[theirs.name]
    assert got[ours.name][0] == (b"", False)
    assert got[ours.name][1] == (b"", True)


def test_an_invalid_binding_is_refused_with_memcacheds_words(memcached_factory):
    from conftest import ithaca_binary
    path, _ = ithaca_binary()
    ours = subprocess.run([path, "-B", "foo"], capture_output=True, text=True, timeout=10)
    theirs = subprocess.run(["memcached", *root_args(), "-B", "foo"], capture_output=True, text=True, timeout=10)
    assert theirs.returncode == 64 and "Invalid value for binding protocol: foo" in theirs.stderr
    assert ours.returncode != 0
    assert "Invalid value for binding protocol: foo -- should be one of auto, binary, or ascii" in ours.stderr


def test_a_router_binds_its_clients_protocol_too(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    router = ithaca_factory(["-B", "ascii"], config_text=router_config(backend))
    assert raw_answer(router, BINARY_GET_NOOP) == (b"ERROR\r\n", False)


# --- stats cachedump, -X ------------------------------------------------------------------

def load_200(server):
    # Alternate no expiry and one 10^6 s out, as relative seconds.
    replies(server, b"".join(b"set key%d 0 %d 10\r\n0123456789\r\n" % (i, 0 if i % 2 else 1000000)
                             for i in range(200)))


ITEM = re.compile(rb"ITEM (\S+) \[(\d+) b; (\d+) s\]\r\n")


def cachedump(server, cls, limit):
    got = replies(server, b"stats cachedump %d %d\r\n" % (cls, limit))
    assert len(got) == 1 and got[0].endswith(b"END\r\n"), got
    body = got[0][:-len(b"END\r\n")]
    items = ITEM.findall(body)
    assert b"".join(b"ITEM %s [%s b; %s s]\r\n" % i for i in items) == body, body[:300]
    return [(k, int(n), int(t)) for k, n, t in items]


def same_items(ours, theirs):
    assert [(k, n) for k, n, _ in ours] == [(k, n) for k, n, _ in theirs]
    for (k, _, t1), (_, _, t2) in zip(ours, theirs):
        assert (t1 == 0) == (t2 == 0) and abs(t1 - t2) <= 2, (k, t1, t2)


def test_stats_cachedump_lists_a_class_as_memcached_does(ithaca_factory, memcached_factory):
    # memcached lists its COLD LRU only; segmented, it keeps the newest items in
    # HOT for a while (its LRU maintainer's timing). Without the maintainer its
    # LRU is not segmented (what `stats settings` says of ithaca:
    # lru_maintainer_thread no, lru_segmented no) and every item is in COLD.
    ours, theirs = ithaca_factory(), memcached_factory(["-o", "no_lru_maintainer"])
    for server in (ours, theirs):
        load_200(server)
    classes = {s.name: {k for k in stats(s, b"items") if k.endswith(":number")} for s in (ours, theirs)}
    assert classes[ours.name] == classes[theirs.name] == {"items:1:number"}
    every = cachedump(ours, 1, 0)
    same_items(every, cachedump(theirs, 1, 0))
    assert len(every) == 200 and every[0][0] == b"key199"  # the newest first
    assert abs(every[1][2] - (time.time() + 1000000)) < 10 and every[0][2] == 0
    same_items(cachedump(ours, 1, 5), cachedump(theirs, 1, 5))
    for cls in (0, 2, 63):
        assert cachedump(ours, cls, 0) == cachedump(theirs, cls, 0) == []
    bad = (b"stats cachedump 1\r\nstats cachedump\r\nstats cachedump x 1\r\nstats cachedump 1 x\r\n"
           b"stats cachedump 64 1\r\nstats cachedump -1 1\r\nstats cachedump 1 -1\r\n")
    assert replies(ours, bad) == replies(theirs, bad)


def test_stats_cachedump_stops_short_of_memcacheds_2_mb(ithaca_factory, memcached_factory):
    ours, theirs = ithaca_factory(), memcached_factory(["-o", "no_lru_maintainer"])
    pad = b"p" * 190
    for server in (ours, theirs):
        replies(server, b"".join(b"set %s%05d 0 0 10\r\n0123456789\r\n" % (pad, i) for i in range(12000)))
    classes = {s.name: [k for k in stats(s, b"items") if k.endswith(":number")] for s in (ours, theirs)}
    assert classes[ours.name] == classes[theirs.name] and len(classes[ours.name]) == 1
    cls = int(classes[ours.name][0].split(":")[1])
    every = cachedump(ours, cls, 0)
    same_items(every, cachedump(theirs, cls, 0))
    assert 8000 < len(every) < 12000  # 2 MB of 220-byte lines: the newest ones
    assert every[0][0] == pad + b"11999"


def test_disable_dumping_refuses_cachedump_and_detail(ithaca_factory, memcached_factory):
    ours, theirs = pair(ithaca_factory, memcached_factory, ["-X"])
    exchange = b"stats cachedump 1 1\r\nstats cachedump\r\n"
    assert replies(ours, exchange) == replies(theirs, exchange) == [
        b"CLIENT_ERROR stats cachedump not allowed\r\n"] * 2
    # memcached 1.6.45 refuses stats detail under -X too (1.6.18 did not).
    assert replies(ours, b"stats detail dump\r\nstats detail on\r\n") == [
        b"CLIENT_ERROR stats detail not allowed\r\n"] * 2
    assert binary(ours, [mcwire.pack_request(mcwire.OP_STAT, key=b"detail dump")])[0][1] == mcwire.ST_KEY_ENOENT


def test_a_router_asks_its_pools_for_the_cachedump(ithaca_factory, memcached_factory):
    backend = memcached_factory(["-o", "no_lru_maintainer"])  # a dump that stays put (above)
    router = ithaca_factory(config_text=router_config(backend))
    load_200(backend)
    assert cachedump(router, 1, 0) == cachedump(backend, 1, 0)
    assert cachedump(router, 1, 3) == cachedump(backend, 1, 3)
    x_router = ithaca_factory(["-X"], config_text=router_config(backend))
    assert replies(x_router, b"stats cachedump 1 1\r\n") == [b"CLIENT_ERROR stats cachedump not allowed\r\n"]
