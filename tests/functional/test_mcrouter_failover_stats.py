"""mcrouter's failover counters (failover_policy_result_error,
failover_policy_tko_error, failover_all_failed_count, failover_num_collisions,
failover_num_failed_domain_collisions in `stats`), its one destination per
server shared by every pool that names it, and DeterministicOrderPolicy's
enable_failure_domains, over the wire: ithaca started as `ithaca --mcrouter`
on a FailoverRoute over PoolRoute|A and Pool|A (mcrouter's
test_deterministic_failover2.json shape), its servers answering
SERVER_ERROR (fake_backend.py), refusing connections (marked down: mcrouter's
TKO) or a real memcached. RendezvousPolicy plain and weighted (the route's
own `tags` and `"hash": "WeightedRendezvous"`), and InOrderPolicy's
max_tries and exclude_errors, over FailoverRoutes of the same servers.

The expected order and counts come from mcrouter's FailoverRoute and
FailoverPolicy.h written again here from their description (failover_model):
child 0 (the pool route), then Ch3 of the key with a salt 2, 3, ...
appended, skipping the children tried (and the normal server's own child),
and with failure domains the children in the domain of a server that was
marked down earlier in the request (for the first 75 draws of a step).
"""

import json
import math
import subprocess

import pytest

import conftest
from conftest import HOST, Server, free_port
from fake_backend import FakeBackend
from mcrouter_hash import MASK, furc_hash, murmur64a
from mcwire import Conn, parse_stats

COUNTERS = ["failover_policy_result_error", "failover_policy_tko_error", "failover_all_failed_count",
            "failover_num_collisions", "failover_num_failed_domain_collisions"]


def ithaca_path():
    path, is_memcached = conftest.ithaca_binary()
    if is_memcached:
        pytest.fail("this test runs ithaca's mcrouter entry point: it cannot run with ITHACA_BIN=memcached",
                    pytrace=False)
    return path


@pytest.fixture
def started():
    made = []

    def make(obj):
        made.append(obj)
        return obj

    yield make
    for m in reversed(made):
        if isinstance(m, FakeBackend):
            m.close()
        else:
            m.stop()


def router_on(tmp_path, started, servers, policy, domains=None, route=None):
    """ithaca --mcrouter on FailoverRoute [PoolRoute|A, Pool|A] over
    `servers` ("host:port"), with `route`'s keys beside failover_policy."""
    pool = {"servers": servers}
    if domains is not None:
        pool["failure_domains"] = domains
    return start_mcrouter(tmp_path, started, {"pools": {"A": pool}, "route": {
        "type": "FailoverRoute", "children": ["PoolRoute|A", "Pool|A"], "failover_policy": policy, **(route or {})}})


def start_mcrouter(tmp_path, started, cfg):
    """ithaca --mcrouter on the config `cfg`, --timeouts-until-tko=1."""
    path = tmp_path / f"failover_{len(list(tmp_path.glob('failover_*.json')))}.json"
    path.write_text(json.dumps(cfg))
    port = free_port()
    router = started(Server("ithaca", [ithaca_path(), "--mcrouter", "--config", f"file:{path}", "-p", str(port),
                                       "--timeouts-until-tko=1", "--num-proxies=1"]))
    router.port = port
    assert router.wait_accepting(10), router.describe()
    return router


def counters(c):
    st = parse_stats(c.call(b"stats\r\n"))
    return {k: int(st[k]) for k in COUNTERS}


def failover_model(key, n, max_tries, max_error_tries, down=(), domains=None):
    """What mcrouter's FailoverRoute does for `key` over [PoolRoute|A, Pool|A]
    (n servers; `down`: servers marked down, which fail fast): the servers
    asked (in order) and the counters' increments."""
    children = n + 1
    normal = furc_hash(key, n)
    used = [False] * children
    used[0] = True
    used[normal + 1] = True
    server_of = lambda c: normal if c == 0 else c - 1  # noqa: E731
    failed = set()
    d = dict.fromkeys(COUNTERS, 0)
    salt = 1
    last = min(max_tries, children) - 1

    def draw():
        nonlocal salt
        draws = 0
        while True:
            salt += 1
            index = furc_hash(key + str(salt).encode(), children)
            in_failed = bool(failed) and draws <= 75 and domains[server_of(index)] in failed
            d["failover_num_failed_domain_collisions" if in_failed else "failover_num_collisions"] += 1
            if not ((used[index] or in_failed) and draws < 100):
                break
            draws += 1
        d["failover_num_collisions"] -= 1  # the draw kept
        used[index] = True
        return index

    asked, tries, p, child = [], 0, 0, 0
    while True:
        s = server_of(child)
        if s not in down:
            asked.append(s)
        if p >= 1 and p >= last:
            # the last try: not looked at, but to tell that every try failed
            d["failover_all_failed_count"] += 1
            break
        if s in down:
            d["failover_policy_tko_error"] += 1
            if domains is not None and domains[s] != 0:
                failed.add(domains[s])
        else:
            d["failover_policy_result_error"] += 1
            tries += 1
        if tries >= max_error_tries:
            draw()  # mcrouter had drawn the next child already
            break
        p += 1
        child = draw()
    return asked, d


def asked_by(fakes):
    return [i for i, f in enumerate(fakes) for _ in f.lines]


@pytest.mark.parametrize("max_tries,max_error_tries", [(8, 3), (3, 3), (8, 8)])
def test_failover_counters_follow_every_try(tmp_path, started, max_tries, max_error_tries):
    """Every server answers SERVER_ERROR (never marked down): each get asks
    the servers the policy picks for its key, and the counters grow as
    mcrouter's: one result error per try but the last one allowed, one
    all_failed when that last one is reached, the hash's collisions when the
    failover ends."""
    fakes = [started(FakeBackend("server_error")) for _ in range(7)]
    router = router_on(tmp_path, started, [f.address for f in fakes],
                       {"type": "DeterministicOrderPolicy", "max_tries": max_tries,
                        "max_error_tries": max_error_tries})
    total = dict.fromkeys(COUNTERS, 0)
    with Conn(HOST, router.port) as c:
        assert counters(c) == total
        for i in range(12):
            key = b"key_%d_abc_%d" % (i, 17 * i)
            for f in fakes:
                f.lines.clear()
            assert c.call(b"get " + key + b"\r\n").startswith(b"SERVER_ERROR")
            asked, d = failover_model(key, len(fakes), max_tries, max_error_tries)
            assert sorted(asked_by(fakes)) == sorted(asked), key
            for k in COUNTERS:
                total[k] += d[k]
            assert counters(c) == total, key
    assert total["failover_policy_result_error"] > 0
    if max_tries == 3:
        assert total["failover_all_failed_count"] == 12
    else:
        assert total["failover_all_failed_count"] == (12 if max_error_tries == 8 else 0)
    if max_tries == 8:
        assert total["failover_num_collisions"] > 0


def test_a_server_down_through_the_pool_is_down_through_its_own_child(tmp_path, started, memcached_factory):
    """mcrouter keeps one destination per server: a server marked down when
    PoolRoute|A asked it fails fast (TKO) when Pool|A's child for it is asked
    next, in the same request; the last child (a real memcached) answers."""
    mc = memcached_factory()
    dead = f"{HOST}:{free_port()}"  # nothing listens: refused, then marked down
    servers = [dead, f"{HOST}:{mc.port}"]
    key = next(b"k%d" % i for i in range(1000) if furc_hash(b"k%d" % i, 2) == 0)
    with Conn(HOST, mc.port) as c:
        assert c.call(b"set " + key + b" 0 0 2\r\nmc\r\n") == b"STORED\r\n"
    router = router_on(tmp_path, started, servers, {"type": "InOrderPolicy"})
    with Conn(HOST, router.port) as c:
        reply = c.call(b"get " + key + b"\r\n")
        assert reply == b"VALUE " + key + b" 0 2\r\nmc\r\nEND\r\n"
        # refused through the pool (an error), then down through its child
        # (TKO), then memcached: the last child, not counted
        got = counters(c)
        assert (got["failover_policy_result_error"], got["failover_policy_tko_error"]) == (1, 1)
        assert c.call(b"get " + key + b"\r\n") == reply
        got = counters(c)
        assert (got["failover_policy_result_error"], got["failover_policy_tko_error"]) == (1, 3)
        assert got["failover_all_failed_count"] == 0


def test_failure_domains_skip_the_domain_of_a_server_marked_down(tmp_path, started):
    """enable_failure_domains: after a server marked down answers TKO, the
    children in its failure domain are drawn again (counted as failed domain
    collisions), so a failover goes to another domain."""
    domains = [1, 2, 3, 4, 1, 2, 3, 4]
    down = {0, 5}  # nothing listens; 4 and 1 share their domains and answer
    fakes = {i: started(FakeBackend("server_error")) for i in range(8) if i not in down}
    servers = [fakes[i].address if i in fakes else f"{HOST}:{free_port()}" for i in range(8)]
    policy = {"type": "DeterministicOrderPolicy", "max_tries": 9, "max_error_tries": 4,
              "enable_failure_domains": True}
    router = router_on(tmp_path, started, servers, policy, domains)
    with Conn(HOST, router.port) as c:
        # Mark the two down: keys whose pool server is one of them.
        for s in sorted(down):
            key = next(b"warm%d" % i for i in range(1000) if furc_hash(b"warm%d" % i, 8) == s)
            assert c.call(b"get " + key + b"\r\n").startswith(b"SERVER_ERROR")
        st = parse_stats(c.call(b"stats suspect_servers\r\n"))
        assert sorted(k for k, v in st.items() if v.startswith("status:tko")) == sorted(servers[s] for s in down)
        before = counters(c)
        total = dict.fromkeys(COUNTERS, 0)
        skipped = 0
        for i in range(16):
            key = b"key_%d_hYgGEs_%d_kBVq9Z_%d" % (13 * i, i, 71 * i)
            for f in fakes.values():
                f.lines.clear()
            assert c.call(b"get " + key + b"\r\n").startswith(b"SERVER_ERROR")
            asked, d = failover_model(key, 8, 9, 4, down, domains)
            assert sorted(i for i, f in fakes.items() for _ in f.lines) == sorted(asked), key
            plain, _ = failover_model(key, 8, 9, 4, down)
            skipped += sorted(asked) != sorted(plain)
            for k in COUNTERS:
                total[k] += d[k]
            now = counters(c)
            assert {k: now[k] - before[k] for k in COUNTERS} == total, key
    assert total["failover_num_failed_domain_collisions"] > 0
    assert total["failover_policy_tko_error"] > 0
    assert skipped > 0  # the domains changed where some keys failed over


def rendezvous_order(key, tags, primary, weights=None):
    """mcrouter's RendezvousPolicy written again from its description: the
    tags by the mix of their MurmurHash64A (seed 4193360111) with the key's
    (seed 2718281828), as a double, highest first (ties: the higher index),
    without the normal route's own server. With `weights` (the route's
    "hash": "WeightedRendezvous"), the mix's low 53 bits as a fraction u
    score weight / -ln(u)."""
    mul = 0x9ddfea08eb382d69
    key_hash = murmur64a(key, 2718281828)

    def score(i):
        upper = murmur64a(tags[i].encode(), 4193360111)
        a = ((key_hash ^ upper) * mul) & MASK
        a ^= a >> 47
        b = ((upper ^ a) * mul) & MASK
        b ^= b >> 47
        mixed = (b * mul) & MASK
        if weights is None:
            return float(mixed)
        u = (mixed & ((1 << 53) - 1)) / float(1 << 53)
        return 0.0 if u == 0 else weights[i] * (1.0 / -math.log(u))

    return [i for i in sorted(range(len(tags)), key=lambda i: (score(i), i), reverse=True) if i != primary]


def asked_in_order(c, fakes, key):
    """A get of `key` every server fails: the servers asked, in order."""
    for f in fakes:
        f.lines.clear()
        f.times.clear()
    assert c.call(b"get " + key + b"\r\n").startswith(b"SERVER_ERROR")
    return [n for _, n in sorted((f.times[0], n) for n, f in enumerate(fakes) for _ in f.lines)]


def test_rendezvous_policy_asks_every_server_in_rendezvous_order(tmp_path, started, memcached_factory):
    """RendezvousPolicy: the pool's server for the key, then every other
    server by rendezvous score; each reply but the last is an error counted,
    the last one tells that every try failed. A real memcached as one of the
    servers ends the failover where it comes."""
    fakes = [started(FakeBackend("server_error")) for _ in range(5)]
    tags = [f.address for f in fakes]
    router = router_on(tmp_path, started, tags, {"type": "RendezvousPolicy", "tags": tags})
    with Conn(HOST, router.port) as c:
        for i in range(10):
            key = b"key_%d_abc_%d" % (i, 17 * i)
            normal = furc_hash(key, len(fakes))
            assert asked_in_order(c, fakes, key) == [normal] + rendezvous_order(key, tags, normal), key
            got = counters(c)
            assert got["failover_policy_result_error"] == 4 * (i + 1)
            assert got["failover_all_failed_count"] == i + 1
    # The third server of a key's order answers: the fourth is never asked.
    key = b"rendezvous"
    order = [furc_hash(key, 5)] + rendezvous_order(key, tags, furc_hash(key, 5))
    mc = memcached_factory()
    fakes[order[2]].mode, fakes[order[2]].target = "forward", (mc.host, mc.port)
    with Conn(HOST, mc.port) as c:
        assert c.call(b"set rendezvous 0 0 1\r\nr\r\n") == b"STORED\r\n"
    for f in fakes:
        f.lines.clear()
    with Conn(HOST, router.port) as c:
        assert c.call(b"get rendezvous\r\n") == b"VALUE rendezvous 0 1\r\nr\r\nEND\r\n"
    assert fakes[order[3]].lines == [] and fakes[order[4]].lines == []


def test_weighted_rendezvous_with_the_routes_own_tags(tmp_path, started):
    """FailoverRoute's own `tags` replace the policy's (mcrouter inserts them
    into the policy), and its `hash: "WeightedRendezvous"` weighs each tag by
    the policy's `weights`: the failover order follows the weighted scores,
    which differ from the plain ones for some keys."""
    fakes = [started(FakeBackend("server_error")) for _ in range(5)]
    servers = [f.address for f in fakes]
    tags = [f"tag{i}" for i in range(5)]
    weights = [0.1, 1.0, 0.5, 0.05, 0.8]
    router = router_on(tmp_path, started, servers,
                       {"type": "RendezvousPolicy", "tags": ["ignored"] * 5, "weights": weights},
                       route={"tags": tags, "hash": "WeightedRendezvous"})
    differs = 0
    with Conn(HOST, router.port) as c:
        for i in range(12):
            key = b"wkey_%d_%d" % (i, 31 * i)
            normal = furc_hash(key, len(fakes))
            expected = [normal] + rendezvous_order(key, tags, normal, weights)
            assert asked_in_order(c, fakes, key) == expected, key
            differs += expected[1:] != rendezvous_order(key, tags, normal)
    assert differs > 0


@pytest.mark.parametrize("cfg,message", [
    ({"hash": "WeightedRendezvous", "failover_policy": {"type": "RendezvousPolicy", "tags": ["a", "b"]}},
     "WeightedRendezvousHashFunc: no weights"),
    ({"hash": "WeightedRendezvous",
      "failover_policy": {"type": "RendezvousPolicy", "tags": ["a", "b"], "weights": [1]}},
     "number of weights doesn't match"),
    ({"failover_policy": {"type": "RendezvousPolicy"}}, "tags needed for Rendezvous hash route"),
    ({"tags": ["a"], "failover_policy": {"type": "RendezvousPolicy", "tags": ["a", "b"]}},
     "number of tags 1 doesn't match"),
], ids=["no_weights", "weights_count", "no_tags", "route_tags_count"])
def test_rendezvous_options_refused_as_mcrouter_refuses_them(tmp_path, cfg, message):
    route = {"type": "FailoverRoute", "children": ["PoolRoute|A", "Pool|A"], **cfg}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"pools": {"A": {"servers": ["127.0.0.1:1", "127.0.0.1:2"]}}, "route": route}))
    # the tree is built at the start (--check-config reads the file only)
    r = subprocess.run([ithaca_path(), "--mcrouter", "--config", f"file:{path}", "-p", str(free_port())],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and message in r.stdout + r.stderr, r.stdout + r.stderr


def in_order_router(tmp_path, started, servers, policy):
    """ithaca --mcrouter on FailoverRoute over one PoolRoute per server."""
    pools = {f"P{i}": {"servers": [s]} for i, s in enumerate(servers)}
    route = {"type": "FailoverRoute", "children": [f"PoolRoute|P{i}" for i in range(len(servers))]}
    if policy is not None:
        route["failover_policy"] = policy
    return start_mcrouter(tmp_path, started, {"pools": pools, "route": route})


@pytest.mark.parametrize("policy,asked,answered", [
    (None, [0, 1, 2], b"VALUE k 0 2\r\nok\r\nEND\r\n"),
    ({"type": "InOrderPolicy"}, [0, 1, 2], b"VALUE k 0 2\r\nok\r\nEND\r\n"),
    ({"type": "InOrderPolicy", "max_tries": 1}, [0], b"SERVER_ERROR"),
    ({"type": "InOrderPolicy", "max_tries": 2}, [0, 1], b"SERVER_ERROR"),
    ({"type": "InOrderPolicy", "max_tries": 9}, [0, 1, 2], b"VALUE k 0 2\r\nok\r\nEND\r\n"),
    # remote_error (SERVER_ERROR) excluded: those tries are not counted
    ({"type": "InOrderPolicy", "max_tries": 1, "exclude_errors": ["remote_error"]}, [0, 1, 2],
     b"VALUE k 0 2\r\nok\r\nEND\r\n"),
    ({"type": "InOrderPolicy", "max_tries": 1, "exclude_errors": ["mc_res_timeout"]}, [0], b"SERVER_ERROR"),
], ids=["no_policy", "plain", "max_tries_1", "max_tries_2", "max_tries_over", "excluded", "other_excluded"])
def test_in_order_policy_max_tries_and_exclude_errors(tmp_path, started, memcached_factory, policy, asked, answered):
    """InOrderPolicy's max_tries bounds the error tries (a failover past it
    is not made), exclude_errors names results that are not counted as one:
    two servers answering SERVER_ERROR, then a real memcached holding k."""
    fakes = [started(FakeBackend("server_error")) for _ in range(2)]
    mc = memcached_factory()
    with Conn(HOST, mc.port) as c:
        assert c.call(b"set k 0 0 2\r\nok\r\n") == b"STORED\r\n"
    router = in_order_router(tmp_path, started, [f.address for f in fakes] + [f"{HOST}:{mc.port}"], policy)
    with Conn(HOST, router.port) as c:
        for _ in range(3):
            for f in fakes:
                f.lines.clear()
            got = c.call(b"get k\r\n")
            assert got.startswith(answered), got
            assert [i for i, f in enumerate(fakes) for _ in f.lines] == [i for i in asked if i < 2]
