"""One client's requests never reach another client (issue 28, items 1 and 2).

A worker's pooled session serves one connection after another with the same
in-flight queue and reply buffer, so whatever a connection leaves behind when
it goes (requests still out to a server, replies not written, a `quit`'s
close) must go with it. Each case is the probe's own, with its sizes and
counts, against a real memcached behind the router."""

import socket
import struct
import time

import pytest

import mcwire
from test_router import addr, router_yaml, stats

BIG = 300_000  # the value whose five replies pass the 1 MiB reply high-water mark


def only_reply(conn, expected, quiet=0.02):
    """Reads `expected` and then checks that nothing else arrives within
    `quiet` seconds. (A stray reply from another client would come first: the
    leaked request sits at the head of the session's queue.)"""
    got = conn.read_exact(len(expected))
    assert got == expected, f"expected {expected!r}, got {got[:120]!r}"
    conn.sock.settimeout(quiet)
    try:
        extra = conn.sock.recv(65536)
    except socket.timeout:
        extra = b""
    assert extra == b"", f"after {expected!r} the connection also got {extra[:120]!r}"


def close_at_once(sock, reset):
    if reset:
        # RST instead of FIN: SO_LINGER with a zero timeout.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


@pytest.mark.parametrize("reset", [False, True], ids=["fin", "rst"])
@pytest.mark.parametrize("workers", [1, 2])
def test_replies_of_a_closed_client_never_reach_the_next_one(ithaca_factory, memcached, reset, workers):
    """The probe's smallest case: `get big` x 5 (300,000-byte value) and an
    immediate close, then a new connection's `version`, 20 rounds. Before the
    fix the new connection got `VALUE big 0 300000...` in 11 of 20 rounds."""
    router = ithaca_factory(config_text=router_yaml([addr(memcached)], protocol="ascii", workers=workers))
    value = b"B" * BIG
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"set big 0 0 %d\r\n%s\r\n" % (BIG, value)) == b"STORED\r\n"
        version = c.call(b"version\r\n")
        assert version.startswith(b"VERSION ")
    for _ in range(20):
        a = socket.create_connection((router.host, router.port))
        a.sendall(b"get big\r\n" * 5)
        close_at_once(a, reset)
        time.sleep(0.1)  # A's session is done with A
        # Whichever pooled session served A serves one of these next (the
        # idle sessions take connections in turn).
        for _ in range(8):
            with mcwire.Conn(router.host, router.port, timeout=5) as b:
                b.send(b"version\r\n")
                only_reply(b, version)
    # And the router still serves the value whole.
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get big\r\n") == b"VALUE big 0 %d\r\n%s\r\nEND\r\n" % (BIG, value)


QUITS = {
    "ascii": (b"get q\r\n", b"quit\r\n"),
    "binary": (mcwire.G(b"q"), mcwire.pack_request(0x07)),  # GET, then QUIT
    "binary_quitq": (mcwire.G(b"q"), mcwire.pack_request(0x17)),  # GET, then QUITQ
}


@pytest.mark.parametrize("quit_kind", list(QUITS))
@pytest.mark.parametrize("protocol", ["ascii", "meta", "auto"])
def test_quit_closes_only_its_own_connection(ithaca_factory, memcached, protocol, quit_kind):
    """B sets `q`; A connects, gets `q`, quits and closes; B's next two routed
    gets are answered and B stays open. Before the fix the second was EOF: the
    quit's Close stayed on the session's tail slot and closed B."""
    router = ithaca_factory(config_text=router_yaml([addr(memcached)], protocol=protocol, workers=1))
    with mcwire.Conn(router.host, router.port) as b:
        assert b.call(b"set q 0 0 1\r\nv\r\n") == b"STORED\r\n"
        for _ in range(3):
            with mcwire.Conn(router.host, router.port) as a:
                get, quit = QUITS[quit_kind]
                # A's get is answered, then A's quit (alone in its batch, so
                # answered at once) closes A.
                a.send(get)
                if quit_kind == "ascii":
                    assert a.read_reply() == b"VALUE q 0 1\r\nv\r\nEND\r\n"
                else:
                    got = a.read_binary_response()
                    assert got["status"] == 0 and got["value"] == b"v", got
                a.send(quit)
                if quit_kind == "binary":
                    assert a.read_binary_response()["opcode"] == 0x07
                assert a.is_closed(), "quit did not close its own connection"
            # Each of B's gets is a batch of its own, taken by whichever
            # pooled session is free: one of them is the session A's quit ran on.
            for _ in range(8):
                assert b.call(b"get q\r\n") == b"VALUE q 0 1\r\nv\r\nEND\r\n"
            assert not b.is_closed(wait=0.2), "another client's quit closed this connection"
        s = stats(b)
        assert int(s["curr_connections"]) >= 1


def test_writes_of_a_client_that_reset_reach_the_server_though_the_probe_was_pending(ithaca_factory, memcached):
    # A client pipelines 20 sets (and gets between them) to a router that has
    # not spoken to the pool's server yet (protocol: auto, so its requests
    # wait for the probe's answer, 0.3 s away behind a relay), and resets
    # its connection 50 ms later, once the router has read them. The gets
    # need not be sent; every set must be, as memcached applies each request
    # it has read. (The orphans keep a copy of their values for this.)
    from fake_backend import FakeBackend
    relay = FakeBackend("lag", target=(memcached.host, memcached.port), delay=0.3)
    try:
        router = ithaca_factory(config_text=router_yaml([relay.address], max_inflight=1))
        batch = b"".join(b"set w%d 0 0 4\r\nv%03d\r\nget w%d\r\n" % (i, i, i) for i in range(20))
        sock = socket.create_connection((router.host, router.port))
        sock.sendall(batch)
        time.sleep(0.05)
        close_at_once(sock, True)
        want = {b"w%d" % i: b"v%03d" % i for i in range(20)}
        deadline = time.monotonic() + 30
        with mcwire.Conn(memcached.host, memcached.port) as direct:
            while True:
                reply = direct.call(b"get " + b" ".join(want) + b"\r\n")
                got = {key: data for key, _, data, _ in mcwire.parse_values(reply)}
                if got == want or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
        assert got == want, f"{len(want) - len(got)} of 20 sets never reached the server"
    finally:
        relay.close()
