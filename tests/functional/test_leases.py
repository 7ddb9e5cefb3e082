"""Leases: mcrouter's lease-get / lease-set, and the meta protocol's N/W/Z,
I/X/W and R flags, against stale sets and thundering herds (Facebook's
"Scaling Memcache at Facebook", section 3.2.1).

lease-get wire format (ithaca; after mcrouter):
  hit                VALUE <key> <flags> <bytes>\\r\\n<data>\\r\\nEND\\r\\n
  miss, token        LVALUE <key> <token> <flags> <bytes>\\r\\n<data>\\r\\nEND\\r\\n
  miss, wait         the same with token 1
No memcached oracle here: memcached has no ascii leases.
"""

import os
import threading
import time

import pytest

import mcwire

pytestmark = pytest.mark.skipif(os.environ.get("ITHACA_BIN") == "memcached",
                                reason="memcached has no ascii leases")

WAIT = 1
HERD = 100
ITHACA_ARGS = ["-v"]  # the fixture waits for the info-level "listening on" line


def start(ithaca_factory, lease_interval="10s"):
    return ithaca_factory(args=ITHACA_ARGS, config_text=f"cache:\n  lease_interval: {lease_interval}\n")


def read_lease_reply(c):
    """('value', flags, data) for a hit, ('lease', token, flags, data) for
    LVALUE, ('miss',) for a bare END."""
    line = c.read_line()
    if line == b"END\r\n":
        return ("miss",)
    parts = line.split()
    if parts[0] == b"VALUE":
        data = c.read_exact(int(parts[3]) + 2)[:-2]
        assert c.read_line() == b"END\r\n"
        return ("value", int(parts[2]), data)
    assert parts[0] == b"LVALUE", line
    data = c.read_exact(int(parts[4]) + 2)[:-2]
    assert c.read_line() == b"END\r\n"
    return ("lease", int(parts[2]), int(parts[3]), data)


def lease_get(c, key):
    c.send(b"lease-get " + key + b"\r\n")
    return read_lease_reply(c)


def lease_set(c, key, token, data, flags=0, exptime=0):
    return c.call(b"lease-set %s %d %d %d %d\r\n%s\r\n" % (key, token, flags, exptime, len(data), data))


def stats(c):
    return mcwire.parse_stats(c.call(b"stats\r\n"))


# --- (1) the stale-set race --------------------------------------------------


@pytest.mark.parametrize("writer", ["set", "delete"])
def test_stale_set_is_refused(ithaca_factory, writer):
    s = start(ithaca_factory)
    with mcwire.Conn(*s.address) as a, mcwire.Conn(*s.address) as b:
        kind, token, _flags, data = lease_get(a, b"k")
        assert kind == "lease" and token > 2 and data == b""
        # B updates the database and the cache before A's (older) fill lands.
        if writer == "set":
            assert b.call(b"ms k 3\r\nnew\r\n") == b"HD\r\n"
        else:
            assert b.call(b"md k\r\n") == b"NF\r\n"  # the lease is not an item
        assert lease_set(a, b"k", token, b"old") == b"NOT_STORED\r\n"
        if writer == "set":
            assert b.call(b"mg k v\r\n") == b"VA 3\r\nnew\r\n"
        else:
            assert b.call(b"mg k v\r\n") == b"EN\r\n"
            # The next reader gets a fresh lease and fills.
            kind, token2, _flags, _data = lease_get(b, b"k")
            assert kind == "lease" and token2 not in (token, 0, 1, 2)
            assert lease_set(b, b"k", token2, b"fresh", flags=7) == b"STORED\r\n"
            assert lease_get(a, b"k") == ("value", 7, b"fresh")
        assert stats(a)["lease_sets_refused"] == "1"


def test_lease_set_stores_once(ithaca_factory):
    s = start(ithaca_factory)
    with mcwire.Conn(*s.address) as c:
        _kind, token, _f, _d = lease_get(c, b"k")
        assert lease_set(c, b"k", token, b"v1") == b"STORED\r\n"
        # The token was consumed: a second fill with it is a stale set.
        assert lease_set(c, b"k", token, b"v2") == b"NOT_STORED\r\n"
        assert lease_get(c, b"k") == ("value", 0, b"v1")
        # noreply
        c.send(b"lease-set k %d 0 0 2 noreply\r\nv3\r\n" % token)
        assert c.call(b"mg k v\r\n") == b"VA 2\r\nv1\r\n"


# --- (2) thundering herd -----------------------------------------------------


def _herd(server, key, client_loop):
    """Runs client_loop(conn, results, i, asked) in HERD threads, each on its
    own connection, that all send their first request at once (a barrier).
    client_loop calls asked.wait() after its first reply, so that no client
    fills before every client has asked once: the herd is all there."""
    barrier = threading.Barrier(HERD)
    asked = threading.Barrier(HERD)
    results = [None] * HERD
    errors = []

    def run(i):
        try:
            with mcwire.Conn(*server.address, timeout=20) as c:
                barrier.wait(20)
                client_loop(c, results, i, asked)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"client {i}: {e!r}")
            barrier.abort()
            asked.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(HERD)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:5]
    assert all(not t.is_alive() for t in threads)
    return results


def test_thundering_herd_lease_get(ithaca_factory):
    s = start(ithaca_factory)
    fills = []
    lock = threading.Lock()

    def client(c, results, i, asked):
        first = lease_get(c, b"hot")
        asked.wait(20)
        got = first
        # Back off and retry while told to wait (bounded: 20 s in all).
        deadline = time.monotonic() + 20
        while got[0] == "lease" and got[1] == WAIT:
            assert time.monotonic() < deadline, "still waiting"
            time.sleep(0.005)
            got = lease_get(c, b"hot")
        if got[0] == "lease":
            with lock:
                fills.append(i)  # this client goes to the database
            assert lease_set(c, b"hot", got[1], b"from-db") == b"STORED\r\n"
            got = lease_get(c, b"hot")
        results[i] = (first, got)

    results = _herd(s, b"hot", client)
    assert len(fills) == 1, f"{len(fills)} fills, expected one"
    firsts = [r[0] for r in results]
    tokens = [f for f in firsts if f[0] == "lease" and f[1] != WAIT]
    waits = [f for f in firsts if f[0] == "lease" and f[1] == WAIT]
    assert len(tokens) == 1 and len(waits) == HERD - 1, firsts
    assert all(r[1] == ("value", 0, b"from-db") for r in results)
    with mcwire.Conn(*s.address) as c:
        st = stats(c)
    assert st["lease_tokens_issued"] == "1"
    assert int(st["lease_waits"]) >= HERD - 1


def test_thundering_herd_meta_vivify(ithaca_factory):
    s = start(ithaca_factory)
    fills = []
    lock = threading.Lock()

    def client(c, results, i, asked):
        first = c.call(b"mg hot N30 v c\r\n")
        asked.wait(20)
        head = first.split(b"\r\n")[0].split()
        if head[-1] == b"W":
            with lock:
                fills.append(i)
            cas = next(t for t in head if t.startswith(b"c"))[1:]
            assert c.call(b"ms hot 7 C%s T60\r\nfrom-db\r\n" % cas) == b"HD\r\n"
        deadline = time.monotonic() + 20
        got = c.call(b"mg hot v\r\n")
        while got != b"VA 7\r\nfrom-db\r\n":
            # Z: someone else is filling; the value so far is the empty placeholder.
            assert got.startswith(b"VA 0 Z"), got
            assert time.monotonic() < deadline, "still waiting"
            time.sleep(0.005)
            got = c.call(b"mg hot v\r\n")
        results[i] = head

    results = _herd(s, b"hot", client)
    assert len(fills) == 1, f"{len(fills)} fills, expected one"
    assert sum(1 for h in results if h[-1] == b"W") == 1
    assert sum(1 for h in results if h[-1] == b"Z") == HERD - 1


# --- (3) meta N/W/Z, I/X/W, R with concurrent clients -------------------------


def _concurrent_calls(server, request, n=20):
    """Sends request from n connections at once; returns the replies."""
    conns = [mcwire.Conn(*server.address) for _ in range(n)]
    try:
        for c in conns:
            c.send(request)
        return [c.read_reply() for c in conns]
    finally:
        for c in conns:
            c.close()


def test_invalidate_one_winner(ithaca_factory):
    s = start(ithaca_factory)
    with mcwire.Conn(*s.address) as c:
        assert c.call(b"ms k 3 T100\r\nold\r\n") == b"HD\r\n"
        assert c.call(b"md k I T30\r\n") == b"HD\r\n"
    replies = _concurrent_calls(s, b"mg k v\r\n")
    assert sorted(replies) == sorted([b"VA 3 X W\r\nold\r\n"] + [b"VA 3 Z X\r\nold\r\n"] * 19)
    with mcwire.Conn(*s.address) as c:
        # An older writer (lower CAS) stores but stays stale; the winner's write is fresh.
        assert c.call(b"ms k 3 I C1\r\nmid\r\n") == b"HD\r\n"
        assert c.call(b"mg k v\r\n") == b"VA 3 Z X\r\nmid\r\n"
        assert c.call(b"ms k 3\r\nnew\r\n") == b"HD\r\n"
        assert c.call(b"mg k v\r\n") == b"VA 3\r\nnew\r\n"
        # ms I on the fresh item: a stale CAS makes it stale again, and one reader wins.
        cas = int(c.call(b"mg k c\r\n").split()[1][1:])
        assert c.call(b"ms k 3 I C%d\r\nbad\r\n" % (cas - 1)) == b"HD\r\n"
    replies = _concurrent_calls(s, b"mg k v\r\n")
    assert sorted(replies) == sorted([b"VA 3 X W\r\nbad\r\n"] + [b"VA 3 Z X\r\nbad\r\n"] * 19)


def test_vivify_one_winner(ithaca_factory):
    s = start(ithaca_factory)
    replies = _concurrent_calls(s, b"mg k N30 s\r\n")
    assert sorted(replies) == sorted([b"HD s0 W\r\n"] + [b"HD s0 Z\r\n"] * 19)


def test_recache_one_winner(ithaca_factory):
    s = start(ithaca_factory)
    with mcwire.Conn(*s.address) as c:
        assert c.call(b"ms k 1 T100\r\nx\r\n") == b"HD\r\n"
        assert c.call(b"mg k R30 v\r\n") == b"VA 1\r\nx\r\n"  # TTL above the bound
    replies = _concurrent_calls(s, b"mg k R300 v\r\n")
    assert sorted(replies) == sorted([b"VA 1 W\r\nx\r\n"] + [b"VA 1 Z\r\nx\r\n"] * 19)


# --- (4) tokens that were never issued ---------------------------------------


def test_unissued_tokens_are_refused(ithaca_factory):
    s = start(ithaca_factory)
    with mcwire.Conn(*s.address) as c:
        for token in (0, WAIT, 2, 123456789, (1 << 64) - 1, 1 << 63):
            assert lease_set(c, b"k", token, b"x") == b"NOT_STORED\r\n", token
        assert c.call(b"mg k v\r\n") == b"EN\r\n"
        # A lease outstanding on the key: a wrong token, or another key's token, fails too.
        _kind, token, _f, _d = lease_get(c, b"k")
        _kind, other, _f, _d = lease_get(c, b"j")
        assert lease_set(c, b"k", token + 1, b"x") == b"NOT_STORED\r\n"
        assert lease_set(c, b"k", other, b"x") == b"NOT_STORED\r\n"
        assert lease_set(c, b"k", token, b"ok") == b"STORED\r\n"
        assert lease_get(c, b"k") == ("value", 0, b"ok")
        assert stats(c)["lease_sets_refused"] == "8"


# --- lease interval and stale values ------------------------------------------


def test_new_token_after_lease_interval(ithaca_factory):
    s = start(ithaca_factory, lease_interval="200ms")
    with mcwire.Conn(*s.address) as c:
        _kind, first, _f, _d = lease_get(c, b"k")
        assert lease_get(c, b"k")[:2] == ("lease", WAIT)
        deadline = time.monotonic() + 5
        while True:
            got = lease_get(c, b"k")
            if got[1] != WAIT:
                break
            assert time.monotonic() < deadline
            time.sleep(0.05)
        second = got[1]
        assert second not in (first, 0, 1, 2)
        # The first holder took too long: its fill is refused, the new one stores.
        assert lease_set(c, b"k", first, b"late") == b"NOT_STORED\r\n"
        assert lease_set(c, b"k", second, b"fresh") == b"STORED\r\n"


def test_stale_value_with_lease(ithaca_factory):
    s = start(ithaca_factory)
    with mcwire.Conn(*s.address) as a, mcwire.Conn(*s.address) as b:
        assert a.call(b"ms k 5 F3\r\nstale\r\n") == b"HD\r\n"
        assert a.call(b"md k I\r\n") == b"HD\r\n"
        kind, token, flags, data = lease_get(a, b"k")
        assert (kind, flags, data) == ("lease", 3, b"stale") and token > 2
        assert lease_get(b, b"k") == ("lease", WAIT, 3, b"stale")
        assert lease_set(a, b"k", token, b"fresh") == b"STORED\r\n"
        assert lease_get(b, b"k") == ("value", 0, b"fresh")
        # Once refilled, the stale token is spent.
        assert lease_set(a, b"k", token, b"again") == b"NOT_STORED\r\n"
        # A stale token loses to a write in between.
        assert a.call(b"md k I\r\n") == b"HD\r\n"
        _kind, token, _f, _d = lease_get(a, b"k")
        assert b.call(b"ms k 3\r\nnew\r\n") == b"HD\r\n"
        assert lease_set(a, b"k", token, b"old") == b"NOT_STORED\r\n"
        assert lease_get(b, b"k") == ("value", 0, b"new")


def test_lease_get_large_value(ithaca_factory):
    s = start(ithaca_factory)
    big = b"x" * 300_000  # above the default large_value_threshold (256k): kept in a file
    with mcwire.Conn(*s.address) as c:
        _kind, token, _f, _d = lease_get(c, b"big")
        assert lease_set(c, b"big", token, big) == b"STORED\r\n"
        assert lease_get(c, b"big") == ("value", 0, big)
        assert c.call(b"mg big s v\r\n") == b"VA 300000 s300000\r\n" + big + b"\r\n"
