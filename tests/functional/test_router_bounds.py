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


# ---------------------------------------------------------------- item 4: routed UDP, concurrently

def test_routed_udp_datagrams_are_served_concurrently(ithaca_factory, fakes):
    """8 UDP gets behind a backend that answers each request 0.5 s late all
    come back in about one delay, not eight; a `version` sent behind them is
    answered at once; each reply carries its own datagram's request id."""
    fb = fakes("slow", delay=0.5)
    port = free_udp_port()
    router = ithaca_factory(args=["-U", str(port), "-t", "1"], config_text=router_yaml([fb.address], timeout="5s"))
    u = Udp(port)
    try:
        start = time.monotonic()
        ids = [u.send(b"get key%d\r\n" % i) for i in range(8)]
        vid = u.send(b"version\r\n")
        replies = {}
        arrived = {}
        deadline = start + 6
        while len(replies) < 9:
            hdr, payload = u.recv(deadline)
            assert hdr[1:] == (0, 1, 0), hdr
            assert hdr[0] in ids + [vid] and hdr[0] not in replies, f"unexpected request id {hdr}"
            replies[hdr[0]] = payload
            arrived[hdr[0]] = time.monotonic() - start
    finally:
        u.close()
    assert replies[vid].startswith(b"VERSION "), replies[vid]
    assert all(replies[i] == b"END\r\n" for i in ids), replies
    gets_done = max(arrived[i] for i in ids)
    seen = f"version after {arrived[vid]:.2f}s, the 8 gets after {gets_done:.2f}s"
    assert arrived[vid] < 0.4, seen
    assert gets_done < 1.6, seen


def test_routed_udp_concurrency_is_bounded_and_drops_are_counted(ithaca_factory, fakes):
    """More datagrams than kUdpMaxConcurrent (128) waiting on a hung backend:
    the excess is dropped and counted in `udp_dropped`, the worker answers
    over TCP meanwhile, and UDP is served again once the waiting ones time
    out."""
    fb = fakes("hang")
    port = free_udp_port()
    router = ithaca_factory(args=["-U", str(port), "-t", "1"], config_text=router_yaml([fb.address], timeout="1s"))
    u = Udp(port)
    try:
        for i in range(200):
            u.send(b"get key%d\r\n" % i)
        with mcwire.Conn(router.host, router.port) as c:
            wait_for(lambda: int(stats(c)["udp_requests"]) >= 200, timeout=5, what="200 datagrams received")
            assert int(stats(c)["udp_dropped"]) == 200 - 128
            assert c.call(b"version\r\n").startswith(b"VERSION ")

        def version_over_udp():
            vid = u.send(b"version\r\n")
            deadline = time.monotonic() + 0.3
            try:
                while True:
                    hdr, payload = u.recv(deadline)
                    if hdr[0] == vid:
                        return payload.startswith(b"VERSION ")
            except (AssertionError, socket.timeout):
                return False

        wait_for(version_over_udp, timeout=6, what="UDP served again")
    finally:
        u.close()
