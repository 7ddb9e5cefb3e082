"""Many clients at once, and many idle clients: the server keeps answering."""

import resource
import selectors
import socket
import time

import pytest

import mcwire

CLIENTS = 1000
ROUND_TRIPS = 3
IDLE = 10_000
BUDGET = 60.0  # seconds; generous for a 2-core box shared with others


def _raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < need:
        pytest.fail(f"RLIMIT_NOFILE hard limit is {hard}, this test needs {need}: "
                    f"raise it (ulimit -Hn / limits.conf / docker --ulimit nofile)", pytrace=False)
    if soft == resource.RLIM_INFINITY or soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))


class _Client:
    """A non-blocking client doing ROUND_TRIPS of set+get on its own key."""

    def __init__(self, i, address):
        self.i = i
        self.key = b"conn_%d" % i
        self.sock = socket.socket()
        self.sock.setblocking(False)
        self.sock.connect_ex(address)
        self.trip = 0
        self.out = b""
        self.inbuf = b""
        self.expect = b""
        self._next()

    def _next(self):
        value = b"value-%d-%d" % (self.i, self.trip)
        self.out = b"set %s 0 0 %d\r\n%s\r\nget %s\r\n" % (self.key, len(value), value, self.key)
        self.expect = b"STORED\r\nVALUE %s 0 %d\r\n%s\r\nEND\r\n" % (self.key, len(value), value)

    def on_write(self):
        if self.out:
            n = self.sock.send(self.out)
            self.out = self.out[n:]

    def on_read(self):
        chunk = self.sock.recv(4096)
        if not chunk:
            raise AssertionError(f"client {self.i}: connection closed by server")
        self.inbuf += chunk
        if len(self.inbuf) >= len(self.expect):
            assert self.inbuf == self.expect, f"client {self.i}: got {self.inbuf!r}, want {self.expect!r}"
            self.inbuf = b""
            self.trip += 1
            if self.trip == ROUND_TRIPS:
                return True
            self._next()
        return False


def test_1000_concurrent_clients(ithaca_factory):
    server = ithaca_factory(args=["-c", "20000"])
    _raise_nofile(CLIENTS + 200)
    sel = selectors.DefaultSelector()
    clients = [_Client(i, server.address) for i in range(CLIENTS)]
    try:
        for c in clients:
            sel.register(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, c)
        left = len(clients)
        deadline = time.monotonic() + BUDGET
        while left:
            assert time.monotonic() < deadline, f"{left} of {CLIENTS} clients unfinished after {BUDGET}s"
            for key, ev in sel.select(1.0):
                c = key.data
                try:
                    if ev & selectors.EVENT_WRITE:
                        c.on_write()
                        if not c.out:
                            sel.modify(c.sock, selectors.EVENT_READ, c)
                    if ev & selectors.EVENT_READ and c.on_read():
                        sel.unregister(c.sock)
                        left -= 1
                        continue
                    if c.out and ev & selectors.EVENT_READ:
                        sel.modify(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, c)
                except (BlockingIOError, InterruptedError):
                    pass
    finally:
        sel.close()
        for c in clients:
            c.sock.close()


def _curr_connections(conn):
    return int(mcwire.parse_stats(conn.call(b"stats\r\n"))["curr_connections"])


def test_10000_idle_connections(ithaca_factory):
    server = ithaca_factory(args=["-c", "20000"])
    _raise_nofile(IDLE + 500)
    idle = []
    try:
        deadline = time.monotonic() + BUDGET
        for _ in range(IDLE):
            assert time.monotonic() < deadline, f"only {len(idle)} connections opened in {BUDGET}s"
            idle.append(socket.create_connection(server.address, timeout=10))
        with mcwire.Conn(*server.address) as probe:
            # connect() completes in the kernel backlog; wait until the server
            # has really accepted them all (bounded wait, not a sleep).
            while _curr_connections(probe) < IDLE + 1:
                assert time.monotonic() < deadline, \
                    f"server accepted {_curr_connections(probe)} of {IDLE + 1} connections in {BUDGET}s"
                time.sleep(0.05)
            assert probe.call(b"set busy 0 0 2\r\nok\r\n") == b"STORED\r\n"
            assert probe.call(b"get busy\r\n") == b"VALUE busy 0 2\r\nok\r\nEND\r\n"
        # idle connections are still served, the first, the last, and some between
        for s in idle[:: IDLE // 10] + [idle[-1]]:
            s.sendall(b"get busy\r\n")
        for s in idle[:: IDLE // 10] + [idle[-1]]:
            data = b""
            while not data.endswith(b"END\r\n"):
                chunk = s.recv(4096)
                assert chunk, "an idle connection was closed by the server"
                data += chunk
            assert data == b"VALUE busy 0 2\r\nok\r\nEND\r\n"
    finally:
        for s in idle:
            s.close()
