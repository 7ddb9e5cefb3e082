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
from test_udp import Udp, free_udp_port


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
    """Fake backends speak ascii only and answer every line their own way, so
    the routers in front of them say `protocol: ascii` (no `mn` probe)."""
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
    router = ithaca_factory(args=["-I", "1m"], config_text=router_yaml([fb.address], timeout="3s", protocol="ascii"))
    before = rss_kib(router)
    with mcwire.Conn(router.host, router.port) as c:
        start = time.monotonic()
        got = c.call(b"get k\r\n")
        elapsed = time.monotonic() - start
        grown_mib = (rss_kib(router) - before) / 1024
        seen = f"{got!r} after {elapsed:.2f}s, router grew by {grown_mib:.0f} MiB"
        assert got == b"SERVER_ERROR remote error: the server sent a bad reply\r\n", seen
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
    router = ithaca_factory(config_text=router_yaml([fb.address], timeout="1s", protocol="ascii"))
    with mcwire.Conn(router.host, router.port) as c:
        start = time.monotonic()
        got = c.call(b"get k\r\n")
        elapsed = time.monotonic() - start
        assert got == b"SERVER_ERROR Reply timeout\r\n"
        assert 0.9 < elapsed < 2.0, f"answered after {elapsed:.2f}s with a 1 s timeout"


# ---------------------------------------------------------------- item 4: routed UDP, concurrently

def test_routed_udp_datagrams_are_served_concurrently(ithaca_factory, fakes):
    """8 UDP gets behind a backend that answers each request 1 s late all
    come back in about one delay, not eight; a `version` sent behind them is
    answered at once; each reply carries its own datagram's request id."""
    fb = fakes("slow", delay=1.0)
    port = free_udp_port()
    router = ithaca_factory(args=["-U", str(port), "-t", "1"], config_text=router_yaml([fb.address], timeout="5s", protocol="ascii"))
    u = Udp(port)
    try:
        start = time.monotonic()
        ids = [u.send(b"get key%d\r\n" % i) for i in range(8)]
        vid = u.send(b"version\r\n")
        replies = {}
        arrived = {}
        deadline = start + 10
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
    assert arrived[vid] < 0.8, seen
    assert gets_done < 2.5, seen


def test_routed_udp_concurrency_is_bounded_and_drops_are_counted(ithaca_factory, fakes):
    """More datagrams than kUdpMaxConcurrent (128) waiting on a hung backend:
    the excess is dropped and counted in `udp_dropped`, the worker answers
    over TCP meanwhile, and UDP is served again once the waiting ones time
    out."""
    fb = fakes("hang")
    port = free_udp_port()
    router = ithaca_factory(args=["-U", str(port), "-t", "1"], config_text=router_yaml([fb.address], timeout="1s", protocol="ascii"))
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


# ---------------------------------------------------------------- item 3: a client that never reads

BIG = 512 * 1024


def backend_get_hits(server):
    with mcwire.Conn(server.host, server.port) as c:
        return int(stats(c)["get_hits"])


def store_big_values(router, count):
    values = [bytes([65 + i]) * BIG for i in range(count)]
    with mcwire.Conn(router.host, router.port) as c:
        for i, v in enumerate(values):
            assert c.call(b"set big%d 0 0 %d\r\n%s\r\n" % (i, BIG, v)) == b"STORED\r\n"
    return values


def test_a_client_that_never_reads_holds_about_what_the_cache_role_holds(ithaca_factory, memcached_factory):
    """A client with a small receive buffer pipelines 300 gets of four 512 KiB
    values (600 MiB of replies) and never reads. The router stops reading it
    and holds a few MiB (it held them all before: +600 MiB); other clients
    are served meanwhile; once the client closes, the memory goes back."""
    backend = memcached_factory()
    router = ithaca_factory(args=["-I", "1m"], config_text=router_yaml([addr(backend)]))
    store_big_values(router, 4)
    base = rss_kib(router)
    stuck = socket.socket()
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.connect((router.host, router.port))
    stuck.settimeout(10)
    try:
        stuck.sendall(b"get big0 big1 big2 big3\r\n" * 300)
        # Until the router stops fetching (its backend's hits stand still).
        peak = 0
        last, still, deadline = -1, 0, time.monotonic() + 8
        while still < 6 and time.monotonic() < deadline:
            peak = max(peak, rss_kib(router))
            hits = backend_get_hits(backend)
            still = still + 1 if hits == last else 0
            last = hits
            time.sleep(0.05)
        grown_mib = (peak - base) / 1024
        # The cache role grows by about 2 MiB here, the router by about 13
        # (a head request of 2 MiB, its rendered copy, the backend read buffer,
        # values dropped as they come); ASan's 16 MiB quarantine adds its own.
        bound = 64 if sanitized() else 24
        assert grown_mib < bound, f"router grew by {grown_mib:.0f} MiB for a client that never reads"
        # Another client is served meanwhile.
        with mcwire.Conn(router.host, router.port) as c:
            assert c.call(b"set other 0 0 2\r\nok\r\n") == b"STORED\r\n"
            assert c.call(b"get other\r\n") == b"VALUE other 0 2\r\nok\r\nEND\r\n"
    finally:
        stuck.close()
    # What the client's requests held goes back once it is gone.
    released = (32 if sanitized() else 16) * 1024
    wait_for(lambda: rss_kib(router) - base < released, timeout=10, what="memory released after the close")


def test_a_slow_reader_still_gets_every_reply_in_order(ithaca_factory, memcached_factory):
    """Replies dropped for the bound while they waited are fetched again: a
    client that pipelines 60 gets of 512 KiB values and reads them slowly gets
    each one right and in order."""
    backend = memcached_factory()
    router = ithaca_factory(args=["-I", "1m"], config_text=router_yaml([addr(backend)]))
    values = store_big_values(router, 4)
    hits_before = backend_get_hits(backend)
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.connect((router.host, router.port))
    c.settimeout(10)
    order = [i % 4 for i in range(60)]
    try:
        c.sendall(b"".join(b"get big%d\r\nget small\r\n" % i for i in order))
        # Let the router fill up before reading anything (it stops at its bound).
        wait_for(lambda: backend_get_hits(backend) > hits_before + 2, timeout=5, what="first fetches")
        buf = b""
        for i in order:
            want = b"VALUE big%d 0 %d\r\n%s\r\nEND\r\nEND\r\n" % (i, BIG, values[i])
            while len(buf) < len(want):
                chunk = c.recv(65536)
                assert chunk, "connection closed"
                buf += chunk
            assert buf[:len(want)] == want, f"reply for big{i} differs: {buf[:60]!r}"
            buf = buf[len(want):]
    finally:
        c.close()


def test_a_get_fetched_again_never_sees_its_own_clients_later_write(ithaca_factory, memcached_factory):
    """A client with a small receive buffer pipelines gets of large values,
    then `get k` (a large value too), `set k` and `get k`, and reads nothing
    until the set has reached memcached. The replies before `get k` put it
    over its bound while it waits; fetched again later, it would read the
    client's own later `set` (memcached answers in order: the old value, then
    the new one). A retrieval with a later write of its client already sent
    keeps its reply."""
    backend = memcached_factory()
    router = ithaca_factory(args=["-I", "1m"], config_text=router_yaml([addr(backend)]))
    values = store_big_values(router, 4)
    old, new = b"o" * BIG, b"new"  # a small set: it arrives in the same read as the gets
    order = [i % 4 for i in range(12)]  # 6 MiB: more than the sockets' buffers hold
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"set k 0 0 %d\r\n%s\r\n" % (BIG, old)) == b"STORED\r\n"
    sets_before = int(stats_of(backend)["cmd_set"])
    c = socket.socket()
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.connect((router.host, router.port))
    c.settimeout(20)
    try:
        c.sendall(b"".join(b"get big%d\r\n" % i for i in order) +
                  b"get k\r\nset k 0 0 %d\r\n%s\r\nget k\r\n" % (len(new), new))
        # The set reaches memcached while the replies before it wait.
        wait_for(lambda: int(stats_of(backend)["cmd_set"]) > sets_before, timeout=10, what="the set")
        want = b"".join(b"VALUE big%d 0 %d\r\n%s\r\nEND\r\n" % (i, BIG, values[i]) for i in order)
        want += b"VALUE k 0 %d\r\n%s\r\nEND\r\nSTORED\r\nVALUE k 0 %d\r\n%s\r\nEND\r\n" % (BIG, old, len(new), new)
        buf = b""
        while len(buf) < len(want):
            try:
                chunk = c.recv(1 << 20)
            except socket.timeout:
                raise AssertionError(f"stalled after {len(buf)} of {len(want)} bytes: ...{buf[-80:]!r}")
            assert chunk, "connection closed"
            buf += chunk
        first_k = buf.find(b"VALUE k ")
        assert buf[first_k:first_k + 20 + 3] == want[first_k:first_k + 20 + 3], "the first get k saw the later set"
        assert buf == want
    finally:
        c.close()


def stats_of(server):
    with mcwire.Conn(server.host, server.port) as c:
        return stats(c)
