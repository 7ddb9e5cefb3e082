"""The router role's bounds against hostile backends and clients: a backend
that announces a value larger than any (refused at once), one that drips bytes
(the request deadline still holds), a client that never reads its replies (the
router stops reading it and holds about what the cache role holds), and routed
UDP served concurrently (a slow backend does not serialise datagrams)."""

import os
import socket
import time

import pytest

import mcwire
from fake_backend import FakeBackend
from test_router import addr, router_yaml, stats, wait_for
from test_udp import FRAME, Udp, free_udp_port


def rss_kib(server):
    with open(f"/proc/{server.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def sanitized():
    return bool(os.environ.get("ITHACA_SANITIZED"))


@pytest.fixture
def fakes():
    made = []

    def make(mode, **kw):
        fb = FakeBackend(mode, **kw)
        made.append(fb)
        return fb

    yield make
    for fb in made:
        fb.close()


# ---------------------------------------------------------------- item 2: huge and dripping replies

def test_reply_announcing_more_than_item_size_max_is_a_bad_reply_at_once(ithaca_factory, fakes):
    """`VALUE k 0 1073741824` from a backend (item_size_max 1 MiB) is garbage:
    the request fails at once with memcached's words for a bad reply, the
    connection is recycled, and the router does not read on (it grew by up
    to the announced gigabyte before)."""
    fb = fakes("huge")
    router = ithaca_factory(args=["-I", "1m"], config_text=router_yaml([fb.address], timeout="3s"))
    before = rss_kib(router)
    with mcwire.Conn(router.host, router.port) as c:
        start = time.monotonic()
        got = c.call(b"get k\r\n")
        elapsed = time.monotonic() - start
        grown_mib = (rss_kib(router) - before) / 1024
        seen = f"{got!r} after {elapsed:.2f}s, router grew by {grown_mib:.0f} MiB"
        assert got == b"SERVER_ERROR backend sent a bad reply\r\n", seen
        assert elapsed < 1.5, seen
        assert grown_mib < 32, seen
        # The counted failure says why.
        s = stats(c, "servers")
        assert int(s[f"main/{fb.address}:failures_bad_reply"]) >= 1, s


def test_request_deadline_holds_while_a_backend_drips_bytes(ithaca_factory, fakes):
    """A backend that keeps sending 100 bytes every millisecond never lets a
    read time out; the request still fails at its deadline (1 s), not when the
    value would be complete (10 s)."""
    fb = fakes("drip", delay=0.001)
    router = ithaca_factory(config_text=router_yaml([fb.address], timeout="1s"))
    with mcwire.Conn(router.host, router.port) as c:
        start = time.monotonic()
        got = c.call(b"get k\r\n")
        elapsed = time.monotonic() - start
        assert got == b"SERVER_ERROR backend timeout\r\n"
        assert 0.9 < elapsed < 2.0, f"answered after {elapsed:.2f}s with a 1 s timeout"
