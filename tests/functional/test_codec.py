"""The router codec (sources/protocol/backend_call.*) against real memcached.

For each scenario (client bytes in ascii, meta or binary), two fresh memcached
servers are started: the bytes go straight to one, and through
tests/tools/codec_roundtrip (parse -> backend_call -> the other memcached,
spoken to in ascii or meta -> render_routed_reply) to the other. The client's
reply bytes must be equal, byte for byte. Both servers start empty and see the
same writes in the same order, so their CAS values agree too.

Where the codec cannot give memcached's bytes (a meta flag an ascii backend
cannot serve, leases over ascii, a binary CAS compare over ascii), the test
asserts the documented refusal instead (see INTERNALS.md, "The router codec").

Tool path: $ITHACA_CODEC_ROUNDTRIP, default <dir of $ITHACA_BIN>/../../tests/tools/codec_roundtrip.
"""

import os
import selectors
import socket
import struct
import subprocess
import time

import pytest

import mcwire
from fake_backend import FakeBackend
from mcwire import (OP_ADD, OP_APPEND, OP_DECREMENT, OP_DELETE, OP_DELETEQ, OP_FLUSH, OP_GAT, OP_GATK,
                    OP_GATKQ, OP_GATQ, OP_GETK, OP_GETKQ, OP_GETQ, OP_INCREMENTQ, OP_NOOP, OP_PREPEND,
                    OP_REPLACE, OP_SETQ, EXP, A, G, S, T, pack_request as P)

TIMEOUT = 30.0
BIG = b"".join(b"%07d," % i for i in range(62500))  # 500,000 bytes


def tool_path():
    path = os.environ.get("ITHACA_CODEC_ROUNDTRIP")
    if not path:
        bin_path = os.environ.get("ITHACA_BIN")
        if not bin_path or bin_path == "memcached":
            pytest.fail("set ITHACA_CODEC_ROUNDTRIP (or ITHACA_BIN to the built ithaca)", pytrace=False)
        path = os.path.join(os.path.dirname(bin_path), "..", "..", "tests", "tools", "codec_roundtrip")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"codec_roundtrip not found at {path!r} (build it first)", pytrace=False)
    return path


def direct(server, data):
    """Sends everything, half-closes, and reads until memcached closes: it
    answers every request before it reads the end of the input."""
    with socket.create_connection(server.address, timeout=TIMEOUT) as s:
        out = bytearray()
        deadline = time.monotonic() + TIMEOUT
        s.setblocking(False)
        sent = 0
        sel = selectors.DefaultSelector()
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)
        closed_write = False
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"memcached did not finish in {TIMEOUT}s; got {bytes(out[:200])!r}"
            for _key, ev in sel.select(left):
                if ev & selectors.EVENT_WRITE and not closed_write:
                    if sent < len(data):
                        sent += s.send(data[sent:sent + 65536])
                    if sent == len(data):
                        s.shutdown(socket.SHUT_WR)
                        closed_write = True
                        sel.modify(s, selectors.EVENT_READ)
                if ev & selectors.EVENT_READ:
                    chunk = s.recv(1 << 20)
                    if not chunk:
                        return bytes(out)
                    out += chunk


def through_codec(server, backend, data, split=2):
    r = subprocess.run([tool_path(), "--port", str(server.port), "--backend", backend, "--split", str(split)],
                       input=data, capture_output=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert not r.stderr, r.stderr.decode(errors="replace")  # sanitizer reports, unusable connection
    return r.stdout


def compare(memcached_factory, backend, data, split=2, pinned_1645=None):
    """The codec in front of a real memcached answers as that memcached does
    directly; where the client's own errors are answered by ithaca's parser
    and memcached 1.6.45 words them differently from Debian's 1.6.18, as
    `pinned_1645` (captured from 1.6.45, and checked against it when
    MEMCACHED_BIN names one)."""
    oracle = memcached_factory()
    expected = direct(oracle, data)
    assert expected, "memcached sent nothing: the scenario tests nothing"
    if pinned_1645 is not None:
        if mcwire.server_version(oracle.address) >= (1, 6, 45):
            assert expected == pinned_1645, "the pinned 1.6.45 answer is stale"
        expected = pinned_1645
    got = through_codec(memcached_factory(), backend, data, split)
    assert got == expected


# ---- ascii clients ------------------------------------------------------------

ASCII = {
    "storage": b"set a 5 0 3\r\nabc\r\nget a\r\ngets a\r\nadd a 0 0 1\r\nx\r\nadd b 7 0 2\r\nbb\r\n"
               b"replace a 9 0 2\r\nzz\r\nreplace nope 0 0 1\r\nx\r\nappend a 0 0 2\r\n++\r\n"
               b"prepend a 0 0 2\r\n--\r\nappend nope 0 0 1\r\nx\r\ngets a b nope\r\n"
               b"set e 0 0 0\r\n\r\nget e\r\n",
    "cas": b"set a 0 0 1\r\n1\r\ngets a\r\ncas a 0 0 1 1\r\n2\r\ncas a 0 0 1 1\r\n3\r\n"
           b"cas nope 0 0 1 1\r\n4\r\ncas a 3 0 1 0\r\n5\r\ngets a\r\n",
    "arith": b"set n 0 0 2\r\n10\r\nincr n 5\r\ndecr n 3\r\ndecr n 100\r\nincr n 18446744073709551615\r\n"
             b"incr nope 1\r\ndecr nope 1\r\nset s 0 0 3\r\nabc\r\nincr s 1\r\ndecr s 1\r\nget n\r\n",
    "delete_touch_gat": b"set a 1 0 1\r\na\r\nset b 2 0 1\r\nb\r\ndelete a\r\ndelete a\r\n"
                        b"touch b 100\r\ntouch nope 100\r\ngat 0 b a b\r\ngats 1000 b nope\r\ngat 0 nope\r\n",
    "noreply": b"set a 0 0 1 noreply\r\n1\r\nadd a 0 0 1 noreply\r\n2\r\nincr a 5 noreply\r\n"
                b"incr s 1 noreply\r\ntouch a 10 noreply\r\nappend a 0 0 1 noreply\r\nx\r\n"
                b"get a\r\ndelete a noreply\r\nget a\r\nset b 0 0 1 noreply\r\nb\r\n"
                b"cas b 0 0 1 99 noreply\r\nc\r\nget b\r\n",
    "multiget_duplicates": b"set a 1 0 1\r\nA\r\nset c 3 0 1\r\nC\r\n"
                            b"get a b c a a nope c\r\ngets c c a\r\nget nope nope\r\n",
    "large_value": b"set big 42 0 %d\r\n%s\r\nget big small big\r\ngets big\r\n" % (len(BIG), BIG),
    "flush": b"set a 0 0 1\r\n1\r\nflush_all\r\nget a\r\nset a 0 0 1\r\n2\r\nflush_all 0\r\nget a\r\n"
             b"flush_all noreply\r\nget a\r\n",
    "client_errors": b"bogus\r\nget\r\nset a 0 0 -1\r\nincr a x\r\ntouch a x\r\nset a 0 0 1\r\nab\r\n",
}


# memcached 1.6.45's answers to the client errors (captured from it): a
# command without its key is a bad command line, and the "ab\r\n" after the
# bad chunk is too short to be a command; Debian's 1.6.18 said ERROR to both.
CLIENT_ERRORS_1645 = {
    "client_errors": b"ERROR\r\n" + b"CLIENT_ERROR bad command line format\r\n" * 2
                     + b"CLIENT_ERROR invalid numeric delta argument\r\nCLIENT_ERROR invalid exptime argument\r\n"
                     b"CLIENT_ERROR bad data chunk\r\nCLIENT_ERROR bad command line format\r\n",
}
META_CLIENT_ERRORS_1645 = {
    "client_errors": b"CLIENT_ERROR bad command line format\r\nCLIENT_ERROR invalid flag\r\n"
                     b"CLIENT_ERROR bad command line format\r\nCLIENT_ERROR invalid mode for ma M token\r\n"
                     b"CLIENT_ERROR duplicate flag\r\n",
}


@pytest.mark.parametrize("backend", ["ascii", "meta"])
@pytest.mark.parametrize("name", sorted(ASCII))
def test_ascii_client(memcached_factory, backend, name):
    compare(memcached_factory, backend, ASCII[name], pinned_1645=CLIENT_ERRORS_1645.get(name))


@pytest.mark.parametrize("backend", ["ascii", "meta"])
def test_ascii_long_multiget_lines(memcached_factory, backend):
    # 400 keys of 20 bytes: the backend get lines are cut below 2 KiB; split
    # over 3 calls merged in client order.
    keys = [b"key-%016d" % i for i in range(400)]
    data = b"".join(b"set %s %d 0 3\r\nv%02d\r\n" % (k, i, i % 100) for i, k in enumerate(keys[::3]))
    data += b"get " + b" ".join(keys) + b"\r\ngets " + b" ".join(reversed(keys)) + b"\r\n"
    compare(memcached_factory, backend, data, split=3)


# ---- meta clients -------------------------------------------------------------

META_BOTH = {
    "mg_ms": b"mg a v\r\nms a 3 F5 T0\r\nabc\r\nmg a v f k s O123\r\nmg a\r\nmg a k v c f\r\n"
             b"mg nope v k O9\r\nmn\r\n",
    "quiet": b"mg nope v q\r\nms a 1 q\r\n1\r\nmg a v q\r\nmd nope q\r\nmd a q\r\nmg a v q k\r\n"
             b"ma nope q\r\nms n 1\r\n5\r\nma n q\r\nma n q v\r\nmg n v\r\nmn\r\n",
    "ms_modes": b"ms a 1 ME\r\n1\r\nms a 1 ME\r\n2\r\nms a 1 MA\r\n3\r\nms a 1 MP\r\n0\r\n"
                b"ms nope 1 MR\r\n4\r\nms a 2 MR F3\r\nxy\r\nms nope 1 MA\r\nx\r\nmg a v f\r\n"
                b"ms a 1 MS\r\nz\r\nmg a v\r\n",
    "cas": b"ms a 1\r\n1\r\nmg a c v\r\nms a 1 C1\r\n2\r\nms a 1 C1\r\n3\r\nms nope 1 C5\r\n4\r\n"
           b"ms a 1 C0\r\n5\r\nms a 1 ME C99\r\n6\r\nmg a c v\r\n",
    "md_ma": b"ms n 2\r\n10\r\nma n\r\nma n v\r\nma n MD D4 v\r\nma n M- D100 v\r\nma n D7 v O1 k\r\n"
             b"ma nope v\r\nms s 1\r\nx\r\nma s v\r\nmd n\r\nmd n\r\nmd n k O5\r\nmg n v\r\n",
    "touch": b"ms a 2 T0\r\nhi\r\nmg a T100 v\r\nmg a T0\r\nmg nope T10 v\r\n",
    "base64_keys": b"ms Zm9vYmFy 3 b\r\nabc\r\nmg Zm9vYmFy b v k\r\nmg Zm9vYmFy b k c\r\n"
                   b"mg YmFy b v k\r\nmd Zm9vYmFy b k q\r\nmd Zm9vYmFy b k\r\nmg Zm9vYmFy b v\r\nmn\r\n",
    "large_value": b"ms big %d F9\r\n%s\r\nmg big v f s\r\nmg big s\r\n" % (len(BIG), BIG),
    "mixed_with_classic": b"set a 2 0 1\r\nA\r\nmg a v f\r\nms b 1 F4\r\nB\r\nget a b\r\nmn\r\n",
    "client_errors": b"mg\r\nmg a zz\r\nms a x\r\nma a MX\r\nmg a v v\r\n",
}

# Only a meta backend serves these (passthrough).
META_ONLY = {
    "ttl_and_item_state": b"ms a 1 T0\r\n1\r\nmg a v t h l\r\nmg a t\r\nma a t N0\r\nmg a s v t\r\n",
    "vivify_and_invalidate": b"mg nope N30 v c\r\nmg nope v\r\nms a 1\r\n1\r\nmd a I T30\r\nmg a v c\r\n"
                             b"ma cnt N0 J10 v\r\nma cnt v\r\nms b 1 I\r\n2\r\nmg b v\r\n",
    "me": b"ms a 3\r\nabc\r\nme a\r\nme nope\r\n",
    "ms_return_cas": b"ms a 1 c\r\n1\r\nms a 1 c q\r\n2\r\nmg a c v\r\nma x N0 c v\r\nmn\r\n",
}


@pytest.mark.parametrize("backend", ["ascii", "meta"])
@pytest.mark.parametrize("name", sorted(META_BOTH))
def test_meta_client(memcached_factory, backend, name):
    compare(memcached_factory, backend, META_BOTH[name], pinned_1645=META_CLIENT_ERRORS_1645.get(name))


@pytest.mark.parametrize("name", sorted(META_ONLY))
def test_meta_client_meta_backend_only(memcached_factory, name):
    compare(memcached_factory, "meta", META_ONLY[name])


@pytest.mark.parametrize("request_line, flag", [
    (b"mg a v t\r\n", b"t"), (b"mg a h\r\n", b"h"), (b"mg a l\r\n", b"l"), (b"mg a N30\r\n", b"N"),
    (b"mg a R30 v\r\n", b"R"), (b"ms a 1 c\r\n1\r\n", b"c"), (b"ms a 1 I\r\n1\r\n", b"I"),
    (b"ms a 1 MA C5\r\n1\r\n", b"C"), (b"md a C5\r\n", b"C"), (b"md a I\r\n", b"I"), (b"md a T30\r\n", b"T"),
    (b"ma a N0\r\n", b"N"), (b"ma a T30\r\n", b"T"), (b"ma a c\r\n", b"c"), (b"ma a C3\r\n", b"C"),
    (b"ma a t\r\n", b"t"),
])
def test_meta_flags_an_ascii_backend_cannot_serve(memcached, request_line, flag):
    got = through_codec(memcached, "ascii", request_line + b"mg a v\r\n")
    assert got == b"CLIENT_ERROR flag " + flag + b" needs a meta backend\r\nEN\r\n"


def test_meta_debug_needs_meta_backend(memcached):
    assert through_codec(memcached, "ascii", b"me a\r\n") == b"CLIENT_ERROR me needs a meta backend\r\n"


# ---- leases -------------------------------------------------------------------

def test_lease_over_ascii_backend_goes_as_meta(memcached):
    # An ascii pool's memcached (1.6+) speaks meta commands on the same port:
    # a lease goes as mg N / ms C there too, classic commands stay classic.
    out = through_codec(memcached, "ascii", b"lease-get k\r\nlease-get k\r\n")
    first, second = out.split(b"END\r\n")[:2]
    assert first.startswith(b"LVALUE k ") and first.endswith(b" 0 0\r\n\r\n")
    token = int(first.split()[2])
    assert token > 1 and second == b"LVALUE k 1 0 0\r\n\r\n"
    out = through_codec(memcached, "ascii", b"lease-set k %d 7 0 3\r\nnew\r\nget k\r\nlease-get k\r\n" % token)
    assert out == b"STORED\r\nVALUE k 7 3\r\nnew\r\nEND\r\nVALUE k 7 3\r\nnew\r\nEND\r\n"


def test_lease_to_a_server_without_meta_says_why():
    # A server that answers every command but get with ERROR (an old
    # memcached): the lease gets a clear error, the requests around it their
    # own answers.
    old = FakeBackend("slow", delay=0.0)
    try:
        out = through_codec(old, "ascii", b"get a\r\nlease-get a\r\nget b\r\n")
    finally:
        old.close()
    assert out == (b"END\r\nSERVER_ERROR lease-get and lease-set need a backend that speaks meta commands "
                   b"(memcached 1.6 or later)\r\nEND\r\n")


def test_metaget_to_a_server_without_meta_says_why():
    old = FakeBackend("slow", delay=0.0)
    try:
        out = through_codec(old, "ascii", b"metaget a\r\nget b\r\n")
    finally:
        old.close()
    assert out == (b"SERVER_ERROR metaget needs a backend that speaks meta commands (memcached 1.6 or later)\r\n"
                   b"END\r\n")


def test_lease_over_meta_backend(memcached):
    # Miss: this reader wins a token (the placeholder's CAS); a second reader
    # is told to wait (token 1); the winner's lease-set stores; a stale token
    # is refused; now a hit answers like get.
    out = through_codec(memcached, "meta", b"lease-get k\r\nlease-get k\r\n")
    first, second = out.split(b"END\r\n")[:2]
    assert first.startswith(b"LVALUE k ") and first.endswith(b" 0 0\r\n\r\n")
    token = int(first.split()[2])
    assert token > 1
    assert second == b"LVALUE k 1 0 0\r\n\r\n"
    out = through_codec(memcached, "meta",
                        b"lease-set k 1 0 0 1\r\nx\r\nlease-set k %d 7 0 3\r\nnew\r\n"
                        b"lease-set k %d 7 0 3\r\nold\r\nlease-get k\r\nget k\r\n" % (token, token))
    assert out == (b"NOT_STORED\r\nSTORED\r\nNOT_STORED\r\nVALUE k 7 3\r\nnew\r\nEND\r\n"
                   b"VALUE k 7 3\r\nnew\r\nEND\r\n")
    # Invalidated (md I): the stale value is shown to every reader; the first
    # gets a refill token, the next is told to wait.
    out = through_codec(memcached, "meta", b"md k I\r\nlease-get k\r\nlease-get k\r\n")
    hd, first, second = out.split(b"\r\n", 1)[0], *out.split(b"\r\n", 1)[1].split(b"END\r\n")[:2]
    assert hd == b"HD"
    assert first.startswith(b"LVALUE k ") and first.endswith(b" 7 3\r\nnew\r\n")
    stale_token = int(first.split()[2])
    assert stale_token > 1 and stale_token != token
    assert second == b"LVALUE k 1 7 3\r\nnew\r\n"
    out = through_codec(memcached, "meta", b"lease-set k %d 8 0 5\r\nfresh\r\nget k\r\n" % stale_token)
    assert out == b"STORED\r\nVALUE k 8 5\r\nfresh\r\nEND\r\n"


# ---- binary clients -----------------------------------------------------------



NOOP = P(OP_NOOP, opaque=77)

# Not read back: a value memcached incremented to fewer digits. memcached
# rewrites it in place, space-padded ("1 "), only when nobody else holds the
# item; over an ascii backend the codec's `gets` for the reply's CAS may
# still hold it, and memcached then stores a new unpadded item ("1"). Both
# are memcached's own answers; which one is a race inside memcached.

BINARY_BOTH = {
    "get_variants": [S(b"a", b"va", flags=3, opaque=1), G(b"a"), G(b"a", OP_GETK, 5), G(b"nope", OP_GETK, 6),
                     G(b"nope", opaque=7), G(b"a", OP_GETQ, 8), G(b"nope", OP_GETQ, 9), G(b"a", OP_GETKQ, 10),
                     G(b"nope", OP_GETKQ, 11), NOOP],
    "stores": [S(b"a", b"1", opaque=1), S(b"a", b"2", op=OP_ADD, opaque=2), S(b"b", b"3", op=OP_ADD, opaque=3),
               S(b"nope", b"4", op=OP_REPLACE), S(b"a", b"5", flags=9, op=OP_REPLACE),
               P(OP_APPEND, key=b"a", value=b"+"), P(OP_PREPEND, key=b"a", value=b"-"),
               P(OP_APPEND, key=b"nope", value=b"x"), G(b"a", OP_GETK), S(b"q", b"quiet", op=OP_SETQ, opaque=4),
               G(b"q"), NOOP],
    "cas": [S(b"a", b"1"), S(b"a", b"2", cas=1), S(b"a", b"3", cas=1), S(b"nope", b"4", cas=3),
            S(b"a", b"5", op=OP_ADD, cas=2), S(b"a", b"6", op=OP_REPLACE, cas=2), G(b"a")],
    "delete": [S(b"a", b"1"), P(OP_DELETE, key=b"a", opaque=3), P(OP_DELETE, key=b"a", opaque=4),
               S(b"b", b"1"), P(OP_DELETEQ, key=b"b"), P(OP_DELETEQ, key=b"b", opaque=5), G(b"b"), NOOP],
    "arith": [S(b"n", b"10"), A(b"n", 5), A(b"n", 100, op=OP_DECREMENT), A(b"nope", 1),
              A(b"new", 3, initial=42, exptime=0), A(b"new", 3, initial=42, exptime=0),
              A(b"dec", 1, initial=7, exptime=0, op=OP_DECREMENT), S(b"s", b"abc"), A(b"s", 1),
              A(b"n", 1, op=OP_INCREMENTQ), A(b"nope2", 1, op=OP_INCREMENTQ, opaque=9), G(b"new"), NOOP],
    "touch_gat": [S(b"a", b"va", flags=4), T(b"a", 100), T(b"nope", 100, opaque=3), T(b"a", 0, OP_GAT, 4),
                  T(b"a", 0, OP_GATK, 5), T(b"nope", 0, OP_GATK, 6), T(b"a", 0, OP_GATQ, 7),
                  T(b"nope", 0, OP_GATQ, 8), T(b"nope", 0, OP_GATKQ, 9), T(b"a", 0, OP_GATKQ, 10), NOOP],
    "flush": [S(b"a", b"1"), P(OP_FLUSH, opaque=2), G(b"a"), S(b"a", b"1"), P(OP_FLUSH, extras=EXP.pack(0)), G(b"a")],
    "large_value": [S(b"big", BIG, flags=1), G(b"big", OP_GETK), T(b"big", 0, OP_GAT)],
    "getkq_run": [S(b"k1", b"1"), S(b"k3", b"3")] + [G(b"k%d" % i, OP_GETKQ, i) for i in range(5)] + [NOOP],
}


@pytest.mark.parametrize("backend", ["ascii", "meta"])
@pytest.mark.parametrize("name", sorted(BINARY_BOTH))
def test_binary_client(memcached_factory, backend, name):
    compare(memcached_factory, backend, b"".join(BINARY_BOTH[name]))


BINARY_META_ONLY = {
    # A CAS compare on delete, append/prepend or incr/decr: md/ms/ma C.
    "cas_compare": [S(b"a", b"1"), P(OP_DELETE, key=b"a", cas=9), P(OP_DELETE, key=b"a", cas=1),
                    S(b"b", b"x"), P(OP_APPEND, key=b"b", value=b"y", cas=9), P(OP_APPEND, key=b"b", value=b"y", cas=2),
                    S(b"n", b"1"), A(b"n", 1, cas=9), A(b"n", 1, cas=4), G(b"b")],
    "key_with_space": [S(b"a b", b"1"), G(b"a b", OP_GETK), P(OP_DELETE, key=b"a b"), G(b"a b")],
}


@pytest.mark.parametrize("name", sorted(BINARY_META_ONLY))
def test_binary_client_meta_backend_only(memcached_factory, name):
    compare(memcached_factory, "meta", b"".join(BINARY_META_ONLY[name]))


def test_binary_over_ascii_refusals(memcached):
    # No CAS compare for delete/append/incr in ascii, and no key with a space.
    got = through_codec(memcached, "ascii", P(OP_DELETE, key=b"a", cas=9, opaque=1) + S(b"a b", b"1", opaque=2))
    assert got[:24] == struct.pack(">BBHBBHIIQ", 0x81, OP_DELETE, 0, 0, 0, 0x83, len(got[24:24 + 32]) and 32, 1, 0)
    body = got[24:56]
    assert body == b"CAS compare needs a meta backend"
    rest = got[56:]
    assert struct.unpack(">BBHBBHIIQ", rest[:24])[5] == 0x04
    assert rest[24:] == b"CLIENT_ERROR key not representable in the ascii protocol (needs a meta backend)"


# ---- binary expiry through the router -----------------------------------------

def _binary_expiry_ops(exptime):
    """Each way a binary client gives an exptime, on a key of its own: set,
    add, touch and gat of an item set without one, incr creating a missing
    item. Returns (key, packets) pairs."""
    return [
        (b"set", [S(b"set", b"v", exptime=exptime)]),
        (b"add", [S(b"add", b"v", op=OP_ADD, exptime=exptime)]),
        (b"touch", [S(b"touch", b"v"), T(b"touch", exptime)]),
        (b"gat", [S(b"gat", b"v"), T(b"gat", exptime, OP_GAT)]),
        (b"incr", [A(b"incr", 1, initial=5, exptime=exptime)]),
    ]


def _alive_after(conn, prefix, exptime):
    """Sends each op of _binary_expiry_ops(exptime) under `prefix`, then a
    binary get of each key: {op: (reply statuses, alive)}."""
    alive = {}
    for name, packets in _binary_expiry_ops(exptime):
        key = prefix + name
        statuses = []
        for p in packets:
            # Same packets under a prefixed key: rebuild with the key swapped.
            hdr = mcwire.unpack_header(p[:24])
            extras = p[24:24 + hdr["extlen"]]
            value = p[24 + hdr["extlen"] + hdr["keylen"]:]
            conn.send(P(hdr["opcode"], key=key, extras=extras, value=value, cas=hdr["cas"]))
            statuses.append(conn.read_binary_response()["status"])
        conn.send(G(key))
        alive[name] = (statuses, conn.read_binary_response()["status"] == mcwire.ST_OK)
    return alive


@pytest.mark.parametrize("backend", ["ascii", "meta"])
def test_binary_expiry_through_router_as_memcached(ithaca_factory, memcached_factory, backend):
    # memcached reads a binary exptime as unsigned: from 2^31 on it is an
    # absolute time after 2038 and the item lives, where the same number in
    # text or meta is negative (expired at once). The router must give the
    # backend the form that keeps the binary meaning, for every exptime.
    backend_server = memcached_factory()
    oracle = memcached_factory()
    router = ithaca_factory(config_text=(
        "pools:\n  main:\n"
        f'    servers: ["{backend_server.host}:{backend_server.port}"]\n'
        f"    protocol: {backend}\n    timeout: 10s\n"
        "route:\n  type: pool\n  pool: main\n"))
    now = int(time.time())
    exptimes = {"0": 0, "1s": 1, "30d": 30 * 86400, "30d+1": 30 * 86400 + 1, "past": now - 3600,
                "now+100": now + 100, "2^31-1": 2**31 - 1, "2^31": 2**31, "0xffffffff": 0xFFFFFFFF}
    got, want = {}, {}
    with mcwire.Conn(router.host, router.port) as r, mcwire.Conn(oracle.host, oracle.port) as o:
        for i, (label, exptime) in enumerate(exptimes.items()):
            prefix = b"e%d-" % i
            got[label] = _alive_after(r, prefix, exptime)
            want[label] = _alive_after(o, prefix, exptime)
    # The oracle itself: what the cases are about.
    assert want["2^31"][b"set"][1] and want["0xffffffff"][b"set"][1] and not want["past"][b"set"][1]
    # A 1 s item may see memcached's clock tick between its set and its get
    # on one server and not on the other: only its replies are compared.
    for op in got["1s"]:
        got["1s"][op] = got["1s"][op][0]
        want["1s"][op] = want["1s"][op][0]
    assert got == want
