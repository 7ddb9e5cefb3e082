"""Reliable deletes (mcrouter's asynclog): a delete that a server of a pool
with `reliable_deletes: true` could not take is spooled to disk and replayed
when the server is back, before it takes traffic again; the spool is bounded
(drops counted) and survives a restart of ithaca. A real memcached is killed
and restarted on the same port; "a server that kept its data" is played by
setting the keys on it again directly before the prober finds it."""

import contextlib
import os
import pathlib
import re
import shutil
import signal
import subprocess

import pytest

import mcwire
from conftest import free_port, ithaca_binary
from test_router import addr, start_memcached_on, stats, wait_for

# The prober's first look comes retry_interval (+-20%) after the server is
# marked down: long enough for the test to bring it back with its keys.
RETRY = "1500ms"


def reliable_yaml(server, spool_dir, *, max_size=None, reliable=True, timeout="2s", pool_extra=()):
    lines = ["router:", f"  spool_dir: {spool_dir}"]
    if max_size is not None:
        lines.append(f"  spool_max_size: {max_size}")
    lines += ["pools:", "  main:", f'    servers: ["{addr(server)}"]', f"    timeout: {timeout}",
              "    connect_timeout: 300ms", f"    retry_interval: {RETRY}", f"    retry_interval_max: {RETRY}",
              *(f"    {line}" for line in pool_extra),
              "route:", "  type: pool", "  pool: main"]
    if reliable:
        lines.append("  reliable_deletes: true")
    return "\n".join(lines) + "\n"


def direct_set(server, keys, value=b"old"):
    with mcwire.Conn(server.host, server.port) as c:
        for k in keys:
            assert c.call(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(value), value)) == b"STORED\r\n"


def direct_get(server, key):
    with mcwire.Conn(server.host, server.port) as c:
        return c.call(b"get %s\r\n" % key)


def server_stat(router, server, name):
    with mcwire.Conn(router.host, router.port) as c:
        return stats(c, "servers")[f"main/{addr(server)}:{name}"]


def server_stat_pool(router, pool, server, name):
    """ithaca's per-server line (`stats ithaca_servers`: an mcrouter config's
    `stats servers` is mcrouter's one line per destination)."""
    with mcwire.Conn(router.host, router.port) as c:
        return stats(c, "ithaca_servers")[f"{pool}/{addr(server)}:{name}"]


def router_stat(router, name):
    with mcwire.Conn(router.host, router.port) as c:
        return int(stats(c)[name])


def kill_and_delete(router, backend, keys):
    """Kills the backend and deletes `keys` through the router: each is
    spooled (mcrouter answers a spooled delete NOT_FOUND). Returns the
    restarted backend with the keys it "kept"."""
    port = backend.port
    backend.stop()  # SIGKILL
    with mcwire.Conn(router.host, router.port) as c:
        for k in keys:
            assert c.call(b"delete %s\r\n" % k) == b"NOT_FOUND\r\n"
    back = start_memcached_on(port)
    direct_set(back, keys)
    return back


def test_failed_deletes_are_replayed_before_the_server_takes_traffic(ithaca_factory, tmp_path):
    backend = start_memcached_on(free_port())
    keys = [b"rd:%d" % i for i in range(20)]
    direct_set(backend, keys)
    # A timeout below failure_limit leaves the server up (the last part).
    router = ithaca_factory(config_text=reliable_yaml(backend, tmp_path / "spool", timeout="500ms",
                                                      pool_extra=["failure_limit: 10"]))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get rd:0\r\n") == b"VALUE rd:0 0 3\r\nold\r\nEND\r\n"  # connected
    back = kill_and_delete(router, backend, keys)
    try:
        assert router_stat(router, "router_deletes_spooled") == len(keys)
        assert int(server_stat(router, back, "spool_bytes")) == sum(len(k) + 1 for k in keys)
        assert server_stat(router, back, "state") == "down"
        # The prober's gate: the server is marked up only once every spooled
        # delete was taken, so "up" already means "replayed".
        wait_for(lambda: server_stat(router, back, "state") == "up", 10, "the server marked up")
        assert int(server_stat(router, back, "deletes_replayed")) == len(keys)
        assert int(server_stat(router, back, "spool_bytes")) == 0
        for k in keys:
            assert direct_get(back, k) == b"END\r\n", k
        # Order: a later client's set of a deleted key is not undone.
        with mcwire.Conn(router.host, router.port) as c:
            assert c.call(b"set rd:0 0 0 3\r\nnew\r\n") == b"STORED\r\n"
            assert c.call(b"get rd:0\r\n") == b"VALUE rd:0 0 3\r\nnew\r\n" + b"END\r\n"
        assert not os.listdir(tmp_path / "spool"), "a fully replayed spool file is removed"
        # Nor by a later replay to the same server: a delete that times out
        # while the server is stopped (it stays up: below failure_limit) is
        # spooled and replayed while it serves. Its replay comes after the
        # set, so once it is counted the spool has had its chance to send
        # rd:0's delete again, and must not have.
        back.proc.send_signal(signal.SIGSTOP)
        try:
            with mcwire.Conn(router.host, router.port) as c:
                assert c.call(b"delete rd:late\r\n") == b"NOT_FOUND\r\n"  # after the timeout: spooled
        finally:
            back.proc.send_signal(signal.SIGCONT)
        wait_for(lambda: int(server_stat(router, back, "deletes_replayed")) == len(keys) + 1, 10,
                 "the later delete replayed")
        assert server_stat(router, back, "state") == "up"
        assert direct_get(back, b"rd:0") == b"VALUE rd:0 0 3\r\nnew\r\nEND\r\n"
        assert router_stat(router, "router_deletes_replayed") == len(keys) + 1
        assert router_stat(router, "router_deletes_dropped") == 0
    finally:
        back.proc.send_signal(signal.SIGCONT)
        back.stop()


def test_a_replay_that_fails_again_keeps_the_rest(ithaca_factory, tmp_path):
    backend = start_memcached_on(free_port())
    keys = [b"again:%d" % i for i in range(5)]
    # protocol: ascii, which both the memcached and the stand-in below speak.
    router = ithaca_factory(config_text=reliable_yaml(backend, tmp_path / "spool", pool_extra=["protocol: ascii"]))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get again:0\r\n") == b"END\r\n"
    port = backend.port
    backend.stop()
    with mcwire.Conn(router.host, router.port) as c:
        for k in keys:
            assert c.call(b"delete %s\r\n" % k) == b"NOT_FOUND\r\n"
    # On the port meanwhile, a server that answers the prober's `version` but
    # refuses every delete: the replay runs (logged as stopped) and fails at
    # its first delete, so nothing is replayed, every record is kept, and the
    # server is not marked up.
    refusing = DeleteBackend(port=port)
    refusing.budget = 0
    try:
        wait_for(lambda: re.search(r"spool: replay to main/\S+ stopped \(.*\); \d+ bytes kept", router.log), 10,
                 "a replay refused")
        assert refusing.refused >= 1
        assert server_stat(router, backend, "deletes_replayed") == "0"
        assert int(server_stat(router, backend, "spool_bytes")) == sum(len(k) + 1 for k in keys)
        assert server_stat(router, backend, "state") == "down"
    finally:
        refusing.close()
    back = start_memcached_on(port)
    try:
        direct_set(back, keys)
        wait_for(lambda: server_stat(router, back, "state") == "up", 10, "the server marked up")
        assert int(server_stat(router, back, "deletes_replayed")) == len(keys)
        for k in keys:
            assert direct_get(back, k) == b"END\r\n", k
    finally:
        back.stop()


def test_the_bound_drops_and_counts(ithaca_factory, tmp_path):
    backend = start_memcached_on(free_port())
    # 64 bytes: seven records of "bound:NN\n" (9 bytes each) fit.
    router = ithaca_factory(config_text=reliable_yaml(backend, tmp_path / "spool", max_size=64))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get bound:00\r\n") == b"END\r\n"
    backend.stop()
    replies = []
    with mcwire.Conn(router.host, router.port) as c:
        for i in range(10):
            replies.append(c.call(b"delete bound:%02d\r\n" % i))
    fit = 64 // len(b"bound:00\n")  # 7
    assert replies[:fit] == [b"NOT_FOUND\r\n"] * fit
    # Over the bound: the failure as usual.
    assert all(r.startswith(b"SERVER_ERROR") for r in replies[fit:]), replies
    assert router_stat(router, "router_deletes_spooled") == fit
    assert router_stat(router, "router_deletes_dropped") == 10 - fit
    assert server_stat(router, backend, "deletes_dropped") == str(10 - fit)
    with mcwire.Conn(router.host, router.port) as c:
        routes = stats(c, "routes")
    assert routes["route:0"] == "pool pool:main"
    assert routes["route:0:deletes_spooled"] == str(fit)
    assert routes["route:0:deletes_dropped"] == str(10 - fit)


def test_without_reliable_deletes_nothing_is_spooled(ithaca_factory, tmp_path):
    backend = start_memcached_on(free_port())
    router = ithaca_factory(config_text=reliable_yaml(backend, tmp_path / "spool", reliable=False))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get plain\r\n") == b"END\r\n"
    backend.stop()
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"delete plain\r\n").startswith(b"SERVER_ERROR")
    assert router_stat(router, "router_deletes_spooled") == 0
    # The directory is made (and proved) at start; it holds nothing, and a
    # router that made it and never spooled removes it when it stops.
    assert not os.listdir(tmp_path / "spool")
    rc, killed = router.stop()
    assert rc == 0 and not killed, router.describe()
    assert not (tmp_path / "spool").exists()


def test_a_restarted_router_replays_its_spool(ithaca_factory, tmp_path):
    backend = start_memcached_on(free_port())
    keys = [b"restart:%d" % i for i in range(10)]
    spool_dir = tmp_path / "spool"
    text = reliable_yaml(backend, spool_dir)
    router = ithaca_factory(config_text=text)
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get restart:0\r\n") == b"END\r\n"
    port = backend.port
    backend.stop()
    with mcwire.Conn(router.host, router.port) as c:
        for k in keys:
            assert c.call(b"delete %s\r\n" % k) == b"NOT_FOUND\r\n"
    # The spool machine writes what was queued, also when stopped at once.
    rc, killed = router.stop()
    assert rc == 0 and not killed, router.describe()
    files = os.listdir(spool_dir)
    assert len(files) == 1, files
    assert (spool_dir / files[0]).read_bytes() == b"".join(k + b"\n" for k in keys)
    back = start_memcached_on(port)
    try:
        direct_set(back, keys)
        again = ithaca_factory(config_text=text)
        wait_for(lambda: router_stat(again, "router_deletes_replayed") == len(keys), 10, "the replay at start")
        for k in keys:
            assert direct_get(back, k) == b"END\r\n", k
        assert not os.listdir(spool_dir)
    finally:
        back.stop()


def test_an_mcrouter_pool_route_spools_by_default(ithaca_factory, tmp_path):
    """mcrouter wraps a PoolRoute in its asynclog unless "asynclog": false;
    an mcrouter JSON file has no `router:` section, so the default directory
    (by the process id: the router listens on port 0) holds the spool."""
    import json
    import shutil
    backend = start_memcached_on(free_port())
    path = tmp_path / "mcrouter.json"
    path.write_text(json.dumps({"pools": {"A": {"servers": [addr(backend)]}},
                                "route": {"type": "PoolRoute", "pool": "A"}}))
    router = ithaca_factory(args=["--config", str(path)])
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get mc:0\r\n") == b"END\r\n"
        pid = int(stats(c)["pid"])
    spool_dir = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ithaca-spool-pid-{pid}")
    port = backend.port
    backend.stop()
    try:
        with mcwire.Conn(router.host, router.port) as c:
            assert c.call(b"delete mc:0\r\n") == b"NOT_FOUND\r\n"
        assert router_stat(router, "router_deletes_spooled") == 1
        back = start_memcached_on(port)  # (the values it kept: the first test)
        try:
            wait_for(lambda: router_stat(router, "router_deletes_replayed") == 1, 10, "the replay")
            assert server_stat_pool(router, "A", back, "state") == "up"
        finally:
            back.stop()
    finally:
        shutil.rmtree(spool_dir, ignore_errors=True)


class DeleteBackend:
    """A text-protocol backend whose answer to `delete` is scripted: "hang"
    (no answer), "ok" (DELETED), or DELETED for the next `budget` deletes and
    then `SERVER_ERROR out of memory`. It records the deletes it answered
    DELETED, in order."""

    def __init__(self, port=0):
        import socket
        import threading
        self.mode = "ok"
        self.budget = None
        self.deleted = []
        self.refused = 0  # deletes answered SERVER_ERROR
        self.conns = []
        self.lock = threading.Lock()
        self.listener = socket.socket()
        # A port a killed memcached used (its connections in TIME_WAIT).
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(16)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.stop = threading.Event()
        self.acceptor = threading.Thread(target=self.accept_loop, daemon=True)
        self.acceptor.start()

    def accept_loop(self):
        import socket
        import threading
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.conns.append(conn)
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def answer(self, line):
        words = line.split()
        if not words:
            return b""
        if words[0] == b"version":
            return b"VERSION 1.6.0-fake\r\n"
        if words[0] == b"get":
            return b"END\r\n"
        if words[0] != b"delete":
            return b"ERROR\r\n"
        with self.lock:
            if self.mode == "hang":
                return None
            if self.budget is not None:
                if self.budget == 0:
                    self.refused += 1
                    return b"SERVER_ERROR out of memory\r\n"
                self.budget -= 1
            self.deleted.append(words[1])
            return b"DELETED\r\n"

    def serve(self, conn):
        import socket
        conn.settimeout(0.2)
        buf = b""
        with conn:
            while not self.stop.is_set():
                try:
                    data = conn.recv(65536)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if not data:
                    return
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    reply = self.answer(line.strip())
                    if reply:
                        try:
                            conn.sendall(reply)
                        except OSError:  # the peer (or close()) ended it
                            return

    def close(self):
        """Stops listening and ends every connection before it returns, so
        the port is free for a server started next on it."""
        self.stop.set()
        self.acceptor.join(5)  # its accept() times out within 0.2 s
        self.listener.close()
        with self.lock:
            for conn in self.conns:
                with contextlib.suppress(OSError):
                    conn.shutdown(2)  # socket.SHUT_RDWR
                conn.close()


def test_a_timed_out_delete_is_replayed_while_the_server_serves(ithaca_factory, tmp_path):
    fake = DeleteBackend()
    try:
        text = "\n".join([
            "router:", f"  spool_dir: {tmp_path / 'spool'}",
            "pools:", "  main:", f'    servers: ["127.0.0.1:{fake.port}"]', "    protocol: ascii",
            "    timeout: 300ms", "    failure_limit: 10", "    retry_interval: 200ms",
            "    retry_interval_max: 200ms",
            "route:", "  type: pool", "  pool: main", "  reliable_deletes: true", ""])
        router = ithaca_factory(config_text=text)
        host = f"main/127.0.0.1:{fake.port}"

        def stat(name):
            with mcwire.Conn(router.host, router.port) as c:
                return stats(c, "servers")[f"{host}:{name}"]

        fake.mode = "hang"
        with mcwire.Conn(router.host, router.port) as c:
            for k in (b"t:0", b"t:1", b"t:2"):
                assert c.call(b"delete %s\r\n" % k) == b"NOT_FOUND\r\n"  # after the timeout: spooled
        assert stat("state") == "up"  # a timeout below failure_limit
        assert stat("deletes_spooled") == "3"
        # The replay starts while it still hangs: it times out and keeps all.
        wait_for(lambda: "replay to main" in router.log, 5, "a replay that timed out")
        assert stat("deletes_replayed") == "0"
        # One delete taken, then an error: the rest are kept, in order.
        with fake.lock:
            fake.mode, fake.budget = "ok", 1
        wait_for(lambda: stat("deletes_replayed") == "1", 5, "the first replayed delete")
        assert int(stat("spool_bytes")) == 2 * len(b"t:1\n")
        with fake.lock:
            fake.budget = None
        wait_for(lambda: stat("deletes_replayed") == "3", 5, "the rest replayed")
        assert fake.deleted == [b"t:0", b"t:1", b"t:2"]
        assert stat("spool_bytes") == "0"
    finally:
        fake.close()



def test_a_delete_the_server_refuses_is_spooled_and_replayed(ithaca_factory, tmp_path):
    """A delete the server answers with SERVER_ERROR is spooled as one that
    got no reply (mcrouter's DestinationRoute spools its failover errors):
    the client gets NOT_FOUND, and the delete reaches the server once it
    takes deletes again. The server is up all along."""
    fake = DeleteBackend()
    try:
        text = "\n".join([
            "router:", f"  spool_dir: {tmp_path / 'spool'}",
            "pools:", "  main:", f'    servers: ["127.0.0.1:{fake.port}"]', "    protocol: ascii",
            "    timeout: 2s", "    retry_interval: 200ms", "    retry_interval_max: 200ms",
            "route:", "  type: pool", "  pool: main", "  reliable_deletes: true", ""])
        router = ithaca_factory(config_text=text)
        host = f"main/127.0.0.1:{fake.port}"

        def stat(name):
            with mcwire.Conn(router.host, router.port) as c:
                return stats(c, "servers")[f"{host}:{name}"]

        with fake.lock:
            fake.budget = 0  # SERVER_ERROR out of memory to every delete
        with mcwire.Conn(router.host, router.port) as c:
            assert c.call(b"delete r:0\r\n") == b"NOT_FOUND\r\n"
        assert stat("state") == "up" and stat("deletes_spooled") == "1"
        with fake.lock:
            fake.budget = None
        wait_for(lambda: stat("deletes_replayed") == "1", 5, "the refused delete replayed")
        assert fake.deleted == [b"r:0"]
    finally:
        fake.close()

# ---------------------------------------------------------------- issue 28, item 5
# A delete is answered as spooled (NOT_FOUND) only once its record is in the
# spool file; one the spool cannot write gets the failure and is counted
# dropped, never spooled; an unusable spool directory is refused at start,
# by --check-config and at a reload that names it.


def get_present(server, keys):
    """The keys of `keys` the server still holds (multi-gets of 100)."""
    present = set()
    with mcwire.Conn(server.host, server.port) as c:
        for i in range(0, len(keys), 100):
            reply = c.call(b"get " + b" ".join(keys[i:i + 100]) + b"\r\n")
            present.update(v[0] for v in mcwire.parse_values(reply))
    return [k for k in keys if k in present]


def pipelined_set(server, keys, value=b"old"):
    with mcwire.Conn(server.host, server.port) as c:
        replies = c.exchange(b"".join(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(value), value) for k in keys),
                             lambda buf: len(keys) * len(b"STORED\r\n") if buf.count(b"STORED\r\n") >= len(keys)
                             else None)
    assert replies.count(b"STORED\r\n") == len(keys)


def test_every_delete_answered_spooled_is_on_disk_when_the_router_is_killed(ithaca_factory, tmp_path):
    """Issue 28 (b) as reported: 1,000 deletes to a down server answered
    NOT_FOUND, the router SIGKILLed right after the last reply, restarted on
    the same spool with the server up: all 1,000 keys are gone from the
    server. (Before, a record was written a few ms after its reply: 280 of
    the 1,000 were on disk and 720 keys stayed on the server.)"""
    from conftest import start_ithaca
    backend = start_memcached_on(free_port())
    keys = [b"killed:%04d" % i for i in range(1000)]
    spool_dir = tmp_path / "spool"
    text = reliable_yaml(backend, spool_dir)
    config = tmp_path / "killed.yaml"
    config.write_text(text)
    first = start_ithaca([], config)  # not the factory's: it dies by SIGKILL on purpose
    try:
        with mcwire.Conn(first.host, first.port) as c:
            assert c.call(b"get killed:0000\r\n") == b"END\r\n"  # connected
        port = backend.port
        backend.stop()  # SIGKILL: the server is down
        with mcwire.Conn(first.host, first.port) as c:
            c.send(b"".join(b"delete %s\r\n" % k for k in keys))  # one pipelined batch
            replies = c.read_replies(len(keys))
            first.proc.kill()  # right after the last reply
        first.proc.wait()
    finally:
        first.stop()
    assert replies == [b"NOT_FOUND\r\n"] * len(keys), {r for r in replies}
    files = os.listdir(spool_dir)
    assert len(files) == 1, files
    on_disk = (spool_dir / files[0]).read_bytes().split(b"\n")[:-1]
    assert len(on_disk) == len(keys), f"{len(on_disk)} of {len(keys)} records on disk"
    assert on_disk == keys  # in the order they were answered
    back = start_memcached_on(port)
    try:
        pipelined_set(back, keys)  # the server "kept" its values while it was away
        again = ithaca_factory(config_text=text)
        wait_for(lambda: not os.listdir(spool_dir), 10, "the spool replayed and removed")
        assert router_stat(again, "router_deletes_replayed") == len(keys)
        left = get_present(back, keys)
        assert not left, f"{len(left)} of {len(keys)} keys still on the server"
    finally:
        back.stop()


@contextlib.contextmanager
def read_only_mount(path):
    """A read-only tmpfs on `path` (made if missing). The tests run as root,
    for whom permission bits are no obstacle: a read-only mount is."""
    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(path)], capture_output=True,
                       text=True, timeout=10)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs (needs CAP_SYS_ADMIN): {r.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], capture_output=True, timeout=10)


@contextlib.contextmanager
def unwritable(kind, spool_dir):
    """Makes the running router's spool directory unusable, then usable again."""
    if kind == "a regular file":
        shutil.rmtree(spool_dir, ignore_errors=True)
        spool_dir.write_text("not a directory\n")
        try:
            yield
        finally:
            spool_dir.unlink()
    else:
        with read_only_mount(spool_dir):
            yield


@pytest.mark.parametrize("kind", ["a regular file", "a read-only mount"])
def test_a_delete_the_spool_cannot_write_gets_the_failure(ithaca_factory, tmp_path, kind):
    """Issue 28 (a): the spool directory became unusable while the router
    runs. A failed delete gets the failure (as without reliable deletes),
    is counted dropped and never spooled, and the log says why; once the
    directory is usable again, deletes are spooled again."""
    backend = start_memcached_on(free_port())
    spool_dir = tmp_path / "spool"
    router = ithaca_factory(config_text=reliable_yaml(backend, spool_dir))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get unw:0\r\n") == b"END\r\n"
    backend.stop()
    with unwritable(kind, spool_dir):
        with mcwire.Conn(router.host, router.port) as c:
            reply = c.call(b"delete unw:0\r\n")
        assert reply.startswith(b"SERVER_ERROR"), reply
        assert router_stat(router, "router_deletes_spooled") == 0
        assert router_stat(router, "router_deletes_dropped") == 1
        assert server_stat(router, backend, "deletes_spooled") == "0"
        assert server_stat(router, backend, "deletes_dropped") == "1"
        assert server_stat(router, backend, "spool_bytes") == "0"
        with mcwire.Conn(router.host, router.port) as c:
            routes = stats(c, "routes")
        assert (routes.get("route:0:deletes_spooled", "0"), routes["route:0:deletes_dropped"]) == ("0", "1")
        wait_for(lambda: "spool: cannot write" in router.log, 5, "the log line (asynchronous)")
    # Usable again (a missing directory is made again): spooled.
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"delete unw:1\r\n") == b"NOT_FOUND\r\n"
    assert router_stat(router, "router_deletes_spooled") == 1
    assert [p.read_bytes() for p in spool_dir.iterdir()] == [b"unw:1\n"]


def test_a_missing_nested_spool_dir_is_made(ithaca_factory, tmp_path):
    """A spool_dir whose parents are missing is made (mkdir -p) at start, and
    again if it is removed while the router runs (a cleaner emptied /tmp)."""
    backend = start_memcached_on(free_port())
    spool_dir = tmp_path / "a" / "b" / "spool"
    router = ithaca_factory(config_text=reliable_yaml(backend, spool_dir))
    assert spool_dir.is_dir()
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get nest:0\r\n") == b"END\r\n"
    backend.stop()
    shutil.rmtree(tmp_path / "a")
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"delete nest:0\r\n") == b"NOT_FOUND\r\n"
    assert [p.read_bytes() for p in spool_dir.iterdir()] == [b"nest:0\n"]
    assert router_stat(router, "router_deletes_spooled") == 1


UNUSABLE = ["a regular file", "under a regular file", "a read-only mount", "missing under a read-only mount"]


@contextlib.contextmanager
def unusable(kind, tmp_path):
    """A spool_dir path of the kind, and the words the refusal must say."""
    if kind == "a regular file":
        path = tmp_path / "spool"
        path.write_text("x\n")
        yield path, "not a directory"
    elif kind == "under a regular file":
        (tmp_path / "file").write_text("x\n")
        yield tmp_path / "file" / "spool", "not a directory"
    elif kind == "a read-only mount":
        with read_only_mount(tmp_path / "ro") as path:
            yield path, "Read-only file system"
    else:
        with read_only_mount(tmp_path / "ro") as ro:
            yield ro / "a" / "spool", "Read-only file system"


@pytest.mark.parametrize("kind", UNUSABLE)
def test_an_unusable_spool_dir_is_refused_by_check_config_and_at_start(tmp_path, kind):
    from test_config_file import run_bounded
    path, _ = ithaca_binary()
    backend_port = free_port()  # nothing needs to listen: neither run reaches it
    with unusable(kind, tmp_path) as (spool_dir, words):
        conf = tmp_path / "ithaca.yaml"
        conf.write_text(reliable_yaml(FakeAddr(backend_port), spool_dir))
        check = subprocess.run([path, "--check-config", "--config", str(conf)], capture_output=True, text=True,
                               timeout=20)
        assert check.returncode != 0, check.stdout + check.stderr
        assert str(spool_dir) in check.stderr and words in check.stderr, check.stderr
        assert "router.spool_dir" in check.stderr, check.stderr
        rc, out, why = run_bounded([path, "-l", "127.0.0.1", "-p", "0", "-U", "0", "--config", str(conf)], timeout=5)
        assert why is None, f"ithaca started with spool_dir {kind} ({why}):\n{out}"
        assert rc == 1, out
        assert str(spool_dir) in out and words in out and "router.spool_dir" in out, out
        assert "listening on" not in out


class FakeAddr:
    host = "127.0.0.1"

    def __init__(self, port):
        self.port = port


def test_check_config_accepts_a_spool_dir_it_can_make(tmp_path):
    """--check-config looks without making: a missing nested path under a
    writable directory is fine, and is not made by the check."""
    path, _ = ithaca_binary()
    spool_dir = tmp_path / "x" / "y" / "spool"
    conf = tmp_path / "ithaca.yaml"
    conf.write_text(reliable_yaml(FakeAddr(free_port()), spool_dir))
    check = subprocess.run([path, "--check-config", "--config", str(conf)], capture_output=True, text=True, timeout=20)
    assert check.returncode == 0, check.stdout + check.stderr
    assert not (tmp_path / "x").exists()


def test_a_reload_naming_an_unusable_spool_dir_is_refused(ithaca_factory, tmp_path):
    """spool_dir needs a restart; a SIGHUP whose file names another, usable
    one is applied with the usual "needs a restart" warning, one that names
    an unusable one is refused as a whole, and the running spool goes on."""
    backend = start_memcached_on(free_port())
    spool_dir = tmp_path / "spool"
    router = ithaca_factory(config_text=reliable_yaml(backend, spool_dir) + "logging:\n  level: info\n")
    conf = pathlib.Path(router.argv[router.argv.index("--config") + 1])
    (tmp_path / "file").write_text("x\n")
    conf.write_text(reliable_yaml(backend, tmp_path / "file" / "spool", max_size="1m") + "logging:\n  level: info\n")
    router.proc.send_signal(signal.SIGHUP)
    line = wait_for(lambda: re.search(r"SIGHUP: reload refused, keeping the running configuration: (.*)", router.log),
                    5, "the refusal")
    assert "router.spool_dir" in line.group(1) and str(tmp_path / "file") in line.group(1), line.group(0)
    assert "not a directory" in line.group(1), line.group(0)
    assert "spool_max_size" not in router.log  # nothing of that file was applied
    # Another usable directory: the usual restart-only warning, the rest applied.
    conf.write_text(reliable_yaml(backend, tmp_path / "elsewhere") + "logging:\n  level: info\n")
    router.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "router.spool_dir changed; needs a restart" in router.log, 5, "the restart-only warning")
    assert not (tmp_path / "elsewhere").exists()  # looked at, not made
    # The running spool is the one it started with.
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get rl:0\r\n") == b"END\r\n"
    backend.stop()
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"delete rl:0\r\n") == b"NOT_FOUND\r\n"
    assert [p.read_bytes() for p in spool_dir.iterdir()] == [b"rl:0\n"]


def test_spool_fsync_syncs_before_the_reply(ithaca_factory, tmp_path):
    """router.spool_fsync: each batch of records is fdatasync'ed before its
    deletes are answered (a machine crash loses no delete answered spooled)."""
    backend = start_memcached_on(free_port())
    spool_dir = tmp_path / "spool"
    text = reliable_yaml(backend, spool_dir).replace("router:\n", "router:\n  spool_fsync: true\n")
    router = ithaca_factory(config_text=text + "logging:\n  level: info\n")
    assert router.logged("each batch synced"), router.describe()
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get fs:0\r\n") == b"END\r\n"
    backend.stop()
    keys = [b"fs:%d" % i for i in range(50)]
    with mcwire.Conn(router.host, router.port) as c:
        c.send(b"".join(b"delete %s\r\n" % k for k in keys))
        assert c.read_replies(len(keys)) == [b"NOT_FOUND\r\n"] * len(keys)
    assert [p.read_bytes() for p in spool_dir.iterdir()] == [b"".join(k + b"\n" for k in keys)]
    assert router_stat(router, "router_deletes_spooled") == len(keys)


def test_under_systemd_the_default_spool_is_in_the_state_directory(ithaca_factory, tmp_path, monkeypatch):
    """The bundled unit says StateDirectory=ithaca: systemd makes
    /var/lib/ithaca and sets $STATE_DIRECTORY, and a router with no
    router.spool_dir spools in $STATE_DIRECTORY/spool (kept across restarts;
    the service's /tmp is private and emptied at each one)."""
    backend = start_memcached_on(free_port())
    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setenv("STATE_DIRECTORY", str(state))
    text = reliable_yaml(backend, "unused")
    text = text[text.index("pools:"):]  # no router: section, so no spool_dir
    router = ithaca_factory(config_text=text + "logging:\n  level: info\n")
    assert router.logged(f"spooled under {state}/spool "), router.log
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get sd:0\r\n") == b"END\r\n"
    backend.stop()
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"delete sd:0\r\n") == b"NOT_FOUND\r\n"
    assert [p.read_bytes() for p in (state / "spool").iterdir()] == [b"sd:0\n"]
