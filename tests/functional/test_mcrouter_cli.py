"""mcrouter's command line (`ithaca --mcrouter ARGS`, issue 32), over the real
process and real memcached backends, with many clients at once:

- `--config file:PATH -p PORT`: 50 clients each store and read back their own
  200 keys through the router; every key is then on exactly one of the two
  memcacheds behind it, with that client's value, and both hold some.
- `--config-str JSON` and `-L FILE`: the inline config serves, the log goes
  to the file.
- `--listen-sock-fd N`: a listening socket the parent made and handed down is
  the one served (no port of its own), as mcrouter's test harness starts it.
- `--allow-only-gets`: reads (get, gets, gat, gats) reach the backends;
  writes (set, add, delete, incr, decr, touch) are answered as mcrouter
  answers them (NOT_STORED / NOT_FOUND) and never reach a backend, for 20
  clients at once.
- `metaget` (mcrouter's): through the router to memcached and from the
  cache role's own store, in mcrouter's META line.
- an unknown option is logged "Unrecognized option" and the rest still apply.
- `--enable-logging-route`: a logging route above the root, shown by
  route_handles, logging hits and stored writes.
"""
import json
import os
import re
import socket
import threading
import time

import pytest

import conftest
from conftest import HOST, Server, free_port
from mcwire import Conn

CLIENTS = 50
KEYS_PER_CLIENT = 200


def ithaca_path():
    path, is_memcached = conftest.ithaca_binary()
    if is_memcached:
        pytest.fail("this test runs ithaca's mcrouter entry point: it cannot run with ITHACA_BIN=memcached",
                    pytrace=False)
    return os.path.abspath(path)


def pool_config(backends):
    return json.dumps({
        "pools": {"A": {"servers": [f"{HOST}:{b.port}" for b in backends]}},
        "route": "PoolRoute|A",
    })


@pytest.fixture
def started():
    """started(argv, port=None, pass_fds=()) -> Server running `ithaca --mcrouter argv`; stopped
    (SIGTERM, exit 0 expected) at teardown."""
    servers = []

    def start(argv, port=None, pass_fds=()):
        cmd = [ithaca_path(), "--mcrouter", *argv]
        server = Server("ithaca", cmd, pass_fds=pass_fds)
        server.port = port
        servers.append(server)
        assert server.wait_accepting(10), server.describe()
        return server

    yield start
    problems = []
    for s in servers:
        rc_before = s.proc.poll()
        rc, killed = s.stop()
        if rc_before is not None or killed or rc != 0:
            problems.append(f"exit {rc} (before stop: {rc_before}, killed: {killed})\n{s.describe()}")
    assert not problems, "\n".join(problems)


def load_through(address, clients, keys):
    """Each client stores `keys` keys of its own through `address` and reads
    each back at once. Returns (errors, {key: value})."""
    errors, written = [], {}
    lock = threading.Lock()

    def client(n):
        try:
            with Conn(*address) as c:
                mine = {}
                for i in range(keys):
                    key = f"c{n}:k{i}".encode()
                    value = f"v{n}.{i}.".encode() * (1 + i % 7)
                    reply = c.call(b"set %s %d 0 %d\r\n%s\r\n" % (key, n, len(value), value))
                    if reply != b"STORED\r\n":
                        raise AssertionError(f"set {key!r}: {reply!r}")
                    reply = c.call(b"get %s\r\n" % key)
                    expect = b"VALUE %s %d %d\r\n%s\r\nEND\r\n" % (key, n, len(value), value)
                    if reply != expect:
                        raise AssertionError(f"get {key!r}: {reply!r}, expected {expect!r}")
                    mine[key] = (n, value)
            with lock:
                written.update(mine)
        except Exception as e:  # noqa: BLE001 - reported by the test
            with lock:
                errors.append(f"client {n}: {e}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a client hung"
    return errors, written


def held_by(backend, key):
    with Conn(*backend.address) as c:
        return c.call(b"get %s\r\n" % key)


def test_config_file_and_port_serve_many_clients(started, memcached_factory, tmp_path):
    backends = [memcached_factory(), memcached_factory()]
    config = tmp_path / "mcrouter.json"
    config.write_text(pool_config(backends))
    port = free_port()
    router = started(["--config", f"file:{config}", "-p", str(port), "--num-proxies", "2"], port=port)

    errors, written = load_through(router.address, CLIENTS, KEYS_PER_CLIENT)
    assert not errors, errors[:5]
    assert len(written) == CLIENTS * KEYS_PER_CLIENT

    per_backend = [0, 0]
    for key, (flags, value) in written.items():
        expect = b"VALUE %s %d %d\r\n%s\r\nEND\r\n" % (key, flags, len(value), value)
        where = [i for i, b in enumerate(backends) if held_by(b, key) == expect]
        assert len(where) == 1, f"{key!r} is on backends {where}"
        per_backend[where[0]] += 1
    assert min(per_backend) > len(written) // 4, per_backend


def test_config_str_and_log_file(started, memcached_factory, tmp_path):
    backend = memcached_factory()
    log = tmp_path / "mcrouter.log"
    port = free_port()
    router = started(["--config-str", pool_config([backend]), "-p", str(port), "-L", str(log),
                      "--no-such-flag-anywhere", "--stats-logging-interval", "100"], port=port)
    with Conn(*router.address) as c:
        assert c.call(b"set cfgstr 3 0 2\r\nhi\r\n") == b"STORED\r\n"
    assert held_by(backend, b"cfgstr") == b"VALUE cfgstr 3 2\r\nhi\r\nEND\r\n"
    text = log.read_text()
    assert "Unrecognized option" in text and "no-such-flag-anywhere" in text, text[-2000:]
    assert "listening on" in text, text[-2000:]


def test_listen_sock_fd_serves_the_inherited_socket(started, memcached_factory, tmp_path):
    backend = memcached_factory()
    config = tmp_path / "mcrouter.json"
    config.write_text(pool_config([backend]))
    listener = socket.socket()
    listener.bind((HOST, 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    fd = listener.fileno()
    router = started(["--config", f"file:{config}", "--listen-sock-fd", str(fd)], port=port, pass_fds=(fd,))
    listener.close()  # the router's copy is now the only one

    errors, written = load_through(router.address, 20, 50)
    assert not errors, errors[:5]
    for key, (flags, value) in list(written.items())[:100]:
        assert held_by(backend, key) == b"VALUE %s %d %d\r\n%s\r\nEND\r\n" % (key, flags, len(value), value)
    # It listens on nothing else: the log names no port of its own.
    assert "listening on tcp 0.0.0.0" not in router.log, router.log


def test_allow_only_gets_keeps_every_write_away(started, memcached_factory, tmp_path):
    backend = memcached_factory()
    config = tmp_path / "mcrouter.json"
    config.write_text(pool_config([backend]))
    keys = [f"ro{i}".encode() for i in range(400)]
    with Conn(*backend.address) as c:
        for k in keys:
            assert c.call(b"set %s 7 0 2\r\n10\r\n" % k) == b"STORED\r\n"
    port = free_port()
    router = started(["--config", f"file:{config}", "-p", str(port), "--allow-only-gets"], port=port)

    errors = []

    def client(n):
        try:
            with Conn(*router.address) as c:
                for k in keys[n::20]:
                    for req, want in [
                        (b"set %s 0 0 1\r\nx\r\n" % k, b"NOT_STORED\r\n"),
                        (b"add new%s 0 0 1\r\nx\r\n" % k, b"NOT_STORED\r\n"),
                        (b"delete %s\r\n" % k, b"NOT_FOUND\r\n"),
                        (b"incr %s 5\r\n" % k, b"NOT_FOUND\r\n"),
                        (b"decr %s 5\r\n" % k, b"NOT_FOUND\r\n"),
                        (b"touch %s 100\r\n" % k, b"NOT_FOUND\r\n"),
                        (b"get %s\r\n" % k, b"VALUE %s 7 2\r\n10\r\nEND\r\n" % k),
                        (b"gat 0 %s\r\n" % k, b"VALUE %s 7 2\r\n10\r\nEND\r\n" % k),
                        (b"get new%s\r\n" % k, b"END\r\n"),
                    ]:
                        got = c.call(req)
                        if got != want:
                            raise AssertionError(f"{req!r}: {got!r}, expected {want!r}")
                    got = c.call(b"gats 0 %s\r\n" % k)
                    if not got.startswith(b"VALUE %s 7 2 " % k):
                        raise AssertionError(f"gats {k!r}: {got!r}")
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(f"client {n}: {e}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:5]
    # Nothing reached the backend: every value as set, no new key, no TTL.
    with Conn(*backend.address) as c:
        for k in keys:
            assert c.call(b"get %s\r\n" % k) == b"VALUE %s 7 2\r\n10\r\nEND\r\n" % k
            assert c.call(b"get new%s\r\n" % k) == b"END\r\n"
            assert c.call(b"mg %s t\r\n" % k) == b"HD t-1\r\n"


def test_metaget_through_the_router_and_the_cache(started, memcached_factory, ithaca, tmp_path):
    # mcrouter's `metaget <key>`: the item's expiry as a unix time (0: never)
    # in mcrouter's META line, END on a miss; over an ascii pool of memcached
    # it goes as `mg <key> t`. The cache role answers it from its own store.
    backend = memcached_factory()
    config = tmp_path / "mcrouter.json"
    config.write_text(pool_config([backend]))
    port = free_port()
    router = started(["--config", f"file:{config}", "-p", str(port), "--allow-only-gets"], port=port)
    for target, setter in ((router, backend), (ithaca, ithaca)):
        with Conn(*setter.address) as c:
            before = int(time.time())
            assert c.call(b"set timed 1 100 2\r\nhi\r\n") == b"STORED\r\n"
            after = int(time.time())
            assert c.call(b"set forever 1 0 2\r\nhi\r\n") == b"STORED\r\n"
        with Conn(*target.address) as c:
            def metaget(key):
                c.send(b"metaget %s\r\n" % key)
                first = c.read_line()
                return first if first == b"END\r\n" else first + c.read_line()

            reply = metaget(b"timed")
            m = re.fullmatch(rb"META timed age: unknown; exptime: (\d+); from: unknown; is_transient: 0\r\nEND\r\n",
                             reply)
            assert m, reply
            assert before + 99 <= int(m.group(1)) <= after + 101, (reply, before, after)
            assert metaget(b"forever") == (b"META forever age: unknown; exptime: 0; from: unknown; "
                                                      b"is_transient: 0\r\nEND\r\n")
            assert metaget(b"nothing") == b"END\r\n"
            # A metaget without its key: memcached's ERROR from the cache, mcrouter's
            # parse error from the router (which then closes the connection).
            expect = b"ERROR\r\n" if target is ithaca else b"CLIENT_ERROR malformed request\r\n"
            assert c.call(b"metaget\r\n") == expect


def test_shutdown_command_stops_it_as_mcrouter(memcached_factory, tmp_path):
    # mcrouter stops on the ascii `shutdown` command with no flag (memcached
    # wants -A): through --mcrouter too, with exit status 0.
    backend = memcached_factory()
    port = free_port()
    router = Server("ithaca", [ithaca_path(), "--mcrouter", "--config-str", pool_config([backend]), "-p", str(port)])
    router.port = port
    try:
        assert router.wait_accepting(10), router.describe()
        with Conn(*router.address) as c:
            c.send(b"shutdown\r\n")
        assert router.proc.wait(10) == 0, router.describe()
    finally:
        router.stop()


def test_enable_logging_route_wraps_the_root_and_logs_hits_and_writes(started, memcached_factory, tmp_path):
    """--enable-logging-route: mcrouter's ProxyRoute wraps its root in a
    LoggingRoute; route_handles shows it once, above the pool, and each hit
    and stored write through it is logged at info (-v 1; a miss is not),
    while the requests still reach the memcached behind."""
    backend = memcached_factory()
    log = tmp_path / "mcrouter.log"
    port = free_port()
    router = started(["--config-str", pool_config([backend]), "-p", str(port), "-L", str(log), "-v", "1",
                      "--enable-logging-route"], port=port)
    with Conn(*router.address) as c:
        handles = c.call(b"get __mcrouter__.route_handles(get,lk)\r\n")
        assert handles.count(b"logging") == 1, handles
        lines = handles.split(b"\r\n")[1].decode().split("\n")
        at = [i for i, line in enumerate(lines) if line.strip() == "logging"]
        assert at and any(f"{HOST}:{backend.port}" in line for line in lines[at[0] + 1:]), lines
        assert c.call(b"set lk 5 0 3\r\nabc\r\n") == b"STORED\r\n"
        assert c.call(b"get lk\r\n") == b"VALUE lk 5 3\r\nabc\r\nEND\r\n"
        assert c.call(b"get lk_missing\r\n") == b"END\r\n"
    assert held_by(backend, b"lk") == b"VALUE lk 5 3\r\nabc\r\nEND\r\n"
    deadline = time.monotonic() + 10
    text = ""
    while time.monotonic() < deadline:
        text = log.read_text()
        if "get lk: hit" in text:
            break
        time.sleep(0.05)
    assert re.search(r"logging route \S+: set lk: stored \(3 bytes\)", text), text[-2000:]
    assert re.search(r"logging route \S+: get lk: hit \(flags 5, 3 bytes\)", text), text[-2000:]
    assert "lk_missing" not in text, text[-2000:]


def test_no_logging_route_without_the_flag(started, memcached_factory):
    backend = memcached_factory()
    port = free_port()
    router = started(["--config-str", pool_config([backend]), "-p", str(port)], port=port)
    with Conn(*router.address) as c:
        handles = c.call(b"get __mcrouter__.route_handles(get,lk)\r\n")
    assert b"logging" not in handles and f"{HOST}:{backend.port}".encode() in handles, handles
