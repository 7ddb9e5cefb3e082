"""Differential test: the same seeded stream of ascii commands goes to ithaca
and to two real memcacheds; the replies must be equal byte for byte, after CAS
uniques are replaced by their first-seen ordinal on each connection (where the
two memcacheds disagree with each other, either answer is accepted).

The stream is sent in pipelined batches. Each batch ends with `version`, whose
reply marks the end of the batch's replies (and is not compared), so a reply
missing or extra on one side shows up in the batch it belongs to.

Seeds: SEEDS below run in CI. ITHACA_DIFF_SEEDS="7,8,9" adds seeds, and
ITHACA_DIFF_SEEDS=random adds one random seed (printed on failure).
No wall-clock dependence: exptimes are 0, far in the future, negative, or
absolute in the past.
"""

import os
import random
import re
import socket
import time

import pytest

import mcwire

SEEDS = [1, 2, 3, 4, 5, 6]
ROUNDS = 100
MAX_ITEM = 1 << 20          # both servers run with -I 1m
# -m 1024: never run out of memory, so background LRU work and evictions (timing-
# dependent in memcached) cannot change an answer.
SERVER_ARGS = ["-I", "1m", "-m", "1024"]
SENTINEL = b"version\r\n"
FAR_FUTURE_ABS = int(time.time()) + 10 * 365 * 86400
PAST_ABS = 1_000_000_000    # 2001: absolute (> 30 days) and in the past
U64_MAX = (1 << 64) - 1
PADDED_NUMBER = re.compile(rb"[0-9]+ +")
WHITESPACE = b" \t\n\v\f\r"


def _extra_seeds():
    raw = os.environ.get("ITHACA_DIFF_SEEDS", "").strip()
    if not raw:
        return []
    if raw == "random":
        return [random.SystemRandom().randrange(1 << 31)]
    return [int(s) for s in raw.split(",") if s.strip()]


class Generator:
    """Produces batches of ascii requests. A cas command refers to a CAS
    unique by ordinal (resolved per server by the caller), or uses a value no
    server has handed out."""

    def __init__(self, seed, every_shape=False):
        self.r = random.Random(seed)
        self.every_shape = every_shape  # the oracle is 1.6.45: no shape is replaced
        self.keys = [f"k{i}".encode() for i in range(10)] + [
            b"long_" + b"L" * 240,                  # 245 bytes
            b"m" * 250,                             # the longest legal key
            b"num0", b"num1", b"num2",
        ]
        self.cas_ordinals = 0  # how many distinct CAS uniques have been seen
        self.pending = None    # an incr/decr held over to open the next batch

    # -- pieces -------------------------------------------------------------

    def key(self):
        return self.r.choice(self.keys)

    def exptime(self):
        return self.r.choice([0, 0, 0, 0, 86400, FAR_FUTURE_ABS, -1, PAST_ABS])

    def flags(self):
        return self.r.choice([0, 0, 1, 42, 0xFFFFFFFF, self.r.randrange(1 << 32)])

    def size(self):
        x = self.r.random()
        if x < 0.10:
            return 0
        if x < 0.75:
            return self.r.randrange(1, 100)
        if x < 0.95:
            return self.r.randrange(100, 16 << 10)
        return self.r.randrange(16 << 10, 200 << 10)

    def value(self, n=None):
        n = self.size() if n is None else n
        kind = self.r.random()
        if kind < 0.15 and n:
            # binary-safe data: CR, LF, NUL, and "\r\nEND\r\n" inside values
            pool = b"ab\r\n\x00END"
            data = bytes(self.r.choice(pool) for _ in range(min(n, 64))) + b"z" * max(0, n - 64)
        else:
            data = self.r.randbytes(n) if kind < 0.3 else (b"v" * n)
        if data and not data.strip(WHITESPACE):
            # memcached 1.6.18's incr/decr runs strtoull on the item data,
            # which skips leading whitespace and reads past the end of an
            # all-whitespace value into stale memory: its answer is not
            # deterministic, so the oracle cannot judge it.
            data = b"a" + data[1:]
        return data

    # Stored numbers stay below 2^63 here. memcached 1.6.18's safe_strtoull
    # checks a number of 2^63 or more for a '-' with strchr, which on item
    # data (not NUL-terminated) reads on past the item into whatever memory
    # follows: incr/decr on such a value answers the result, or "non-numeric",
    # at random (seen: seed 4, `incr num0 100 noreply` on 2^64-1 applied on one
    # run and not on another, the same commands and replies before it). So
    # the oracle cannot judge them; wrap-around and 20-digit numbers are
    # checked against fixed answers (test_ascii_commands.py, test_meta.py,
    # test_binary.py). Values under 2^62 and deltas under 2^48 cannot reach
    # 2^63 in one run's incrs.
    def number_value(self):
        return str(self.r.choice([
            0, 1, 9, 10, 99, 100, 12345, (1 << 62) - 1, 1 << 40,
            self.r.randrange(1 << 62)])).encode()

    def delta(self):
        return str(self.r.choice([0, 1, 2, 10, 100, (1 << 48) - 1, self.r.randrange(1 << 48)])).encode()

    def noreply(self):
        return b" noreply" if self.r.random() < 0.15 else b""

    # -- commands -------------------------------------------------------------

    def storage(self, verb, key=None, data=None):
        key = key or self.key()
        data = self.value() if data is None else data
        return b"%s %s %d %d %d%s\r\n%s\r\n" % (verb, key, self.flags(), self.exptime(), len(data),
                                               self.noreply(), data)

    def cas(self):
        key = self.key()
        data = self.value()
        if self.cas_ordinals and self.r.random() < 0.8:
            # recent ordinals are likely current; older ones likely stale
            lo = max(0, self.cas_ordinals - 4) if self.r.random() < 0.6 else 0
            ref = ("ord", self.r.randrange(lo, self.cas_ordinals))
        else:
            ref = ("raw", (1 << 62) + self.r.randrange(1000))  # never handed out
        return [b"cas %s %d %d %d " % (key, self.flags(), self.exptime(), len(data)), ref,
                b"%s\r\n%s\r\n" % (self.noreply(), data)]

    def retrieval(self):
        verb = self.r.choice([b"get", b"get", b"gets", b"gets", b"gat", b"gats"])
        keys = b" ".join(self.key() for _ in range(self.r.choice([1, 1, 2, 3, 8])))
        if verb in (b"gat", b"gats"):
            return b"%s %d %s\r\n" % (verb, self.exptime(), keys)
        return b"%s %s\r\n" % (verb, keys)

    def arith(self):
        verb = self.r.choice([b"incr", b"decr"])
        key = self.r.choice([b"num0", b"num1", b"num2", self.key()])
        return b"%s %s %s%s\r\n" % (verb, key, self.delta(), self.noreply())

    # Malformed shapes memcached 1.6.45 answers differently from Debian's
    # 1.6.18 (the live oracle in CI): a line too short for a command, and any
    # error after a storage command's length is known, which 1.6.45 follows by
    # swallowing the data. ithaca answers as 1.6.45; test_ascii_commands.py
    # and test_meta.py pin those answers, so here they become an unknown
    # command, which both versions answer alike (the random stream, and so
    # every seed's other commands, stay as they were). Against a live 1.6.45
    # (MEMCACHED_BIN) every shape is sent.
    VERSIONS_DIFFER = {1, 4, 8, 12, 13}

    def bad(self):
        r = self.r
        long_key = b"x" * 251
        choice = r.randrange(14)
        if choice in self.VERSIONS_DIFFER and not self.every_shape:
            return b"bogus_command a b c\r\n"
        if choice == 0:
            return b"bogus_command a b c\r\n"
        if choice == 1:
            return b"set %s 0 0 1\r\nx\r\n" % long_key
        if choice == 2:
            return b"get k1 %s k2\r\n" % long_key
        if choice == 3:
            return b"set k1 0 0 -1\r\n"
        if choice == 4:
            return b"set k2 0 0 5\r\nhelloXX\r\n"           # bad data chunk
        if choice == 5:
            n = MAX_ITEM + r.randrange(1, 4096)
            return b"set %s 0 0 %d\r\n%s\r\n" % (self.key(), n, b"B" * n)  # too large
        if choice == 6:
            return b"incr %s 18446744073709551616\r\n" % self.key()      # delta too large
        if choice == 7:
            return b"decr %s -1\r\n" % self.key()
        if choice == 8:
            return b"set k3 0 abc 1\r\nx\r\n"
        if choice == 9:
            return b"set k3 4294967296 0 1\r\nx\r\n"       # flags over 32 bits
        if choice == 10:
            return b"delete %s\r\n" % long_key
        if choice == 11:
            return b"touch k1 abc\r\n"
        if choice == 12:
            return b"set k4 0 0 3 noreply\r\nabcXY\r\n"    # bad chunk with noreply
        return b"\r\n"

    def command(self):
        r = self.r
        x = r.random()
        if x < 0.22:
            return self.storage(b"set")
        if x < 0.27:
            return self.storage(b"add")
        if x < 0.32:
            return self.storage(b"replace")
        if x < 0.37:
            # Not on the numeric keys: memcached's decr may leave "99 " (in
            # place, padded) or "99" (new item) depending on whether a reply
            # still references the item; appending then makes "99 5" (=99)
            # or "995", so memcached would disagree with itself.
            key = r.choice([k for k in self.keys if not k.startswith(b"num")])
            return self.storage(r.choice([b"append", b"prepend"]), key=key)
        if x < 0.43:
            return self.storage(b"set", key=r.choice([b"num0", b"num1", b"num2"]), data=self.number_value())
        if x < 0.50:
            return self.cas()
        if x < 0.72:
            return self.retrieval()
        if x < 0.82:
            return self.arith()
        if x < 0.87:
            return b"delete %s%s\r\n" % (self.key(), self.noreply())
        if x < 0.91:
            return b"touch %s %d%s\r\n" % (self.key(), self.exptime(), self.noreply())
        if x < 0.92:
            return r.choice([b"flush_all\r\n", b"flush_all noreply\r\n", b"flush_all 0\r\n"])
        return self.bad()

    def batch(self):
        """A pipelined batch. incr/decr only ever opens a batch: memcached
        changes a number in place (padding a shorter result with spaces)
        only when no pending reply references the item, so an incr behind a
        get in the same pipeline makes memcached's answers depend on how
        its reads were split (seen as memcached disagreeing with itself).
        A get naming a key over 250 bytes also only opens a batch: memcached
        then discards the replies it has not sent yet, and which those are
        depends on how its reads were split, not on the commands."""
        n = self.r.choice([1, 1, 2, 5, 10, 30, 60])
        out = [self.pending] if self.pending else []
        self.pending = None
        while len(out) < n:
            cmd = self.command()
            if out and isinstance(cmd, bytes) and (cmd.startswith((b"incr ", b"decr "))
                                                   or (cmd.startswith(b"get ") and b"x" * 251 in cmd)):
                self.pending = cmd
                break
            out.append(cmd)
        return out


def resolve(batch, cas_by_ordinal):
    """Turns a generated batch into bytes for one server."""
    out = []
    for cmd in batch:
        if isinstance(cmd, list):
            head, (kind, v), tail = cmd
            unique = cas_by_ordinal[v] if kind == "ord" else v
            out.append(head + str(unique).encode() + tail)
        else:
            out.append(cmd)
    return b"".join(out) + SENTINEL


def normalize(unit, ordinal_of, cas_by_ordinal):
    """Replaces the CAS unique of every VALUE header with #<ordinal>, and
    drops the space padding memcached may leave after a decr."""
    if not unit.startswith(b"VALUE "):
        return unit
    out = []
    pos = 0
    while pos < len(unit):
        end = unit.index(b"\r\n", pos) + 2
        line = unit[pos:end - 2]
        if not line.startswith(b"VALUE "):
            out.append(unit[pos:])
            break
        parts = line.split(b" ")
        n = int(parts[3])
        if len(parts) == 5:
            cas = int(parts[4])
            if cas not in ordinal_of:
                ordinal_of[cas] = len(cas_by_ordinal)
                cas_by_ordinal.append(cas)
            parts[4] = b"#%d" % ordinal_of[cas]
        data = unit[end:end + n]
        if PADDED_NUMBER.fullmatch(data):
            # memcached's decr rewrites a shrinking number in place, padded
            # with spaces, only when no pending reply still references the
            # item; otherwise it stores the exact digits. Both are memcached
            # answers, so compare the digits only.
            data = data.rstrip(b" ")
            parts[3] = b"%d" % len(data)
        out.append(b" ".join(parts) + b"\r\n" + data + b"\r\n")
        pos = end + n + 2
    return b"".join(out)


def short(b, limit=300):
    return repr(b if len(b) <= limit else b[:limit] + b"...(%d bytes)" % len(b))


class Side:
    def __init__(self, name, server):
        self.name = name
        self.conn = mcwire.Conn(server.host, server.port, timeout=10)
        self.drop_stray_lines = name != "ithaca" and mcwire.server_version(server.address) >= (1, 6, 45)
        self.ordinal_of = {}
        self.cas_by_ordinal = []

    def run(self, batch):
        units = self.conn.exchange_until_sentinel(resolve(batch, self.cas_by_ordinal))
        if self.drop_stray_lines:
            units = _without_stray_lines(units)
        return [normalize(u, self.ordinal_of, self.cas_by_ordinal) for u in units]


def _without_stray_lines(units):
    """memcached 1.6.45 follows the error for a get with a key over 250 bytes
    with an empty line, a slip ithaca does not copy; for a hand check against
    it (MEMCACHED_BIN) that line is left out."""
    out = []
    for u in units:
        if u == b"\r\n" and out and out[-1] == b"CLIENT_ERROR bad command line format\r\n":
            continue
        out.append(u)
    return out


def _acceptable(got, want_a, want_b):
    """ithaca's replies pass if they equal the replies of the memcached pair
    where those two agree, and one of the two where they do not."""
    if got in (want_a, want_b):
        return True
    if not (len(got) == len(want_a) == len(want_b)):
        return False
    return all(g in (a, b) for g, a, b in zip(got, want_a, want_b))


def run_seed(seed, ithaca_server, ref_server_a, ref_server_b):
    """Two real memcacheds are the oracle. memcached 1.6.18 is not always
    deterministic (seen: `incr k 0` on a 20-digit value answers the number on
    one instance and "non-numeric" on the other, for the same stored bytes);
    where the two disagree, either answer is accepted from ithaca."""
    gen = Generator(seed, every_shape=mcwire.server_version(ref_server_a.address) >= (1, 6, 45))
    ours = Side("ithaca", ithaca_server)
    ref_a = Side("memcached", ref_server_a)
    ref_b = Side("memcached-2", ref_server_b)
    try:
        for round_no in range(ROUNDS):
            batch = gen.batch()
            want = ref_a.run(batch)
            want_b = ref_b.run(batch)
            got = ours.run(batch)
            if not _acceptable(got, want, want_b):
                lines = [f"seed {seed}: replies differ in round {round_no} "
                         f"(rerun: ITHACA_DIFF_SEEDS={seed})"]
                for i in range(max(len(got), len(want))):
                    g = got[i] if i < len(got) else b"<missing>"
                    w = want[i] if i < len(want) else b"<missing>"
                    w2 = want_b[i] if i < len(want_b) else b"<missing>"
                    if g not in (w, w2):
                        lines.append(f"  first differing reply #{i}:\n    ithaca:      {short(g)}\n"
                                     f"    memcached:   {short(w)}")
                        if w2 != w:
                            lines.append(f"    memcached-2: {short(w2)}")
                        break
                lines.append("  requests of this round:")
                for cmd in batch:
                    text = cmd if isinstance(cmd, bytes) else b"".join(
                        c if isinstance(c, bytes) else b"<cas %s %d>" % (c[0].encode(), c[1]) for c in cmd)
                    lines.append("    " + short(text, 160))
                lines.append(f"  ithaca replies:    {[short(u, 80) for u in got]}")
                lines.append(f"  memcached replies: {[short(u, 80) for u in want]}")
                pytest.fail("\n".join(lines), pytrace=False)
            if want != want_b:
                # The oracles disagreed (accepted above): from here their
                # states, and ithaca's, may differ for the keys involved, and a
                # later round would compare answers to different data (seen:
                # num0 answered 101, non-numeric and 1 by the three). Start
                # the three again from empty.
                for side in (ours, ref_a, ref_b):
                    assert side.run([b"flush_all\r\n"]) == [b"OK\r\n"], side.name
            gen.cas_ordinals = min(len(x.cas_by_ordinal) for x in (ours, ref_a, ref_b))
    finally:
        for side in (ours, ref_a, ref_b):
            side.conn.close()


@pytest.mark.parametrize("seed", SEEDS + _extra_seeds())
def test_ascii_diff(seed, ithaca_factory, memcached_factory):
    ithaca_server = ithaca_factory(args=SERVER_ARGS)
    run_seed(seed, ithaca_server, memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS))


# -- fixed reproducers ---------------------------------------------------------
#
# Each case is a list of steps sent in order on one fresh connection, the
# replies of each step read before the next is sent (so memcached's decr
# rewrites in place, as it does when no reply still references the item),
# then, optionally, one request on a second connection to see what the first
# left behind. ithaca and a real memcached must answer byte for byte alike.
# The oracle runs with the features ithaca does not have switched off, which
# is how ithaca answers their commands (sources/cache/exec_admin.cc).

ORACLE_FEATURES_OFF = ["-o", "no_lru_maintainer,no_slab_reassign"]
BIG = 1000000  # under -I 1m with room for the item header

FIXED = {
    # HTTP-looking request lines: hang up without a reply, run nothing after
    "http_get": ([b"set a 0 0 1\r\nx\r\n", b"GET / HTTP/1.1\r\nHost: x\r\n\r\ndelete a\r\n"], b"get a\r\n"),
    "http_post_body_not_run": ([b"POST / HTTP/1.1\r\nHost: x\r\n\r\nset p 0 0 1\r\nx\r\n"], b"get p\r\n"),
    "http_put": ([b"PUT /k HTTP/1.0\r\n\r\n"], None),
    "http_delete": ([b"DELETE /k HTTP/1.1\r\n\r\n"], None),
    "http_connect": ([b"CONNECT 127.0.0.1:11211 HTTP/1.1\r\n\r\n"], None),
    "http2_preface": ([b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"], None),
    "http_replies_before_it_are_sent": ([b"set a 0 0 1\r\nx\r\nget a\r\nGET / HTTP/1.1\r\nget a\r\n"], None),
    "http_word_not_last": ([b"GET HTTP/1.1 x\r\n"], None),
    "http_after_command_letter": ([b"gx / HTTP/1.1\r\n", b"send / HTTP/1.1\r\n", b"X HTTP/1.1\r\n"], None),
    "get_named_http_still_works": ([b"set HTTP/1.1 0 0 1\r\nh\r\nget HTTP/1.1\r\n"], None),
    # -0 is 0 for flags, exptime, length and cas
    "flags_minus_zero": ([b"set a -0 0 1\r\nx\r\n", b"get a\r\n"], None),
    "exptime_minus_zero": ([b"set a 0 -0 1\r\nx\r\n", b"get a\r\n"], None),
    "length_minus_zero": ([b"set a 0 0 -0\r\n\r\n", b"get a\r\n"], None),
    "cas_minus_zero": ([b"set a 0 0 1\r\nx\r\n", b"cas a 0 0 1 -0\r\ny\r\n", b"get a\r\n"], None),
    # incr/decr read the value as strtoull does, and keep the length
    "incr_plus_sign": ([b"set n 0 0 3\r\n+12\r\n", b"incr n 1\r\n", b"get n\r\n"], None),
    "incr_spaces_around": ([b"set n 0 0 4\r\n 12 \r\n", b"incr n 1\r\n", b"get n\r\n"], None),
    "incr_number_then_word": ([b"set n 0 0 4\r\n12 5\r\n", b"incr n 1\r\n", b"get n\r\n"], None),
    "incr_minus_zero_value": ([b"set n 0 0 2\r\n-0\r\n", b"incr n 5\r\n", b"set m 0 0 3\r\n -5\r\n",
                               b"incr m 5\r\n"], None),
    "decr_keeps_length": ([b"set n 0 0 3\r\n100\r\n", b"decr n 1\r\n", b"get n\r\n", b"decr n 90\r\n",
                           b"get n\r\n", b"incr n 1000\r\n", b"get n\r\n"], None),
    # a NUL ends the command line
    "nul_in_get_line": ([b"set a 0 0 1\r\nx\r\n", b"get a\x00 b junk\r\n"], None),
    "nul_in_set_line": ([b"set a 0 0 1\x00zz\r\nx\r\n", b"get a\r\n"], None),
    # 32-bit fields read as memcached's safe_strtol does
    "length_2_32_plus_1": ([b"set a 0 0 4294967297\r\nx\r\n", b"get a\r\n"], None),
    "meta_length_2_32_plus_2": ([b"ms a 4294967298\r\nxy\r\n", b"mg a v\r\n"], None),
    "exptime_2_32": ([b"set a 0 4294967296 1\r\nx\r\n", b"get a\r\n"], None),
    "exptime_below_int_min": ([b"set a 0 -2147483649 1\r\nx\r\n", b"get a\r\n"], None),
    "touch_below_int_min": ([b"set a 0 0 1\r\nx\r\n", b"touch a -2147483649\r\n", b"get a\r\n"], None),
    "flush_all_2_32": ([b"set a 0 0 1\r\nx\r\n", b"flush_all 4294967296\r\n", b"get a\r\n"], None),
    # append past the item size limit
    "append_past_item_size_max": ([b"set a 0 0 %d\r\n%s\r\n" % (BIG, b"x" * BIG),
                                   b"append a 0 0 100000\r\n%s\r\n" % (b"y" * 100000),
                                   b"prepend a 0 0 100000\r\n%s\r\n" % (b"y" * 100000),
                                   b"ms a 100000 MA\r\n%s\r\n" % (b"y" * 100000), b"mg a s\r\n"], None),
    # verbosity
    "verbosity_bad_argument": ([b"verbosity x\r\n", b"verbosity -1\r\n", b"verbosity\r\n", b"verbosity -0\r\n",
                                b"verbosity 4294967297\r\n", b"verbosity 1 2\r\n",
                                b"verbosity 1 noreply\r\n", b"verbosity 0\r\n"], None),
    # mg s without v
    "mg_size_without_value": ([b"set a 0 0 5\r\nhello\r\n", b"mg a s\r\n", b"mg a s v\r\n"], None),
    # operator commands (slabs reassign's answers: test_slab_stats.py, against a
    # memcached whose reassignment is on)
    "slabs": ([b"slabs reassign 1\r\n", b"slabs automove 1\r\n",
               b"slabs automove 3\r\n", b"slabs automove x\r\n", b"slabs automove ratio 0.5\r\n",
               b"slabs automove ratio\r\n", b"slabs automove 0 noreply\r\n", b"slabs\r\n",
               b"slabs foo\r\n"], None),
    "lru": ([b"lru mode flat\r\n", b"lru temp_ttl 5\r\n", b"lru tune 10 10 0.1 2\r\n",
             b"lru tune 50 50 0.1 2\r\n", b"lru tune 10 10 0 2\r\n", b"lru tune 10 x 1 2\r\n",
             b"lru tune 1 1 1 1 noreply\r\n", b"lru\r\n", b"lru x\r\n"], None),
    # lru_crawler: tests/functional/test_lru_crawler.py, against a memcached whose crawler is on
    # per-prefix stats
    "stats_detail": ([b"stats detail\r\n", b"stats detail x\r\n", b"stats detail dump\r\n",
                      b"stats detail on\r\n", b"set a:b 0 0 1\r\nx\r\n", b"get a:b a:c plain\r\n",
                      b"delete a:c\r\n", b"set a:big 0 0 2000000 noreply\r\n%s\r\n" % (b"z" * 2000000),
                      b"stats detail dump\r\n", b"stats detail off\r\n", b"get a:b\r\n",
                      b"stats detail dump\r\n", b"stats reset\r\n", b"stats detail dump\r\n"], None),
}


def _fixed_exchange(conn, data):
    """Sends data then `mn`; returns the replies before MN, or what came
    before the server closed the connection followed by b"<closed>"."""
    conn.send(data + b"mn\r\n")
    deadline = time.monotonic() + conn.timeout
    while not conn.buf.endswith(b"MN\r\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise mcwire.ReplyTimeout(f"no MN after {data[:80]!r}; buffered {bytes(conn.buf[:200])!r}")
        conn.sock.settimeout(left)
        try:
            chunk = conn.sock.recv(1 << 20)
        except socket.timeout:
            continue
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            out = bytes(conn.buf) + b"<closed>"
            conn.buf.clear()
            return out
        conn.buf += chunk
    out = bytes(conn.buf[:-4])
    conn.buf.clear()
    return out


def run_fixed(server, name):
    steps, after = FIXED[name]
    got = []
    with mcwire.Conn(server.host, server.port, timeout=10) as c:
        for step in steps:
            got.append(_fixed_exchange(c, step))
            if got[-1].endswith(b"<closed>"):
                break
    if after is not None:
        with mcwire.Conn(server.host, server.port, timeout=10) as c:
            got.append(_fixed_exchange(c, after))
    return got


# Where memcached 1.6.45 answers differently from Debian's 1.6.18 (strict
# numbers: a length, cas unique, touch or flush_all time or verbosity level
# that 1.6.18 read with strtol's leniency; NULs; HTTP lines), ithaca answers
# as 1.6.45: these
# replies were captured from it. With MEMCACHED_BIN naming a 1.6.45 they are
# checked against it as well.
FIXED_1645 = {
    "cas_minus_zero": [b"STORED\r\n", b"CLIENT_ERROR bad command line format\r\n", b"VALUE a 0 1\r\nx\r\nEND\r\n"],
    "flush_all_2_32": [b"STORED\r\n", b"CLIENT_ERROR invalid exptime argument\r\n", b"VALUE a 0 1\r\nx\r\nEND\r\n"],
    "length_2_32_plus_1": [b"CLIENT_ERROR bad command line format\r\n" * 2, b"END\r\n"],
    "meta_length_2_32_plus_2": [b"CLIENT_ERROR bad command line format\r\nERROR\r\n", b"EN\r\n"],
    "touch_below_int_min": [b"STORED\r\n", b"CLIENT_ERROR invalid exptime argument\r\n",
                            b"VALUE a 0 1\r\nx\r\nEND\r\n"],
    "verbosity_bad_argument": [b"CLIENT_ERROR bad command line format\r\n"] * 5 + [b"OK\r\n", b"", b"OK\r\n"],
    # a NUL is a byte of the line (1.6.18 ended the line there)
    "nul_in_get_line": [b"STORED\r\n", b"END\r\n"],
    "nul_in_set_line": [b"CLIENT_ERROR bad command line format\r\n" * 2, b"END\r\n"],
    # any unknown command whose last word starts with HTTP/ hangs up
    "http_after_command_letter": [b"<closed>"],
}


@pytest.mark.parametrize("name", sorted(FIXED))
def test_ascii_fixed_cases(name, ithaca_factory, memcached_factory):
    ours = run_fixed(ithaca_factory(args=SERVER_ARGS), name)
    oracle = memcached_factory(args=SERVER_ARGS + ORACLE_FEATURES_OFF)
    want = run_fixed(oracle, name)
    if name in FIXED_1645:
        if mcwire.server_version(oracle.address) >= (1, 6, 45):
            assert want == FIXED_1645[name], "the pinned 1.6.45 answer is stale"
        want = FIXED_1645[name]
    assert ours == want


def test_watch_answers(ithaca):
    """`watch` streams memcached's log lines (tests/functional/test_watch.py);
    here only its answers: OK, and ERROR for a word that names no event kind
    (memcached 1.6.45; 1.6.18 ignored a trailing noreply)."""
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        assert _fixed_exchange(c, b"watch noreply\r\n") == b"ERROR\r\n"
    with mcwire.Conn(ithaca.host, ithaca.port) as w:
        w.send(b"watch fetchers mutations\r\n")
        assert w.read_line() == b"OK\r\n"


def test_generator_is_deterministic():
    a = [Generator(11).batch() for _ in range(3)]
    b = [Generator(11).batch() for _ in range(3)]
    assert a == b
