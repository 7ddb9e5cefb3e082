"""Route objects among a pool's servers (mcrouter's makePool: an object in
`servers` is built by the route factory and takes that place among the
pool's destinations, in hashing too), served by ithaca in front of real
memcacheds, with `stats servers` in mcrouter's form (one line per
destination, HOST:PORT:ascii:plain:notcompressed-TIMEOUT).

  mcrouter/test/test_mcrouter.py TestPoolServerErrors (its config,
      mcrouter_corpus/test_pool_server_errors.json): placement and replies
      of a pool [mc1, ErrorRoute, mc3] under HashRoute, a pool of one
      ErrorRoute, and two destinations in `stats servers`.
plus a PoolRoute over such a pool (placed by Ch3 over its three places, as
a Python furc written apart from the C++ says), one with WeightedCh3
weights that give the route object no key, and a route object that is
itself a PoolRoute."""
import json
import re
import time

from conftest import HOST, free_port
from mcrouter_hash import furc_hash
from mcwire import Conn, parse_stats
from test_router import start_memcached_on
from test_routes_mcrouter_c import get, serve, set_

KEYS = ["k%d" % i for i in range(60)]


def servers_stats(router):
    with Conn(router.host, router.port) as c:
        return parse_stats(c.call(b"stats servers\r\n"))


def test_pool_server_errors(tmp_path, ithaca_factory, memcached_factory):
    """mcrouter's TestPoolServerErrors, through ithaca: /a/a/ is "Pool|A"
    (its one destination an ErrorRoute), /b/b/ a HashRoute over Pool|B =
    [mc1, ErrorRoute, mc3]: `abc` goes to mc1, `a` to the ErrorRoute (the
    set fails and reaches no server), `ab` to mc3."""
    router, mc = serve("test_pool_server_errors.json", tmp_path, ithaca_factory, memcached_factory,
                       args=["--route-prefix", "/a/a/"])
    mc1, mc3 = mc["12345"], mc["12346"]
    with Conn(router.host, router.port) as c:
        reply = c.call(b"get test\r\n")
    assert reply.startswith(b"SERVER_ERROR"), reply

    stats = servers_stats(router)
    assert len(stats) == 2, stats  # mc1 and mc3; the ErrorRoute is no destination
    for server in (mc1, mc3):
        assert f"{HOST}:{server.port}:ascii:plain:notcompressed-1000" in stats, stats

    assert set_(router, "/b/b/abc", "valueA") == b"STORED\r\n"
    assert get(mc1, "abc") == "valueA"
    reply = set_(router, "/b/b/a", "valueB")
    assert reply.startswith(b"SERVER_ERROR"), reply
    assert get(mc1, "a") is None and get(mc3, "a") is None
    assert set_(router, "/b/b/ab", "valueC") == b"STORED\r\n"
    assert get(mc3, "ab") == "valueC"
    # The places as mcrouter's Ch3 over three destinations gives them.
    assert [furc_hash(k.encode(), 3) for k in ("abc", "a", "ab")] == [0, 1, 2]


def mixed_pool(hash_=None, weights=None, middle=None):
    pool = {"servers": ["localhost:12345", middle or {"type": "ErrorRoute", "response": "from the middle"},
                        "localhost:12346"]}
    if weights is not None:
        pool["weights"] = weights
    route = {"type": "PoolRoute", "pool": "B"}
    if hash_ is not None:
        route["hash"] = hash_
    return {"pools": {"B": pool, "C": {"servers": ["localhost:12347"]}}, "route": route}


def test_pool_route_places_keys_over_every_place(tmp_path, ithaca_factory, memcached_factory):
    """A PoolRoute over [mc1, ErrorRoute, mc3]: Ch3 over three places, the
    route object's keys answered by it, the others stored on their server
    and read back through the router (also as one multi-key get)."""
    text = json.dumps(mixed_pool())
    router, mc = serve("mixed.json", tmp_path, ithaca_factory, memcached_factory, text=text)
    places = [mc["12345"], None, mc["12346"]]
    hits = [0, 0, 0]
    for k in KEYS:
        at = furc_hash(k.encode(), 3)
        hits[at] += 1
        reply = set_(router, k, "v-" + k)
        if places[at] is None:
            assert reply == b"SERVER_ERROR from the middle\r\n", (k, reply)
            assert all(get(s, k) is None for s in places if s is not None), k
        else:
            assert reply == b"STORED\r\n", (k, reply)
            assert get(places[at], k) == "v-" + k
            assert get(router, k) == "v-" + k
    assert min(hits) > 0, hits  # every place took keys
    stored = [k for k in KEYS if furc_hash(k.encode(), 3) != 1]
    with Conn(router.host, router.port) as c:
        reply = c.call(("get " + " ".join(stored) + "\r\n").encode())
    assert re.findall(rb"VALUE (\S+) ", reply) == [k.encode() for k in stored], reply


def test_weighted_ch3_gives_the_route_object_its_weight(tmp_path, ithaca_factory, memcached_factory):
    """WeightedCh3 weights [1, 0, 1]: the ErrorRoute's place keeps none of
    its keys (they go to the servers), so every set is stored; weights
    [0, 1, 0] send everything to it."""
    text = json.dumps(mixed_pool(hash_="WeightedCh3", weights=[1, 0, 1]))
    router, mc = serve("weighted.json", tmp_path, ithaca_factory, memcached_factory, text=text)
    for k in KEYS:
        assert set_(router, k, "v") == b"STORED\r\n", k
    on = [sum(get(s, k) is not None for k in KEYS) for s in (mc["12345"], mc["12346"])]
    assert sum(on) == len(KEYS) and min(on) > 0, on

    text = json.dumps(mixed_pool(hash_="WeightedCh3", weights=[0, 1, 0]))
    router, mc = serve("weighted0.json", tmp_path, ithaca_factory, memcached_factory, text=text)
    for k in KEYS[:10]:
        assert set_(router, k, "v") == b"SERVER_ERROR from the middle\r\n", k


def test_route_object_can_be_a_pool_route(tmp_path, ithaca_factory, memcached_factory):
    """The middle place is a PoolRoute over pool C (mc2): its keys are
    stored on mc2, and `stats servers` lists all three destinations."""
    text = json.dumps(mixed_pool(middle={"type": "PoolRoute", "pool": "C"}))
    router, mc = serve("nested.json", tmp_path, ithaca_factory, memcached_factory, text=text)
    places = [mc["12345"], mc["12347"], mc["12346"]]
    for k in KEYS:
        assert set_(router, k, "v-" + k) == b"STORED\r\n", k
        assert get(places[furc_hash(k.encode(), 3)], k) == "v-" + k
    stats = servers_stats(router)
    assert sorted(stats) == sorted(f"{HOST}:{s.port}:ascii:plain:notcompressed-1000" for s in places), stats


def stat_fields(value):
    """mcrouter's ServerStat value: ({field: text} before ';', {result: n} after)."""
    tko = [t for t in ("hard_tko", "soft_tko") if f" {t}; " in value]
    head, _, results = value.replace(" hard_tko; ", " ").replace(" soft_tko; ", " ").partition(";")
    fields = dict(part.split(":", 1) for part in head.split())
    fields.update({t: True for t in tko})
    return fields, {k: int(n) for k, n in (part.split(":") for part in results.split())}


def test_stats_servers_values_in_mcrouters_form(tmp_path, ithaca_factory):
    """After sets, hits and misses through a PoolRoute, a destination's line
    says what mcrouter's ServerStat says: a smoothed latency above 0,
    nothing pending or in flight, the workers that connected `up`, and its
    results by mcrouter's names; a server that stops is `hard_tko` once a
    connect is refused, its failed call a connect_error."""
    server = start_memcached_on(free_port())  # stopped by this test: not the fixture's
    try:
        stats_of_a_server_that_stops(tmp_path, ithaca_factory, server)
    finally:
        server.stop()


def stats_of_a_server_that_stops(tmp_path, ithaca_factory, server):
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"pools": {"A": {"servers": [f"{HOST}:{server.port}"]}}, "route": "PoolRoute|A"}))
    router = ithaca_factory(args=["--config", str(path)])
    for k in KEYS[:5]:
        assert set_(router, k, "v") == b"STORED\r\n"
    for k in KEYS[:8]:
        get(router, k)
    key = f"{HOST}:{server.port}:ascii:plain:notcompressed-1000"
    fields, results = stat_fields(servers_stats(router)[key])
    assert float(fields["avg_latency_us"]) > 0, fields
    assert fields["pending_reqs"] == "0" and fields["inflight_reqs"] == "0", fields
    assert int(fields.get("up", 0)) >= 1 and "down" not in fields, fields
    assert results == {"found": 5, "notfound": 3, "stored": 5}, results

    server.stop()
    with Conn(router.host, router.port) as c:
        for k in KEYS[:3]:
            assert c.call(b"get %s\r\n" % k.encode()).startswith(b"SERVER_ERROR"), k
    value = servers_stats(router)[key]
    fields, results = stat_fields(value)
    assert " hard_tko; " in value and int(fields["down"]) >= 1, value
    # A refused connect marked it down: the reconnect each worker makes at
    # once when its connection closes (no call of its own), or one a get
    # waited on (connect_error). A get sent on the old connection before the
    # worker saw it close fails as mcrouter's client fails the calls of a
    # broken connection (remote_error); the rest failed fast on a server
    # marked down, which mcrouter does not count as the destination's. Which
    # of these each of the 3 gets met depends on when each worker saw the
    # close (a sanitized build on loaded cores: 2 connect_errors; release: 0
    # to 1), so only their sum is bounded.
    failed = results.pop("remote_error", 0) + results.pop("connect_error", 0)
    assert failed <= 3, value
    assert results == {"found": 5, "notfound": 3, "stored": 5}, value


def test_stats_servers_counts_a_call_in_flight(tmp_path, ithaca_factory):
    """A server that takes the request and never answers: while the call
    waits, its destination has one call pending or in flight (mcrouter's
    test_stats TestServerStatsRequests), and no latency yet; after the
    timeout, one timeout."""
    import socket
    import threading
    silent = socket.socket()
    silent.bind((HOST, 0))
    silent.listen(8)
    accepted = []
    threading.Thread(target=lambda: accepted.append(silent.accept()), daemon=True).start()
    try:
        port = silent.getsockname()[1]
        text = json.dumps({"pools": {"A": {"servers": [f"{HOST}:{port}"], "server_timeout": 1500}},
                           "route": "PoolRoute|A"})
        path = tmp_path / "silent.json"
        path.write_text(text)
        router = ithaca_factory(args=["--config", str(path)])
        key = f"{HOST}:{port}:ascii:plain:notcompressed-1500"
        with Conn(router.host, router.port) as c:
            c.send(b"get k\r\n")
            deadline = time.monotonic() + 1.0
            while True:
                fields, results = stat_fields(servers_stats(router)[key])
                if int(fields["pending_reqs"]) + int(fields["inflight_reqs"]) == 1 or time.monotonic() > deadline:
                    break
                time.sleep(0.02)
            assert int(fields["pending_reqs"]) + int(fields["inflight_reqs"]) == 1, fields
            assert fields["avg_latency_us"] == "0.000" and results == {}, (fields, results)
            assert c.read_reply().startswith(b"SERVER_ERROR"), "the timeout"
        fields, results = stat_fields(servers_stats(router)[key])
        assert fields["pending_reqs"] == "0" and fields["inflight_reqs"] == "0", fields
        assert results == {"timeout": 1}, results
    finally:
        silent.close()
        for conn, _ in accepted:
            conn.close()
