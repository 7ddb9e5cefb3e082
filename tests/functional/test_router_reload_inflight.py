"""A reload that removes the pool a request is waiting on (issue 28, item 6):
the request finishes on the tree it started with, within that pool's timeout
(the answer the server gives, or the timeout's failure), never later. The
probe saw `SERVER_ERROR Reply timeout` after 7.0 s; these are the cases
that can be built here: a slow server that answers in time after the reload,
and a hung one whose request fails at its pool's timeout."""

import time

import mcwire
from fake_backend import FakeBackend
from test_reload import reload_with
from test_router import addr


def config(pool, address, timeout):
    return ("logging:\n  level: info\npools:\n"
            f"  {pool}:\n    servers: [\"{address}\"]\n    timeout: {timeout}\n"
            f"route:\n  type: pool\n  pool: {pool}\n")


def test_a_get_in_flight_on_a_removed_pool_gets_its_answer(ithaca_factory, memcached):
    with mcwire.Conn(memcached.host, memcached.port) as m:
        assert m.call(b"set k 0 0 3\r\nold\r\n") == b"STORED\r\n"
    slow = FakeBackend("lag", target=(memcached.host, memcached.port), delay=1.5)
    try:
        router = ithaca_factory(config_text=config("old", slow.address, "5s"))
        with mcwire.Conn(router.host, router.port, timeout=30) as c:
            assert c.call(b"get warm\r\n") == b"END\r\n"  # connected (and probed)
            start = time.monotonic()
            c.send(b"get k\r\n")
            time.sleep(0.3)
            reload_with(router, config("new", addr(memcached), "5s"))
            got = c.read_reply()
            elapsed = time.monotonic() - start
            assert got == b"VALUE k 0 3\r\nold\r\nEND\r\n", (got, elapsed)
            assert elapsed < 5, f"answered after {elapsed:.1f} s, past the old pool's 5 s timeout"
            # The next request runs on the new tree.
            assert c.call(b"get k\r\n") == b"VALUE k 0 3\r\nold\r\nEND\r\n"
    finally:
        slow.close()


def test_a_get_in_flight_on_a_removed_hung_pool_fails_at_its_timeout(ithaca_factory, memcached):
    hung = FakeBackend("hang")
    try:
        text = config("old", hung.address, "2s").replace("    timeout: 2s\n", "    timeout: 2s\n    protocol: ascii\n")
        router = ithaca_factory(config_text=text)
        with mcwire.Conn(router.host, router.port, timeout=30) as c:
            start = time.monotonic()
            c.send(b"get k\r\n")
            time.sleep(0.3)
            reload_with(router, config("new", addr(memcached), "2s"))
            got = c.read_reply()
            elapsed = time.monotonic() - start
            assert got == b"SERVER_ERROR Reply timeout\r\n", (got, elapsed)
            assert elapsed < 3, f"failed after {elapsed:.1f} s, past the old pool's 2 s timeout"
            assert c.call(b"get k\r\n") == b"END\r\n"
    finally:
        hung.close()


def two_pools(main_address, main_timeout, slow_address):
    return ("logging:\n  level: info\npools:\n"
            f"  main:\n    servers: [\"{main_address}\"]\n    timeout: {main_timeout}\n"
            f"  slow:\n    servers: [\"{slow_address}\"]\n    timeout: 10s\n"
            "route:\n  type: prefix\n  prefixes:\n    \"slow:\": {type: pool, pool: slow}\n"
            "  default: {type: pool, pool: main}\n")


def test_a_batch_that_outlives_its_servers_retirement_still_reaches_them(ithaca_factory, memcached,
                                                                         memcached_factory):
    # A reload that changes a pool's settings retires its server objects:
    # their connections close once idle (the sweep, every second). A batch
    # still running on the old tree sends to them afterwards: here a `set`
    # too large for the cache, whose side effect (memcached deletes the old
    # value) goes to main only once the get before it, 3 s away on another
    # pool, has been answered. By then main's old connection has closed;
    # the delete must go out on a fresh one (it used to wait in the dead
    # connection's queue, never sent: the stress run's misses).
    other = memcached_factory()
    slow = FakeBackend("lag", target=(other.host, other.port), delay=3.0)
    try:
        router = ithaca_factory(config_text=two_pools(addr(memcached), "5s", slow.address))
        with mcwire.Conn(router.host, router.port, timeout=30) as c:
            assert c.call(b"set k 0 0 3\r\nold\r\n") == b"STORED\r\n"  # main's connection, opened
            assert c.call(b"get slow:warm\r\n") == b"END\r\n"  # slow's, opened and probed
            too_big = 2 * 1024 * 1024
            c.send(b"get slow:a\r\nset k 0 0 %d\r\n" % too_big + b"x" * too_big + b"\r\n")
            time.sleep(0.3)
            reload_with(router, two_pools(addr(memcached), "4s", slow.address))
            assert c.read_reply() == b"END\r\n"
            assert c.read_reply() == b"SERVER_ERROR object too large for cache\r\n"
        deadline = time.monotonic() + 5
        with mcwire.Conn(memcached.host, memcached.port) as m:
            while m.call(b"get k\r\n") != b"END\r\n":
                assert time.monotonic() < deadline, "the too-large set's delete never reached the server"
                time.sleep(0.1)
    finally:
        slow.close()
