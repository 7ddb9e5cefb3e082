"""mcrouter's root (its ProxyRoute over its RootRoute) and its stats groups,
through `ithaca --mcrouter` in front of real memcacheds (issue 32; the
assertions of mcrouter's test_mcrouter_basic.py test_invalid_key and
test_stats, test_flush_all.py test_flush_all, ported; the code is ours):

- a config with a single `route` serves it under the default routing prefix
  alone (-R, "/././" without it): a key with another prefix finds no route
  (`SERVER_ERROR RootRoute: No rh found`, nothing stored), a key with the
  default prefix reaches the server without it;
- flush_all goes to every server of every pool the config's routes use
  (mcrouter's ProxyConfig knows no other pool), whatever route the (empty)
  key would take;
- `stats detailed` (and ods, count, cmd-error, external) are groups; an
  unknown group is `CLIENT_ERROR bad stats command`; `statsdetailed` is a
  command mcrouter cannot read (`CLIENT_ERROR malformed request`, the
  connection closes). ithaca's YAML config keeps memcached's bare ERROR for
  an unknown group.
"""
import json
import os

import pytest

import conftest
from conftest import HOST, Server, free_port
from mcwire import Conn
from test_ascii_diff import SERVER_ARGS


def ithaca_path():
    path, is_memcached = conftest.ithaca_binary()
    if is_memcached:
        pytest.skip("ithaca's mcrouter entry point")
    return os.path.abspath(path)


@pytest.fixture
def mcrouter():
    """mcrouter(config, *flags) -> Server running `ithaca --mcrouter` on the
    JSON `config` (a dict); stopped at teardown."""
    started = []

    def start(config, *flags):
        port = free_port()
        server = Server("ithaca", [ithaca_path(), "--mcrouter", "--config-str", json.dumps(config), "-p", str(port),
                                   *flags])
        server.port = port
        started.append(server)
        assert server.wait_accepting(10), server.describe()
        return server

    yield start
    for s in started:
        s.stop()


def addr(server):
    return f"{server.host}:{server.port}"


def direct_get(server, key):
    with Conn(server.host, server.port) as c:
        return c.call(b"get " + key + b"\r\n")


@pytest.mark.parametrize("flags,prefix", [((), b"/././"), (("-R", "/a/a/"), b"/a/a/")])
def test_single_route_serves_only_the_default_prefix(mcrouter, memcached_factory, flags, prefix):
    mc = memcached_factory(args=SERVER_ARGS)
    r = mcrouter({"pools": {"A": {"servers": [addr(mc)]}}, "route": "PoolRoute|A"}, *flags)
    with Conn(HOST, r.port) as c:
        assert c.call(b"set /blah/bloh/key 0 0 5\r\nvalue\r\n") == b"SERVER_ERROR RootRoute: No rh found\r\n"
        assert c.call(b"get /blah/bloh/key\r\n") == b"SERVER_ERROR RootRoute: No rh found\r\n"
        # The default prefix is taken off the key the server gets.
        assert c.call(b"set " + prefix + b"key 0 0 1\r\na\r\n") == b"STORED\r\n"
        assert c.call(b"get key\r\n") == b"VALUE key 0 1\r\na\r\nEND\r\n"
    assert direct_get(mc, b"key") == b"VALUE key 0 1\r\na\r\nEND\r\n"
    assert direct_get(mc, b"/blah/bloh/key") == b"END\r\n"


def test_flush_all_reaches_every_pool(mcrouter, memcached_factory):
    a, b, unused = (memcached_factory(args=SERVER_ARGS) for _ in range(3))
    config = {
        "pools": {"A": {"servers": [addr(a)]}, "B": {"servers": [addr(b)]}, "C": {"servers": [addr(unused)]}},
        "routes": [{"aliases": ["/a/a/"], "route": "PoolRoute|A"}, {"aliases": ["/b/b/"], "route": "PoolRoute|B"}],
    }
    for s in (a, b, unused):
        with Conn(s.host, s.port) as m:
            assert m.call(b"set k 0 0 1\r\nx\r\n") == b"STORED\r\n"
    r = mcrouter(config, "-R", "/a/a/", "--enable-flush-cmd")
    with Conn(HOST, r.port) as c:
        assert c.call(b"get /b/b/k\r\n") == b"VALUE /b/b/k 0 1\r\nx\r\nEND\r\n"
        assert c.call(b"flush_all\r\n") == b"OK\r\n"
        assert c.call(b"get k\r\n") == b"END\r\n"
        assert c.call(b"get /b/b/k\r\n") == b"END\r\n"
    for s in (a, b):
        assert direct_get(s, b"k") == b"END\r\n"
    assert direct_get(unused, b"k") == b"VALUE k 0 1\r\nx\r\nEND\r\n"


def test_flush_all_disabled_reaches_no_pool(mcrouter, memcached_factory):
    a, b = memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS)
    config = {"pools": {"A": {"servers": [addr(a)]}, "B": {"servers": [addr(b)]}},
              "routes": [{"aliases": ["/a/a/"], "route": "PoolRoute|A"},
                         {"aliases": ["/b/b/"], "route": "PoolRoute|B"}]}
    for s in (a, b):
        with Conn(s.host, s.port) as m:
            assert m.call(b"set k 0 0 1\r\nx\r\n") == b"STORED\r\n"
    r = mcrouter(config, "-R", "/a/a/")
    with Conn(HOST, r.port) as c:
        assert c.call(b"flush_all\r\n") == b"SERVER_ERROR Command disabled\r\n"
    for s in (a, b):
        assert direct_get(s, b"k") == b"VALUE k 0 1\r\nx\r\nEND\r\n"


def stats_reply(port, line):
    with Conn(HOST, port) as c:
        c.send(line)
        return c.read_reply()


def test_stats_groups(mcrouter, memcached_factory):
    mc = memcached_factory(args=SERVER_ARGS)
    r = mcrouter({"pools": {"A": {"servers": [addr(mc)]}}, "route": "PoolRoute|A"})
    detailed = stats_reply(r.port, b"stats detailed\r\n")
    assert detailed.endswith(b"END\r\n") and b"STAT cmd_get_count " in detailed, detailed
    for group in (b"ods", b"count", b"cmd-error", b"external", b"servers", b"suspect_servers"):
        for line in (b"stats " + group + b"\r\n", b"stats " + group + b" \r\n", b"stats " + group + b"\n"):
            assert stats_reply(r.port, line).endswith(b"END\r\n"), line
    assert stats_reply(r.port, b"stats invalid_option\r\n") == b"CLIENT_ERROR bad stats command\r\n"
    with Conn(HOST, r.port) as c:
        assert c.call(b"statsdetailed\r\n") == b"CLIENT_ERROR malformed request\r\n"
        assert c.is_closed(2)


def test_yaml_router_keeps_memcacheds_error_for_an_unknown_group(ithaca_factory, memcached_factory):
    mc = memcached_factory(args=SERVER_ARGS)
    server = ithaca_factory(config_text=f"""
pools:
  p:
    servers: ["{addr(mc)}"]
route:
  type: pool
  pool: p
""")
    with Conn(HOST, server.port) as c:
        assert c.call(b"stats invalid_option\r\n") == b"ERROR\r\n"
        assert c.call(b"stats detailed\r\n") == b"ERROR\r\n"
