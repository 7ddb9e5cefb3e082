"""A router forwards values its servers take, whatever the cache role's
item_size_max (mcrouter's test_largeobj.py: a 2 MB + 1 value set through
mcrouter reaches its server); router.max_value_size bounds them, and a tree
that reaches the local store keeps the store's limit."""
import pytest

from mcwire import Conn

SIZE = 2 * 1024 * 1024 + 1


def router_config(port, route="{type: pool, pool: main}", extra=""):
    return f"""
pools:
  main: {{servers: ["127.0.0.1:{port}"], protocol: ascii}}
route: {route}
{extra}"""


def big_set(c, key, size):
    return c.call(b"set %s 0 0 %d\r\n%s\r\n" % (key, size, b"x" * size))


def test_a_value_over_item_size_max_reaches_the_server(ithaca_factory, memcached_factory):
    mc = memcached_factory(args=["-I", "4m"])
    router = ithaca_factory(config_text=router_config(mc.port))  # -m 64, item_size_max 1m
    with Conn(router.host, router.port, timeout=30) as c:
        assert big_set(c, b"test_largeobj", SIZE) == b"STORED\r\n"
        reply = c.call(b"get test_largeobj\r\n")
        assert reply.startswith(b"VALUE test_largeobj 0 %d\r\n" % SIZE) and len(reply) > SIZE, reply[:60]
    with Conn(mc.host, mc.port, timeout=30) as c:
        assert c.call(b"get test_largeobj\r\n").startswith(b"VALUE test_largeobj 0 %d\r\n" % SIZE)


def test_the_server_decides_what_it_takes(ithaca_factory, memcached_factory):
    mc = memcached_factory()  # -I 1m
    router = ithaca_factory(config_text=router_config(mc.port))
    with Conn(router.host, router.port, timeout=30) as c:
        assert big_set(c, b"k", SIZE) == b"SERVER_ERROR object too large for cache\r\n"
        assert c.call(b"version\r\n").startswith(b"VERSION ")


def test_router_max_value_size_bounds_them(ithaca_factory, memcached_factory):
    mc = memcached_factory(args=["-I", "4m"])
    router = ithaca_factory(config_text=router_config(mc.port, extra="router: {max_value_size: 2m}"))
    with Conn(router.host, router.port, timeout=30) as c:
        assert big_set(c, b"k", SIZE) == b"SERVER_ERROR object too large for cache\r\n"
        assert big_set(c, b"k", 2 * 1024 * 1024) == b"STORED\r\n"


@pytest.mark.parametrize("route", ["local", "{type: l1l2, l2: pool:main, exptime: 60s}"])
def test_a_tree_that_reaches_the_store_keeps_its_limit(ithaca_factory, memcached_factory, route):
    mc = memcached_factory(args=["-I", "4m"])
    router = ithaca_factory(config_text=router_config(mc.port, route=route))
    with Conn(router.host, router.port, timeout=30) as c:
        assert big_set(c, b"k", SIZE) == b"SERVER_ERROR object too large for cache\r\n"
