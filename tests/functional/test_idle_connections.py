"""Idle client connections (issue 16): a connection with no request in
progress is parked in its worker (no coroutine, no read buffer) and a pooled
session takes it up when bytes arrive. These tests drive many parked
connections over the wire: woken all at once, across a reload, past the idle
timeout, at shutdown, half-closed, and what each one costs in resident memory.
"""

import os
import re
import resource
import selectors
import signal
import socket
import time

import pytest

import mcwire
from fake_backend import FakeBackend
from mcwire import Conn
from test_operations import alive, poll, stats
from test_reload import TOO_LARGE, reload_with, set_value
from test_router import router_yaml
from test_watch import read_until, start_watch

BACKENDS = ["epoll", "io_uring"]


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 200
    if hard != resource.RLIM_INFINITY and hard < want:
        pytest.skip(f"RLIMIT_NOFILE hard limit {hard} < {want}")
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def open_many(server, n):
    socks = []
    try:
        for _ in range(n):
            s = socket.create_connection(server.address, timeout=10)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            socks.append(s)
    except BaseException:
        for s in socks:
            s.close()
        raise
    return socks


def exchange_all(socks, requests, done, timeout=20.0):
    """Sends requests[i] on socks[i], every one before any reply is read (so
    the server finds them all ready at once), then reads each socket until
    done(i, data) holds. Returns the replies."""
    for s, r in zip(socks, requests):
        s.sendall(r)
    replies = [b""] * len(socks)
    pending = set(range(len(socks)))
    sel = selectors.DefaultSelector()
    for i, s in enumerate(socks):
        sel.register(s, selectors.EVENT_READ, i)
    deadline = time.monotonic() + timeout
    try:
        while pending:
            left = deadline - time.monotonic()
            assert left > 0, f"{len(pending)} of {len(socks)} connections not answered"
            for key, _ in sel.select(min(left, 1.0)):
                i = key.data
                chunk = key.fileobj.recv(65536)
                assert chunk, f"connection {i} closed"
                replies[i] += chunk
                if done(i, replies[i]):
                    pending.discard(i)
                    sel.unregister(key.fileobj)
    finally:
        sel.close()
    return replies


def close_all(socks):
    for s in socks:
        s.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_many_parked_connections_woken_at_once_get_their_own_answers(ithaca_factory, backend):
    n = 1500
    raise_nofile(n)
    server = ithaca_factory(args=["-c", str(n + 100)], config_text=f"server:\n  io_backend: {backend}\n")
    socks = open_many(server, n)
    try:
        # Each stores its own key: every connection is taken up once, then parks.
        sets = [b"set k%d 0 0 %d\r\nv%d\r\n" % (i, len(b"v%d" % i), i) for i in range(n)]
        exchange_all(socks, sets, lambda i, d: d == b"STORED\r\n")
        with Conn(*server.address) as c:
            assert int(stats(c)["curr_connections"]) == n + 1
        # All wake at once, each with a pipeline of three requests: the
        # replies come back whole, in order, on the right connection.
        gets = [b"get k%d\r\nincr nope 1\r\nget k%d k%d\r\n" % (i, i, (i + 1) % n) for i in range(n)]

        def want(i):
            j = (i + 1) % n
            return (b"VALUE k%d 0 %d\r\nv%d\r\nEND\r\n" % (i, len(b"v%d" % i), i) + b"NOT_FOUND\r\n" +
                    b"VALUE k%d 0 %d\r\nv%d\r\n" % (i, len(b"v%d" % i), i) +
                    b"VALUE k%d 0 %d\r\nv%d\r\nEND\r\n" % (j, len(b"v%d" % j), j))

        replies = exchange_all(socks, gets, lambda i, d: len(d) >= len(want(i)))
        for i, r in enumerate(replies):
            assert r == want(i), (i, r)
        # And again, after they all parked once more.
        replies = exchange_all(socks, gets, lambda i, d: len(d) >= len(want(i)))
        assert all(r == want(i) for i, r in enumerate(replies))
    finally:
        close_all(socks)


def test_parked_connection_sees_a_reload_at_its_next_request(ithaca_factory):
    conf = "logging:\n  level: info\ncache:\n  item_size_max: {}\n"
    server = ithaca_factory(config_text=conf.format("2m"))
    size = 600 * 1024
    with Conn(*server.address) as parked, Conn(*server.address) as other:
        assert set_value(parked, b"big", size) == b"STORED\r\n"
        # `parked` now waits with no request in progress while the file changes.
        reload_with(server, conf.format("512k"), applied="cache.item_size_max 2 MiB -> 512 KiB")
        assert alive(other)
        assert set_value(parked, b"big", size) == TOO_LARGE
        assert parked.call(b"get big\r\n") == b"END\r\n"
        reload_with(server, conf.format("2m"), applied="cache.item_size_max 512 KiB -> 2 MiB")
        assert set_value(parked, b"big", size) == b"STORED\r\n"


def test_idle_timeout_closes_parked_connections_with_its_reason(ithaca_factory):
    n = 40
    server = ithaca_factory(config_text="server:\n  idle_timeout: 300ms\n")
    w = start_watch(server, "connevents")
    socks = open_many(server, n)
    try:
        exchange_all(socks, [b"version\r\n"] * n, lambda i, d: d.endswith(b"\r\n"))
        t0 = time.monotonic()
        # Each parked one is closed: the client sees the end of the stream.
        for s in socks:
            s.settimeout(max(0.1, t0 + 5 - time.monotonic()))
            assert s.recv(16) == b""
        assert time.monotonic() - t0 >= 0.25
        reasons = []
        lines = []
        while len(reasons) < n:
            lines += read_until(w, r"type=conn_close ", timeout=5)
            reasons = [m.group(1) for line in lines for m in [re.search(r"type=conn_close .*reason=(\S+)", line)]
                       if m]
        assert reasons == ["idle_timeout"] * n, lines
        # Counted (memcached's idle_kicks) and gone from the registry.
        with Conn(*server.address) as c:
            s = stats(c)
            assert int(s["idle_kicks"]) == n, s
            assert int(s["curr_connections"]) == 2  # the watcher and this one
            conns = c.call(b"stats conns\r\n")
            assert len(set(re.findall(rb"STAT (\d+):addr ", conns))) == 2, conns
    finally:
        close_all(socks)
        w.close()


def test_a_request_in_flight_to_a_backend_is_not_idle(ithaca_factory):
    """Router: a client waiting on a slow backend is not idle however long
    the reply takes; once answered it parks and the idle timeout applies."""
    slow = FakeBackend("hang")
    try:
        config = router_yaml([slow.address], timeout="1500ms", protocol="ascii")
        config = "server:\n  idle_timeout: 400ms\n" + config
        server = ithaca_factory(config_text=config)
        with Conn(*server.address) as c:
            t0 = time.monotonic()
            reply = c.call(b"get k\r\n")
            assert time.monotonic() - t0 >= 1.0, reply
            assert reply.startswith(b"SERVER_ERROR") or reply == b"END\r\n", reply
            assert not c.is_closed(wait=0.1)
            assert c.is_closed(wait=3)
    finally:
        slow.close()


def test_clients_waiting_on_a_slow_backend_do_not_wait_for_each_other(ithaca_factory):
    """Router: 200 clients wake at once, each with a get that a backend
    answers 0.5 s late. Each waiting request holds a session, so the pool
    grows to serve the others meanwhile: all are answered in about one
    delay, not one after the other (100 s)."""
    n = 200
    slow = FakeBackend("slow", delay=0.5)
    try:
        server = ithaca_factory(config_text=router_yaml([slow.address], protocol="ascii"))
        socks = open_many(server, n)
        try:
            exchange_all(socks, [b"version\r\n"] * n, lambda i, d: d.endswith(b"\r\n"))
            t0 = time.monotonic()
            replies = exchange_all(socks, [b"get k%d\r\n" % i for i in range(n)],
                                   lambda i, d: d.endswith(b"\r\n"), timeout=20)
            took = time.monotonic() - t0
            assert all(r == b"END\r\n" for r in replies), [r for r in replies if r != b"END\r\n"][:3]
            assert 0.45 <= took < 5.0, took
        finally:
            close_all(socks)
    finally:
        slow.close()


def test_stats_conns_lists_parked_connections(ithaca):
    n = 30
    socks = open_many(ithaca, n)
    try:
        exchange_all(socks, [b"version\r\n"] * n, lambda i, d: d.endswith(b"\r\n"))
        with Conn(*ithaca.address) as c:
            conns = c.call(b"stats conns\r\n")
            ids = set(re.findall(rb"STAT (\d+):addr ", conns))
            assert len(ids) == n + 1, conns
            ports = {int(p) for p in re.findall(rb"STAT \d+:addr tcp:127\.0\.0\.1:(\d+)", conns)}
            assert {s.getsockname()[1] for s in socks} <= ports
    finally:
        close_all(socks)


def test_half_closed_peers_get_their_replies_then_the_close(ithaca):
    w = start_watch(ithaca, "connevents")
    try:
        with Conn(*ithaca.address) as c:
            assert c.call(b"set hc 0 0 2\r\nhi\r\n") == b"STORED\r\n"
            # Parked, then: a request and the end of the stream together.
            c.sock.sendall(b"get hc\r\n")
            c.sock.shutdown(socket.SHUT_WR)
            assert c.read_reply() == b"VALUE hc 0 2\r\nhi\r\nEND\r\n"
            assert c.is_closed(wait=3)
        lines = read_until(w, r"type=conn_close ", timeout=5)
        assert "reason=normal" in lines[-1], lines
        # A parked connection whose peer only half-closes is closed too.
        with Conn(*ithaca.address) as c:
            assert alive(c)
            c.sock.shutdown(socket.SHUT_WR)
            assert c.is_closed(wait=3)
    finally:
        w.close()


def test_quit_on_a_woken_connection(ithaca):
    with Conn(*ithaca.address) as c:
        assert alive(c)
        c.send(b"version\r\nquit\r\nversion\r\n")
        assert c.read_line().startswith(b"VERSION ")
        assert c.is_closed(wait=3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_shutdown_with_parked_connections_ends_promptly(ithaca_factory, backend):
    n = 800
    raise_nofile(n)
    server = ithaca_factory(args=["-c", str(n + 100)], config_text=f"server:\n  io_backend: {backend}\n")
    socks = open_many(server, n)
    try:
        exchange_all(socks, [b"version\r\n"] * n, lambda i, d: d.endswith(b"\r\n"))
        # A few are mid-request (an incomplete value) when the signal comes.
        for s in socks[:10]:
            s.sendall(b"set partial 0 0 10\r\nabc")
        t0 = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(10) == 0
        assert time.monotonic() - t0 < 3.0
        for s in socks:
            s.settimeout(2)
            try:
                assert s.recv(16) == b""
            except ConnectionResetError:
                pass
    finally:
        close_all(socks)


def test_rss_per_idle_connection_stays_small(ithaca_factory):
    """Each idle connection costs its socket state, not a coroutine stack and
    a read buffer (about 800 B measured at 10,000; 10,486 B before parking).
    The cost is the growth from 500 served connections (the sessions, their
    buffers and the allocator's arenas warmed up) to 2,500; the bound is
    generous so that other allocations fit in it."""
    if os.environ.get("ITHACA_SANITIZED"):
        pytest.skip("AddressSanitizer's redzones and quarantine are not what a connection costs")
    warm, n = 500, 2000
    raise_nofile(warm + n)
    server = ithaca_factory(args=["-c", str(warm + n + 100)])
    pid = server.proc.pid
    socks = []
    try:
        with Conn(*server.address) as c:
            for count in (warm, n):
                more = open_many(server, count)
                socks += more
                exchange_all(more, [b"get idle_probe\r\n"] * count, lambda i, d: d == b"END\r\n")
                assert poll(lambda: int(stats(c)["curr_connections"]) == len(socks) + 1, 5)
                if count == warm:
                    before = mcwire.vm_rss_bytes(pid)
            per_conn = (mcwire.vm_rss_bytes(pid) - before) / n
            assert per_conn < 2048, f"{per_conn:.0f} B per idle connection"
    finally:
        close_all(socks)
