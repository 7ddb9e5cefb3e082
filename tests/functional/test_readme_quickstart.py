"""README.md's quick start, run as it is written (issue 29).

README marks the quick start's blocks with an HTML comment on the line before
the fence:

  <!-- quickstart: file NAME -->     a config file, written as NAME in the working directory
  <!-- quickstart: run NAME -->      shell commands
  <!-- quickstart: output NAME -->   what `run NAME` prints on stdout, line for line
  <!-- quickstart: install NAME -->  `apt-get install` lines: the packages must be installed
                                     already (apt-get and systemctl would change the host, so
                                     the test runs neither)

Each test walks one step in a network namespace of its own, so the README's
fixed ports (11211, 11311...) are free whatever else runs on the host or
beside it under xdist, in a temporary working directory, with TMPDIR inside
it (a router makes its spool directory there). As a reader has two
terminals, so does a test: a "first terminal" command (a server in the
foreground) runs as a process of its own and is stopped as Ctrl-C stops it
(SIGINT to its process group), after which it must have exited with status 0;
the "second terminal" is one bash fed block after block, so its shell
function and its jobs (`kill %1`) carry over as they do in a terminal.

Only the binary is replaced: `scripts/run.sh` by `$ITHACA_BIN --config
REPO/config/ithaca.yaml` (what the script execs once it has built), and
`build/sources/server/ithaca` by `$ITHACA_BIN`. Every word else is the
README's. The tests also look behind the replies: a key is on the memcached
the README says, the gutter holds what the router wrote there.

Everything started is killed at the end, also on failure: the first-terminal
processes, the second terminal's process group (its memcacheds), then every
process still in the namespace (`ip netns pids`), then the namespace.
"""
import os
import re
import shlex
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import SANITIZER_MARKERS, ithaca_binary
from netns import Namespaces, in_netns

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(REPO, "README.md")
START_TIMEOUT = 30.0   # a sanitized build starts slower
STOP_TIMEOUT = 10.0
BLOCK_TIMEOUT = 30.0

BLOCK = re.compile(r"^<!-- quickstart: (\w+) (\S+) -->\n```[\w-]*\n(.*?)^```\n", re.M | re.S)
MARKER = re.compile(r"<!-- quickstart:.*?-->")

# Every block the tests below use, by (kind, name). A block README adds or
# renames must be used here too (test_readme_marks_the_blocks_the_tests_run).
EXPECTED = {
    ("run", "cache-serve"), ("run", "mc-function"), ("run", "cache-try"), ("output", "cache-try"),
    ("install", "router-install"), ("run", "router-memcacheds"), ("file", "gutter.yaml"),
    ("run", "router-check"), ("output", "router-check"), ("run", "router-serve"),
    ("run", "router-try"), ("output", "router-try"), ("run", "router-fail"), ("output", "router-fail"),
    ("run", "restart-memcached"), ("file", "nutcracker.yml"), ("file", "mcrouter.json"),
    ("run", "foreign-check"), ("output", "foreign-check"),
    ("run", "nutcracker-serve"), ("run", "nutcracker-try"), ("output", "nutcracker-try"),
    ("run", "mcrouter-serve"), ("run", "mcrouter-try"), ("output", "mcrouter-try"),
    ("run", "cleanup"),
    ("run", "flags-serve"), ("run", "flags-try"), ("output", "flags-try"),
}


def readme_blocks():
    """{(kind, name): text}; fails on a marker not followed by a fenced block
    and on a block marked twice."""
    with open(README) as f:
        text = f.read()
    blocks = {}
    for m in BLOCK.finditer(text):
        key = (m.group(1), m.group(2))
        if key in blocks:
            pytest.fail(f"README marks two blocks as quickstart: {key[0]} {key[1]}", pytrace=False)
        blocks[key] = m.group(3)
    if len(MARKER.findall(text)) != len(blocks):
        pytest.fail("README has a quickstart marker that is not on the line before a fenced block",
                    pytrace=False)
    return blocks


def as_run(text, binary):
    """The README's commands with the binary replaced, nothing else."""
    run_sh = f"{shlex.quote(binary)} --config {shlex.quote(os.path.join(REPO, 'config', 'ithaca.yaml'))}"
    return re.sub(r"scripts/run\.sh|build/sources/server/ithaca",
                  lambda m: run_sh if m.group(0) == "scripts/run.sh" else shlex.quote(binary), text)


def lines(text):
    return [line.rstrip("\r") for line in text.splitlines()]


def ask(ns, port, payload, timeout=5.0):
    """One connection to 127.0.0.1:port in namespace ns: payload, then quit;
    the replies until the server closes."""
    def body():
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(payload + b"quit\r\n")
            out = b""
            while chunk := s.recv(65536):
                out += chunk
            return out
    return in_netns(ns, body, timeout=timeout + 5)


def accepting(ns, port):
    def body():
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False
    return in_netns(ns, body, timeout=10)


def wait_until(what, check, timeout, detail=""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    pytest.fail(f"{what} within {timeout:.0f}s{detail}", pytrace=False)


class FirstTerminal:
    """A README command run in the foreground of the first terminal."""

    def __init__(self, ns, cwd, env, name, command, log_path):
        self.name = name
        self.command = command
        self.log_path = log_path
        self.log_file = open(log_path, "wb")
        # `exec`: the command is the process Ctrl-C reaches, as in a terminal,
        # and its exit status is ours to check (bash would report 130).
        self.proc = subprocess.Popen(["ip", "netns", "exec", ns, "bash", "-c", "exec " + command],
                                     cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=self.log_file,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def describe(self):
        return f"{self.name}: {self.command}\n--- its log ---\n{self.log}"

    def wait_listening(self, ns, port):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"exited with {self.proc.returncode} before listening on {port}:\n"
                            f"{self.describe()}", pytrace=False)
            if accepting(ns, port):
                return
            time.sleep(0.05)
        pytest.fail(f"not listening on {port} within {START_TIMEOUT:.0f}s:\n{self.describe()}", pytrace=False)

    def ctrl_c(self):
        """SIGINT to the process group, as Ctrl-C: README says ithaca stops
        gracefully and exits 0."""
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            rc = self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"still running {STOP_TIMEOUT:.0f}s after Ctrl-C:\n{self.describe()}", pytrace=False)
        if rc != 0:
            pytest.fail(f"exited with {rc} after Ctrl-C, not 0:\n{self.describe()}", pytrace=False)
        for marker in SANITIZER_MARKERS:
            if marker in self.log:
                pytest.fail(f"a sanitizer report ({marker!r}):\n{self.describe()}", pytrace=False)

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.log_file.close()


class SecondTerminal:
    """One bash, fed the README's blocks one after the other; each block's
    stdout is returned once a marker echoed after it comes back. Its stderr
    (job notices, memcached's complaints) goes to a file, for failures."""

    def __init__(self, ns, cwd, env, err_path):
        self.err_path = err_path
        self.err_file = open(err_path, "wb")
        self.proc = subprocess.Popen(["ip", "netns", "exec", ns, "bash", "--noprofile", "--norc"],
                                     cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err_file, start_new_session=True)
        self.out = []
        self.changed = threading.Condition()
        self.eof = False
        self.count = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            with self.changed:
                self.out.append(raw.decode(errors="replace"))
                self.changed.notify_all()
        with self.changed:
            self.eof = True
            self.changed.notify_all()

    @property
    def errors(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def run(self, name, text):
        """Runs the block; returns its stdout lines (CR dropped)."""
        self.count += 1
        done = f"__quickstart_block_{self.count}_done__"
        with self.changed:
            start = len(self.out)
        self.proc.stdin.write((text + f"\necho {done}\n").encode())
        self.proc.stdin.flush()
        deadline = time.monotonic() + BLOCK_TIMEOUT
        with self.changed:
            while True:
                got = self.out[start:]
                if got and got[-1].rstrip("\n") == done:
                    return lines("".join(got[:-1]))
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    pytest.fail(f"block `run {name}` did not finish ({'bash ended' if self.eof else 'timed out'}):\n"
                                f"{text}\n--- stdout so far ---\n{''.join(got)}\n--- stderr ---\n{self.errors}",
                                pytrace=False)
                self.changed.wait(left)

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # bash and its jobs (no job control: one group)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.err_file.close()


class Walk:
    """One step of the quick start: a namespace, a working directory, the two
    terminals, and the README's blocks."""

    def __init__(self, tmp_path, short):
        self.binary, is_memcached = ithaca_binary()
        if is_memcached:
            pytest.fail("the quick start runs ithaca's own configs: it cannot run with ITHACA_BIN=memcached",
                        pytrace=False)
        self.blocks = readme_blocks()
        self.spaces = Namespaces("ithaca-qs")
        self.ns = self.spaces.make(short)
        self.cwd = tmp_path / "checkout"
        self.cwd.mkdir()
        (tmp_path / "tmp").mkdir()
        self.tmp_path = tmp_path
        self.env = dict(os.environ, TMPDIR=str(tmp_path / "tmp"), LC_ALL="C")
        self.servers = []
        self.shell = SecondTerminal(self.ns, self.cwd, self.env, tmp_path / "second-terminal.err")

    def block(self, kind, name):
        try:
            return self.blocks[(kind, name)]
        except KeyError:
            pytest.fail(f"README has no block marked `<!-- quickstart: {kind} {name} -->`", pytrace=False)

    def write_file(self, name):
        (self.cwd / name).write_text(self.block("file", name))

    def run(self, name):
        """A second-terminal block; its stdout must be the README's `output`
        block of the same name when there is one."""
        got = self.shell.run(name, as_run(self.block("run", name), self.binary))
        if ("output", name) in self.blocks:
            want = lines(self.blocks[("output", name)])
            assert got == want, (f"`run {name}` printed\n" + "\n".join(got) + "\nwhere README shows\n" +
                                 "\n".join(want) + f"\n--- second terminal's stderr ---\n{self.shell.errors}\n" +
                                 "\n".join(s.describe() for s in self.servers))
        return got

    def serve(self, name, port):
        """A first-terminal block: started, and listening on `port`."""
        command = as_run(self.block("run", name).strip(), self.binary)
        assert "\n" not in command, f"`run {name}` is one command in the foreground: {command!r}"
        server = FirstTerminal(self.ns, self.cwd, self.env, name, command, self.tmp_path / f"{name}.log")
        self.servers.append(server)
        server.wait_listening(self.ns, port)
        return server

    def wait_ports(self, ports, up=True):
        for port in ports:
            wait_until(f"127.0.0.1:{port} {'accepting' if up else 'no longer accepting'}",
                       lambda: accepting(self.ns, port) == up, START_TIMEOUT,
                       f"\n--- second terminal's stderr ---\n{self.shell.errors}")

    def close(self):
        for server in self.servers:
            server.kill()
        self.shell.kill()
        pids = subprocess.run(["ip", "netns", "pids", self.ns], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        self.spaces.close()


@pytest.fixture
def walk(tmp_path):
    w = Walk(tmp_path, "walk")
    try:
        yield w
    finally:
        w.close()


def test_readme_marks_the_blocks_the_tests_run():
    blocks = readme_blocks()
    assert set(blocks) == EXPECTED, (f"README marks {sorted(set(blocks) - EXPECTED)} that no test runs, "
                                     f"and lacks {sorted(EXPECTED - set(blocks))}")


def test_step1_a_cache(walk):
    server = walk.serve("cache-serve", 11211)
    walk.run("mc-function")
    walk.run("cache-try")
    assert ask(walk.ns, 11211, b"get greeting\r\n") == b"VALUE greeting 0 5\r\nhello\r\nEND\r\n"
    server.ctrl_c()


def test_step2_and_3_router_gutter_nutcracker_mcrouter(walk):
    # The packages the install block names are there (the test installs none).
    for line in walk.block("install", "router-install").splitlines():
        words = line.split()
        if words[:2] == ["apt-get", "install"]:
            for package in (w for w in words[2:] if not w.startswith("-")):
                r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
                assert "install ok installed" in r.stdout, f"{package} (README's install block) is not installed"
    walk.run("mc-function")
    walk.run("router-memcacheds")
    walk.wait_ports([11311, 11312, 11313])

    # Step 2: the gutter.
    walk.write_file("gutter.yaml")
    walk.run("router-check")
    router = walk.serve("router-serve", 11211)
    walk.run("router-try")
    # Where README says the keys live.
    assert ask(walk.ns, 11311, b"get user:1\r\n") == b"VALUE user:1 0 5\r\nalice\r\nEND\r\n"
    assert ask(walk.ns, 11312, b"get user:4\r\n") == b"VALUE user:4 0 3\r\nbob\r\nEND\r\n"
    walk.run("router-fail")
    walk.wait_ports([11311], up=False)
    # The write during the failure went to the gutter.
    assert ask(walk.ns, 11313, b"get user:1\r\n") == b"VALUE user:1 0 5\r\nalice\r\nEND\r\n"
    router.ctrl_c()

    # Step 3: the same memcacheds behind a nutcracker.yml, then an mcrouter config.
    walk.run("restart-memcached")
    walk.wait_ports([11311])
    walk.write_file("nutcracker.yml")
    walk.write_file("mcrouter.json")
    walk.run("foreign-check")
    nutcracker = walk.serve("nutcracker-serve", 22121)
    assert not accepting(walk.ns, 11211), "a nutcracker.yml's listeners are its pools' alone"
    walk.run("nutcracker-try")
    # Routed: on one of the pool's two servers, not on the gutter's.
    held = [port for port in (11311, 11312, 11313) if ask(walk.ns, port, b"get k\r\n") != b"END\r\n"]
    assert len(held) == 1 and held[0] in (11311, 11312), f"k is on {held}"
    nutcracker.ctrl_c()
    for port in (11311, 11312):
        ask(walk.ns, port, b"delete k\r\n")
    mcrouter = walk.serve("mcrouter-serve", 5000)
    walk.run("mcrouter-try")
    held = [port for port in (11311, 11312, 11313) if ask(walk.ns, port, b"get k\r\n") != b"END\r\n"]
    assert len(held) == 1 and held[0] in (11311, 11312), f"k is on {held}"
    # mcrouter's PoolRoute spools deletes where README says ($TMPDIR here).
    assert (walk.tmp_path / "tmp" / "ithaca-spool-5000").is_dir()
    mcrouter.ctrl_c()

    walk.run("cleanup")
    walk.wait_ports([11311, 11312, 11313], up=False)


def test_step4_memcached_flags(walk):
    server = walk.serve("flags-serve", 11211)
    walk.run("mc-function")
    walk.run("flags-try")
    server.ctrl_c()
