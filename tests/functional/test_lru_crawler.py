"""`lru_crawler`: memcached 1.6.45's crawler commands. metadump and mgdump
dump the local store (one line per live item), crawl answers as a started
crawler (the GC sweep does the crawl's work), enable/disable switch them, -X
refuses the dumps. Each answer is checked against a real memcached with its
crawler on (Debian's 1.6.18 in CI); where 1.6.45 differs (metadump's "OK"
first and flags= last, mgdump, the pipelining refusal) the test pins 1.6.45's
answer, captured from a live 1.6.45, and compares with it live when
MEMCACHED_BIN names a 1.6.45."""

import re
import time

import pytest

import mcwire

META_LINE = re.compile(r"key=(\S+) exp=(-?\d+) la=(\d+) cas=(\d+) fetch=(yes|no) cls=(\d+) size=(\d+)(?: flags=(\d+) )?$")


def server_time(conn):
    """The server's clock: `stats time` (unix seconds)."""
    conn.send(b"stats\r\n")
    return int(mcwire.parse_stats(conn.read_reply())["time"])


def is_1645(server):
    return mcwire.server_version(server.address) >= (1, 6, 45)


def load(server):
    """Items of known shape: no expiry, an expiry 100 s out, a fetched one,
    a binary key (meta b), a key memcached URI-encodes, flags, and one value
    large enough for a class of its own."""
    with mcwire.Conn(server.host, server.port) as c:
        assert c.call(b"set foo 0 0 1\r\nx\r\n") == b"STORED\r\n"
        assert c.call(b"set bar 7 100 2\r\nxy\r\n") == b"STORED\r\n"
        assert c.call(b"get foo\r\n") == b"VALUE foo 0 1\r\nx\r\nEND\r\n"
        assert c.call(b"ms Zm9vYg== 1 b\r\nz\r\n") == b"HD\r\n"
        assert c.call(b"set a%b 0 0 1\r\n1\r\n") == b"STORED\r\n"
        assert c.call(b"set big 0 0 5000\r\n" + b"v" * 5000 + b"\r\n") == b"STORED\r\n"


def metadump(server, arg=b"all"):
    """The raw answer and its lines parsed: {key: fields}."""
    with mcwire.Conn(server.host, server.port) as c:
        c.send(b"lru_crawler metadump " + arg + b"\r\n")
        raw = c.read_until(b"END\r\n")
    body = raw[4:] if raw.startswith(b"OK\r\n") else raw
    items = {}
    for line in body[:-len(b"END\r\n")].decode().split("\n")[:-1]:
        m = META_LINE.match(line)
        assert m, line
        key, exp, la, cas, fetch, cls, size, flags = m.groups()
        items[key] = {"exp": int(exp), "la": int(la), "fetch": fetch, "cls": int(cls), "size": int(size),
                      "flags": flags}
    return raw, items


def test_metadump_lists_what_memcached_lists(ithaca, memcached):
    now = time.time()
    dumps = {}
    for server in (ithaca, memcached):
        load(server)
        dumps[server.name] = metadump(server)
    raw, ours = dumps[ithaca.name]
    _, theirs = dumps[memcached.name]
    assert sorted(ours) == sorted(theirs) == ["a%25b", "bar", "big", "foo", "foob"]
    for key in ours:
        for field in ("fetch", "cls", "size"):
            assert ours[key][field] == theirs[key][field], (key, field, ours[key], theirs[key])
        assert abs(ours[key]["la"] - now) < 5, ours[key]
    assert ours["foo"]["exp"] == -1 and ours["foo"]["fetch"] == "yes"
    assert abs(ours["bar"]["exp"] - (now + 100)) < 5
    # 1.6.45's shape: OK first, flags= with a space after it, END.
    assert raw.startswith(b"OK\r\n") and raw.endswith(b" \nEND\r\n")
    assert ours["bar"]["flags"] == "7" and ours["foo"]["flags"] == "0"
    if is_1645(memcached):
        assert dumps[memcached.name][0].startswith(b"OK\r\n")
        assert {k: v["flags"] for k, v in theirs.items()} == {k: v["flags"] for k, v in ours.items()}


def test_metadump_by_class(ithaca, memcached):
    for server in (ithaca, memcached):
        load(server)
    _, every = metadump(ithaca)
    big_class = every["big"]["cls"]
    small_class = every["foo"]["cls"]
    assert big_class != small_class
    for server in (ithaca, memcached):
        _, only_big = metadump(server, str(big_class).encode())
        assert sorted(only_big) == ["big"], server.name
        _, both = metadump(server, f"{small_class},{big_class}".encode())
        assert sorted(both) == sorted(every), server.name
        _, empty = metadump(server, b"40")
        assert empty == {}, server.name


# 1.6.45's mgdump of load() (hash order aside), captured from a live 1.6.45.
MGDUMP_1645 = {b"mg foo\r\n", b"mg bar\r\n", b"mg Zm9vYg== b\r\n", b"mg a%b\r\n", b"mg big\r\n"}


def test_mgdump_lines_fetch_their_items(ithaca, memcached):
    load(ithaca)
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        c.send(b"lru_crawler mgdump hash\r\n")
        raw = c.read_until(b"EN\r\n")
        assert raw.startswith(b"OK\r\n")
        lines = raw[4:-4].split(b"\r\n")[:-1]
        assert {line + b"\r\n" for line in lines} == MGDUMP_1645
        # Each line, with flags added, is a working request.
        for line in lines:
            assert c.call(line + b" v\r\n").startswith(b"VA "), line
    if is_1645(memcached):
        load(memcached)
        with mcwire.Conn(memcached.host, memcached.port) as c:
            c.send(b"lru_crawler mgdump hash\r\n")
            theirs = c.read_until(b"EN\r\n")
        assert {line + b"\r\n" for line in theirs[4:-4].split(b"\r\n")[:-1]} == MGDUMP_1645


# Answers 1.6.18 and 1.6.45 agree on, in order on one connection.
AGREED = [
    b"lru_crawler crawl all\r\n", b"lru_crawler crawl 3\r\n", b"lru_crawler crawl 1,2,3\r\n",
    b"lru_crawler crawl hash\r\n", b"lru_crawler crawl 1,64\r\n", b"lru_crawler metadump 0\r\n",
    b"lru_crawler metadump 64\r\n", b"lru_crawler metadump x\r\n", b"lru_crawler metadump 1,x\r\n",
    b"lru_crawler metadump\r\n", b"lru_crawler metadump all extra\r\n", b"lru_crawler crawl\r\n",
    b"lru_crawler tocrawl 5\r\n", b"lru_crawler tocrawl x\r\n", b"lru_crawler sleep 2000000\r\n",
    b"lru_crawler sleep 10\r\n", b"lru_crawler\r\n", b"lru_crawler foo bar baz\r\n",
    b"lru_crawler enable\r\n", b"lru_crawler disable\r\n", b"lru_crawler metadump all\r\n",
]


def test_crawler_answers_as_memcached(ithaca, memcached):
    got = {}
    for server in (ithaca, memcached):
        with mcwire.Conn(server.host, server.port) as c:
            got[server.name] = [c.call(r) for r in AGREED]
    # memcached's `disable` only asks its crawler thread to stop, and the
    # thread clears the setting as it exits: a metadump sent at once may
    # still find it stopping ("ERROR an unknown error happened"). ithaca's
    # switch takes effect at once.
    # memcached's crawler thread may still be busy with the crawl before
    # (a loaded machine): its BUSY stands for ithaca's answer there.
    busy = b"BUSY currently processing crawler request\r\n"
    theirs = [mine if t == busy and r.startswith(b"lru_crawler crawl") else t
              for r, mine, t in zip(AGREED, got[ithaca.name], got[memcached.name])]
    assert got[ithaca.name][:-1] == theirs[:-1]
    assert got[memcached.name][-1] in (b"CLIENT_ERROR lru crawler disabled\r\n",
                                       b"ERROR an unknown error happened\r\n")
    assert got[ithaca.name][-1] == b"CLIENT_ERROR lru crawler disabled\r\n"
    # The switch is the process's: another connection sees it; enable turns it back on.
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        assert c.call(b"lru_crawler crawl all\r\n") == b"CLIENT_ERROR lru crawler disabled\r\n"
        assert c.call(b"lru_crawler enable\r\n") == b"OK\r\n"
        c.send(b"lru_crawler metadump all\r\n")
        assert c.read_until(b"END\r\n") == b"OK\r\nEND\r\n"


def test_dump_behind_unsent_replies_is_refused(ithaca):
    """1.6.45: a dump takes the connection over, so it refuses to start behind
    replies of its batch not yet sent; the connection goes on."""
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        c.send(b"get foo\r\nlru_crawler metadump all\r\nlru_crawler mgdump all\r\nversion\r\n")
        assert c.read_line() == b"END\r\n"
        assert c.read_line() == b"ERROR cannot pipeline other commands before metadump\r\n"
        assert c.read_line() == b"ERROR cannot pipeline other commands before mgdump\r\n"
        assert c.read_line().startswith(b"VERSION ")


def test_disable_dumping(ithaca_factory, memcached_factory):
    for server in (ithaca_factory(args=["-X"]), memcached_factory(args=["-X"])):
        with mcwire.Conn(server.host, server.port) as c:
            assert c.call(b"lru_crawler metadump all\r\n") == b"ERROR metadump not allowed\r\n", server.name
            c.send(b"stats settings\r\n")
            settings = mcwire.parse_stats(c.read_reply())
            assert settings["dump_enabled"] == "no"
    ours = ithaca_factory(args=["-X"])
    with mcwire.Conn(ours.host, ours.port) as c:
        assert c.call(b"lru_crawler mgdump all\r\n") == b"ERROR key dump not allowed\r\n"


def test_a_large_dump_streams_and_skips_the_dead(ithaca):
    """20,000 items come out whole, streamed through the reply drain, while
    another client is served; expired and deleted items are not listed."""
    n = 20000
    with mcwire.Conn(ithaca.host, ithaca.port, timeout=30) as c:
        # "gone" expires at an absolute time on the server's clock (unix
        # seconds, one-second resolution); the dump waits until that clock,
        # read from `stats time`, is past it.
        expires = server_time(c) + 1
        batch = b"".join(b"set key:%d 0 0 100 noreply\r\n%s\r\n" % (i, b"v" * 100) for i in range(n))
        c.send(batch + b"delete key:0\r\nset gone 0 %d 1\r\ng\r\n" % expires)
        assert c.read_line() == b"DELETED\r\n"
        assert c.read_line() == b"STORED\r\n"
        deadline = time.monotonic() + 10
        while server_time(c) <= expires:
            assert time.monotonic() < deadline, "the server's clock did not pass the expiry"
            time.sleep(0.05)
        c.send(b"lru_crawler metadump all\r\n")
        with mcwire.Conn(ithaca.host, ithaca.port) as other:
            assert other.call(b"version\r\n").startswith(b"VERSION ")
        raw = c.read_until(b"END\r\n")
    lines = raw[4:-5].split(b"\n")[:-1]
    keys = {line.split(b" ", 1)[0] for line in lines}
    assert len(lines) == n - 1
    assert b"key=key%3A0" not in keys and b"key=gone" not in keys and b"key=key%3A1" in keys
