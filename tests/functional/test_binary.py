"""The binary protocol over the wire, differential against a real memcached:
the same packets go to ithaca and to memcached on fresh connections, and the
responses must be equal after CAS values are replaced by their first-seen
ordinal on each connection (0 stays 0). The Version body and Stat values are
the servers' own and are compared by shape only.

A scenario is a list of steps; a step is a list of packets, or a callable
(responses so far) -> packets, so a CAS handed out by one server can be sent
back to that same server."""

import re

import pytest

import mcwire
from mcwire import (OP_ADD, OP_ADDQ, OP_APPEND, OP_APPENDQ, OP_DECREMENT, OP_DECREMENTQ, OP_DELETE,
                    OP_DELETEQ, OP_FLUSH, OP_FLUSHQ, OP_GAT, OP_GATK, OP_GATKQ, OP_GATQ, OP_GET,
                    OP_GETK, OP_GETKQ, OP_GETQ, OP_INCREMENT, OP_INCREMENTQ, OP_NOOP, OP_PREPEND,
                    OP_PREPENDQ, OP_QUIT, OP_QUITQ, OP_REPLACE, OP_REPLACEQ, OP_SET, OP_SETQ, OP_STAT,
                    OP_TOUCH, OP_VERSION, ST_UNKNOWN_COMMAND, pack_request as P, S, G, T, A, EXP)

OP_VERBOSITY = 0x1b
OP_SASL_LIST, OP_SASL_AUTH, OP_SASL_STEP = 0x20, 0x21, 0x22
NUMBER = re.compile(rb"[0-9]+ *")




def last_cas(responses):
    for r in reversed(responses):
        if r["cas"]:
            return r["cas"]
    raise AssertionError("no CAS in the responses so far")


SCENARIOS = {
    "get_family": [[
        S(b"a", b"hello", flags=7, opaque=1),
        G(b"a", opaque=2), G(b"a", OP_GETQ, 3), G(b"a", OP_GETK, 4), G(b"a", OP_GETKQ, 5),
        G(b"nx", opaque=6), G(b"nx", OP_GETQ, 7), G(b"nx", OP_GETK, 8), G(b"nx", OP_GETKQ, 9),
        S(b"big", b"v" * 5000), G(b"big", OP_GETK, 10), S(b"empty", b""), G(b"empty"),
    ]],
    "storage": [[
        S(b"k", b"1", op=OP_ADD, opaque=1), S(b"k", b"2", op=OP_ADD, opaque=2),
        S(b"k", b"3", op=OP_ADDQ, opaque=3), S(b"n", b"3", op=OP_ADDQ, opaque=4),
        S(b"k", b"r", flags=9, op=OP_REPLACE), S(b"nx", b"r", op=OP_REPLACE),
        S(b"nx", b"r", op=OP_REPLACEQ, opaque=5), S(b"k", b"rq", op=OP_REPLACEQ),
        P(OP_APPEND, key=b"k", value=b">>"), P(OP_PREPEND, key=b"k", value=b"<<"),
        P(OP_APPENDQ, key=b"k", value=b"!"), P(OP_PREPENDQ, key=b"k", value=b"?"),
        P(OP_APPEND, key=b"nx", value=b"x"), P(OP_PREPENDQ, key=b"nx", value=b"x", opaque=6),
        G(b"k"), G(b"n"), S(b"q", b"quiet", op=OP_SETQ, opaque=7), G(b"q"),
    ]],
    "cas": [
        [S(b"c", b"one"), G(b"c")],
        lambda rs: [S(b"c", b"two", cas=last_cas(rs) + 1, opaque=1),   # mismatch: exists
                    S(b"c", b"two", cas=last_cas(rs), opaque=2),       # match
                    S(b"nx", b"x", cas=5, opaque=3),                   # cas on a missing key
                    S(b"c", b"x", op=OP_ADD, cas=5, opaque=4),
                    S(b"nx", b"x", op=OP_REPLACE, cas=5, opaque=5),
                    S(b"c", b"x", op=OP_SETQ, cas=5, opaque=6)],
        lambda rs: [P(OP_APPEND, key=b"c", value=b"+", cas=last_cas(rs) + 7, opaque=7),
                    P(OP_APPEND, key=b"c", value=b"+", cas=last_cas(rs), opaque=8),
                    G(b"c")],
        lambda rs: [P(OP_DELETE, key=b"c", cas=last_cas(rs) + 1, opaque=9),
                    P(OP_DELETE, key=b"c", cas=last_cas(rs), opaque=10),
                    P(OP_DELETE, key=b"c", opaque=11), P(OP_DELETEQ, key=b"c", opaque=12),
                    S(b"d", b"x"), P(OP_DELETEQ, key=b"d", opaque=13), G(b"d")],
    ],
    "arithmetic": [
        [A(b"n", 5, 10, opaque=1),                          # missing, no vivify: not found
         A(b"n", 5, 10, exptime=0, opaque=2),               # created with the initial value
         A(b"n", 5, 10, exptime=0, opaque=3),
         A(b"n", 100, op=OP_DECREMENT, opaque=4),           # floors at 0
         A(b"m", 1, 7, exptime=86400, op=OP_DECREMENT),     # created, initial returned as is
         A(b"n", 3, op=OP_INCREMENTQ), A(b"n", 1, op=OP_DECREMENTQ), G(b"n"),
         A(b"nq", 1, op=OP_INCREMENTQ, opaque=5),           # a quiet miss is still reported
         S(b"s", b"abc"), A(b"s", 1, opaque=6), A(b"s", 1, op=OP_INCREMENTQ, opaque=7),
         S(b"w", b"18446744073709551615"), A(b"w", 2), G(b"w"),
         S(b"l", b"123", flags=5), A(b"l", 1), G(b"l")],
        lambda rs: [A(b"l", 1, cas=last_cas(rs) + 1, opaque=8), A(b"l", 1, cas=last_cas(rs), opaque=9)],
    ],
    "touch_gat": [[
        S(b"t", b"vv", flags=3), T(b"t", 86400, opaque=1), T(b"nx", 86400, opaque=2),
        T(b"t", 0, OP_GAT, 3), T(b"t", 0, OP_GATQ, 4), T(b"t", 0, OP_GATK, 5), T(b"t", 0, OP_GATKQ, 6),
        T(b"nx", 0, OP_GAT, 7), T(b"nx", 0, OP_GATQ, 8), T(b"nx", 0, OP_GATK, 9), T(b"nx", 0, OP_GATKQ, 10),
        T(b"t", 0xFFFFFFFF - 1, OP_TOUCH), G(b"t"),
    ]],
    "flush": [[
        S(b"a", b"1"), P(OP_FLUSH, extras=EXP.pack(100), opaque=1), G(b"a"),   # delayed: still there
        P(OP_FLUSH, opaque=2), G(b"a"), S(b"a", b"2"), G(b"a"),
        P(OP_FLUSHQ, opaque=3), G(b"a"), P(OP_FLUSHQ, extras=EXP.pack(100)),
    ]],
    "misc": [[
        P(OP_NOOP, opaque=1), P(OP_VERSION, opaque=2),
        P(OP_SASL_LIST, opaque=4), P(OP_SASL_AUTH, key=b"PLAIN", value=b"\0u\0p", opaque=5),
        P(OP_SASL_STEP, key=b"PLAIN", value=b"x", opaque=6),
        P(0x1f, opaque=8), P(0x50, opaque=9),              # unknown: 0x81, connection stays
    ]],
    "too_large": [[
        S(b"a", b"x"), S(b"a", b"y" * (2 << 20), op=OP_SETQ, opaque=1), G(b"a"),   # set drops the old item
        S(b"b", b"x"), S(b"b", b"y" * (2 << 20), op=OP_ADD, opaque=2), G(b"b"),     # add keeps it
        S(b"c", b"x"), P(OP_APPEND, key=b"c", value=b"y" * (2 << 20), opaque=3), G(b"c"),
        S(b"d", b"x"), S(b"d", b"y" * (2 << 20), opaque=4), G(b"d"),
    ]],
    # memcached's per-prefix counts over binary (proto_bin's "detail" stat key):
    # on/off answer the empty end-of-stats packet, dump one stat "detailed"
    # holding the text dump; gets, hits, sets (append included) and deletes
    # count, one prefix only ("a": memcached dumps in hash order).
    "stats_detail": [[
        P(OP_STAT, key=b"reset", opaque=1), P(OP_STAT, key=b"detail dump", opaque=2),
        P(OP_STAT, key=b"detail on", opaque=3),
        S(b"a:1", b"x"), G(b"a:1"), G(b"a:2", OP_GETK), G(b"plain"), S(b"a:3", b"y", op=OP_SETQ),
        G(b"a:3", OP_GETQ), P(OP_DELETE, key=b"a:1"), P(OP_DELETEQ, key=b"a:nx"),
        T(b"a:3", 0, OP_GAT), T(b"a:3", 100), P(OP_APPEND, key=b"a:3", value=b"z"),
        A(b"a:n", 1, 0, exptime=0),
        P(OP_STAT, key=b"detail dump", opaque=4),
        P(OP_STAT, key=b"detail off", opaque=5), G(b"a:1"), S(b"a:4", b"w"),
        P(OP_STAT, key=b"detail dump", opaque=6),
        P(OP_STAT, key=b"detail onion", opaque=7), G(b"a:4"), P(OP_STAT, key=b"detail dump", opaque=8),
        P(OP_STAT, key=b"resetting", opaque=9), P(OP_STAT, key=b"detail dump", opaque=10),
    ]],
}


def normalize(responses, ordinals):
    out = []
    for r in responses:
        r = dict(r)
        if r["cas"]:
            r["cas"] = "#%d" % ordinals.setdefault(r["cas"], len(ordinals) + 1)
        if r["opcode"] in (OP_INCREMENT, OP_DECREMENT, OP_GET) and NUMBER.fullmatch(r["value"]):
            # memcached rewrites a shrinking decr result in place, padded with
            # spaces ("10" - 8 = "2 "); ithaca stores the plain number.
            r["value"] = r["value"].rstrip(b" ")
            r["bodylen"] = None
        if r["opcode"] == OP_VERSION:
            r["value"] = b"<version>"
            r["bodylen"] = None
        out.append(r)
    return out


def run_scenario(server, steps):
    got = []
    with mcwire.Conn(server.host, server.port) as c:
        for step in steps:
            packets = step(got) if callable(step) else step
            got.extend(c.binary_batch(packets))
    return normalize(got, {})


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_binary_diff(name, ithaca, memcached):
    steps = SCENARIOS[name]
    assert run_scenario(ithaca, steps) == run_scenario(memcached, steps)


def test_binary_opaque_and_quiet_against_ithaca(ithaca):
    """Quiet commands are silent on success; every response echoes its opaque."""
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        rs = c.binary_batch([S(b"a", b"x", op=OP_SETQ, opaque=11), G(b"a", OP_GETQ, 12),
                             G(b"nx", OP_GETQ, 13), P(OP_DELETEQ, key=b"a", opaque=14)])
        assert [(r["opcode"], r["opaque"], r["status"]) for r in rs] == \
            [(OP_GETQ, 12, 0), (OP_NOOP, 0xFEEDF00D, 0)]
        assert rs[0]["extras"] == b"\0\0\0\0" and rs[0]["value"] == b"x" and rs[0]["cas"] != 0


def _stat_shape(server, key):
    with mcwire.Conn(server.host, server.port) as c:
        rs = c.binary_batch([P(OP_STAT, key=key, opaque=0x51)])
    assert rs[-1]["opcode"] == OP_NOOP
    rs = rs[:-1]
    for r in rs:
        assert r["opcode"] == OP_STAT and r["opaque"] == 0x51 and r["cas"] == 0, r
    return rs


@pytest.mark.parametrize("key", [b"", b"settings", b"settingsx"])
def test_binary_stat_groups(ithaca, memcached, key):
    for server in (ithaca, memcached):
        rs = _stat_shape(server, key)
        assert len(rs) > 5
        assert all(r["status"] == 0 and r["key"] for r in rs[:-1])
        assert rs[-1]["key"] == b"" and rs[-1]["value"] == b"" and rs[-1]["status"] == 0
    if key == b"":
        names = {r["key"] for r in _stat_shape(ithaca, key)}
        assert {b"pid", b"cmd_get", b"curr_items"} <= names


@pytest.mark.parametrize("key", [b"reset", b"resetx", b"nosuchgroup", b"detail", b"detail x",
                                 b"detail  on", b"detailed on", b"detail dump", b"detail on",
                                 b"detail off", b"items x"])
def test_binary_stat_special(ithaca, memcached, key):
    strip = [(r["status"], r["key"], r["value"]) for r in _stat_shape(memcached, key)]
    assert [(r["status"], r["key"], r["value"]) for r in _stat_shape(ithaca, key)] == strip


def _closing(server, data):
    """Sends data; returns (responses before the close, closed?)."""
    with mcwire.Conn(server.host, server.port, timeout=5.0) as c:
        c.send(data)
        closed = c.is_closed(wait=3.0)
        raw = bytes(c.buf)
    rs = []
    while len(raw) >= 24:
        r = mcwire.unpack_header(raw[:24])
        body = raw[24:24 + r["bodylen"]]
        r.update(mcwire.split_body(r, body))
        raw = raw[24 + r["bodylen"]:]
        rs.append(r)
    return normalize(rs, {}), closed, raw


CLOSING = {
    "quit": P(OP_QUIT, opaque=3) + P(OP_NOOP),
    "quitq": S(b"a", b"x", op=OP_SETQ) + P(OP_QUITQ, opaque=3) + P(OP_NOOP),
    "bad_magic": P(OP_NOOP, opaque=1) + b"\x81" + P(OP_NOOP)[1:] + P(OP_NOOP),
    "ascii_after_binary": P(OP_NOOP, opaque=1) + b"get a\r\n" + b"\0" * 20,
    # memcached waits for key+extras bytes before it sees the lie (ithaca
    # decides on the header alone), so a Noop follows to supply them.
    "lying_lengths": P(OP_NOOP, opaque=1) + mcwire.HEADER.pack(0x80, OP_GET, 10, 0, 0, 0, 4, 7, 0) + b"abcd"
    + P(OP_NOOP),
    "lying_extras": mcwire.HEADER.pack(0x80, OP_SET, 1, 8, 0, 0, 3, 7, 0) + b"abc" + P(OP_NOOP),
    "get_with_extras": P(OP_GET, key=b"a", extras=b"1234", opaque=5) + P(OP_NOOP),
    "set_without_extras": P(OP_SET, key=b"a", value=b"x", opaque=5) + P(OP_NOOP),
    "key_too_long": P(OP_GET, key=b"k" * 251, opaque=5) + P(OP_NOOP),
}


@pytest.mark.parametrize("name", sorted(CLOSING))
def test_binary_bad_input_closes_like_memcached(name, ithaca, memcached):
    data = CLOSING[name]
    assert _closing(ithaca, data) == _closing(memcached, data)


def test_binary_server_survives_byte_at_a_time(ithaca):
    packets = S(b"a", b"hello", opaque=1) + G(b"a", OP_GETK, 2) + P(OP_NOOP, opaque=3)
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        for i in range(len(packets)):
            c.send(packets[i:i + 1])
        rs = [c.read_binary_response() for _ in range(3)]
    assert [(r["opcode"], r["opaque"], r["status"]) for r in rs] == [(OP_SET, 1, 0), (OP_GETK, 2, 0), (OP_NOOP, 3, 0)]
    assert rs[1]["key"] == b"a" and rs[1]["value"] == b"hello"


def test_binary_unknown_opcode_with_body(ithaca):
    """Unknown opcodes answer 0x81, their body is skipped and the connection
    stays usable. Not differential: memcached 1.6.18 is erratic here (after an
    unknown opcode with a body it sometimes drops the packets that follow, or
    closes, depending on how the bytes arrive)."""
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        rs = c.binary_batch([P(0x50, key=b"k", value=b"body", opaque=7), P(0xff, extras=b"1234", opaque=9),
                             G(b"nx", OP_GETK, 10)])
    assert [(r["opcode"], r["opaque"], r["status"]) for r in rs] == \
        [(0x50, 7, 0x81), (0xff, 9, 0x81), (OP_GETK, 10, 1), (OP_NOOP, 0xFEEDF00D, 0)]


def test_binary_verbosity(ithaca):
    """memcached 1.6.18 answers a well-formed Verbosity with 0x81 (and then
    misreads its 4 extras bytes as the next packet, closing the connection);
    ithaca answers 0x81 too but consumes the packet. Not differential."""
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        rs = c.binary_batch([P(OP_VERBOSITY, extras=EXP.pack(1), opaque=3), G(b"nx", OP_GETK, 4)])
    assert [(r["opcode"], r["opaque"], r["status"]) for r in rs] == \
        [(OP_VERBOSITY, 3, 0x81), (OP_GETK, 4, 1), (OP_NOOP, 0xFEEDF00D, 0)]


SASL_BODY = 600 << 20  # a 600 MB declared SASL body


def _sasl_flood(server, opcode):
    """Declares a 600 MB SASL body after a 5-byte mechanism key and sends it
    in 1 MiB pieces, then a Noop. Returns (the SASL reply, the Noop's, the
    largest RSS growth seen while sending, in MB)."""
    key = b"PLAIN"
    header = mcwire.HEADER.pack(0x80, opcode, len(key), 0, 0, 0, SASL_BODY, 0x5A, 0)
    piece = b"\0" * (1 << 20)
    pid = server.proc.pid
    rss0 = mcwire.vm_rss_bytes(pid)
    growth = 0
    with mcwire.Conn(server.host, server.port, timeout=20.0) as c:
        c.send(header + key)
        left = SASL_BODY - len(key)
        while left:
            n = min(left, len(piece))
            c.send(piece[:n])
            left -= n
            if left % (32 << 20) < (1 << 20):
                growth = max(growth, mcwire.vm_rss_bytes(pid) - rss0)
        c.send(P(OP_NOOP, opaque=0x77))
        replies = [c.read_binary_response(), c.read_binary_response()]
    return replies, growth / (1 << 20)


@pytest.mark.parametrize("opcode", [OP_SASL_AUTH, OP_SASL_STEP])
def test_binary_sasl_body_is_discarded_as_it_arrives(opcode, ithaca, memcached):
    """SASL is off: the body is swallowed as it arrives (RSS grows by a few MB
    at most, not by the 600 MB declared), then the reply is memcached's
    "Unknown command" and the connection goes on."""
    got, growth = _sasl_flood(ithaca, opcode)
    want, _ = _sasl_flood(memcached, opcode)
    assert normalize(got, {}) == normalize(want, {})
    assert [(r["opcode"], r["status"], r["opaque"]) for r in got] == \
        [(opcode, ST_UNKNOWN_COMMAND, 0x5A), (OP_NOOP, 0, 0x77)]
    assert growth < 8, f"RSS grew by {growth:.1f} MB while a SASL body was swallowed"
