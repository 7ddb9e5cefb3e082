"""memcached's read-time rule for a text command line still without its
newline: past 2048 bytes only a multiget (`get `/`gets ` after at most 100
leading spaces) may grow; anything else closes the connection without a reply.
memcached judges what its 16 KiB read brought, so a long line that arrives
whole is served. Each case runs against ithaca and a real memcached (the rule
is the same in 1.6.18 and 1.6.45: t/getset.t "close if no get found in 2k")."""

import socket
import time

import pytest

from conftest import HOST

SPACES = b" " * 2048
# How long the server gets to see a partial line before the rest follows: the
# cases pass however long it takes, a short pause only makes the partial
# line's own read likely (as t/getset.t does with a one-second sleep).
PAUSE = 0.2


def connect(server):
    s = socket.create_connection((HOST, server.port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_until_closed(s):
    """Everything the server sends until it closes (a timeout fails the test)."""
    out = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return out
        out += chunk


def read_line(s):
    out = b""
    while not out.endswith(b"\r\n"):
        chunk = s.recv(1)
        assert chunk, f"closed after {out!r}"
        out += chunk
    return out


CLOSING = [
    b"incr " + SPACES + b" manyspaces 1",
    b"mg " + SPACES + b"k v",
    b"set k 0 0 1" + SPACES,
    b" " * 101 + b"get " + SPACES + b"k",      # more than 100 leading spaces
    b"getx " + SPACES + b"k",
    b" " * 14000,                               # t/getset.t "oops all spaces"
]


@pytest.mark.parametrize("partial", CLOSING, ids=range(len(CLOSING)))
def test_a_long_partial_line_that_is_not_a_get_closes(ithaca, memcached, partial):
    got = {}
    for server in (ithaca, memcached):
        with connect(server) as s:
            s.sendall(b"set before 0 0 1\r\nx\r\n" + partial)
            got[server.name] = read_until_closed(s)
        with connect(server) as s:
            s.sendall(b"get before\r\n")
            assert read_line(s) == b"VALUE before 0 1\r\n", server.name
    # The request before the line was done on both; memcached drops its
    # reply queued in the same read as it closes, ithaca sends it (a
    # deliberate difference: a client is told what was done).
    assert got[ithaca.name] == b"STORED\r\n"
    assert got[memcached.name] in (b"", b"STORED\r\n")


@pytest.mark.parametrize("partial", [b"get " + SPACES + b"manyspaces", b"gets " + SPACES + b"a b",
                                     b" " * 100 + b"get " + SPACES + b"k"])
def test_a_long_partial_multiget_waits_for_its_newline(ithaca, memcached, partial):
    for server in (ithaca, memcached):
        with connect(server) as s:
            s.sendall(partial)
            time.sleep(PAUSE)
            s.sendall(b"\r\n")
            assert read_line(s) == b"END\r\n", server.name
            s.sendall(b"version\r\n")
            assert read_line(s).startswith(b"VERSION "), server.name


def test_a_long_line_that_arrives_whole_is_served(ithaca, memcached):
    for server in (ithaca, memcached):
        with connect(server) as s:
            # 8 KiB in one send: more than ithaca's 4 KiB first read, all of it
            # in the socket when the server looks.
            s.sendall(b"incr " + SPACES * 4 + b" nokey 1\r\n")
            assert read_line(s) == b"NOT_FOUND\r\n", server.name


def test_a_value_in_progress_is_not_a_line(ithaca, memcached):
    for server in (ithaca, memcached):
        with connect(server) as s:
            value = b"v" * 5000
            s.sendall(b"set big 0 0 5000\r\n" + value[:3000])
            time.sleep(PAUSE)
            s.sendall(value[3000:] + b"\r\n")
            assert read_line(s) == b"STORED\r\n", server.name
