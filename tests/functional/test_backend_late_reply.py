"""A request that times out at a backend leaves its connection open
(mcrouter's behaviour): the client gets `SERVER_ERROR Reply timeout` at its
deadline, the late reply is read and dropped when it comes (`late_replies`),
and every request behind it on that connection gets its own reply. A server
that never answers gets its connection closed after a bound (`late_closes`):
when the timed-out requests fill `max_inflight`, or the reply it owes first
is `late_reply_timeout` late.

The backend is a real memcached behind fake_backend.py's `lag` relay with
`hold`: the requests from the one naming a `slow` key on are held until the
test releases them, so a late reply comes when the test says, in order."""

import time

import pytest

import mcwire
from fake_backend import FakeBackend
from test_ascii_diff import SERVER_ARGS
from test_router import router_yaml, stats, wait_for

TIMEOUT = b"SERVER_ERROR Reply timeout\r\n"
ONE_WORKER = ["-t", "1"]  # one connection to the server, for every client


@pytest.fixture
def gated(memcached_factory):
    real = memcached_factory(args=SERVER_ARGS)
    gate = FakeBackend("lag", target=(real.host, real.port), delay=0.0)
    gate.hold = b"slow"
    # Values that differ per key, so a reply given to the wrong request shows.
    with mcwire.Conn(real.host, real.port) as c:
        for i in range(20):
            v = b"value-of-k%d" % i
            assert c.call(b"set k%d %d 0 %d\r\n%s\r\n" % (i, i, len(v), v)) == b"STORED\r\n"
        for name in (b"slow", b"slow1", b"slow2", b"slow3"):
            assert c.call(b"set %s 9 0 4\r\nSLOW\r\n" % name) == b"STORED\r\n"
    yield gate
    gate.close()


def server_stats(conn, gate):
    prefix = f"main/{gate.address}:"
    return {k[len(prefix):]: v for k, v in stats(conn, "servers").items() if k.startswith(prefix)}


def value(i):
    return b"VALUE k%d %d %d\r\nvalue-of-k%d\r\n" % (i, i, len(b"value-of-k%d" % i), i)


@pytest.mark.parametrize("protocol", ["ascii", "meta"])
def test_a_timed_out_request_keeps_the_connection_and_its_late_reply_is_dropped(ithaca_factory, gated, protocol):
    router = ithaca_factory(args=ONE_WORKER, config_text=router_yaml([gated.address], timeout="200ms",
                                                    protocol=protocol, failure_limit=100))
    with mcwire.Conn(router.host, router.port) as c, mcwire.Conn(router.host, router.port) as other:
        assert c.call(b"get k1\r\n") == value(1) + b"END\r\n"  # the connection is up
        t0 = time.monotonic()
        assert c.call(b"get slow\r\n") == TIMEOUT
        assert time.monotonic() - t0 < 1.0
        s = server_stats(other, gated)
        assert s["connections"] == "1" and s["failures_timeout"] == "1" and s["inflight"] == "0", s
        gated.release()  # the late reply (VALUE slow ... END) comes now, after the timeout
        wait_for(lambda: server_stats(other, gated).get("late_replies") == "1", what="the late reply dropped")
        assert c.call(b"get k2\r\n") == value(2) + b"END\r\n"
        assert other.call(b"get k3\r\n") == value(3) + b"END\r\n"
        assert c.call(b"get k4 k5\r\n") == value(4) + value(5) + b"END\r\n"
        s = server_stats(other, gated)
        assert s["connects"] == "1" and s["connections"] == "1", s
        assert s["failures_timeout"] == "1" and s["failures_connection"] == "0" and s["late_closes"] == "0", s


def binary_get(key, opaque):
    return mcwire.pack_request(mcwire.OP_GETK, key=key, opaque=opaque)


@pytest.mark.parametrize("protocol", ["ascii", "meta"])
def test_requests_behind_timed_out_ones_each_get_their_own_reply(ithaca_factory, gated, protocol):
    """Three requests time out on one backend connection (a multi-key ascii
    get, an mg, a binary getk), with requests of other clients pipelined
    behind them (single and multi-key gets, mg, binary, a set); then the
    backend answers everything in order: the late replies are dropped and
    each client gets exactly its own values."""
    router = ithaca_factory(args=ONE_WORKER, config_text=router_yaml([gated.address], timeout="2s",
                                                    protocol=protocol, failure_limit=100))
    conns = [mcwire.Conn(router.host, router.port) for _ in range(8)]
    try:
        slow_ascii, slow_meta, slow_bin, a, b, m, binc, w = conns
        for c in (slow_ascii, slow_meta, a, b, m, w):  # (a connection's first byte sets its protocol)
            assert c.call(b"version\r\n").startswith(b"VERSION")
        assert a.call(b"get k0\r\n") == value(0) + b"END\r\n"
        slow_ascii.send(b"get slow1 k9\r\n")
        slow_meta.send(b"mg slow2 v f\r\n")
        slow_bin.send(binary_get(b"slow3", 7))
        wait_for(lambda: all(k in gated.seen for k in (b"slow1", b"slow2", b"slow3")), what="the slow requests sent")
        # Half the timeout later the others go out behind them: their
        # deadlines come a second after the slow ones'.
        time.sleep(1.0)
        a.send(b"get k1\r\nget k2\r\nget k3\r\n")
        b.send(b"get k4 k5 k6\r\n")
        m.send(b"mg k7 v f\r\nmg k8 v\r\nmg nosuchkey v\r\n")
        binc.send(binary_get(b"k10", 10) + binary_get(b"k11", 11))
        w.send(b"set written 0 0 3\r\nnew\r\n")
        wait_for(lambda: b"written" in gated.seen and b"k11" in gated.seen, what="the requests behind sent")
        # (A multi-key ascii get's keys on a failed server are misses.)
        assert slow_ascii.read_reply() == b"END\r\n"
        assert slow_meta.read_line() == TIMEOUT
        r = slow_bin.read_binary_response()
        assert r["status"] != 0 and r["opaque"] == 7 and b"SLOW" not in r["value"], r
        gated.release()
        assert a.read_replies(3) == [value(i) + b"END\r\n" for i in (1, 2, 3)]
        assert b.read_reply() == value(4) + value(5) + value(6) + b"END\r\n"
        assert m.read_line() == b"VA 11 f7\r\n" and m.read_line() == b"value-of-k7\r\n"
        assert m.read_line() == b"VA 11\r\n" and m.read_line() == b"value-of-k8\r\n"
        assert m.read_line() == b"EN\r\n"
        for key, opaque in ((b"k10", 10), (b"k11", 11)):
            r = binc.read_binary_response()
            assert (r["status"], r["opaque"], r["key"], r["value"]) == (0, opaque, key, b"value-of-" + key), r
        assert w.read_line() == b"STORED\r\n"
        with mcwire.Conn(router.host, router.port) as c:
            wait_for(lambda: server_stats(c, gated)["late_replies"] == "3", what="the three late replies dropped")
            assert c.call(b"get written slow1\r\n") == b"VALUE written 0 3\r\nnew\r\nVALUE slow1 9 4\r\nSLOW\r\nEND\r\n"
            s = server_stats(c, gated)
            assert s["connects"] == "1" and s["connections"] == "1", s
            assert s["failures_timeout"] == "3" and s["failures_connection"] == "0", s
            assert s["inflight"] == "0" and s["late_closes"] == "0", s
    finally:
        for c in conns:
            c.close()


def test_a_server_that_never_answers_is_closed_when_timed_out_requests_fill_max_inflight(ithaca_factory):
    hung = FakeBackend("hang")
    try:
        router = ithaca_factory(args=ONE_WORKER, config_text=router_yaml([hung.address], timeout="200ms",
                                                        protocol="ascii", failure_limit=100, max_inflight=4))
        with mcwire.Conn(router.host, router.port) as c, mcwire.Conn(router.host, router.port) as s:
            for i in range(3):
                assert c.call(b"get k%d\r\n" % i) == TIMEOUT
                st = server_stats(s, hung)
                assert st["connections"] == "1" and st["late_closes"] == "0" and st["inflight"] == "0", st
            # The fourth fills the cap: nothing more could be sent on it.
            assert c.call(b"get k3\r\n") == TIMEOUT
            wait_for(lambda: server_stats(s, hung)["connections"] == "0", what="the connection closed")
            st = server_stats(s, hung)
            assert st["late_closes"] == "1" and st["connects"] == "1" and st["failures_timeout"] == "4", st
            # The next request connects afresh; twenty more time out, and the
            # timed-out ones never outgrow the cap: a close every four.
            for i in range(20):
                assert c.call(b"get m%d\r\n" % i) == TIMEOUT
            wait_for(lambda: server_stats(s, hung)["late_closes"] == "6", what="a close every four timeouts")
            st = server_stats(s, hung)
            assert st["connects"] == "6" and st["failures_timeout"] == "24", st
    finally:
        hung.close()


def test_a_server_that_never_answers_is_closed_after_late_reply_timeout(ithaca_factory):
    hung = FakeBackend("hang")
    try:
        router = ithaca_factory(args=ONE_WORKER, config_text=router_yaml([hung.address], timeout="200ms", protocol="ascii",
                                                        failure_limit=100, late_reply_timeout="1s"))
        with mcwire.Conn(router.host, router.port) as c, mcwire.Conn(router.host, router.port) as s:
            assert c.call(b"get k\r\n") == TIMEOUT
            timed_out = time.monotonic()
            st = server_stats(s, hung)
            assert st["connections"] == "1" and st["late_closes"] == "0", st
            wait_for(lambda: server_stats(s, hung)["connections"] == "0", what="the connection closed")
            assert time.monotonic() - timed_out > 0.8
            st = server_stats(s, hung)
            assert st["late_closes"] == "1" and st["failures_timeout"] == "1", st
            assert c.call(b"get k\r\n") == TIMEOUT  # a fresh connection
            assert server_stats(s, hung)["connects"] == "2"
    finally:
        hung.close()
