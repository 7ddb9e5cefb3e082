"""`protocol: auto` (the default): each new backend connection asks the server
whether it speaks meta (`mn` -> `MN`) and then speaks meta to it, or ascii if
it answers `ERROR` (an old memcached). Over meta a binary set is one backend
round trip (`ms ... c` returns the CAS) and keys with a space work; over
ascii the set is followed by a `gets` for its CAS, as before."""

import socket
import threading
import time

import pytest

import mcwire
from fake_backend import FakeBackend
from mcwire import OP_GETK, G, S


def router_config(server, protocol=None):
    lines = ["pools:", "  main:", f'    servers: ["{server}"]', "    timeout: 10s"]
    if protocol:
        lines.append(f"    protocol: {protocol}")
    lines += ["route:", "  type: pool", "  pool: main"]
    return "\n".join(lines) + "\n"


def backend_stats(server):
    with mcwire.Conn(server.host, server.port) as c:
        c.send(b"stats\r\n")
        s = mcwire.parse_stats(c.read_reply())
    return {k: int(s[k]) for k in ("cmd_get", "cmd_set", "cmd_touch")}


def server_protocol(router, address):
    with mcwire.Conn(router.host, router.port) as c:
        c.send(b"stats servers\r\n")
        return mcwire.parse_stats(c.read_reply())[f"main/{address}:protocol"]


def binary_call(conn, packet):
    conn.send(packet)
    return conn.read_binary_response()


class AsciiOnlyMemcached(FakeBackend):
    """A memcached without meta: relays every byte to a real memcached, but
    answers `ERROR` to an `mn` that opens a connection (the probe), as
    memcached before 1.6 does. Keeps what the router sent."""

    def __init__(self, target):
        self.sent = bytearray()
        self.probes = 0
        self._lock = threading.Lock()
        super().__init__("forward", target=target)

    def _serve(self, conn):
        upstream = socket.create_connection(self.target, timeout=5)

        def back():
            try:
                while True:
                    data = upstream.recv(65536)
                    if not data:
                        return
                    conn.sendall(data)
            except OSError:
                return

        threading.Thread(target=back, daemon=True).start()
        conn.settimeout(0.2)
        first = True
        try:
            while not self._stop.is_set():
                try:
                    data = conn.recv(65536)
                except socket.timeout:
                    continue
                if not data:
                    return
                with self._lock:
                    self.sent += data
                if first and data.startswith(b"mn\r\n"):
                    self.probes += 1
                    conn.sendall(b"ERROR\r\n")
                    data = data[4:]
                first = False
                if data:
                    upstream.sendall(data)
        except OSError:
            return
        finally:
            upstream.close()


def test_default_speaks_meta_one_round_trip_per_binary_set(ithaca_factory, memcached):
    router = ithaca_factory(config_text=router_config(f"{memcached.host}:{memcached.port}"))
    with mcwire.Conn(router.host, router.port) as c:
        # The first request opens the connection (and probes it).
        assert binary_call(c, S(b"warm", b"w"))["status"] == mcwire.ST_OK
        before = backend_stats(memcached)
        r = binary_call(c, S(b"k", b"value", flags=5))
        assert r["status"] == mcwire.ST_OK and r["cas"] != 0
        after = backend_stats(memcached)
        # One ms with c: a set and no get for the CAS.
        assert after["cmd_set"] - before["cmd_set"] == 1
        assert after["cmd_get"] - before["cmd_get"] == 0, "a binary set over meta must not need a gets"
        with mcwire.Conn(memcached.host, memcached.port) as d:
            assert d.call(b"mg k c f v\r\n") == b"VA 5 c%d f5\r\nvalue\r\n" % r["cas"]
        # A key ascii cannot carry goes base64 over meta.
        assert binary_call(c, S(b"a b", b"spaced"))["status"] == mcwire.ST_OK
        got = binary_call(c, G(b"a b", OP_GETK))
        assert got["status"] == mcwire.ST_OK and got["key"] == b"a b" and got["value"] == b"spaced"
    assert server_protocol(router, f"{memcached.host}:{memcached.port}") == "meta"


def test_auto_falls_back_to_ascii_for_a_server_without_meta(ithaca_factory, memcached):
    old = AsciiOnlyMemcached((memcached.host, memcached.port))
    try:
        router = ithaca_factory(config_text=router_config(old.address))
        with mcwire.Conn(router.host, router.port) as c:
            r = binary_call(c, S(b"k", b"value", flags=5))
            assert r["status"] == mcwire.ST_OK
            with mcwire.Conn(memcached.host, memcached.port) as d:
                # The reply's CAS is the item's, learned with a gets.
                assert d.call(b"gets k\r\n") == b"VALUE k 5 5 %d\r\nvalue\r\nEND\r\n" % r["cas"]
            assert r["cas"] != 0
            # A key with a space cannot be said in ascii: refused, clearly.
            bad = binary_call(c, S(b"a b", b"x"))
            assert bad["status"] == mcwire.ST_EINVAL
            assert b"needs a meta backend" in bad["value"]
        with mcwire.Conn(router.host, router.port) as t:
            assert t.call(b"get k\r\n") == b"VALUE k 5 5\r\nvalue\r\nEND\r\n"
        assert server_protocol(router, old.address) == "ascii"
        assert old.probes >= 1
        sent = bytes(old.sent)
        assert b"gets k\r\n" in sent
        # Nothing but the probe in meta.
        assert sent.count(b"mn\r\n") == old.probes
        assert not any(line.startswith((b"ms ", b"mg ", b"md ", b"ma ")) for line in sent.split(b"\r\n"))
    finally:
        old.close()


def test_explicit_ascii_sends_no_probe(ithaca_factory, memcached):
    old = AsciiOnlyMemcached((memcached.host, memcached.port))
    try:
        router = ithaca_factory(config_text=router_config(old.address, protocol="ascii"))
        with mcwire.Conn(router.host, router.port) as c:
            assert c.call(b"set a 0 0 1\r\n1\r\n") == b"STORED\r\n"
        assert old.probes == 0 and not bytes(old.sent).startswith(b"mn")
    finally:
        old.close()


@pytest.mark.parametrize("answer", [b"HELLO\r\n", None])
def test_a_server_that_fails_the_probe_is_not_used(ithaca_factory, answer):
    # A server that answers `mn` with nonsense, or never answers: the
    # probe fails (on the nonsense at once, on silence after the pool's
    # `timeout`, which a slow but honest server must be given) and the
    # request gets SERVER_ERROR, well inside the client's 10 s.
    fake = FakeBackend("garbage" if answer else "hang")
    try:
        router = ithaca_factory(config_text=router_config(fake.address).replace(
            "    timeout: 10s\n", "    timeout: 2s\n    connect_timeout: 300ms\n"))
        with mcwire.Conn(router.host, router.port) as c:
            started = time.monotonic()
            reply = c.call(b"get a\r\n")
            assert reply.startswith(b"SERVER_ERROR"), reply
            assert time.monotonic() - started < 6
    finally:
        fake.close()
