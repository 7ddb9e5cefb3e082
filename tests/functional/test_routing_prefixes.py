"""mcrouter's routing prefixes: a config's `routes` (each with `aliases`),
keys "/region/cluster/key" routed by their prefix and sent without it (unless
the pool keeps it), the default route from --route-prefix, the broadcast and
glob prefixes, and "/region/fallback/". Real memcacheds behind.

The mcrouter cases port mcrouter's own test_routing_prefixes.py
(facebook/mcrouter, MIT licence) over its configs routing_prefix_test_ascii,
_fallback_route and _custom (mcrouter_corpus/), written here with their
macros expanded by hand (the same JSON mcrouter's preprocessor makes)."""
import json
import time

import pytest

from mcwire import Conn


def wait_value(server, key, want, timeout=5.0):
    """The value of `key` on `server` once it is `want` (detached copies land
    a moment after the reply), or what it is at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        with Conn(server.host, server.port) as c:
            got = get_value(c, key)
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def get_value(c, key):
    reply = c.call(b"get " + key.encode() + b"\r\n")
    if reply == b"END\r\n":
        return None
    head, data, _end = reply.split(b"\r\n", 2)
    assert head.startswith(b"VALUE " + key.encode() + b" "), reply
    return data.decode()


def set_value(c, key, value):
    assert c.call(f"set {key} 0 0 {len(value)}\r\n{value}\r\n".encode()) == b"STORED\r\n"


def start(tmp_path, ithaca_factory, config, extra=()):
    path = tmp_path / "mcrouter.json"
    path.write_text(json.dumps(config))
    return ithaca_factory(args=["--config", str(path), *extra])


def ascii_config(ports):
    """routing_prefix_test_ascii.json, @policy(X) expanded."""
    names = ["A", "B", "C", "D"]

    def policy(cluster):
        return {
            "type": "OperationSelectorRoute",
            "default_policy": f"PoolRoute|{cluster}.wildcard",
            "operation_policies": {
                "delete": {
                    "type": "AllSyncRoute",
                    "children": [f"PoolRoute|{n}.wildcard" for n in names],
                }
            },
        }

    return {
        "pools": {
            f"{n}.wildcard": {"protocol": "ascii", "keep_routing_prefix": n != "A",
                              "servers": [f"localhost:{p}"]}
            for n, p in zip(names, ports)
        },
        "routes": [{"aliases": [f"/{n.lower()}/{n.lower()}/"], "route": policy(n)} for n in names],
    }


def four_pools_config(ports, fallback):
    """routing_prefix_test_custom.json (and _fallback_route.json with
    `fallback`), @route(a, b) and @fallbackRoute(a, b) expanded."""
    names = ["aa", "ab", "ba", "bb"]
    routes = []
    for region, cluster in [("a", "a"), ("a", "b")] + ([("a", "fallback-a")] if fallback else []) + \
            [("b", "a"), ("b", "b")] + ([("b", "fallback-a")] if fallback else []):
        if cluster.startswith("fallback"):
            routes.append({"aliases": [f"/{region}/fallback/"], "route": f"PoolRoute|{region}a"})
        else:
            routes.append({"aliases": [f"/{region}/{cluster}/"], "route": f"PoolRoute|{region}{cluster}"})
    return {
        "pools": {n: {"servers": [f"127.0.0.1:{p}"]} for n, p in zip(names, ports)},
        "routes": routes,
    }


def test_mcrouter_routing_prefix_ascii(tmp_path, ithaca_factory, memcached_factory):
    hosts = [memcached_factory() for _ in range(4)]
    router = start(tmp_path, ithaca_factory, ascii_config([h.port for h in hosts]), ["--route-prefix", "/a/a/"])
    with Conn(router.host, router.port) as c:
        # No prefix: the default route, /a/a/.
        set_value(c, "testkeylocal", "testvalue")
        assert wait_value(hosts[0], "testkeylocal", "testvalue") == "testvalue"
        for h in hosts[1:]:
            assert wait_value(h, "testkeylocal", None, timeout=0.2) is None
        # Every route: pool A (keep_routing_prefix false) gets the key without
        # the prefix, B-D (true) with it.
        set_value(c, "/*/*/testkey-routing", "testvalue")
    assert wait_value(hosts[0], "testkey-routing", "testvalue") == "testvalue"
    for h in hosts[1:]:
        assert wait_value(h, "/*/*/testkey-routing", "testvalue") == "testvalue"


@pytest.mark.parametrize("form", ["list", "object"])
def test_a_key_with_a_prefix_reads_back_under_its_whole_key(tmp_path, ithaca_factory, memcached_factory, form):
    a, b = memcached_factory(), memcached_factory()
    pools = {"A": {"servers": [f"127.0.0.1:{a.port}"]}, "B": {"servers": [f"127.0.0.1:{b.port}"]}}
    routes = ([{"aliases": ["/r/a/", "/r/alias/"], "route": "PoolRoute|A"}, {"aliases": ["/r/b/"], "route": "PoolRoute|B"}]
              if form == "list" else {"/r/a/": "PoolRoute|A", "/r/alias/": "PoolRoute|A", "/r/b/": "PoolRoute|B"})
    router = start(tmp_path, ithaca_factory, {"pools": pools, "routes": routes}, ["--route-prefix", "/r/a/"])
    with Conn(router.host, router.port) as c:
        set_value(c, "/r/b/k1", "one")
        set_value(c, "/r/alias/k2", "two")
        set_value(c, "k3", "three")
        # Each reads back under the key the client sent.
        assert get_value(c, "/r/b/k1") == "one"
        assert get_value(c, "/r/alias/k2") == "two"
        # A multi-key get over several prefixes: hits in the client's order,
        # each under its whole key.
        reply = c.call(b"get /r/b/k1 k3 /r/a/k2 /r/b/missing /r/alias/k2\r\n")
        assert reply == (b"VALUE /r/b/k1 0 3\r\none\r\nVALUE k3 0 5\r\nthree\r\n"
                         b"VALUE /r/a/k2 0 3\r\ntwo\r\nVALUE /r/alias/k2 0 3\r\ntwo\r\nEND\r\n"), reply
        reply = c.call(b"gets /r/b/k1\r\n")
        assert reply.startswith(b"VALUE /r/b/k1 0 3 "), reply
        assert c.call(b"delete /r/b/k1\r\n") == b"DELETED\r\n"
        assert get_value(c, "/r/b/k1") is None
        # A prefix no route has: mcrouter's error.
        assert c.call(b"get /x/y/k\r\n").startswith(b"SERVER_ERROR RootRoute: No rh found"), "no route"
    # The servers hold the keys without the prefix.
    with Conn(a.host, a.port) as c:
        assert get_value(c, "k2") == "two" and get_value(c, "k3") == "three"
    with Conn(b.host, b.port) as c:
        assert get_value(c, "k1") is None


def test_send_invalid_route_to_default(tmp_path, ithaca_factory, memcached_factory):
    a, b = memcached_factory(), memcached_factory()
    config = {"pools": {"A": {"servers": [f"127.0.0.1:{a.port}"]}, "B": {"servers": [f"127.0.0.1:{b.port}"]}},
              "routes": {"/r/a/": "PoolRoute|A", "/r/b/": "PoolRoute|B"}}
    router = start(tmp_path, ithaca_factory, config, ["--route-prefix", "/r/b/", "--send-invalid-route-to-default"])
    with Conn(router.host, router.port) as c:
        set_value(c, "/x/y/k", "v")
        assert get_value(c, "/x/y/k") == "v"
    with Conn(b.host, b.port) as c:
        assert get_value(c, "k") == "v"


def test_mcrouter_fallback_routing(tmp_path, ithaca_factory, memcached_factory):
    aa, ab, ba, bb = (memcached_factory() for _ in range(4))
    config = four_pools_config([aa.port, ab.port, ba.port, bb.port], fallback=True)
    router = start(tmp_path, ithaca_factory, config, ["--route-prefix", "/a/a/"])
    with Conn(router.host, router.port) as c:
        set_value(c, "/*/*/key", "orig")
    for h in (aa, ab, ba, bb):
        assert wait_value(h, "key", "orig") == "orig"
    with Conn(router.host, router.port) as c:
        # /a/foobar/ is not a route: /a/fallback/ (pool aa) takes it.
        set_value(c, "/a/foobar/key", "value1")
    assert wait_value(aa, "key", "value1") == "value1"
    for h in (ab, ba, bb):
        assert wait_value(h, "key", "orig", timeout=0.2) == "orig"


def test_mcrouter_custom_routing_prefixes(tmp_path, ithaca_factory, memcached_factory):
    aa, ab, ba, bb = (memcached_factory() for _ in range(4))
    config = four_pools_config([aa.port, ab.port, ba.port, bb.port], fallback=False)
    router = start(tmp_path, ithaca_factory, config, ["--route-prefix", "/a/a/"])
    with Conn(router.host, router.port) as c:
        set_value(c, "/*/a/key", "value")
    assert wait_value(aa, "key", "value") == "value"
    assert wait_value(ba, "key", "value") == "value"
    with Conn(router.host, router.port) as c:
        set_value(c, "/b*/*/key", "value2")
    assert wait_value(ba, "key", "value2") == "value2"
    assert wait_value(bb, "key", "value2") == "value2"
    with Conn(router.host, router.port) as c:
        set_value(c, "/b/*b*/key", "value3")
    assert wait_value(bb, "key", "value3") == "value3"
    # ... and only there.
    assert wait_value(ba, "key", "value2", timeout=0.2) == "value2"


def test_yaml_routing_prefix_route(ithaca_factory, memcached_factory):
    a, b = memcached_factory(), memcached_factory()
    router = ithaca_factory(config_text=f"""
pools:
  a: {{servers: ["127.0.0.1:{a.port}"]}}
  b: {{servers: ["127.0.0.1:{b.port}"], keep_routing_prefix: true}}
route:
  type: routing_prefix
  default_route: /east/a/
  routes:
    /east/a/: pool:a
    /east/b/: pool:b
""")
    with Conn(router.host, router.port) as c:
        set_value(c, "plain", "1")
        set_value(c, "/east/b/kept", "2")
        assert get_value(c, "/east/b/kept") == "2"
    with Conn(a.host, a.port) as c:
        assert get_value(c, "plain") == "1"
    with Conn(b.host, b.port) as c:
        assert get_value(c, "/east/b/kept") == "2"


@pytest.mark.parametrize("routes, message", [
    ({"/a/": "PoolRoute|A"}, "Routing prefix (/a/) should be of the form /region/cluster/"),
    ([{"aliases": ["/a/a/"], "route": "PoolRoute|A"}, {"aliases": ["/a/a/"], "route": "PoolRoute|A"}],
     "the routing prefix /a/a/ is given twice"),
])
def test_bad_routing_prefixes_are_refused(tmp_path, routes, message):
    from test_config_file import run_bounded
    from conftest import ithaca_binary
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"pools": {"A": {"servers": ["127.0.0.1:1"]}}, "routes": routes}, indent=1))
    binary, _ = ithaca_binary()
    rc, out, why = run_bounded([binary, "--check-config", "--config", str(path)])
    assert why is None and rc == 1 and message in out, out
