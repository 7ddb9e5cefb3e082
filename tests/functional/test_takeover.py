"""Upgrade in place (issue 34): `ithaca --takeover` from a second copy of the
binary takes a running ithaca's listeners and store while clients keep
working, and a failed new process leaves the old one serving.

The load: 20 connections against 10,000 items. Each client owns the keys
whose number is its index modulo 20 and is the only writer of them, so it
knows what each must hold: the last value the server acknowledged (or the
one it sent just before its connection was closed, if that one never got a
reply). Gets go to any key; every reply is parsed whole. A connection closed
after a complete reply, before any byte of the next, is a reconnect and a
resend, not an error (the old process closes its connections that way); a
refused connection, a partial reply, an unexpected reply or a miss is."""

import json
import os
import random
import re
import shutil
import signal
import socket
import threading
import time

import pytest

from conftest import (BASE_ARGS, HOST, LISTEN_RE, START_TIMEOUT, Server, _crash_report, free_port, ithaca_binary,
                      memcached_factory, root_args)  # noqa: F401 (memcached_factory: a fixture)
from test_tls import certs  # noqa: F401 (the fixture: a CA and server certificates)

ITEMS = 10_000
CLIENTS = 20
TAKEN_OVER_RE = re.compile(r"listening on tcp 127\.0\.0\.1:(\d+) \(taken over\)")


class TornReply(Exception):
    pass


class ClosedBeforeReply(Exception):
    pass


def read_reply(sock, buf, complete):
    """Reads until complete(buf) returns the reply's length; returns (reply,
    rest). EOF before any byte: ClosedBeforeReply; after some: TornReply."""
    while True:
        n = complete(buf)
        if n:
            return bytes(buf[:n]), buf[n:]
        chunk = sock.recv(65536)
        if not chunk:
            if buf:
                raise TornReply(bytes(buf))
            raise ClosedBeforeReply()
        buf += chunk


def stored_complete(buf):
    i = buf.find(b"\r\n")
    return i + 2 if i >= 0 else 0


def get_complete(buf):
    if buf.startswith(b"END\r\n"):
        return 5
    if not buf.startswith(b"VALUE "):
        i = buf.find(b"\r\n")
        return i + 2 if i >= 0 else 0
    head_end = buf.find(b"\r\n")
    if head_end < 0:
        return 0
    length = int(buf[:head_end].split()[3])
    total = head_end + 2 + length + 2 + 5
    return total if len(buf) >= total else 0


class LoadClient(threading.Thread):
    def __init__(self, index, port, stop, value_pad, items=ITEMS, clients=CLIENTS):
        super().__init__(daemon=True)
        self.index = index
        self.items = items
        self.clients = clients
        self.port = port
        self.stop_event = stop
        self.pad = value_pad
        self.rng = random.Random(index)
        self.acked = {}    # key number -> version acknowledged
        self.pending = {}  # key number -> version sent, no reply seen (its connection closed)
        self.refused = 0
        self.reconnects = 0
        self.errors = []
        self.ops = 0
        self.sock = None
        self.buf = bytearray()

    def connect(self):
        while True:
            try:
                self.sock = socket.create_connection((HOST, self.port), timeout=10)
                self.buf = bytearray()
                return
            except ConnectionRefusedError:
                self.refused += 1
                time.sleep(0.01)

    def request(self, data, complete):
        """Sends `data`, returns its reply; resends on a connection closed
        before the reply (the request may or may not have been applied)."""
        while True:
            if self.sock is None:
                self.connect()
            try:
                self.sock.sendall(data)
                reply, self.buf = read_reply(self.sock, self.buf, complete)
                return reply
            except (ClosedBeforeReply, ConnectionResetError, BrokenPipeError):
                self.sock.close()
                self.sock = None
                self.reconnects += 1

    def value(self, key, version):
        return f"{key}:{version}:".encode() + self.pad

    def run(self):
        mine = list(range(self.index, self.items, self.clients))
        try:
            while not self.stop_event.is_set():
                if self.rng.random() < 0.3:
                    key = self.rng.choice(mine)
                    version = self.acked.get(key, 0) + 1
                    self.pending[key] = version
                    v = self.value(key, version)
                    reply = self.request(b"set k%d 0 0 %d\r\n%s\r\n" % (key, len(v), v), stored_complete)
                    if reply != b"STORED\r\n":
                        self.errors.append(f"set k{key}: {reply!r}")
                    else:
                        self.acked[key] = version
                        del self.pending[key]
                else:
                    key = self.rng.randrange(self.items)
                    reply = self.request(b"get k%d\r\n" % key, get_complete)
                    self.check_get(key, reply)
                self.ops += 1
        except Exception as e:  # a torn reply, a timeout: the test reports it
            self.errors.append(f"{type(e).__name__}: {e!r}")
        finally:
            if self.sock is not None:
                self.sock.close()

    def allowed_versions(self, key):
        ok = {self.acked.get(key, 0)}
        if key in self.pending:
            ok.add(self.pending[key])
        return ok

    def check_get(self, key, reply):
        if not reply.startswith(b"VALUE "):
            self.errors.append(f"get k{key}: {reply[:80]!r}")
            return
        data = reply.split(b"\r\n")[1]
        prefix, version, _ = data.split(b":", 2)
        if int(prefix) != key:
            self.errors.append(f"get k{key}: the value of k{int(prefix)}")
        elif key % self.clients == self.index and int(version) not in self.allowed_versions(key):
            self.errors.append(f"get k{key}: version {int(version)}, acknowledged {self.acked.get(key, 0)}")


def fill(port, pad, items=ITEMS):
    with socket.create_connection((HOST, port), timeout=10) as s:
        batch = bytearray()
        for key in range(items):
            v = f"{key}:0:".encode() + pad
            batch += b"set k%d 0 0 %d noreply\r\n%s\r\n" % (key, len(v), v)
        batch += b"mn\r\n"
        s.sendall(batch)
        buf = b""
        while not buf.endswith(b"MN\r\n"):
            buf += s.recv(65536)


def read_all(port, items=ITEMS):
    """Every item's value, by key number (None: missing)."""
    out = {}
    with socket.create_connection((HOST, port), timeout=10) as s:
        buf = bytearray()
        for start in range(0, items, 500):
            keys = range(start, min(start + 500, items))
            s.sendall(b"get " + b" ".join(b"k%d" % k for k in keys) + b"\r\n")
            while not buf.endswith(b"END\r\n"):
                buf += s.recv(65536)
            for m in re.finditer(rb"VALUE k(\d+) \d+ (\d+)\r\n", buf):
                n = int(m.group(2))
                out[int(m.group(1))] = bytes(buf[m.end():m.end() + n])
            buf = bytearray()
    return out


@pytest.fixture
def servers():
    """The processes a test started (old and new ones), stopped at teardown;
    one that died by a signal or printed a sanitizer report fails the test."""
    owned = []
    yield owned
    problems = []
    for s in owned:
        rc_before = s.proc.poll()
        if rc_before is None:
            s.stop()
        problem = _crash_report(s, rc_before)
        if problem:
            problems.append(f"{problem}\n{s.describe()}")
    if problems:
        pytest.fail("\n\n".join(problems), pytrace=False)


def start(servers, binary, args, regex=LISTEN_RE, base=BASE_ARGS, exact=False):
    """exact: `args` is the whole command line after the binary (memcached's
    or mcrouter's, whose mode word comes first)."""
    server = Server("ithaca", [binary, *args] if exact else [binary, *root_args(), *base, *args])
    servers.append(server)
    m = server.wait_for_log(regex, START_TIMEOUT)
    assert m, f"did not start:\n{server.describe()}"
    server.port = int(m.group(1))
    return server


def second_copy(tmp_path):
    """The upgrade's binary: a copy of ITHACA_BIN at another path."""
    binary, is_memcached = ithaca_binary()
    if is_memcached:
        pytest.fail("takeover is ithaca's: it cannot run with ITHACA_BIN=memcached", pytrace=False)
    copy = tmp_path / "ithaca-new"
    shutil.copy2(binary, copy)
    return binary, str(copy)


def test_takeover_under_load_refuses_nothing_and_loses_nothing(tmp_path, servers):
    binary, new_binary = second_copy(tmp_path)
    control = str(tmp_path / "takeover.sock")
    args = ["-p", "0", "--takeover-socket", control]
    old = start(servers, binary, args)
    pad = b"x" * 40
    fill(old.port, pad)
    stop = threading.Event()
    clients = [LoadClient(i, old.port, stop, pad) for i in range(CLIENTS)]
    for c in clients:
        c.start()
    time.sleep(1.0)
    before = sum(c.ops for c in clients)
    new = start(servers, new_binary, [*args, "--takeover"], regex=TAKEN_OVER_RE)
    assert new.port == old.port
    assert old.proc.wait(15) == 0, old.describe()
    assert old.logged("takeover: the store is synced to the new process")
    assert old.logged("serves; handed over in")
    time.sleep(1.0)
    stop.set()
    for c in clients:
        c.join(30)
        assert not c.is_alive()
    during = sum(c.ops for c in clients) - before
    errors = [e for c in clients for e in c.errors]
    assert errors == [], f"{errors[:3]}\n{new.describe()}"
    assert sum(c.refused for c in clients) == 0
    # The old process closed the connections it served: every client met it.
    assert sum(c.reconnects for c in clients) >= 1
    assert during > 0
    assert new.logged(f"takeover: received the store: ")
    # Every item and every acknowledged write is in the new process.
    values = read_all(new.port)
    missing = [k for k in range(ITEMS) if k not in values]
    assert missing == [], f"{len(missing)} items missing, e.g. {missing[:5]}"
    wrong = []
    for c in clients:
        for key in range(c.index, ITEMS, CLIENTS):
            _, version, _ = values[key].split(b":", 2)
            if int(version) not in c.allowed_versions(key):
                wrong.append((key, int(version), c.acked.get(key, 0)))
    assert wrong == [], f"{len(wrong)} acknowledged writes lost, e.g. {wrong[:5]}"
    # Served by the new process: its pid.
    with socket.create_connection((HOST, new.port)) as s:
        s.sendall(b"stats\r\n")
        buf = b""
        while not buf.endswith(b"END\r\n"):
            buf += s.recv(65536)
    assert f"STAT pid {new.proc.pid}\r\n".encode() in buf
    # And it can be taken over in turn (the takeover socket moved with it).
    newer = start(servers, binary, [*args, "--takeover"], regex=TAKEN_OVER_RE)
    assert new.proc.wait(15) == 0, new.describe()
    assert len(read_all(newer.port)) == ITEMS


def test_takeover_moves_unix_and_udp_listeners(tmp_path, servers):
    binary, new_binary = second_copy(tmp_path)
    unix_path = str(tmp_path / "ithaca.sock")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind((HOST, 0))
        udp_port = probe.getsockname()[1]
    config = tmp_path / "ithaca.yaml"
    config.write_text(f"listen:\n  tcp: {HOST}:0\n  unix: {unix_path}\n  udp: {udp_port}\n"
                      f"takeover:\n  socket: {tmp_path / 't.sock'}\nserver:\n  workers: 2\n")
    no_udp_flag = [a for i, a in enumerate(BASE_ARGS) if "-U" not in BASE_ARGS[max(i - 1, 0):i + 1]]
    old = start(servers, binary, ["--config", str(config)], base=no_udp_flag)
    assert old.logged("listening on unix"), old.describe()  # bound after the tcp one
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(unix_path)
        s.sendall(b"set u 1 0 2\r\nhi\r\n")
        assert s.recv(100) == b"STORED\r\n"
    # Three workers where the old one had two: one more socket joins the
    # UDP port's SO_REUSEPORT group.
    new = start(servers, new_binary, ["--config", str(config), "-t", "3", "--takeover"], regex=TAKEN_OVER_RE,
                base=no_udp_flag)
    assert old.proc.wait(15) == 0, old.describe() + new.describe()
    assert new.logged("listening on unix unix:" + unix_path + " (taken over)"), new.describe()
    assert new.logged(f"listening on udp {HOST}:{udp_port} (2 taken over)"), new.describe()
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(unix_path)
        s.sendall(b"get u\r\n")
        assert s.recv(100) == b"VALUE u 1 2\r\nhi\r\nEND\r\n"
    # UDP: request id 7, sequence 0, one datagram; every socket of the
    # group is the new process's now, so each datagram is answered.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
        u.settimeout(5)
        for _ in range(8):
            u.sendto(b"\x00\x07\x00\x00\x00\x01\x00\x00get u\r\n", (HOST, udp_port))
            reply, _ = u.recvfrom(2000)
            assert reply[:2] == b"\x00\x07" and reply[8:] == b"VALUE u 1 2\r\nhi\r\nEND\r\n"


def test_a_failed_takeover_leaves_the_old_process_serving(tmp_path, servers):
    binary, new_binary = second_copy(tmp_path)
    control = str(tmp_path / "takeover.sock")
    old = start(servers, binary, ["-p", "0", "--takeover-socket", control])
    with socket.create_connection((HOST, old.port)) as s:
        s.sendall(b"set a 0 0 1\r\n1\r\n")
        assert s.recv(100) == b"STORED\r\n"
    # A bad config: the new process says why and exits before it asks.
    bad = tmp_path / "bad.yaml"
    bad.write_text("cache:\n  memory_limit: lots\n")
    new = Server("ithaca-new", [new_binary, *root_args(), "--config", str(bad), "--takeover-socket", control,
                                "--takeover"])
    servers.append(new)
    assert new.proc.wait(10) != 0
    assert new.logged("bad.yaml:2"), new.log
    # A new process that fails after it asked (a listener the old one does
    # not have: binding it once the old one stopped could fail with nobody
    # serving): it says why, the old one says it still serves.
    extra = tmp_path / "extra.yaml"
    extra.write_text(f"listen:\n  tcp: {HOST}:0\n  unix: {tmp_path / 'extra.sock'}\n"
                     f"takeover:\n  socket: {control}\n")
    late = Server("ithaca-new", [new_binary, *root_args(), "--config", str(extra), "--takeover"])
    servers.append(late)
    assert late.proc.wait(10) != 0
    assert late.logged("the running process has no listener unix:"), late.describe()
    assert old.logged("still serving"), old.describe()
    # Strangers on the takeover socket: one that says something else is
    # told so; one that says the hello and goes away gets the descriptors,
    # then is forgotten.
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(control)
        s.sendall(b"hello\n")
        assert s.recv(200).startswith(b"ERROR expected 'ITHACA-TAKEOVER 1 PID'")
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(control)
        s.sendall(b"ITHACA-TAKEOVER 1\n")
        assert s.recv(200).startswith(b"FDS ")
    assert old.logged("not a takeover; still serving")
    assert old.logged("went away during the initial sync (it closed the connection); still serving")
    # No takeover socket at all: a clear error.
    lost = Server("ithaca-new", [new_binary, *root_args(), *BASE_ARGS, "-p", "0", "--takeover-socket",
                                 str(tmp_path / "nobody.sock"), "--takeover"])
    servers.append(lost)
    assert lost.proc.wait(10) != 0
    assert lost.logged("cannot connect to the takeover socket"), lost.log
    assert old.proc.poll() is None
    with socket.create_connection((HOST, old.port)) as s:
        s.sendall(b"get a\r\n")
        assert s.recv(100) == b"VALUE a 0 1\r\n1\r\nEND\r\n"
    # And a takeover after those works.
    new = start(servers, new_binary, ["-p", "0", "--takeover-socket", control, "--takeover"], regex=TAKEN_OVER_RE)
    assert old.proc.wait(15) == 0
    with socket.create_connection((HOST, new.port)) as s:
        s.sendall(b"get a\r\n")
        assert s.recv(100) == b"VALUE a 0 1\r\n1\r\nEND\r\n"


def test_sigusr2_starts_the_same_binary_path_with_takeover(tmp_path, servers):
    _, new_binary = second_copy(tmp_path)
    control = str(tmp_path / "takeover.sock")
    old = start(servers, new_binary, ["-p", "0", "--takeover-socket", control])
    with socket.create_connection((HOST, old.port)) as s:
        s.sendall(b"set a 0 0 1\r\n1\r\n")
        assert s.recv(100) == b"STORED\r\n"
    old.proc.send_signal(__import__("signal").SIGUSR2)
    assert old.proc.wait(15) == 0, old.describe()
    m = re.search(r"started (\S+) --takeover \(pid (\d+)\)", old.log)
    assert m and m.group(1) == new_binary, old.log
    pid = int(m.group(2))
    try:
        with socket.create_connection((HOST, old.port)) as s:
            s.sendall(b"get a\r\nstats\r\n")
            buf = b""
            while not buf.endswith(b"END\r\n") or buf.count(b"END\r\n") < 2:
                buf += s.recv(65536)
        assert buf.startswith(b"VALUE a 0 1\r\n1\r\nEND\r\n")
        assert f"STAT pid {pid}\r\n".encode() in buf
    finally:
        os.kill(pid, 15)


def test_the_new_process_tells_systemd_its_pid_and_readiness(tmp_path, servers, monkeypatch):
    binary, new_binary = second_copy(tmp_path)
    control = str(tmp_path / "takeover.sock")
    old = start(servers, binary, ["-p", "0", "--takeover-socket", control])
    notify_path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(notify_path)
        notify.settimeout(10)
        monkeypatch.setenv("NOTIFY_SOCKET", notify_path)
        new = start(servers, new_binary, ["-p", "0", "--takeover-socket", control, "--takeover"],
                    regex=TAKEN_OVER_RE)
        fields = notify.recv(4096).split(b"\n")
    # Type=notify: the unit's main process is the new one from now on.
    assert b"READY=1" in fields and f"MAINPID={new.proc.pid}".encode() in fields, fields
    assert old.proc.wait(15) == 0


def test_router_role_moves_its_listeners_and_its_spool(tmp_path, servers):
    """A router's listeners, and the deletes it spooled for a server that was
    down: the new process replays them once that server is back."""
    binary, new_binary = second_copy(tmp_path)
    from conftest import free_port, memcached_binary
    up = Server("memcached", [memcached_binary(), *root_args(), "-l", HOST, "-p", str(free_port()), "-U", "0"])
    servers.append(up)
    up.port = int(up.argv[up.argv.index("-p") + 1])
    assert up.wait_accepting(START_TIMEOUT)
    down_port = free_port()
    spool = tmp_path / "spool"
    config = tmp_path / "router.yaml"
    config.write_text(f"listen:\n  tcp: {HOST}:0\npools:\n  main:\n    servers: [{HOST}:{up.port}:1, {HOST}:{down_port}:1]\n"
                      f"    timeout: 500ms\nroute: {{type: pool, pool: main, reliable_deletes: true}}\n"
                      f"router:\n  spool_dir: {spool}\ntakeover:\n  socket: {tmp_path / 't.sock'}\n")
    old = start(servers, binary, ["--config", str(config)])
    with socket.create_connection((HOST, old.port)) as s:
        for i in range(40):
            s.sendall(b"delete d%d\r\n" % i)
        buf = b""
        while buf.count(b"\r\n") < 40:
            buf += s.recv(4096)
    spooled = os.listdir(spool)
    assert spooled == [f"main_127.0.0.1_{down_port}.spool"], spooled
    new = start(servers, new_binary, ["--config", str(config), "--takeover"], regex=TAKEN_OVER_RE)
    assert old.proc.wait(15) == 0, old.describe()
    assert new.port == old.port
    # The server comes back: the new process replays what the old one spooled.
    back = Server("memcached", [memcached_binary(), *root_args(), "-l", HOST, "-p", str(down_port), "-U", "0"])
    servers.append(back)
    back.port = down_port
    assert back.wait_accepting(START_TIMEOUT)
    deadline = time.monotonic() + 15
    while os.listdir(spool) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.listdir(spool), f"not replayed:\n{new.describe()}"
    with socket.create_connection((HOST, new.port)) as s:
        s.sendall(b"set a 0 0 1\r\n1\r\nget a\r\n")
        buf = b""
        while not buf.endswith(b"END\r\n"):
            buf += s.recv(4096)
    assert buf == b"STORED\r\nVALUE a 0 1\r\n1\r\nEND\r\n"


def test_tls_listener_moves_and_serves_the_new_process_certificate(tmp_path, servers, certs):
    """A TLS listener moves like any other; the new process handshakes with
    its own context (here a new certificate, as an upgrade may bring)."""
    from test_tls import TlsConn, client_context, tls_flags
    binary, new_binary = second_copy(tmp_path)
    control = str(tmp_path / "takeover.sock")
    old = start(servers, binary, ["-p", "0", "--takeover-socket", control, *tls_flags(certs)])
    with TlsConn(HOST, old.port, client_context(certs)) as c:
        assert c.serial() == 1001
        assert c.call(b"set k 5 0 5\r\nhello\r\n") == b"STORED\r\n"
    new = start(servers, new_binary, ["-p", "0", "--takeover-socket", control, *tls_flags(certs, "server2"),
                                      "--takeover"], regex=TAKEN_OVER_RE)
    assert old.proc.wait(15) == 0, old.describe()
    with TlsConn(HOST, new.port, client_context(certs)) as c:
        assert c.serial() == 2002
        assert c.call(b"get k\r\n") == b"VALUE k 5 5\r\nhello\r\nEND\r\n"


def test_a_replication_master_is_taken_over_and_its_slave_follows_the_new_one(tmp_path, servers):
    """A static master's store moves beside its slave; the new process binds
    the replication port once the old one has gone, and the slave, which
    lost its master, syncs again from the new one."""
    from conftest import free_port
    from replica import master_config, slave_config
    binary, new_binary = second_copy(tmp_path)
    repl_port = free_port()
    master_yaml = tmp_path / "master.yaml"
    master_yaml.write_text(master_config(repl_port) + f"takeover:\n  socket: {tmp_path / 't.sock'}\n")
    slave_yaml = tmp_path / "slave.yaml"
    slave_yaml.write_text(slave_config(repl_port))
    old = start(servers, binary, ["-p", "0", "--config", str(master_yaml)])
    slave = start(servers, binary, ["-p", "0", "--config", str(slave_yaml)])
    with socket.create_connection((HOST, old.port)) as s:
        s.sendall(b"".join(b"set m%d 0 0 2 noreply\r\nv%d\r\n" % (i, i % 10) for i in range(500)) + b"mn\r\n")
        buf = b""
        while not buf.endswith(b"MN\r\n"):
            buf += s.recv(4096)
    new = start(servers, new_binary, ["-p", "0", "--config", str(master_yaml), "--takeover"], regex=TAKEN_OVER_RE)
    assert old.proc.wait(15) == 0, old.describe()
    assert new.logged("takeover: received the store: 500 items"), new.describe()
    assert new.logged("replication: accepting slaves on"), new.describe()
    with socket.create_connection((HOST, new.port)) as s:
        s.sendall(b"set after 0 0 3\r\nnew\r\n")
        assert s.recv(100) == b"STORED\r\n"
    deadline = time.monotonic() + 20
    got = b""
    while time.monotonic() < deadline:
        with socket.create_connection((HOST, slave.port)) as s:
            s.sendall(b"get after m499\r\n")
            got = b""
            while not got.endswith(b"END\r\n"):
                got += s.recv(4096)
        if got == b"VALUE after 0 3\r\nnew\r\nVALUE m499 0 2\r\nv9\r\nEND\r\n":
            break
        time.sleep(0.1)
    assert got == b"VALUE after 0 3\r\nnew\r\nVALUE m499 0 2\r\nv9\r\nEND\r\n", slave.describe()


def test_a_memory_file_is_never_shared_by_the_two_processes(tmp_path, servers):
    """-e FILE with a takeover: the old process still maps FILE, so the new one
    starts a file of its own at that path (its store comes by the sync) and
    never writes into the old one's items; after a SIGUSR1 stop of the new one
    the next start serves every item from the file. A second process that is
    not a takeover is refused the file while the first holds it."""
    binary, new_binary = second_copy(tmp_path)
    control = str(tmp_path / "takeover.sock")
    memory_file = str(tmp_path / "cache")
    args = ["-p", "0", "--takeover-socket", control, "-e", memory_file]
    old = start(servers, binary, args)
    pad = b"y" * 40
    fill(old.port, pad)
    inode = os.stat(memory_file).st_ino

    other = Server("ithaca", [binary, *root_args(), *BASE_ARGS, "-p", "0", "-e", memory_file])
    assert other.proc.wait(10) != 0
    assert other.logged("in use by another running process"), other.log

    new = start(servers, new_binary, [*args, "--takeover"], regex=TAKEN_OVER_RE)
    assert old.proc.wait(15) == 0, old.describe()
    assert os.stat(memory_file).st_ino != inode  # a file of its own
    assert len(read_all(new.port)) == ITEMS

    new.proc.send_signal(signal.SIGUSR1)
    assert new.proc.wait(15) == 0, new.describe()
    assert new.logged("saved (")
    again = start(servers, binary, ["-p", "0", "-e", memory_file])
    assert again.logged("restored"), again.describe()
    values = read_all(again.port)
    assert len(values) == ITEMS
    assert all(v.endswith(pad) for v in values.values())


def notifications(sock):
    """Every datagram waiting on the notify socket, each as its fields."""
    out = []
    sock.setblocking(False)
    try:
        while True:
            out.append(sock.recv(4096).split(b"\n"))
    except BlockingIOError:
        pass
    sock.setblocking(True)
    return out


def test_a_new_process_that_dies_before_done_leaves_the_old_one_serving(tmp_path, servers, monkeypatch):
    """The late failure: the new process dies after the old one stopped
    accepting and paused its workers (and after it told systemd its pid),
    before DONE. The old one resumes on the listeners it never closed."""
    binary, new_binary = second_copy(tmp_path)
    control = str(tmp_path / "takeover.sock")
    pid_file = tmp_path / "ithaca.pid"
    args = ["-p", "0", "--takeover-socket", control, "-P", str(pid_file)]
    notify_path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(notify_path)
        monkeypatch.setenv("NOTIFY_SOCKET", notify_path)
        old = start(servers, binary, args)
        pad = b"x" * 40
        fill(old.port, pad)
        stop = threading.Event()
        clients = [LoadClient(i, old.port, stop, pad) for i in range(CLIENTS)]
        for c in clients:
            c.start()
        time.sleep(0.5)
        # The test hook (instance.cc): exit 70 just before DONE.
        monkeypatch.setenv("ITHACA_TAKEOVER_FAULT", "exit-before-done")
        dying = Server("ithaca-new", [new_binary, *root_args(), *BASE_ARGS, *args, "--takeover"])
        servers.append(dying)
        assert dying.proc.wait(15) == 70, dying.describe()
        monkeypatch.delenv("ITHACA_TAKEOVER_FAULT")
        assert old.wait_for_log(re.compile(r"takeover: the new process \(pid \d+\) exited \(its connection closed\) "
                                           r"before taking over: still serving"), 10), old.describe()
        assert old.logged("takeover: the store is synced to the new process")
        time.sleep(1.0)
        stop.set()
        for c in clients:
            c.join(30)
            assert not c.is_alive()
        errors = [e for c in clients for e in c.errors]
        assert errors == [], f"{errors[:3]}\n{old.describe()}"
        assert sum(c.refused for c in clients) == 0
        # The pause closed the connections: the clients reconnected, were
        # queued by the kernel and served by the old process.
        assert sum(c.reconnects for c in clients) >= 1
        assert old.proc.poll() is None
        # systemd: the dying process said it was the main one; the old one
        # said so again after it resumed. The pid file names it too.
        said = [f for f in notifications(notify) if b"READY=1" in f]
        assert len(said) >= 3, said
        assert f"MAINPID={dying.proc.pid}".encode() in said[-2], said
        assert f"MAINPID={old.proc.pid}".encode() in said[-1], said
        assert pid_file.read_text().strip() == str(old.proc.pid)
        with socket.create_connection((HOST, old.port)) as s:
            s.sendall(b"stats\r\n")
            buf = b""
            while not buf.endswith(b"END\r\n"):
                buf += s.recv(65536)
        assert f"STAT pid {old.proc.pid}\r\n".encode() in buf
        values = read_all(old.port)
        assert len(values) == ITEMS
        wrong = [k for c in clients for k in range(c.index, ITEMS, CLIENTS)
                 if int(values[k].split(b":", 2)[1]) not in c.allowed_versions(k)]
        assert wrong == [], wrong[:5]
        # A normal takeover after it works.
        new = start(servers, new_binary, [*args, "--takeover"], regex=TAKEN_OVER_RE)
        assert old.proc.wait(15) == 0, old.describe()
        assert len(read_all(new.port)) == ITEMS


SMALL_ITEMS = 3000
SMALL_CLIENTS = 4


def served_pid(port):
    with socket.create_connection((HOST, port), timeout=10) as s:
        s.sendall(b"stats\r\n")
        buf = b""
        while not buf.endswith(b"END\r\n"):
            buf += s.recv(65536)
    return int(re.search(rb"STAT pid (\d+)\r\n", buf).group(1))


def takeover_under_small_load(port, pad, take_over, known=None):
    """A few clients on `port` while `take_over()` runs; then every client's
    checks: no error, nothing refused, every item with an acknowledged
    version. `known`: the values a previous round left. Returns the values
    read afterwards."""
    stop = threading.Event()
    clients = [LoadClient(i, port, stop, pad, SMALL_ITEMS, SMALL_CLIENTS) for i in range(SMALL_CLIENTS)]
    for c in clients:
        for k, v in (known or {}).items():
            if k % SMALL_CLIENTS == c.index:
                c.acked[k] = int(v.split(b":", 2)[1])
        c.start()
    time.sleep(0.5)
    take_over()
    time.sleep(0.5)
    stop.set()
    for c in clients:
        c.join(30)
        assert not c.is_alive()
    errors = [e for c in clients for e in c.errors]
    assert errors == [], errors[:3]
    assert sum(c.refused for c in clients) == 0
    values = read_all(port, SMALL_ITEMS)
    missing = [k for k in range(SMALL_ITEMS) if k not in values]
    assert missing == [], f"{len(missing)} items missing, e.g. {missing[:5]}"
    wrong = [k for c in clients for k in range(c.index, SMALL_ITEMS, SMALL_CLIENTS)
             if int(values[k].split(b":", 2)[1]) not in c.allowed_versions(k)]
    assert wrong == [], wrong[:5]
    return values


def wait_gone(pid, timeout):
    """A process that is not the test's child (SIGUSR2's new process)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def upgrade_by_signal_then_flag(servers, binary, new_binary, flags, pad, check_pid):
    """Starts `new_binary` with `flags`, fills it, upgrades it under a small
    load by SIGUSR2 (which must start the same command line with --takeover)
    and then by `binary ... --takeover`. Returns (the first process, the pid
    SIGUSR2 started, the last process); the caller checks what its mode serves.
    check_pid: `stats` must name the process SIGUSR2 started."""
    old = start(servers, new_binary, flags, exact=True)
    fill(old.port, pad, SMALL_ITEMS)
    spawned = []

    def by_signal():
        old.proc.send_signal(signal.SIGUSR2)
        assert old.proc.wait(15) == 0, old.describe()
        m = re.search(r"started (\S+) --takeover \(pid (\d+)\)", old.log)
        assert m and m.group(1) == new_binary, old.log
        spawned.append(int(m.group(2)))

    try:
        values = takeover_under_small_load(old.port, pad, by_signal)
        assert old.logged("serves; handed over in")
        signalled = spawned[0]
        if check_pid:
            assert served_pid(old.port) == signalled
        holder = []

        def by_flag():
            holder.append(start(servers, binary, [*flags, "--takeover"], regex=TAKEN_OVER_RE, exact=True))
            assert wait_gone(signalled, 15)

        takeover_under_small_load(old.port, pad, by_flag, values)
        return old, signalled, holder[0]
    finally:
        for pid in spawned:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def test_memcached_command_line_upgrades_by_sigusr2_and_by_takeover(tmp_path, servers):
    """`ithaca --memcached ARGS` (memcached's flags): SIGUSR2 starts the same
    command line with --takeover, and `--takeover` works there too."""
    binary, new_binary = second_copy(tmp_path)
    control = str(tmp_path / "takeover.sock")
    flags = ["--memcached", *root_args(), *BASE_ARGS, "-p", "0", "--takeover-socket", control]
    old, _, last = upgrade_by_signal_then_flag(servers, binary, new_binary, flags, b"m" * 30, check_pid=True)
    assert last.port == old.port
    assert served_pid(old.port) == last.proc.pid


def test_mcrouter_command_line_upgrades_by_sigusr2_and_by_takeover(tmp_path, servers, memcached_factory):
    """`ithaca --mcrouter ARGS` (mcrouter's flags) in front of a real
    memcached: the items live there; the router process is replaced twice
    under load with nothing refused."""
    binary, new_binary = second_copy(tmp_path)
    backend = memcached_factory()
    control = str(tmp_path / "takeover.sock")
    port = free_port()
    config = json.dumps({"pools": {"A": {"servers": [f"{HOST}:{backend.port}"]}}, "route": "PoolRoute|A"})
    flags = ["--mcrouter", "--config-str", config, "-p", str(port), "--listen-addresses", HOST, "--takeover-socket",
             control]
    _, _, last = upgrade_by_signal_then_flag(servers, binary, new_binary, flags, b"r" * 30, check_pid=False)
    # The items are the memcached's, reached through the last process.
    assert len(read_all(backend.port, SMALL_ITEMS)) == SMALL_ITEMS
    assert last.proc.poll() is None
