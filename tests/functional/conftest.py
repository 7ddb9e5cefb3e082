"""Fixtures that start servers for the functional tests.

ithaca / ithaca_factory
    Starts $ITHACA_BIN with memcached-compatible flags on port 0 and waits for
    its "listening on tcp 127.0.0.1:<PORT>" log line. A missing ITHACA_BIN is a
    test FAILURE, never a skip. ITHACA_BIN=memcached runs the real memcached in
    its place (free port chosen here, no log line), to validate the suite.
memcached / memcached_factory
    Starts a real memcached on a free port, waits until it accepts.

Every process started here is stopped at teardown (SIGTERM, SIGKILL after 5 s),
also when the test fails. A server that died by a signal during the test, or
that printed a sanitizer report, fails the test; so does an ithaca that does
not exit 0 on SIGTERM (its graceful shutdown).
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

HOST = "127.0.0.1"
BASE_ARGS = ["-l", HOST, "-U", "0", "-t", "2", "-m", "64"]
START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "runtime error:", "LeakSanitizer")
LISTEN_RE = re.compile(r"listening on tcp 127\.0\.0\.1:(\d+)")


def free_port():
    """A port that was free a moment ago (the caller retries on a race)."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def root_args():
    # memcached refuses to run as root without -u.
    return ["-u", "root"] if os.geteuid() == 0 else []


class Server:
    """A running server process: host, port, proc, and its captured stderr
    (stdout is merged into it)."""

    def __init__(self, name, argv, stop_signal=signal.SIGTERM, pass_fds=()):
        self.name = name
        self.stop_signal = stop_signal
        self.argv = argv
        self.host = HOST
        self.port = None
        self._lines = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._eof = False
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True, pass_fds=pass_fds)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            with self._changed:
                self._lines.append(raw.decode(errors="replace"))
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    @property
    def log(self):
        with self._lock:
            return "".join(self._lines)

    @property
    def address(self):
        return (self.host, self.port)

    def wait_for_log(self, regex, timeout):
        """Returns the first match of regex in the log, or None if the process
        ended or the timeout passed first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                m = regex.search("".join(self._lines))
                if m or self._eof:
                    return m
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(left)

    def logged(self, text, timeout=10.0):
        """Whether `text` is in the log within `timeout` s: the server's log
        is written by a thread of its own, so a line may trail the reply
        that followed the event it tells of (a loaded machine shows it)."""
        return self.wait_for_log(re.compile(re.escape(text)), timeout) is not None

    def wait_accepting(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                socket.create_connection(self.address, timeout=1).close()
                return True
            except OSError:
                time.sleep(0.02)
        return False

    def stop(self):
        """stop_signal (SIGTERM for ithaca), then SIGKILL after STOP_TIMEOUT. Returns (returncode,
        killed) where killed says SIGKILL was needed."""
        killed = False
        if self.proc.poll() is None:
            self.proc.send_signal(self.stop_signal)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                killed = True
        self._reader.join(2)
        return self.proc.returncode, killed

    def describe(self):
        return f"{self.name} {' '.join(self.argv)}\n--- captured log ---\n{self.log}"


def _crash_report(server, rc_before_stop):
    """A message if the server crashed or reported a sanitizer error. A test
    that provokes a known false report sets server.ignored_report_lines (a
    regex of the lines to disregard) and says why."""
    if rc_before_stop is not None and rc_before_stop < 0:
        return f"{server.name} died by signal {-rc_before_stop} during the test"
    log = server.log
    ignored = getattr(server, "ignored_report_lines", None)
    if ignored is not None:
        log = ignored.sub("", log)
    for marker in SANITIZER_MARKERS:
        if marker in log:
            return f"{server.name} printed a sanitizer report ({marker!r})"
    return None


def ithaca_binary():
    """(path, is_memcached). Fails the test when ITHACA_BIN is not usable."""
    value = os.environ.get("ITHACA_BIN")
    if not value:
        pytest.fail("ITHACA_BIN is not set: point it at the built ithaca binary "
                    "(or ITHACA_BIN=memcached to run the suite against real memcached)",
                    pytrace=False)
    if value == "memcached":
        path = shutil.which("memcached")
        if not path:
            pytest.fail("ITHACA_BIN=memcached but no memcached in PATH", pytrace=False)
        return path, True
    if not (os.path.isfile(value) and os.access(value, os.X_OK)):
        pytest.fail(f"ITHACA_BIN={value!r} is not an executable file (build it first)", pytrace=False)
    return value, False


def memcached_binary():
    """Debian's memcached (1.6.18), the oracle CI uses; MEMCACHED_BIN names
    another one for a hand check (memcached 1.6.45 built from source by
    scripts/peers/build-memcached)."""
    path = os.environ.get("MEMCACHED_BIN") or shutil.which("memcached")
    if not path:
        pytest.fail("memcached is not installed (apt-get install memcached)", pytrace=False)
    return path


def start_memcached_like(name, path, args):
    """Starts a memcached-compatible binary on a free port we choose; retries
    when the port was taken in between."""
    last = None
    for _attempt in range(5):
        port = free_port()
        # memcached's own graceful shutdown takes ~1 s and is not under test.
        server = Server(name, [path, *root_args(), *BASE_ARGS, "-p", str(port), *args],
                        stop_signal=signal.SIGKILL)
        server.port = port
        if server.wait_accepting(START_TIMEOUT):
            return server
        rc, _ = server.stop()
        last = server
        if "Address already in use" in server.log or "failed to listen" in server.log:
            continue
        break
    pytest.fail(f"{name} did not start (exit {last.proc.returncode}):\n{last.describe()}", pytrace=False)


def start_ithaca(args, config_path, memory_flag=True):
    path, is_memcached = ithaca_binary()
    if is_memcached:
        if config_path is not None:
            pytest.fail("this test needs an ithaca config file: it cannot run with ITHACA_BIN=memcached",
                        pytrace=False)
        return start_memcached_like("ithaca(memcached)", path, args)
    extra = ["--config", str(config_path)] if config_path is not None else []
    base = BASE_ARGS
    if not memory_flag:
        # Flags win over the file, at start and at every SIGHUP: without -m the
        # file's cache.memory_limit (default 64m, the same) is what runs.
        i = base.index("-m")
        base = base[:i] + base[i + 2:]
    server = Server("ithaca", [path, *base, "-p", "0", *extra, *args])
    m = server.wait_for_log(LISTEN_RE, START_TIMEOUT)
    if not m:
        rc, _ = server.stop()
        why = f"exited with {rc}" if server.proc.returncode is not None else "timed out"
        pytest.fail(f"ithaca did not log 'listening on tcp 127.0.0.1:<PORT>' within "
                    f"{START_TIMEOUT}s ({why}):\n{server.describe()}", pytrace=False)
    server.port = int(m.group(1))
    return server


class _Servers:
    """Owns the servers a test started and stops them all at teardown."""

    def __init__(self):
        self.servers = []

    def add(self, server):
        self.servers.append(server)
        return server

    def stop_all(self):
        problems = []
        for server in self.servers:
            rc_before = server.proc.poll()
            rc, killed = server.stop()
            problem = _crash_report(server, rc_before)
            if problem is None and killed and server.name == "ithaca":
                problem = f"ithaca did not exit within {STOP_TIMEOUT}s of SIGTERM (killed)"
            # SIGTERM is a graceful shutdown (pooler's signalfd): exit status 0.
            if problem is None and server.name == "ithaca" and rc is not None and rc < 0:
                problem = f"ithaca died by signal {-rc} while stopping"
            elif problem is None and server.name == "ithaca" and rc_before is None and rc != 0:
                problem = f"ithaca exited with status {rc} after SIGTERM"
            if problem:
                problems.append(f"{problem}\n{server.describe()}")
        if problems:
            pytest.fail("\n\n".join(problems), pytrace=False)


@pytest.fixture
def ithaca_factory(tmp_path):
    """ithaca_factory(args=[...], config_text=None, memory_flag=True) -> Server.
    memory_flag=False leaves BASE_ARGS' "-m 64" out, for a test that changes
    cache.memory_limit in the file (a flag would win over it)."""
    owned = _Servers()
    counter = [0]

    def make(args=(), config_text=None, memory_flag=True):
        config_path = None
        if config_text is not None:
            counter[0] += 1
            config_path = tmp_path / f"ithaca-{counter[0]}.yaml"
            config_path.write_text(config_text)
        return owned.add(start_ithaca(list(args), config_path, memory_flag))

    yield make
    owned.stop_all()


@pytest.fixture
def ithaca(ithaca_factory):
    return ithaca_factory()


@pytest.fixture
def memcached_factory():
    """memcached_factory(args=[...]) -> Server (a real memcached)."""
    owned = _Servers()

    def make(args=()):
        return owned.add(start_memcached_like("memcached", memcached_binary(), list(args)))

    yield make
    owned.stop_all()


@pytest.fixture
def memcached(memcached_factory):
    return memcached_factory()


def pytest_configure(config):
    # scripts/test.sh runs the tests marked `alone` after the others, one at a
    # time, with the machine to themselves: a stress run whose model allows a
    # few timeouts under a known load, not under three other workers' load.
    config.addinivalue_line("markers", "alone: run after the parallel tests, by itself (scripts/test.sh)")
