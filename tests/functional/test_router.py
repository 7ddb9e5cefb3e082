"""The router role over the wire, against real memcached backends: ithaca
started with `pools:` and `route: {type: pool}` forwards every request to the
server that holds its key, and answers byte for byte what a memcached would.

Failures use fake backends (fake_backend.py): killed, hung, resetting,
garbage, slow, and a server coming back."""

import signal
import threading
import time

import pytest

import mcwire
from fake_backend import FakeBackend
from test_ascii_diff import SERVER_ARGS, run_seed


def router_yaml(servers, *, pool="main", workers=None, log_level=None, **settings):
    """A router config over `servers`. Tests that are not about timeouts get a
    10 s request timeout: on a loaded CI machine a reply can take longer than
    the 1 s default, and a `noreply` request that times out fails silently
    (the backend may or may not have applied it), which would desynchronise a
    differential run from its oracle."""
    settings.setdefault("timeout", "10s")
    lines = []
    if log_level:
        lines += ["logging:", f"  level: {log_level}"]
    if workers:
        lines += ["server:", f"  workers: {workers}"]
    lines += ["pools:", f"  {pool}:", "    servers: [" + ", ".join(f'"{s}"' for s in servers) + "]"]
    for key, value in settings.items():
        lines.append(f"    {key}: {value}")
    lines += ["route:", "  type: pool", f"  pool: {pool}"]
    return "\n".join(lines) + "\n"


def addr(server):
    return f"{server.host}:{server.port}"


def stats(conn, group=""):
    conn.send(b"stats" + (b" " + group.encode() if group else b"") + b"\r\n")
    return mcwire.parse_stats(conn.read_reply())


def wait_for(predicate, timeout=10.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    pytest.fail(f"timed out after {timeout}s waiting for {what}", pytrace=False)


@pytest.fixture
def backends(memcached_factory):
    return [memcached_factory(args=SERVER_ARGS) for _ in range(3)]


def test_keys_spread_over_the_pool_and_read_back(ithaca_factory, backends):
    router = ithaca_factory(config_text=router_yaml([addr(b) for b in backends], hash="md5"))
    keys = [f"key:{i}".encode() for i in range(300)]
    with mcwire.Conn(router.host, router.port) as c:
        for k in keys:
            assert c.call(b"set %s 7 0 %d\r\n%s\r\n" % (k, len(k) + 1, k + b"!")) == b"STORED\r\n"
        for k in keys:
            assert c.call(b"get %s\r\n" % k) == b"VALUE %s 7 %d\r\n%s!\r\nEND\r\n" % (k, len(k) + 1, k)
    # Every key is on exactly one backend, and every backend has some.
    holders = {}
    for b in backends:
        with mcwire.Conn(b.host, b.port) as d:
            for k in keys:
                if d.call(b"get %s\r\n" % k) != b"END\r\n":
                    holders.setdefault(k, []).append(b.port)
    assert all(len(holders.get(k, [])) == 1 for k in keys), "a key is on no backend or on several"
    per_backend = {b.port: sum(1 for k in keys if holders[k] == [b.port]) for b in backends}
    assert all(n > 30 for n in per_backend.values()), per_backend


def test_multiget_across_servers_merges_in_client_order(ithaca_factory, backends):
    router = ithaca_factory(config_text=router_yaml([addr(b) for b in backends]))
    with mcwire.Conn(router.host, router.port) as c:
        for i in range(0, 40, 2):  # even keys exist
            assert c.call(b"set k%d %d 0 2\r\nv%d\r\n" % (i, i, i % 10)) == b"STORED\r\n"
        keys = [b"k%d" % i for i in range(40)] + [b"k4", b"k4", b"k39"]
        c.send(b"get " + b" ".join(keys) + b"\r\n")
        got = c.read_reply()
    want = b"".join(b"VALUE k%d %d 2\r\nv%d\r\n" % (i, i, i % 10) for i in
                    [int(k[1:]) for k in keys] if i % 2 == 0) + b"END\r\n"
    assert got == want


# One backend: with several, each memcached numbers its own CAS uniques, so
# the diff's CAS ordinals cannot line up with a single oracle's (the multi-
# server path has its own tests below).
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_ascii_diff_through_router_one_backend(seed, ithaca_factory, memcached_factory):
    backend = memcached_factory(args=SERVER_ARGS)
    router = ithaca_factory(args=["-I", "1m"], config_text=router_yaml([addr(backend)], allow_flush="true"))
    run_seed(seed, router, memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS))


def test_pipelined_batch_replies_in_order(ithaca_factory, backends):
    router = ithaca_factory(config_text=router_yaml([addr(b) for b in backends]))
    with mcwire.Conn(router.host, router.port) as c:
        batch = b"".join(b"set p%d 0 0 %d\r\n%d\r\n" % (i, len(str(i)), i) for i in range(500))
        batch += b"".join(b"get p%d\r\n" % i for i in range(500))
        batch += b"version\r\n"
        units = c.exchange_until_sentinel(batch)
    assert units[:500] == [b"STORED\r\n"] * 500
    assert units[500:] == [b"VALUE p%d 0 %d\r\n%d\r\nEND\r\n" % (i, len(str(i)), i) for i in range(500)]


def test_server_commands_answered_by_ithaca(ithaca_factory, backends):
    router = ithaca_factory(config_text=router_yaml([addr(b) for b in backends]))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"version\r\n").startswith(b"VERSION 1.6.45-ithaca")
        s = stats(c)
        assert s["router_pools"] == "1" and s["router_servers"] == "3"
        assert c.call(b"flush_all\r\n") == b"SERVER_ERROR Command disabled\r\n"
        c.send(b"mn\r\n")
        assert c.read_line() == b"MN\r\n"


def test_flush_all_reaches_every_server_when_allowed(ithaca_factory, backends):
    router = ithaca_factory(config_text=router_yaml([addr(b) for b in backends], allow_flush="true"))
    with mcwire.Conn(router.host, router.port) as c:
        for i in range(30):
            c.call(b"set f%d 0 0 1\r\nx\r\n" % i)
        assert c.call(b"flush_all\r\n") == b"OK\r\n"
    for b in backends:
        with mcwire.Conn(b.host, b.port) as d:
            for i in range(30):
                assert d.call(b"get f%d\r\n" % i) == b"END\r\n"


def test_binary_and_meta_clients_over_ascii_backend(ithaca_factory, memcached_factory):
    backend = memcached_factory(args=SERVER_ARGS)
    router = ithaca_factory(config_text=router_yaml([addr(backend)]))
    oracle = memcached_factory(args=SERVER_ARGS)
    packets = [
        mcwire.pack_request(0x01, b"bk", mcwire.set_extras(5, 0), b"hello", opaque=1),  # set
        mcwire.pack_request(0x00, b"bk", opaque=2),  # get
        mcwire.pack_request(0x0C, b"bk", opaque=3),  # getk
        mcwire.pack_request(0x00, b"missing", opaque=4),
        mcwire.pack_request(0x05, b"n", mcwire.delta_extras(5, 10, 0), opaque=5),  # incr, create at 10
        mcwire.pack_request(0x05, b"n", mcwire.delta_extras(5, 10, 0), opaque=6),
        mcwire.pack_request(0x04, b"bk", opaque=7),  # delete
        mcwire.pack_request(0x00, b"bk", opaque=8),
    ]
    def run(server):
        with mcwire.Conn(server.host, server.port) as c:
            return [c.binary_batch([p]) for p in packets]
    got, want = run(router), run(oracle)
    # CAS values differ between two servers' histories only if their
    # operations differ; here they run the same sequence.
    assert got == want
    meta = b"ms mk 2 F3 T0\r\nhi\r\nmg mk v f k\r\nmg nope v\r\nmd mk q\r\nmg mk v\r\nmn\r\n"
    with mcwire.Conn(router.host, router.port) as r, mcwire.Conn(oracle.host, oracle.port) as o:
        done = lambda buf: (buf.find(b"MN\r\n") + 4) if b"MN\r\n" in buf else None
        assert r.exchange(meta, done) == o.exchange(meta, done)


# ---- failures ---------------------------------------------------------------

def start_memcached_on(port):
    """A real memcached on a given port (a killed backend's, brought back)."""
    from conftest import BASE_ARGS, Server, memcached_binary, root_args
    server = Server("memcached", [memcached_binary(), *root_args(), *BASE_ARGS, "-p", str(port)],
                    stop_signal=signal.SIGKILL)
    server.port = port
    assert server.wait_accepting(10), server.describe()
    return server


def test_killed_backend_fails_fast_then_comes_back(ithaca_factory):
    from conftest import free_port
    port = free_port()
    backend = start_memcached_on(port)  # this test kills it: not the fixture's
    key = f"main/127.0.0.1:{port}:"
    router = ithaca_factory(config_text=router_yaml([addr(backend)], failure_limit=2,
                                                    retry_interval="50ms", retry_interval_max="200ms"))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"set a 0 0 1\r\n1\r\n") == b"STORED\r\n"
        backend.stop()
        first = c.call(b"get a\r\n")
        assert first.startswith(b"SERVER_ERROR"), first
        # A refused connect marks it down: later requests fail at once.
        wait_for(lambda: c.call(b"get a\r\n").startswith(b"SERVER_ERROR")
                 and stats(c, "servers")[key + "state"] == "down", what="server marked down")
        t0 = time.monotonic()
        for _ in range(50):
            assert c.call(b"get a\r\n").startswith(b"SERVER_ERROR")
        assert time.monotonic() - t0 < 2.0, "requests to a down server must fail fast"
        restarted = start_memcached_on(port)
        try:
            # The prober sees it answer `version` and marks it up.
            wait_for(lambda: c.call(b"set a 0 0 1\r\n2\r\n") == b"STORED\r\n", what="server back up")
            assert c.call(b"get a\r\n") == b"VALUE a 0 1\r\n2\r\nEND\r\n"
            s = stats(c, "servers")
            assert s[key + "state"] == "up"
            assert int(s[key + "transitions"]) >= 2
        finally:
            restarted.stop()


@pytest.mark.parametrize("mode", ["hang", "garbage", "reset"])
def test_misbehaving_backend_gets_server_error(mode, ithaca_factory, memcached_factory):
    bad = FakeBackend(mode)
    # A reset meets protocol: auto's `mn` probe first, which makes it a failed
    # connect (test_backend_drop.py); over ascii it meets the get itself.
    proto = {"protocol": "ascii"} if mode == "reset" else {}
    try:
        router = ithaca_factory(config_text=router_yaml([bad.address], timeout="300ms", failure_limit=3,
                                                        retry_interval="10s", **proto))
        with mcwire.Conn(router.host, router.port) as c:
            t0 = time.monotonic()
            reply = c.call(b"get x\r\n")
            assert reply.startswith(b"SERVER_ERROR"), reply
            assert time.monotonic() - t0 < 3.0
            # Never another request's reply: every later request errors too,
            # and once the failure limit is reached it fails at once.
            for _ in range(5):
                assert c.call(b"set x 0 0 1\r\n1\r\n").startswith(b"SERVER_ERROR")
            s = stats(c, "servers")
            key = f"main/{bad.address}:"
            assert s[key + "state"] == "down"
            kind = {"hang": "timeout", "garbage": "bad_reply", "reset": "connection"}[mode]
            assert int(s[key + "failures_" + kind]) >= 1, s
            assert int(s[key + "failures_down"]) >= 1, s
    finally:
        bad.close()


def test_slow_backend_within_timeout_answers(ithaca_factory, memcached_factory):
    real = memcached_factory(args=SERVER_ARGS)
    slow = FakeBackend("forward", target=(real.host, real.port), delay=0.15)
    try:
        router = ithaca_factory(config_text=router_yaml([slow.address], timeout="2s"))
        with mcwire.Conn(router.host, router.port) as c:
            assert c.call(b"set s 0 0 2\r\nok\r\n") == b"STORED\r\n"
            assert c.call(b"get s\r\n") == b"VALUE s 0 2\r\nok\r\nEND\r\n"
    finally:
        slow.close()


def test_hung_request_does_not_get_a_later_reply(ithaca_factory, memcached_factory):
    """A request that timed out must never receive the reply of another: a
    backend that becomes slow after a while; the timed-out connection is
    recycled and a fresh one serves the next request correctly."""
    real = memcached_factory(args=SERVER_ARGS)
    fwd = FakeBackend("forward", target=(real.host, real.port), delay=0.6)
    try:
        router = ithaca_factory(config_text=router_yaml([fwd.address], timeout="300ms", failure_limit=100))
        with mcwire.Conn(router.host, router.port) as c:
            assert c.call(b"get a\r\n").startswith(b"SERVER_ERROR")
            fwd.delay = 0.0
            assert c.call(b"set b 0 0 1\r\nB\r\n") == b"STORED\r\n"
            assert c.call(b"get b\r\n") == b"VALUE b 0 1\r\nB\r\nEND\r\n"
    finally:
        fwd.close()


def test_a_thousand_clients_through_one_worker(ithaca_factory, backends):
    router = ithaca_factory(args=["-t", "1", "-c", "4096"], config_text=router_yaml([addr(b) for b in backends]))
    errors = []

    def client(i):
        try:
            with mcwire.Conn(router.host, router.port, timeout=30) as c:
                v = b"%d" % i
                assert c.call(b"set c%d 0 0 %d\r\n%s\r\n" % (i, len(v), v)) == b"STORED\r\n"
                assert c.call(b"get c%d\r\n" % i) == b"VALUE c%d 0 %d\r\n%s\r\nEND\r\n" % (i, len(v), v)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"{i}: {e!r}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(1000)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:5]


def test_reload_under_load_keeps_connections_and_replies(ithaca_factory, memcached_factory, tmp_path):
    a, b = memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS)
    router = ithaca_factory(config_text=router_yaml([addr(a)], timeout="2s", log_level="info"))
    cfg = sorted(tmp_path.glob("ithaca-*.yaml"))[-1]
    stop = threading.Event()
    errors = []
    done = [0]
    misses = [0]

    def worker(n):
        try:
            with mcwire.Conn(router.host, router.port, timeout=10) as c:
                i = 0
                while not stop.is_set():
                    k = b"r%d_%d" % (n, i % 50)
                    v = b"%d" % i
                    assert c.call(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v)) == b"STORED\r\n"
                    got = c.call(b"get %s\r\n" % k)
                    # A reload that adds a server moves keys: a get right
                    # after it may miss, but never sees another value.
                    if got == b"END\r\n":
                        misses[0] += 1
                    else:
                        assert got == b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(v), v)
                    i += 1
                    done[0] += 1
        except Exception as e:  # noqa: BLE001
            errors.append(f"client {n}: {e!r}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    wait_for(lambda: done[0] > 200, what="load running")
    with mcwire.Conn(router.host, router.port) as c:
        connects_before = int(stats(c, "servers")[f"main/{addr(a)}:connects"])
    # Add a server, then a broken file (refused), then back to one server.
    cfg.write_text(router_yaml([addr(a), addr(b)], timeout="2s", log_level="info"))
    router.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "SIGHUP" in router.log and "is valid" in router.log, what="reload applied")
    base = done[0]
    wait_for(lambda: done[0] > base + 200, what="load after reload")
    cfg.write_text("pools:\n  main:\n    servers: []\nroute: {type: pool, pool: main}\n")
    router.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "reload refused" in router.log, what="bad reload refused")
    base = done[0]
    wait_for(lambda: done[0] > base + 200, what="load after refused reload")
    stop.set()
    for t in threads:
        t.join(20)
    assert not errors, errors[:5]
    assert misses[0] <= 8 * 2, f"{misses[0]} misses: only gets racing the reload may miss"
    with mcwire.Conn(router.host, router.port) as c:
        s = stats(c, "servers")
        # The server kept across the reload kept its connections.
        assert int(s[f"main/{addr(a)}:connects"]) == connects_before, s
        assert int(s[f"main/{addr(b)}:requests"]) > 0, s


# ---- placement through the router, against a real nutcracker -----------------

@pytest.mark.parametrize("hash_name,dist,weights,named", [
    ("fnv1a_64", "ketama", [1, 1, 1, 1], False),
    ("md5", "ketama", [1, 3, 1, 2], True),
    ("murmur", "modula", [2, 1, 1, 1], False),
    ("crc32a", "ketama", [1, 1, 2, 1], True),
])
def test_router_places_keys_where_nutcracker_does(hash_name, dist, weights, named, ithaca_factory,
                                                  memcached_factory, tmp_path):
    """The same pool behind nutcracker and behind ithaca: every key, stored
    through either, lands on the same memcached."""
    from test_placement import holder_of, make_keys, set_through, start_nutcracker
    servers = [memcached_factory() for _ in weights]
    entries = [f"{addr(s)}:{w}" + (f" node{i}" if named else "") for i, (s, w) in enumerate(zip(servers, weights))]
    nc = start_nutcracker(tmp_path, f"  hash: {hash_name}\n  distribution: {dist}\n  servers:\n" +
                          "".join(f"   - {e}\n" for e in entries))
    try:
        keys = make_keys(7)[:1500]
        set_through(nc, keys)
        by_nutcracker = holder_of(keys, list(enumerate(servers)))
        for s in servers:
            with mcwire.Conn(s.host, s.port) as c:
                assert c.call(b"flush_all\r\n") == b"OK\r\n"
        router = ithaca_factory(config_text=router_yaml(entries, hash=hash_name, distribution=dist))
        set_through(router, keys)
        by_ithaca = holder_of(keys, list(enumerate(servers)))
        moved = [k for k in keys if by_ithaca[k] != by_nutcracker[k]]
        assert not moved, f"{len(moved)} of {len(keys)} keys on another server than nutcracker's, e.g. {moved[:3]!r}"
    finally:
        nc.stop()


@pytest.mark.parametrize("seed", [1, 2])
def test_ascii_diff_through_router_meta_backend(seed, ithaca_factory, memcached_factory):
    """The same differential stream with ithaca speaking meta to its server."""
    backend = memcached_factory(args=SERVER_ARGS)
    router = ithaca_factory(args=["-I", "1m"],
                            config_text=router_yaml([addr(backend)], allow_flush="true", protocol="meta"))
    run_seed(seed, router, memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS))


def test_auto_eject_hosts_moves_a_dead_servers_keys(ithaca_factory, memcached_factory):
    """twemproxy's auto_eject_hosts: once a server is down its keys go to the
    other servers (no errors); when it answers again they come back to it."""
    from conftest import free_port
    live = [memcached_factory(args=SERVER_ARGS) for _ in range(2)]
    port = free_port()
    doomed = start_memcached_on(port)
    state = f"main/127.0.0.1:{port}:state"
    router = ithaca_factory(config_text=router_yaml(
        [addr(live[0]), f"127.0.0.1:{port}", addr(live[1])], hash="md5", auto_eject_hosts="true", failure_limit=2,
        connect_timeout="5s", retry_interval="100ms", retry_interval_max="200ms"))
    # (A refused connect ejects at once whatever failure_limit says; the limit
    # and connect timeout only keep a slow sanitized CI run from ejecting a
    # live server before the test has stored anything. md5, not the default
    # fnv1a_64: the keys e0..e299 hash close together under fnv1a, and with
    # some port triples none of them fell on the third server's arcs.)
    keys = [b"e%d" % i for i in range(300)]
    back = None

    def store_all(c, value):
        return all(c.call(b"set %s 0 0 1\r\n%s\r\n" % (k, value)) == b"STORED\r\n" for k in keys)

    try:
        with mcwire.Conn(router.host, router.port) as c:
            assert store_all(c, b"1")
            with mcwire.Conn("127.0.0.1", port) as d:
                on_doomed = [k for k in keys if d.call(b"get %s\r\n" % k) != b"END\r\n"]
            assert on_doomed, f"no key on the third server: {stats(c, 'servers')}\n{router.log[-3000:]}"
            doomed.stop()
            # The first request to it fails and marks it down; then its keys
            # live on the other two.
            wait_for(lambda: store_all(c, b"2"), what="every key stored after the ejection")
            assert stats(c, "servers")[state] == "down"
            for k in keys:
                assert c.call(b"get %s\r\n" % k) == b"VALUE %s 0 1\r\n2\r\nEND\r\n" % k
            back = start_memcached_on(port)
            wait_for(lambda: stats(c, "servers")[state] == "up", what="server back up")
            # Its keys route to it again: it restarted empty, so they miss.
            misses = [k for k in on_doomed if c.call(b"get %s\r\n" % k) == b"END\r\n"]
            assert misses == on_doomed
    finally:
        if back is not None:
            back.stop()
        doomed.stop()


def test_shutdown_with_requests_in_flight(ithaca_factory):
    """SIGTERM while clients wait on a hung backend: the server stops at once
    and cleanly (exit 0; under ASan, no leak or use-after-free of the
    requests left in flight)."""
    hung = FakeBackend("hang")
    try:
        # ascii: a hung server never answers `protocol: auto`'s probe either,
        # and this test wants requests in flight on it.
        router = ithaca_factory(config_text=router_yaml([hung.address], timeout="30s", protocol="ascii"))
        conns = [mcwire.Conn(router.host, router.port) for _ in range(20)]
        for i, c in enumerate(conns):
            c.send(b"get a%d b%d c%d\r\nset x%d 0 0 1\r\nx\r\n" % (i, i, i, i))
        wait_for(lambda: hung.accepted >= 1, what="the backend connection")
        with mcwire.Conn(router.host, router.port) as s:
            wait_for(lambda: int(stats(s, "servers")[f"main/{hung.address}:inflight"]) >= 20,
                     what="requests in flight")
        t0 = time.monotonic()
        router.proc.send_signal(signal.SIGTERM)
        assert router.proc.wait(10) == 0
        assert time.monotonic() - t0 < 5.0
        for c in conns:
            c.close()
    finally:
        hung.close()


def test_clients_spread_over_a_servers_connections(ithaca_factory, memcached_factory):
    """connections: 4 opens four connections per worker to a server, and the
    clients are spread over them (each client keeps its one, so its requests
    stay in order)."""
    backend = memcached_factory(args=SERVER_ARGS)
    router = ithaca_factory(args=["-t", "1"], config_text=router_yaml([addr(backend)], connections=4))
    clients = [mcwire.Conn(router.host, router.port) for _ in range(40)]
    try:
        for i, c in enumerate(clients):
            assert c.call(b"set s%d 0 0 1\r\n%d\r\n" % (i, i % 10)) == b"STORED\r\n"
        for i, c in enumerate(clients):
            assert c.call(b"get s%d\r\n" % i) == b"VALUE s%d 0 1\r\n%d\r\nEND\r\n" % (i, i % 10)
        s = stats(clients[0], "servers")
        assert s[f"main/{addr(backend)}:connects"] == "4", s
        assert s[f"main/{addr(backend)}:connections"] == "4", s
    finally:
        for c in clients:
            c.close()


def test_gets_of_many_clients_share_backend_lines(ithaca_factory, memcached_factory):
    """Single-key gets that meet on a backend connection in one loop turn go
    out as one `get k1 k2 ...` line (memcached answers it with one write):
    every client still gets exactly what memcached answers it directly, with
    get, gets, multi-key, missing and repeated keys, binary and meta clients
    mixed, while other clients send gets and hang up without reading (their
    requests are orphaned in the middle of shared lines)."""
    import random
    import socket
    import struct

    backend = memcached_factory(args=SERVER_ARGS)
    # Get lines are shared over ascii (a meta backend gets one mg per key).
    router = ithaca_factory(args=["-t", "1"], config_text=router_yaml([addr(backend)], protocol="ascii"))
    keys = [b"k%d" % i for i in range(48)]
    with mcwire.Conn(backend.host, backend.port) as d:
        for i, k in enumerate(keys):
            v = b"v%d-" % i * (1 + i % 7)
            assert d.call(b"set %s %d 0 %d\r\n%s\r\n" % (k, i, len(v), v)) == b"STORED\r\n"
    rng = random.Random(8)

    def pick():
        return rng.choice(keys + [b"missing%d" % rng.randrange(3)])

    def request(binary):
        # memcached fixes a connection's protocol by its first byte.
        if binary:
            return mcwire.G(pick(), op=mcwire.OP_GETK)
        kind = rng.randrange(8)
        if kind == 0:
            return b"gets %s\r\n" % pick()
        if kind == 1:
            return b"get %s %s %s\r\n" % (pick(), pick(), pick())
        if kind == 2:
            return b"mg %s v f c\r\n" % pick()
        return b"get %s\r\n" % pick()

    def read_one(conn, req):
        if req[0] == 0x80:
            hdr = conn.read_exact(24)
            body = conn.read_exact(struct.unpack(">I", hdr[8:12])[0])
            return hdr + body
        return conn.read_reply()

    oracle = mcwire.Conn(backend.host, backend.port)
    binary_oracle = mcwire.Conn(backend.host, backend.port)
    clients = [mcwire.Conn(router.host, router.port) for _ in range(32)]
    binary = [i % 8 == 0 for i in range(len(clients))]
    try:
        for round_ in range(60):
            reqs = [request(b) for b in binary]
            for c, r in zip(clients, reqs):
                c.send(r)
            # Clients that hang up with requests in flight (RST, no reading).
            for _ in range(3):
                s = socket.create_connection((router.host, router.port))
                s.sendall(b"".join(b"get %s\r\n" % pick() for _ in range(20)))
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s.close()
            for i, (c, r) in enumerate(zip(clients, reqs)):
                got = read_one(c, r)
                o = binary_oracle if binary[i] else oracle
                o.send(r)
                want = read_one(o, r)
                assert got == want, f"round {round_} client {i}: {r!r} -> {got!r}, memcached: {want!r}"
        s = stats(clients[1], "servers")  # a text client
        prefix = f"main/{addr(backend)}:"
        assert int(s[prefix + "joined_gets"]) > 0, s
        assert s[prefix + "failures_bad_reply"] == "0", s
        assert s[prefix + "failures_connection"] == "0", s
    finally:
        oracle.close()
        binary_oracle.close()
        for c in clients:
            c.close()


def test_idle_connection_closed_by_a_restarted_server_is_replaced(ithaca_factory):
    """A backend restarted on its port closes the router's idle connection:
    the close is noticed while idle and the router reconnects at once
    (backend_conn::peer_closed). If that reconnect came before the new
    process listens it was refused and the server is down until its prober
    sees it answer (retry_interval, here 100 ms); no request is written into
    the closed connection. (A reconnect accepted by the dying process's
    listening socket is reset at once: a failed connect. test_backend_drop.py:
    an idle close by a server that stays up fails nothing at all.)"""
    from conftest import free_port
    port = free_port()
    backend = start_memcached_on(port)
    key = f"main/127.0.0.1:{port}:"
    router = ithaca_factory(args=["-t", "1"], config_text=router_yaml([addr(backend)], retry_interval="100ms"))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"set a 0 0 1\r\n1\r\n") == b"STORED\r\n"
        assert stats(c, "servers")[key + "connections"] == "1"
        backend.stop()
        restarted = start_memcached_on(port)
        try:
            wait_for(lambda: stats(c, "servers")[key + "idle_closes"] == "1", what="the idle close noticed")
            wait_for(lambda: c.call(b"set a 0 0 1\r\n2\r\n") == b"STORED\r\n", timeout=5.0,
                     what="the restarted server serving")
            assert c.call(b"get a\r\n") == b"VALUE a 0 1\r\n2\r\nEND\r\n"
            s = stats(c, "servers")
            assert s[key + "state"] == "up", s
            assert s[key + "failures_timeout"] == "0", s
            # The reconnect at once can meet the killed process's listening
            # socket before the kernel closes it: accepted into the backlog,
            # then reset during the `mn` probe. That is a failed connect (the
            # server down until its prober sees the new process), never a
            # request failed on a broken connection.
            assert s[key + "failures_connection"] == "0", s
        finally:
            restarted.stop()


def test_stats_reset_zeroes_the_router_counters(ithaca_factory, memcached_factory):
    backend = memcached_factory(args=SERVER_ARGS)
    key = f"main/{addr(backend)}:"
    router = ithaca_factory(args=["-t", "2"], config_text=router_yaml([addr(backend)]))
    with mcwire.Conn(router.host, router.port) as c:
        for i in range(10):
            assert c.call(b"get r%d\r\n" % i) == b"END\r\n"
        s = stats(c, "servers")
        assert int(s[key + "requests"]) == 10 and int(s[key + "latency_p50_us"]) > 0, s
        assert c.call(b"stats reset\r\n") == b"RESET\r\n"
        s = stats(c, "servers")
        for name in ("requests", "replies", "connects", "transitions", "latency_p50_us", "latency_p999_us"):
            assert s[key + name] == "0", (name, s)
        # Gauges are not counters: the open connection stays counted.
        assert s[key + "connections"] == "1" and s[key + "state"] == "up", s
        assert stats(c)["router_requests"] == "0"
        for i in range(3):
            assert c.call(b"get r%d\r\n" % i) == b"END\r\n"
        assert stats(c, "servers")[key + "requests"] == "3"
        assert stats(c, "pools")["main:requests"] == "3"
        assert stats(c)["router_requests"] == "3"


def test_stats_detail_counts_routed_requests_as_memcached(ithaca_factory, memcached_factory):
    """`stats detail` in the router role counts what memcached counts (gets
    with their hits, sets, deletes by prefix), from the servers' answers; the
    too-large set counts as a set, not as the delete it turns into."""
    from test_ascii_diff import ORACLE_FEATURES_OFF, run_fixed
    backend = memcached_factory(args=SERVER_ARGS)
    router = ithaca_factory(args=SERVER_ARGS, config_text=router_yaml([addr(backend)]))
    ours = run_fixed(router, "stats_detail")
    want = run_fixed(memcached_factory(args=SERVER_ARGS + ORACLE_FEATURES_OFF), "stats_detail")
    assert ours == want
    assert b"PREFIX a get 2 hit 1 set 2 del 1" in ours[8], ours[8]
