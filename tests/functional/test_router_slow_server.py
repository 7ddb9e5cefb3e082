"""A slow server behind the router (issue 28, item 3): with the default
`protocol: auto` every new backend connection first asks `mn`; that probe is
a request like any other and has the pool's timeout, so a server that answers
in 2 s under an 8 s timeout serves hits, not misses; and clients that reset
while their requests wait on a slow server give back their connections at once.

The slow server is a real memcached behind a relay that sends each request on
2 s (or 0.8 s) after it arrived, pipelined (fake_backend.py, mode `lag`)."""

import os
import resource
import selectors
import socket
import struct
import time

import pytest

import mcwire
from fake_backend import FakeBackend
from test_router import addr, router_yaml, stats, wait_for

KEYS = [b"k%03d" % i for i in range(100)]
GET_100 = b"get " + b" ".join(KEYS) + b"\r\n"


def raise_fd_limit(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < need:
        pytest.fail(f"RLIMIT_NOFILE hard limit is {hard}, this test needs {need}", pytrace=False)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


def connect_all(host, port, n):
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, port), timeout=10)
        s.setblocking(False)
        socks.append(s)
    return socks


def send_all(socks, data):
    for s in socks:
        s.setblocking(True)
        s.sendall(data)
        s.setblocking(False)


def read_until_end(socks, timeout):
    """Reads every socket until its reply ends in END\\r\\n (a get's last
    line) or it closes; returns the replies, in socket order."""
    sel = selectors.DefaultSelector()
    got = {s: bytearray() for s in socks}
    for s in socks:
        sel.register(s, selectors.EVENT_READ)
    open_ = len(socks)
    deadline = time.monotonic() + timeout
    while open_ and time.monotonic() < deadline:
        for key, _ in sel.select(max(0.01, deadline - time.monotonic())):
            s = key.fileobj
            try:
                chunk = s.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                chunk = b""
            if chunk:
                got[s] += chunk
            if not chunk or got[s].endswith(b"END\r\n") or got[s].startswith(b"SERVER_ERROR"):
                sel.unregister(s)
                open_ -= 1
    sel.close()
    return [bytes(got[s]) for s in socks]


def reset(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def open_fds(server):
    return len(os.listdir(f"/proc/{server.proc.pid}/fd"))


@pytest.fixture
def lagged(memcached):
    made = []

    def make(delay):
        fb = FakeBackend("lag", target=(memcached.host, memcached.port), delay=delay)
        made.append(fb)
        return fb

    yield make
    for fb in made:
        fb.close()


def full_reply(values):
    return b"".join(b"VALUE %s 0 %d\r\n%s\r\n" % (k, len(v), v) for k, v in values) + b"END\r\n"


@pytest.mark.parametrize("protocol", ["auto", "ascii"])
def test_two_thousand_clients_get_hits_from_a_server_slower_than_connect_timeout(ithaca_factory, memcached, lagged,
                                                                                 protocol):
    """The probe's case: default `protocol: auto`, a server that answers in
    2 s, pool timeout 8 s, 2,000 clients each with a 100-key get. Before the
    fix every client got `END` (all misses) after 1.1 s: the probe had the
    connect timeout (1 s) and failed every request queued behind it."""
    raise_fd_limit(6000)
    values = [(k, b"v-" + k) for k in KEYS]
    with mcwire.Conn(memcached.host, memcached.port) as m:
        for k, v in values:
            assert m.call(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v)) == b"STORED\r\n"
    slow = lagged(2.0)
    router = ithaca_factory(args=["-c", "4096"],
                            config_text=router_yaml([slow.address], timeout="8s", protocol=protocol))
    socks = connect_all(router.host, router.port, 2000)
    try:
        start = time.monotonic()
        send_all(socks, GET_100)
        replies = read_until_end(socks, 20)
        elapsed = time.monotonic() - start
    finally:
        for s in socks:
            s.close()
    expected = full_reply(values)
    wrong = [r[:80] for r in replies if r != expected]
    print(f"protocol {protocol}: {2000 - len(wrong)} of 2000 full replies in {elapsed:.1f} s")
    assert not wrong, f"{len(wrong)} of 2000 clients got another reply after {elapsed:.1f}s, e.g. {wrong[:3]}"
    assert elapsed >= 2.0, f"answered in {elapsed:.2f}s by a server that takes 2 s"
    with mcwire.Conn(router.host, router.port) as c:
        s = stats(c, "servers")
        assert int(s[f"main/{slow.address}:failures_timeout"]) == 0, s


def test_clients_that_reset_give_back_their_connections(ithaca_factory, memcached, lagged):
    """The probe's case: 3 rounds of 300 clients, each with 10 pipelined
    100-key gets to a server that answers in 0.8 s, then a reset. Before the
    fix, with `protocol: auto`, the router's descriptors went 17 -> 139 ->
    234 -> 329 and curr_connections 123 -> 218 -> 313, never given back."""
    raise_fd_limit(4000)
    slow = lagged(0.8)
    router = ithaca_factory(args=["-c", "4096"], config_text=router_yaml([slow.address], timeout="8s"))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get warm\r\n") == b"END\r\n"  # the backend connection is open
        base_conns = int(stats(c)["curr_connections"])
    base_fds = open_fds(router)
    for _ in range(3):
        socks = connect_all(router.host, router.port, 300)
        send_all(socks, GET_100 * 10)
        time.sleep(0.3)  # the gets are out to the slow server
        for s in socks:
            reset(s)

        def released():
            with mcwire.Conn(router.host, router.port) as c:
                return int(stats(c)["curr_connections"]) <= base_conns

        wait_for(released, timeout=3, what="the reset clients' connections to be released")
    wait_for(lambda: open_fds(router) <= base_fds + 2, timeout=10,
             what=f"the router's descriptors to return to {base_fds} (now {open_fds(router)})")
    # And it still answers from the slow server.
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"set after 0 0 1\r\nx\r\n") == b"STORED\r\n"
        assert c.call(b"get after\r\n") == b"VALUE after 0 1\r\nx\r\nEND\r\n"
