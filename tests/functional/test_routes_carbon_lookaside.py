"""CarbonLookasideRoute (mcrouter's, route/routes/carbon_lookaside_route.cc):
a get reads prefix+key from a lookaside memcached first, and on a miss asks
the child and stores its hit in the lookaside with the route's ttl. The
lookaside is reached as mcrouter reaches it: the route's "flavor" file names
a client config (its own pools) in its options' "config". Everything here is
real memcacheds behind ithaca, over the wire; mcrouter's own Python test of
the route (test_carbonlookaside_route.py) runs through scripts/mcrouter-tests."""
import json

import pytest

from conftest import HOST, ithaca_binary
from mcwire import Conn, parse_stats
from test_leases import lease_get
from test_mcrouter_config import check_config


def address(server):
    return f"{HOST}:{server.port}"


def call(server, line):
    with Conn(server.host, server.port) as c:
        return c.call(line)


def get(server, key):
    r = call(server, b"get %s\r\n" % key)
    if r == b"END\r\n":
        return None
    assert r.startswith(b"VALUE "), r
    header, value = r.split(b"\r\n")[:2]
    return value, int(header.split()[2])


def ttl_left(server, key):
    """The TTL memcached has left for `key` (mg t): -1 none, None a miss."""
    r = call(server, b"mg %s t\r\n" % key)
    if r.startswith(b"EN"):
        return None
    assert r.startswith(b"HD"), r
    return int(r.split(b" t")[1].split()[0])


def eventually(check, what, seconds=5.0):
    """A background fill lands: polls `check` (bounded), never sleeps blind."""
    import time
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def lookaside_config(tmp_path, child, lookaside, **route):
    """An mcrouter config whose CarbonLookasideRoute's flavor file names a
    client config over memcached `lookaside`; `route` adds its options."""
    client = tmp_path / "client.json"
    client.write_text(json.dumps({"pools": {"A": {"servers": [address(lookaside)]}}, "route": "PoolRoute|A"}))
    flavor = tmp_path / "flavor.json"
    flavor.write_text(json.dumps({"options": {"config": f"file:{client}", "server_timeout_ms": "250"}}))
    body = {"type": "CarbonLookasideRoute", "prefix": "CL", "ttl": 120, "flavor": f"file:{flavor}",
            "child": ["PoolRoute|A"]}
    body.update(route)
    # The main config's pool A is the child's: the client config's A is another pool.
    path = tmp_path / "mcrouter.json"
    path.write_text(json.dumps({"pools": {"A": {"servers": [address(child)]}}, "route": body}))
    return path


@pytest.fixture
def lookaside(tmp_path, ithaca_factory, memcached_factory):
    """(router, child memcached, lookaside memcached, make(**options))."""
    if ithaca_binary()[1]:
        pytest.skip("an mcrouter config read by ithaca")
    child, cache = memcached_factory(), memcached_factory()

    def make(**route):
        return ithaca_factory(args=["--config", str(lookaside_config(tmp_path, child, cache, **route))])

    return child, cache, make


def route_stats(router):
    return parse_stats(call(router, b"stats routes\r\n"))


def lookaside_counter(router, field):
    return sum(int(v) for k, v in route_stats(router).items() if k.endswith(":" + field))


def test_a_miss_is_read_from_the_child_and_stored_in_the_lookaside(lookaside):
    child, cache, make = lookaside
    router = make()
    assert call(router, b"set k|#|id=1 7 0 5\r\nhello\r\n") == b"STORED\r\n"
    # A set goes to the child alone.
    assert get(child, b"k|#|id=1") == (b"hello", 7)
    assert get(cache, b"CLk|#|id=1") is None
    assert get(router, b"k|#|id=1") == (b"hello", 7)
    eventually(lambda: get(cache, b"CLk|#|id=1") == (b"hello", 7), "the lookaside filled")
    assert 110 <= ttl_left(cache, b"CLk|#|id=1") <= 120
    # Now served by the lookaside: the child's copy is gone, the reply keeps the client's key.
    assert call(child, b"delete k|#|id=1\r\n") == b"DELETED\r\n"
    assert call(router, b"get k|#|id=1\r\n") == b"VALUE k|#|id=1 7 5\r\nhello\r\nEND\r\n"
    assert lookaside_counter(router, "lookaside_hits") == 1
    assert lookaside_counter(router, "lookaside_fills") == 1


def test_a_child_miss_is_not_stored(lookaside):
    child, cache, make = lookaside
    router = make()
    assert get(router, b"absent") is None
    assert call(router, b"set marker 0 0 1\r\nm\r\n") == b"STORED\r\n"
    assert get(router, b"marker") == (b"m", 0)
    eventually(lambda: get(cache, b"CLmarker") is not None, "the marker's fill")
    assert get(cache, b"CLabsent") is None


def test_multi_key_get_mixes_lookaside_and_child_hits(lookaside):
    child, cache, make = lookaside
    router = make()
    assert call(cache, b"set CLa 0 0 2\r\nLA\r\n") == b"STORED\r\n"
    assert call(child, b"set a 0 0 2\r\nCA\r\n") == b"STORED\r\n"
    assert call(child, b"set b 0 0 2\r\nCB\r\n") == b"STORED\r\n"
    r = call(router, b"get a b c\r\n")
    assert r == b"VALUE a 0 2\r\nLA\r\nVALUE b 0 2\r\nCB\r\nEND\r\n"
    eventually(lambda: get(cache, b"CLb") == (b"CB", 0), "b filled")


def test_updates_and_gets_with_cas_go_to_the_child(lookaside):
    child, cache, make = lookaside
    router = make()
    assert call(cache, b"set CLk 0 0 3\r\nold\r\n") == b"STORED\r\n"
    assert call(router, b"set k 0 0 3\r\nnew\r\n") == b"STORED\r\n"
    assert call(router, b"gets k\r\n").split(b"\r\n")[1] == b"new"
    assert call(router, b"delete k\r\n") == b"DELETED\r\n"
    assert get(child, b"k") is None
    # The lookaside's copy is the lookaside's: it lives out its ttl.
    assert get(router, b"k") == (b"old", 0)


def test_no_expiry_with_ttl_0(lookaside):
    child, cache, make = lookaside
    router = make(ttl=0)
    assert call(router, b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"
    assert get(router, b"k") == (b"v", 0)
    eventually(lambda: get(cache, b"CLk") is not None, "the fill")
    assert ttl_left(cache, b"CLk") == -1


def test_millisecond_ttl_keys_carry_their_window(lookaside):
    child, cache, make = lookaside
    router = make(ttl=250, ttl_unit_ms=True)
    assert call(router, b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"
    assert get(router, b"k") == (b"v", 0)
    windows = [b"CLk:%d" % n for n in range(4)]
    eventually(lambda: any(get(cache, w) for w in windows), "the fill, in one of the 4 windows of the second")
    stored = [w for w in windows if get(cache, w)]
    assert len(stored) == 1 and ttl_left(cache, stored[0]) in (0, 1)


def test_leases_on_an_mcrouter_pool(lookaside):
    """mcrouter's pools speak ascii; the lease-get and lease-set go as meta."""
    child, cache, make = lookaside
    router = make(lease_settings={"enable_leases": True, "initial_wait_interval_ms": 5, "num_retries": 2})
    assert call(child, b"set k 3 0 1\r\nv\r\n") == b"STORED\r\n"
    assert get(router, b"k") == (b"v", 3)
    eventually(lambda: get(cache, b"CLk") == (b"v", 3), "the lease-set fill")
    assert get(router, b"k") == (b"v", 3)
    assert lookaside_counter(router, "lookaside_hits") == 1
    assert lookaside_counter(router, "lookaside_hot_misses") == 0
    # Another holds the lease on a key: 1 + num_retries hot misses, then the child.
    assert call(child, b"set h 0 0 1\r\nw\r\n") == b"STORED\r\n"
    assert call(cache, b"mg CLh N30 c\r\n").endswith(b" W\r\n")
    assert get(router, b"h") == (b"w", 0)
    assert lookaside_counter(router, "lookaside_hot_misses") == 3


def test_leases_on_a_meta_lookaside(ithaca_factory, memcached_factory):
    """Written in ithaca's YAML, where the lookaside is any route: here a
    meta pool, which takes lease-get (mg N) and lease-set."""
    child, cache = memcached_factory(), memcached_factory()
    router = ithaca_factory(config_text=(
        "pools:\n"
        f"  main: {{servers: [\"{address(child)}\"]}}\n"
        f"  la: {{servers: [\"{address(cache)}\"], protocol: meta}}\n"
        "route: {type: carbon_lookaside, child: pool:main, lookaside: pool:la, ttl: 60, prefix: 'la:',\n"
        "        lease_settings: {enable_leases: true, initial_wait_interval_ms: 5, num_retries: 3}}\n"))
    assert call(child, b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"
    # Someone else holds the lease on the lookaside key (memcached's win
    # token, given to this mg): the router's lease-gets are hot misses,
    # retried num_retries times, and then the child is asked.
    assert call(cache, b"mg la:k N30 c\r\n").endswith(b" W\r\n")
    assert get(router, b"k") == (b"v", 0)
    assert lookaside_counter(router, "lookaside_hot_misses") == 4
    # The holder's lease ends (memcached's win token gone with the delete): a miss with a token, filled by lease-set.
    assert call(cache, b"md la:k\r\n") == b"HD\r\n"
    assert get(router, b"k") == (b"v", 0)
    eventually(lambda: get(cache, b"la:k") == (b"v", 0), "the lease-set fill")
    assert get(router, b"k") == (b"v", 0)
    assert lookaside_counter(router, "lookaside_hits") == 1


@pytest.mark.parametrize("route, message", [
    ({"flavor": "web"}, "CarbonLookasideRoute: flavor 'web': ithaca reads a flavor from a file"),
    ({"ttl": 300, "ttl_unit_ms": True}, "for sub-second ttl, you must use a number that is >= 10"),
    ({"ttl": "ten"}, "CarbonLookasideRoute: 'ttl' must be an integer"),
    ({"lease_settings": {"enable_leases": "yes"}}, "CarbonLookasideRoute: 'enable_leases' is not bool"),
])
def test_bad_options_are_refused_in_mcrouters_words(tmp_path, memcached_factory, route, message):
    child, cache = memcached_factory(), memcached_factory()
    path = lookaside_config(tmp_path, child, cache, **route)
    rc, out = check_config(path)
    assert rc != 0 and message in out, out


def test_a_flavor_without_a_client_config_is_refused(tmp_path, memcached_factory):
    child, cache = memcached_factory(), memcached_factory()
    path = lookaside_config(tmp_path, child, cache)
    (tmp_path / "flavor.json").write_text('{"options": {"num_proxies": "4"}}')
    rc, out = check_config(path)
    assert rc != 0 and "its options have no \"config\"" in out, out
