"""mcrouter's route kinds of set A served from mcrouter's own test configs
(facebook/mcrouter, mcrouter/test/*.json, MIT licence), each copied below as
it is with a line naming it: `dev_null` (DevNullRoute), `latency_injection` (LatencyInjectionRoute), ... . Each config's
`localhost:PORT` servers are mapped to real memcacheds this test starts, and
each test asserts what mcrouter's own Python test (named in it) asserts over
the same config; the assertions are ported, the code is ours."""

import re
import threading
import time

import pytest

import mcwire
from conftest import ithaca_binary
from test_ascii_diff import SERVER_ARGS
from test_router import stats

# mcrouter's test configs (facebook/mcrouter, mcrouter/test/, MIT licence).
MCROUTER_CONFIGS = {
    # mcrouter/test/test_dev_null.json
    "test_dev_null.json": """{
  "pools": {
    "A.good": {
      "servers": [ "localhost:12345" ]
    },
    "A.wildcard": {
      "servers": [ "localhost:12347" ]
    }
  },
  "route": {
    "type": "PrefixSelectorRoute",
    "policies": {
      "good": "PoolRoute|A.good",
      "null": "DevNullRoute"
    },
    "wildcard": "PoolRoute|A.wildcard"
  }
}
""",
    # mcrouter/test/test_latency_injection_before.json
    "test_latency_injection_before.json": """{
  "pools": {
    "A": {
      "servers": [ "127.0.0.1:11610" ],
      "protocol": "caret"
    }
  },
  "route": {
    "type": "LatencyInjectionRoute",
    "child": "PoolRoute|A",
    "before_latency_ms": 2000
  }
}
""",
    # mcrouter/test/test_latency_injection_after.json
    "test_latency_injection_after.json": """{
  "pools": {
    "A": {
      "servers": [ "127.0.0.1:11610" ],
      "protocol": "caret"
    }
  },
  "route": {
    "type": "LatencyInjectionRoute",
    "child": "PoolRoute|A",
    "after_latency_ms": 1000
  }
}
""",
    # mcrouter/test/test_latency_injection_total.json
    "test_latency_injection_total.json": """{
  "pools": {
    "A": {
      "servers": [ "127.0.0.1:11610" ],
      "protocol": "caret"
    }
  },
  "route": {
    "type": "LatencyInjectionRoute",
    "child": "PoolRoute|A",
    "total_latency_ms": 2000
  }
}
""",
}

SERVER_RE = re.compile(r'"(?:localhost|127\.0\.0\.1):(\d+)"')


def mcrouter_ports(name):
    """mcrouter's server ports in the config, in order of first appearance."""
    seen = []
    for port in SERVER_RE.findall(MCROUTER_CONFIGS[name]):
        if port not in seen:
            seen.append(port)
    return seen


def serve_mcrouter_config(tmp_path, ithaca_factory, name, backends, edit=None):
    """Starts ithaca on mcrouter's config `name`, its servers mapped in order
    of first appearance to `backends` (real memcacheds); `edit` changes the
    text first (what ithaca refuses of it, said where it is used)."""
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    text = MCROUTER_CONFIGS[name]
    ports = mcrouter_ports(name)
    assert len(ports) == len(backends), f"{name} names {len(ports)} servers"
    mapping = {p: b for p, b in zip(ports, backends)}
    text = SERVER_RE.sub(lambda m: f'"{mapping[m.group(1)].host}:{mapping[m.group(1)].port}"', text)
    if edit is not None:
        text = edit(text)
    path = tmp_path / name
    path.write_text(text)
    return ithaca_factory(args=["--config", str(path)])


def direct_get(server, key):
    with mcwire.Conn(server.host, server.port) as c:
        values = mcwire.parse_values(c.call(b"get " + key + b"\r\n"))
    return values[0][2] if values else None


def direct_set(server, key, value):
    with mcwire.Conn(server.host, server.port) as c:
        assert c.call(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value)) == b"STORED\r\n"


def route_counter(conn, kind, field):
    """The sum of FIELD over the `stats routes` nodes of KIND."""
    s = stats(conn, "routes")
    total, found = 0, False
    for k, v in s.items():
        if re.fullmatch(r"route:\d+", k) and v.split(" ")[0] == kind:
            found = True
            total += int(s.get(k + ":" + field, "0"))
    assert found, f"no {kind} route in stats routes: {s}"
    return total


# ---- DevNullRoute (mcrouter/test/test_mcrouter.py, TestDevNull)


def test_dev_null_drops_requests_and_counts_them(tmp_path, ithaca_factory, memcached_factory):
    good, wild = memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS)
    router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_dev_null.json", [good, wild])
    with mcwire.Conn(*router.address) as c:
        assert c.call(b"set good:key 0 0 13\r\nshould_be_set\r\n") == b"STORED\r\n"
        assert c.call(b"set key 0 0 18\r\nshould_be_set_wild\r\n") == b"STORED\r\n"
        # Dropped: answered as NullRoute answers a store, stored nowhere.
        assert c.call(b"set null:key 0 0 17\r\nshould_not_be_set\r\n") == b"NOT_STORED\r\n"
        assert direct_get(good, b"good:key") == b"should_be_set"
        assert direct_get(wild, b"null:key") is None
        assert direct_get(good, b"null:key") is None
        assert direct_get(wild, b"key") == b"should_be_set_wild"
        # mcrouter's test: delete answers no DELETED (its NOT_FOUND).
        assert c.call(b"delete null:key2\r\n") == b"NOT_FOUND\r\n"
        # mcrouter counts dev_null_requests in `stats all`; ithaca per route.
        assert route_counter(c, "dev_null", "dev_null_requests") == 2
        # A get through it misses; it is counted too.
        assert c.call(b"get null:key\r\n") == b"END\r\n"
        assert route_counter(c, "dev_null", "dev_null_requests") == 3


# ---- LatencyInjectionRoute (mcrouter/test/test_latency_injection_route.py)


def no_caret(text):
    """mcrouter's samples talk Carbon (caret) to their mock; ithaca speaks
    ascii or meta to a memcached (caret is refused), so the line goes."""
    return text.replace(',\n      "protocol": "caret"', "")


def timed_get(conn, key):
    start = time.monotonic()
    reply = conn.call(b"get " + key + b"\r\n")
    return reply, time.monotonic() - start


@pytest.mark.parametrize("name,key,least", [
    ("test_latency_injection_before.json", b"key1", 2.0),
    ("test_latency_injection_after.json", b"key2", 1.0),
    ("test_latency_injection_total.json", b"key3", 2.0),
])
def test_latency_injection_delays_the_reply(tmp_path, ithaca_factory, memcached_factory, name, key, least):
    mc = memcached_factory(args=SERVER_ARGS)
    router = serve_mcrouter_config(tmp_path, ithaca_factory, name, [mc], edit=no_caret)
    value = b"value" + key[-1:]
    direct_set(mc, key, value)
    with mcwire.Conn(*router.address) as c:
        reply, took = timed_get(c, key)
        assert reply == b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (key, len(value), value)
        assert took >= least, f"{name}: answered in {took:.3f}s"
        assert took < least + 1.5, f"{name}: answered in {took:.3f}s"
        field = name.split("_")[-1].split(".")[0] + "_latency_injected"
        assert route_counter(c, "latency_injection", field) == 1


def test_latency_injection_waits_without_holding_the_worker(tmp_path, ithaca_factory, memcached_factory):
    """Waits run side by side: pipelined gets on one connection and gets on
    other connections all wait their 2 s at once (in turn they would take
    2 s each), replies in request order; a connection to the same router
    through another route is not held at all."""
    mc = memcached_factory(args=SERVER_ARGS)
    router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_latency_injection_before.json", [mc],
                                   edit=no_caret)
    for i in range(4):
        direct_set(mc, b"k%d" % i, b"v%d" % i)
    results = {}

    def one(i):
        with mcwire.Conn(*router.address) as c:
            results[i] = timed_get(c, b"k%d" % i)

    start = time.monotonic()
    threads = [threading.Thread(target=one, args=(i,)) for i in (2, 3)]
    for t in threads:
        t.start()
    with mcwire.Conn(*router.address) as c:
        c.send(b"get k0\r\nget k1\r\nversion\r\n")
        replies = c.read_replies(3)
    took = time.monotonic() - start
    for t in threads:
        t.join(10)
    assert replies[0] == b"VALUE k0 0 2\r\nv0\r\nEND\r\n"
    assert replies[1] == b"VALUE k1 0 2\r\nv1\r\nEND\r\n"
    assert replies[2].startswith(b"VERSION ")
    assert 2.0 <= took < 3.5, f"pipelined waits took {took:.3f}s"
    for i in (2, 3):
        reply, t = results[i]
        assert reply == b"VALUE k%d 0 2\r\nv%d\r\nEND\r\n" % (i, i)
        assert 2.0 <= t < 3.5, f"client {i}: {t:.3f}s"
    # Served while nothing waits: `version` is the server's own.
    with mcwire.Conn(*router.address) as c:
        start = time.monotonic()
        assert c.call(b"version\r\n").startswith(b"VERSION ")
        assert time.monotonic() - start < 1.0


def test_latency_injection_wait_ends_with_its_client_or_the_server(tmp_path, ithaca_factory, memcached_factory):
    """A client that goes away while its request waits costs nothing after
    the wait; a server stopped while requests wait exits at once (the
    factory fails a stop that takes more than its timeout)."""
    mc = memcached_factory(args=SERVER_ARGS)
    router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_latency_injection_before.json", [mc],
                                   edit=no_caret)
    direct_set(mc, b"gone", b"x")
    for _ in range(20):
        c = mcwire.Conn(*router.address)
        c.send(b"get gone\r\nset gone 0 0 1\r\ny\r\n")
        c.close()
    with mcwire.Conn(*router.address) as c:
        reply, took = timed_get(c, b"gone")
        # A closed connection (FIN) still gets its replies, so its set goes
        # on after its wait (y); one the server saw reset is orphaned and
        # nothing of it resumes (x). Either way the router answers here.
        assert reply in (b"VALUE gone 0 1\r\ny\r\nEND\r\n", b"VALUE gone 0 1\r\nx\r\nEND\r\n")
        assert took >= 2.0
        c.send(b"get gone\r\n")  # still waiting when the server stops
        start = time.monotonic()
        router.proc.terminate()
        router.proc.wait(timeout=10)
        assert time.monotonic() - start < 2.0, "the server waited for the injected latency to stop"
        assert router.proc.returncode == 0
