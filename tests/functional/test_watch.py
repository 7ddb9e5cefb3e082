"""`watch`: memcached's log stream over the wire (issue 17).

A watcher connection sends `watch <kinds>`, gets OK, and from then on only
receives lines in memcached 1.6.45's format (logger.c):

  ts=<sec>.<usec> gid=<n> type=item_get key=<uri> status=found|not_found clsid=<c> cfd=<id> size=<n>
  ts=... gid=... type=item_store key=... status=stored|... cmd=set|... ttl=<s> clsid=... cfd=... size=...
  ts=... gid=... type=deleted key=... cmd=delete|md clsid=... size=...
  ts=... gid=... type=eviction key=... fetch=yes|no ttl=... la=... clsid=... size=...
  ts=... gid=... type=conn_new rip=... rport=... transport=tcp cfd=...
  ts=... gid=... type=conn_close rip=... rport=... transport=tcp reason=normal|error|... cfd=...
  skipped=<n>            (lines a slow watcher lost, before its next line)

Where Debian's memcached 1.6.18 prints the same lines (fetchers, mutations,
connevents), the test compares with it; `deletions` and kind prefixes are
1.6.45's (checked by hand against 1.6.45, pinned here).
"""

import re
import socket
import time

import mcwire
from test_router import router_yaml, addr

LINE_HEAD = r"ts=\d+\.\d+ gid=\d+ "


def stats(conn):
    conn.send(b"stats\r\n")
    return mcwire.parse_stats(conn.read_reply())


def conn_id(conn):
    """This connection's id in `stats conns` (the newest connection is last),
    which ithaca prints as cfd=, as memcached prints its fd there."""
    conn.send(b"stats conns\r\n")
    ids = [int(m.group(1)) for m in re.finditer(rb"STAT (\d+):addr ", conn.read_reply())]
    return ids[-1]


def start_watch(server, kinds, timeout=10.0):
    w = mcwire.Conn(server.host, server.port, timeout=timeout)
    w.send(b"watch " + kinds.encode() + b"\r\n")
    assert w.read_line() == b"OK\r\n"
    return w


def read_until(w, pattern, timeout=10.0):
    """Watch lines (str, without the newline) up to and including the first
    that matches `pattern`; fails after `timeout`."""
    lines = []
    deadline = time.monotonic() + timeout
    rx = re.compile(pattern)
    while True:
        w.timeout = max(0.05, deadline - time.monotonic())
        line = w.read_until(b"\n").decode().rstrip("\n")
        lines.append(line)
        if rx.search(line):
            return lines


def wait_stat(conn, name, want, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = stats(conn)[name]
        if got == str(want):
            return
        time.sleep(0.02)
    raise AssertionError(f"stat {name} stayed {got}, wanted {want}")


def normalised(lines):
    """Lines without what differs between two servers (time, gid, ports, ids)."""
    out = []
    for line in lines:
        line = re.sub(LINE_HEAD, "", line)
        line = re.sub(r"(cfd|rport)=\d+", r"\1=N", line)
        out.append(line)
    return out


def script(server, watcher):
    with mcwire.Conn(server.host, server.port) as c:
        for req in (b"set foo 0 0 3\r\nbar\r\n", b"get foo\r\n", b"get nope\r\n", b"gets foo\r\n",
                    b"add foo 0 0 1\r\nx\r\n", b"append foo 0 0 2\r\nzz\r\n", b"set k%20 5 100 2\r\nhi\r\n",
                    b"incr foo 1\r\n", b"delete foo\r\n", b"get foo\r\n"):
            c.send(req)
            c.read_reply()
        c.send(b"quit\r\n")
        assert c.is_closed()
    return read_until(watcher, r"type=conn_close .*reason=normal")


def read_more(w, have, want, timeout=3.0):
    """`have` plus further lines until there are `want` (or `timeout` passes)."""
    lines = list(have)
    deadline = time.monotonic() + timeout
    while len(lines) < want and time.monotonic() < deadline:
        w.timeout = max(0.05, deadline - time.monotonic())
        try:
            lines.append(w.read_until(b"\n").decode().rstrip("\n"))
        except (TimeoutError, socket.timeout):
            break
    return lines


def test_lines_match_memcached(ithaca, memcached):
    """The same requests give the same lines as memcached (1.6.18 prints
    these kinds exactly as 1.6.45 does), times, gids, ports and ids aside.
    memcached's logger thread gathers each thread's lines in turn, so on a
    busy machine its conn_close may come before the item lines: its lines are
    read on to ithaca's count and compared as a set; ithaca's own order is
    the requests' order."""
    got = {}
    for name, server in (("ithaca", ithaca), ("memcached", memcached)):
        with start_watch(server, "fetchers mutations connevents") as w:
            got[name] = script(server, w)
            if name == "memcached":
                got[name] = read_more(w, got[name], len(got["ithaca"]))
        for line in got[name]:
            assert re.match(LINE_HEAD + "type=", line), line
    ours, theirs = normalised(got["ithaca"]), normalised(got["memcached"])
    if theirs and theirs[-1].startswith("type=conn_close "):
        assert ours == theirs  # memcached's lines came in order: the same order
    else:
        assert sorted(ours) == sorted(theirs)
        assert ours[0].startswith("type=conn_new ") and ours[-1].startswith("type=conn_close ")
    assert "type=item_store key=k%2520 status=stored cmd=set ttl=100 clsid=1 cfd=N size=2" in \
        normalised(got["ithaca"])


def test_get_set_delete_carry_the_clients_id(ithaca):
    with start_watch(ithaca, "fetchers mutations deletions") as w, \
            mcwire.Conn(ithaca.host, ithaca.port) as c:
        cfd = conn_id(c)
        c.send(b"set vfoo 0 0 4\r\nvbar\r\n")
        assert c.read_reply() == b"STORED\r\n"
        c.send(b"get vfoo\r\n")
        c.read_reply()
        c.send(b"get missing\r\n")
        assert c.read_reply() == b"END\r\n"
        c.send(b"delete vfoo\r\n")
        assert c.read_reply() == b"DELETED\r\n"
        c.send(b"set vfoo 0 0 4\r\nvbar\r\n")
        c.read_reply()
        c.send(b"md vfoo I\r\n")  # marks stale: no deletion
        assert c.read_reply() == b"HD\r\n"
        c.send(b"md vfoo\r\n")
        assert c.read_reply() == b"HD\r\n"
        lines = [re.sub(LINE_HEAD, "", l) for l in read_until(w, r"type=deleted key=vfoo cmd=md")]
    assert lines == [
        f"type=item_get key=vfoo status=not_found clsid=0 cfd={cfd} size=0",
        f"type=item_store key=vfoo status=stored cmd=set ttl=0 clsid=1 cfd={cfd} size=4",
        f"type=item_get key=vfoo status=found clsid=1 cfd={cfd} size=4",
        f"type=item_get key=missing status=not_found clsid=0 cfd={cfd} size=0",
        f"type=item_get key=vfoo status=found clsid=1 cfd={cfd} size=4",
        "type=deleted key=vfoo cmd=delete clsid=1 size=4",
        f"type=item_get key=vfoo status=not_found clsid=0 cfd={cfd} size=0",
        f"type=item_store key=vfoo status=stored cmd=set ttl=0 clsid=1 cfd={cfd} size=4",
        f"type=item_get key=vfoo status=found clsid=1 cfd={cfd} size=4",
        f"type=item_get key=vfoo status=found clsid=1 cfd={cfd} size=4",
        "type=deleted key=vfoo cmd=md clsid=1 size=4",
    ]


def test_only_the_kinds_asked_for(ithaca):
    with start_watch(ithaca, "deletions") as w, mcwire.Conn(ithaca.host, ithaca.port) as c:
        for req in (b"set a 0 0 1\r\n1\r\n", b"get a\r\n", b"md nothere\r\n", b"delete a\r\n"):
            c.send(req)
            c.read_reply()
        lines = read_until(w, r"type=deleted")
    assert len(lines) == 1 and re.fullmatch(LINE_HEAD + r"type=deleted key=a cmd=delete clsid=1 size=1", lines[0])


def test_connection_open_and_close(ithaca):
    with start_watch(ithaca, "connevents") as w:
        c = mcwire.Conn(ithaca.host, ithaca.port)
        port = c.sock.getsockname()[1]
        cfd = conn_id(c)
        c.send(b"quit\r\n")
        assert c.is_closed()
        c.close()
        opened, closed = read_until(w, r"type=conn_close")
        assert re.fullmatch(LINE_HEAD + f"type=conn_new rip=127.0.0.1 rport={port} transport=tcp cfd={cfd}", opened)
        assert re.fullmatch(LINE_HEAD + f"type=conn_close rip=127.0.0.1 rport={port} transport=tcp "
                            f"reason=normal cfd={cfd}", closed)
        # A protocol error that closes the connection (memcached: an HTTP request).
        with mcwire.Conn(ithaca.host, ithaca.port) as h:
            h.send(b"GET / HTTP/1.1\r\n")
            assert h.is_closed()
        lines = read_until(w, r"type=conn_close")
        assert "type=conn_new" in lines[0] and "reason=error" in lines[1]


def test_eviction_is_watched(ithaca_factory):
    server = ithaca_factory(args=["-m", "8"])
    value = b"B" * 10000
    lines = []
    with start_watch(server, "mutations evictions") as w, mcwire.Conn(server.host, server.port) as c:
        # Batches of 100 values of 10 KB into an 8 MB budget, each batch's lines
        # read before the next (so none is dropped): evictions come by batch 9.
        for batch in range(30):
            c.send(b"".join(b"set n,foo%d 0 0 10000 noreply\r\n%s\r\n" % (batch * 100 + i, value)
                            for i in range(100)))
            lines += read_until(w, r"type=item_store key=n%%2Cfoo%d " % (batch * 100 + 99))
            if any("type=eviction" in l for l in lines):
                break
    evictions = [l for l in lines if "type=eviction" in l]
    assert evictions, "no eviction line after 3,000 values of 10 KB in 8 MB"
    assert re.fullmatch(LINE_HEAD + r"type=eviction key=n%2Cfoo\d+ fetch=no ttl=-1 la=\d+ clsid=\d+ size=10000",
                        evictions[0]), evictions[0]
    assert not [l for l in lines if l.startswith("skipped=")]


def test_slow_watcher_loses_lines_and_never_slows_the_server(ithaca):
    """A watcher that does not read: the client's 20,000 gets take about as
    long as without it, its lines are dropped and counted, and once it reads
    again a skipped=N line says how many it lost: every get is either a line
    it received or counted in a skipped line."""
    gets = 20000
    batch = 200

    def run_gets(c):
        start = time.monotonic()
        req = b"get hot\r\n" * batch
        for _ in range(gets // batch):
            c.send(req)
            for _ in range(batch):
                c.read_reply()
        return time.monotonic() - start

    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        c.send(b"set hot 0 0 5\r\nhello\r\n")
        assert c.read_reply() == b"STORED\r\n"
        alone = run_gets(c)
        # A small receive buffer so the kernel holds little for the watcher.
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect((ithaca.host, ithaca.port))
        raw.sendall(b"watch fetchers\r\n")
        w = mcwire.Conn.__new__(mcwire.Conn)
        w.timeout, w.sock, w.buf = 10.0, raw, bytearray()
        assert w.read_line() == b"OK\r\n"
        watched = run_gets(c)
        assert watched < alone * 3 + 2.0, (alone, watched)
        st = stats(c)
        assert int(st["log_watchers"]) == 1
        assert int(st["log_watcher_skipped"]) > 0
        assert int(st["log_watcher_sent"]) < gets
        # Reads again: one more get at a time until the skipped line shows (it
        # goes out before the next line the watcher takes), then a last one.
        received = 0
        skipped = 0
        extra = 0
        while True:
            c.send(b"get hot\r\n")
            c.read_reply()
            extra += 1
            assert extra < 1000, "no skipped= line"
            w.timeout = 0.2
            try:
                while True:
                    line = w.read_until(b"\n").decode()
                    if line.startswith("skipped="):
                        skipped += int(line[len("skipped="):])
                    else:
                        assert re.fullmatch(LINE_HEAD + r"type=item_get key=hot status=found clsid=1 cfd=\d+ "
                                            r"size=5\n", line), line
                        received += 1
            except mcwire.ReplyTimeout:
                pass
            if skipped:
                break
        c.send(b"get last\r\n")
        c.read_reply()
        w.timeout = 10.0
        while True:
            line = w.read_until(b"\n").decode()
            if "key=last" in line:
                break
            if line.startswith("skipped="):
                skipped += int(line[len("skipped="):])
            else:
                received += 1
        assert received + skipped == gets + extra
        assert skipped == int(stats(c)["log_watcher_skipped"])
        w.close()


def test_watcher_that_leaves_unregisters(ithaca):
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        assert stats(c)["log_watchers"] == "0"
        w1 = start_watch(ithaca, "fetchers")
        w2 = start_watch(ithaca, "mutations")
        wait_stat(c, "log_watchers", 2)
        w1.close()
        wait_stat(c, "log_watchers", 1)
        w2.close()
        wait_stat(c, "log_watchers", 0)
        # Nobody watches: nothing is made.
        written = stats(c)["log_worker_written"]
        c.send(b"get x\r\n")
        c.read_reply()
        assert stats(c)["log_worker_written"] == written


def test_watcher_limit(ithaca):
    watchers = [start_watch(ithaca, "fetchers") for _ in range(20)]
    try:
        with mcwire.Conn(ithaca.host, ithaca.port) as c:
            c.send(b"watch\r\n")
            assert c.read_line() == b"WATCHER_TOO_MANY log watcher limit reached\r\n"
            c.send(b"version\r\n")  # still an ordinary client
            assert c.read_line().startswith(b"VERSION ")
    finally:
        for w in watchers:
            w.close()


def test_watch_words(ithaca):
    """1.6.45: each word is a prefix of a kind; anything else is ERROR and the
    connection stays a client. (1.6.18 wanted whole words and ignored a
    trailing noreply.)"""
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        for words in (b"watch foo\r\n", b"watch noreply\r\n", b"watch fetchersX\r\n", b"watch fetchers x\r\n"):
            c.send(words)
            assert c.read_line() == b"ERROR\r\n"
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        # Behind a reply of the same batch (memcached 1.6.45's words); the
        # connection stays a client.
        c.send(b"get foo\r\nwatch\r\nversion\r\n")
        assert c.read_line() == b"END\r\n"
        assert c.read_line() == b"ERROR cannot pipeline other commands before watch\r\n"
        assert c.read_line().startswith(b"VERSION ")
    with start_watch(ithaca, "f m d") as w, mcwire.Conn(ithaca.host, ithaca.port) as c:
        c.send(b"set p 0 0 1\r\n1\r\n")
        c.read_reply()
        lines = read_until(w, r"type=item_store")
        assert "type=item_get key=p" in lines[0]


def test_shutdown_with_a_watcher_does_not_hang(ithaca):
    w = start_watch(ithaca, "fetchers connevents")
    rc, killed = ithaca.stop()
    assert not killed and rc == 0
    assert w.is_closed()
    w.close()


def test_router_role_connection_events(ithaca_factory, memcached):
    """The router role has connection events; its routed requests make no
    item lines (they happen on the backend)."""
    router = ithaca_factory(config_text=router_yaml([addr(memcached)]))
    with start_watch(router, "fetchers connevents") as w:
        with mcwire.Conn(router.host, router.port) as c:
            port = c.sock.getsockname()[1]
            c.send(b"get k\r\n")
            assert c.read_reply() == b"END\r\n"
            c.send(b"quit\r\n")
            assert c.is_closed()
        lines = read_until(w, r"type=conn_close")
    assert len(lines) == 2
    assert re.fullmatch(LINE_HEAD + rf"type=conn_new rip=127.0.0.1 rport={port} transport=tcp cfd=\d+", lines[0])
    assert re.fullmatch(LINE_HEAD + rf"type=conn_close rip=127.0.0.1 rport={port} transport=tcp reason=normal "
                        r"cfd=\d+", lines[1])


def test_disable_watch_refuses_as_memcached(ithaca_factory, memcached_factory):
    """-W (memcached's --disable-watch): `watch` is refused with memcached's
    words and the connection stays a client; `server.enable_watch` in the
    file is the same setting, and a reload turns it back on."""
    from test_reload import reload_with
    refused = b"CLIENT_ERROR watch commands not allowed\r\n"
    for server in (ithaca_factory(args=["-W"]), memcached_factory(args=["-W"])):
        with mcwire.Conn(server.host, server.port) as c:
            c.send(b"watch fetchers\r\nversion\r\n")
            assert c.read_line() == refused, server.name
            assert c.read_line().startswith(b"VERSION "), server.name
    server = ithaca_factory(config_text="logging:\n  level: info\nserver:\n  enable_watch: false\n")
    with mcwire.Conn(server.host, server.port) as c:
        c.send(b"watch\r\n")
        assert c.read_line() == refused
    reload_with(server, "logging:\n  level: info\nserver:\n  enable_watch: true\n",
                applied="server.enable_watch false -> true")
    start_watch(server, "fetchers").close()


def binary_script(server, watcher):
    from mcwire import OP_DELETE, OP_GETK, OP_INCREMENT, OP_TOUCH, S, G, T, A, pack_request
    with mcwire.Conn(server.host, server.port) as c:
        c.binary_batch([S(b"foo", b"bar", flags=3, exptime=100), G(b"foo"), G(b"nope", op=OP_GETK),
                        S(b"n", b"5"), A(b"n", 2), T(b"foo", 50), pack_request(OP_DELETE, key=b"foo"),
                        S(b"big", b"v" * 3000), G(b"end")])
    # The marker comes on the same connection: memcached's worker threads
    # log through buffers of their own, so another connection's lines may
    # come first.
    return read_until(watcher, r"type=item_get key=end ")


def test_binary_lines_match_memcached(ithaca, memcached):
    """The binary protocol's gets, stores, incr, touch and delete log what
    memcached logs for them: item_get for every lookup, item_store for every
    store, and no deletion line for a binary delete."""
    got = {}
    for name, server in (("ithaca", ithaca), ("memcached", memcached)):
        with start_watch(server, "fetchers mutations") as w:
            got[name] = normalised(binary_script(server, w))
    assert got["ithaca"] == got["memcached"]
    assert any(line.startswith("type=item_store key=big status=stored cmd=set") for line in got["ithaca"])
    # deletions (1.6.45's kind): a binary delete logs none.
    with start_watch(ithaca, "deletions fetchers") as w:
        lines = binary_script(ithaca, w)
    assert not any("type=deleted" in line for line in lines)
