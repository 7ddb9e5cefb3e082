"""A reload that removes the pool a request is waiting on (issue 28, item 6):
the request finishes on the tree it started with, within that pool's timeout
(the answer the server gives, or the timeout's failure), never later. The
probe saw `SERVER_ERROR backend timeout` after 7.0 s; these are the cases
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
            assert got == b"SERVER_ERROR backend timeout\r\n", (got, elapsed)
            assert elapsed < 3, f"failed after {elapsed:.1f} s, past the old pool's 2 s timeout"
            assert c.call(b"get k\r\n") == b"END\r\n"
    finally:
        hung.close()
