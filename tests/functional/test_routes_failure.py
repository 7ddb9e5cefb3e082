"""Route trees under failure and change: one of three servers killed under a
get/set load with and without a gutter pool (the Facebook memcache paper's
gutter removed 99% of client-visible errors), and SIGHUP swapping route trees
under load with no wrong reply."""

import random
import signal
import threading
import time

import pytest

import mcwire
from test_ascii_diff import SERVER_ARGS
from test_reload import config_path_of
from test_router import addr, stats, wait_for
from test_routes import routes_yaml


def load(address, keys, seconds):
    """Sets and gets over `keys` for `seconds`; counts replies by kind. Each
    key's value is derived from the key, so any VALUE must be that value."""
    counts = {"ok": 0, "errors": 0, "wrong": 0}
    end = time.monotonic() + seconds
    rng = random.Random(7)
    with mcwire.Conn(*address) as conn:
        while time.monotonic() < end:
            k = rng.choice(keys)
            v = b"v-" + k
            if rng.random() < 0.3:
                r = conn.call(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v))
                kind = "ok" if r == b"STORED\r\n" else "errors" if r.startswith(b"SERVER_ERROR") else "wrong"
            else:
                r = conn.call(b"get %s\r\n" % k)
                good = (b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(v), v), b"END\r\n")
                kind = "ok" if r in good else "errors" if r.startswith(b"SERVER_ERROR") else "wrong"
            counts[kind] += 1
    return counts


def test_a_gutter_pool_hides_a_dead_server_from_clients(ithaca_factory, memcached_factory):
    servers = [memcached_factory(args=SERVER_ARGS) for _ in range(3)]
    gutter = memcached_factory(args=SERVER_ARGS)
    pools = {"main": [addr(s) for s in servers], "gutter": [addr(gutter)]}
    plain = ithaca_factory(config_text=routes_yaml(pools, "pool:main"))
    guarded = ithaca_factory(config_text=routes_yaml(
        pools, "{type: failover_exptime, normal: pool:main, failover: [pool:gutter], exptime: 10s}"))
    keys = [b"user:%d" % i for i in range(300)]
    for server in (plain, guarded):
        assert load(server.address, keys, 0.3)["errors"] == 0
    # memcached exits at SIGTERM (status 0: not a crash at teardown); its
    # keys then fail fast in the main pool, as a killed server's do.
    servers[1].proc.send_signal(signal.SIGTERM)
    servers[1].proc.wait(10)
    without = load(plain.address, keys, 1.5)
    with_gutter = load(guarded.address, keys, 1.5)
    assert without["wrong"] == 0 and with_gutter["wrong"] == 0, (without, with_gutter)
    # About a third of the keys live on the dead server.
    total = without["ok"] + without["errors"]
    assert without["errors"] > total * 0.15, without
    # The gutter takes them: at most 1% of the errors the plain pool shows.
    assert with_gutter["errors"] <= without["errors"] * 0.01, (without, with_gutter)
    # What went to the gutter expires there (10 s at most).
    with mcwire.Conn(gutter.host, gutter.port) as c:
        items = int(mcwire.parse_stats(c.call(b"stats\r\n"))["curr_items"])
    assert items > 0


def test_sighup_swaps_route_trees_under_load_with_no_wrong_reply(ithaca_factory, memcached_factory):
    a, b = (memcached_factory(args=SERVER_ARGS) for _ in range(2))
    pools = {"a": [addr(a)], "b": [addr(b)]}
    # Every tree sends keys k... to pool a for reads and writes.
    info = "logging:\n  level: info\n"
    trees = [
        info + routes_yaml(pools, "{type: failover, children: [pool:a, pool:b]}"),
        info + routes_yaml(pools, '{type: prefix, prefixes: {"k": pool:a}, default: pool:b}'),
        info + routes_yaml(pools, "{type: operation, get: {type: miss_failover, children: [pool:a, pool:b]},"
                           " set: {type: all_sync, children: [pool:a, pool:b]}, default: pool:a}"),
    ]
    server = ithaca_factory(config_text=trees[0])
    results = []
    failures = []

    def client(seed):
        rng = random.Random(seed)
        try:
            with mcwire.Conn(*server.address) as conn:
                end = time.monotonic() + 2.5
                n = 0
                while time.monotonic() < end:
                    k = b"k%d-%d" % (seed, rng.randrange(50))
                    v = b"%d" % rng.randrange(10**9)
                    assert conn.call(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v)) == b"STORED\r\n"
                    got = conn.call(b"get %s\r\n" % k)
                    assert got == b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(v), v), (k, v, got)
                    n += 1
                results.append(n)
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            failures.append(repr(e))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    reloads = 0
    end = time.monotonic() + 2.2
    while time.monotonic() < end:
        reloads += 1
        with open(config_path_of(server), "w") as f:
            f.write(trees[reloads % len(trees)])
        server.proc.send_signal(signal.SIGHUP)
        time.sleep(0.05)
    for t in threads:
        t.join(10)
    assert not failures, failures
    assert len(results) == 4 and min(results) > 20, results
    applied = server.log.count("is valid; applied")
    assert applied >= 5, server.log[-2000:]
    with mcwire.Conn(*server.address) as conn:
        assert stats(conn)["curr_connections"]


def test_clients_leaving_mid_flight_through_composite_routes(ithaca_factory, memcached_factory):
    """Clients that close with requests still out through every composite
    (children, stragglers, detached copies and failovers in flight): the
    server frees what they left (checked under the sanitizers) and keeps
    serving; the writes still reach every replica."""
    from fake_backend import FakeBackend
    fast = memcached_factory(args=SERVER_ARGS)
    slow = FakeBackend("forward", target=(fast.host, fast.port), delay=0.3)
    hung = FakeBackend("hang")
    try:
        pools = {"fast": [addr(fast)], "slow": [slow.address], "hung": [hung.address]}
        text = routes_yaml(pools, '{type: prefix, prefixes: {'
                                  '"s:": {type: all_sync, children: [pool:fast, pool:slow]},'
                                  ' "f:": {type: all_fastest, children: [pool:slow, pool:fast]},'
                                  ' "m:": {type: all_majority, children: [pool:fast, pool:fast, pool:slow]},'
                                  ' "a:": {type: all_async, children: [pool:slow, pool:fast]},'
                                  ' "o:": {type: failover, children: [pool:hung, pool:slow]},'
                                  ' "n:": {type: miss_failover, children: [pool:slow, pool:fast]}},'
                                  ' default: pool:fast}')
        server = ithaca_factory(config_text=text.replace("timeout: 5s", "timeout: 500ms"))
        for round_ in range(3):
            conns = []
            for i in range(6):
                c = mcwire.Conn(*server.address)
                c.send(b"".join(b"set %s:%d-%d 0 0 1\r\nv\r\nget %s:%d-%d %s:x\r\n" % (p, round_, i, p, round_, i, p)
                                for p in (b"s", b"f", b"m", b"a", b"o", b"n")))
                conns.append(c)
            time.sleep(0.05)
            for c in conns:
                c.close()  # with most replies still to come
        with mcwire.Conn(*server.address) as conn:
            # (The slow pool, 0.3 s a reply in turn, is timing out by now.)
            assert conn.call(b"set after 0 0 1\r\nv\r\n") == b"STORED\r\n"
            assert conn.call(b"get f:after\r\n") == b"END\r\n"
            st = route_stats_all(conn)
            wait_for(lambda: int(route_stats_all(conn)["async_in_flight"]) == 0, what="background requests to end")
        # A straggler's or a detached write reached the fast replica.
        wait_for(lambda: direct_value(fast, b"f:2-5") == b"v" and direct_value(fast, b"a:2-5") == b"v",
                 what="the writes of the clients that left")
        assert int(st["async_dropped"]) == 0
    finally:
        slow.close()
        hung.close()


def route_stats_all(conn):
    return stats(conn, "routes")


def direct_value(server, key):
    with mcwire.Conn(server.host, server.port) as c:
        values = mcwire.parse_values(c.call(b"get " + key + b"\r\n"))
    return values[0][2] if values else None


def multiget(address, keys):
    """{key: value} of one text get of `keys` (misses absent)."""
    with mcwire.Conn(*address) as conn:
        conn.send(b"get " + b" ".join(keys) + b"\r\n")
        reply = conn.read_until(b"END\r\n")
    found = {}
    at = 0
    while not reply.startswith(b"END\r\n", at):
        line_end = reply.index(b"\r\n", at)
        _, key, _, size = reply[at:line_end].split(b" ")
        start = line_end + 2
        found[key] = reply[start:start + int(size)]
        at = start + int(size) + 2
    return found


@pytest.mark.parametrize("tree", [
    "{type: failover_exptime, normal: pool:main, failover: [pool:gutter], exptime: 10s}",
    "{type: failover, children: [pool:main, pool:gutter]}",
])
def test_a_multiget_fails_over_only_the_keys_of_the_dead_server(ithaca_factory, memcached_factory, tree):
    # A batch of 100 keys over three servers, one of them dead: the keys of
    # the two that answer are hits, whatever the batch holds; only the dead
    # server's keys go to the gutter (misses there until written again).
    servers = [memcached_factory(args=SERVER_ARGS) for _ in range(3)]
    gutter = memcached_factory(args=SERVER_ARGS)
    router = ithaca_factory(config_text=routes_yaml(
        {"main": [addr(s) for s in servers], "gutter": [addr(gutter)]}, tree))
    keys = [b"user:%d" % i for i in range(300)]
    with mcwire.Conn(*router.address) as conn:
        for k in keys:
            assert conn.call(b"set %s 0 0 %d\r\nv-%s\r\n" % (k, len(k) + 2, k)) == b"STORED\r\n"
    on_dead = set(multiget((servers[1].host, servers[1].port), keys))
    assert 50 < len(on_dead) < 150, len(on_dead)
    servers[1].proc.send_signal(signal.SIGTERM)
    servers[1].proc.wait(10)
    for batch in (keys[0:100], keys[100:200], keys[200:300]):
        got = multiget(router.address, batch)
        assert got == {k: b"v-" + k for k in batch if k not in on_dead}, sorted(set(batch) - set(got) - on_dead)
    # Written again, the dead server's keys land in the gutter and are read back from it.
    with mcwire.Conn(*router.address) as conn:
        for k in sorted(on_dead):
            assert conn.call(b"set %s 0 0 %d\r\nv-%s\r\n" % (k, len(k) + 2, k)) == b"STORED\r\n"
    for batch in (keys[0:100], keys[100:200], keys[200:300]):
        assert multiget(router.address, batch) == {k: b"v-" + k for k in batch}
    assert len(multiget((gutter.host, gutter.port), keys)) == len(on_dead)
