"""Real client libraries through ithaca, compared with a real memcached
(issue 28: pylibmc binary, pymemcache, php-memcached binary and node's
memcached failed their `get` through the router).

Each client library runs one workload, a driver per language in clients/,
against four servers at once: a real memcached (the oracle, Debian's),
ithaca in the cache role, and ithaca as a router in front of a real memcached
with `protocol: meta` and with `protocol: ascii`. Every result each target
gives must equal the oracle's; the test is parametrized by (client, target).

The workload, per library where it has the call: set and get of a small, an
empty, a 284-byte value holding every byte and "\r\nEND\r\n"-style lines, a
100 KB and a 900 KB value (compression off, so they cross the wire whole); a
multi-get of those and a missing key, and one of 50 keys of which 10 are
missing; add (existing, new); replace (existing, missing); append and prepend
(existing, missing); incr and decr (decr below zero, on a missing key, up to
2^63-1, with an initial value where the library sends one);
delete (existing, missing); touch (existing, missing) and gat; gets, then a
cas that succeeds, a cas with the same (now stale) token that conflicts, and
one on a deleted key; raw flags round trip; a key of 250 bytes (the longest);
a 2 s TTL (present at once, gone after 3.2 s); requests without replies
(noreply, binary quiet opcodes, Perl's nowait) followed by a get on the same
connection; 500 sequential set+get on one connection; concurrent clients
(threads, goroutines, a Node pool, pipelined futures) where cheap.

Each driver runs every step against every target in turn, so the TTL sleep is
shared, and prints one JSON line per step and target: {"t", "op", "r"}. A
result is what the library returned (booleans, values, its result codes, its
exception class or error text), never a CAS token: tokens differ from server
to server, so a driver prints whether gets gave one, and each cas's outcome.
Long values are printed as their length and md5. After the run the test also
reads a set of the keys the workload left with a plain `get` from each
target and compares flags and bytes, so flags a library sets by itself (type
bits, compression) are compared too.

No incr or decr of a value of 2^63 or more (so no wrap past 2^64-1):
memcached 1.6.18's safe_strtoull then looks for a '-' with strchr() in the
item's data, which is not NUL-terminated, and so reads on into whatever
follows the item in its slab; a '-' byte there before a zero byte makes it
answer "non-numeric value" (binary status 6, CLIENT_ERROR in text). That
happened to about 4 incrs in 1,000 from Dalli, straight to memcached as well
as through the router, never from ithaca's own cache role: it is the oracle's
(and the router's backend's) noise, not a difference ithaca can fix.

Left out on purpose: keys with a space (a binary client can send one; an
ascii backend cannot carry it, a documented limit), keys over 250 bytes (not
keys to memcached; the libraries differ in whether they send them), and
flush_all (the router refuses it unless the pool allows it).

Libraries: pylibmc (text, binary), pymemcache, php-memcached (text, binary),
Dalli 3.0.6 (binary), spymemcached (text, binary), Cache::Memcached::Fast,
gomemcache, and from npm memcached and memjs (installed into clients/node by
the first test that needs them). Debian packages: scripts/install-deps.sh. A
missing library is a failure, never a skip.
"""

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import conftest
import mcwire
from test_router import router_yaml

CLIENTS_DIR = Path(__file__).parent / "clients"
NODE_DIR = CLIENTS_DIR / "node"
NODE_PACKAGES = {"memcached": "2.2.2", "memjs": "1.3.2"}
SPYMEMCACHED_JAR = "/usr/share/java/spymemcached.jar"
GOMEMCACHE_GOPATH = "/usr/share/gocode"
DRIVER_TIMEOUT = 180     # one driver run, every target (a JVM, the 3.2 s TTL sleep)

ORACLE = "memcached"
TARGETS = ("cache", "router-meta", "router-ascii")

# What the oracle run must show, so that a driver that only errors (and so
# "matches" on every target) fails: (step, a piece of its JSON result).
ORACLE_SANITY = (
    ("get_900k", "<900000 bytes md5 2425d908d12fdec79ed7b72bd4728faf>"),
    ("get_100k", "<100000 bytes md5 cb230f9c558b70354e122781920a476e>"),
    ("get_ttl_before", '"short"'),
    ("sequential_500", "500"),
)

# Keys the workloads leave behind (after the prefix), read back raw from every
# target at the end; a key a library never wrote is a miss everywhere.
RAW_KEYS = ("empty", "binary", "v100k", "v900k", "add_new", "append", "counter", "counter_new",
            "counter_missing", "flags", "m1", "m49", "sm3", "nr1", "nr3", "seq0", "seq499", "conc0-99",
            "conc99", "pipe199")


# --- the libraries ---------------------------------------------------------------

@dataclass
class Client:
    name: str
    lang: str               # the toolchain to prepare (see Toolchains)
    args: tuple = ()        # the driver's first arguments (library, protocol)
    probe: tuple = ()       # a command that exits 0 when the library is installed
    install: str = ""       # the Debian packages, for the failure message


CLIENTS = [
    Client("pylibmc-text", "python", ("pylibmc-text",),
           (sys.executable, "-c", "import pylibmc"), "python3-pylibmc"),
    Client("pylibmc-binary", "python", ("pylibmc-binary",),
           (sys.executable, "-c", "import pylibmc"), "python3-pylibmc"),
    Client("pymemcache", "python", ("pymemcache",),
           (sys.executable, "-c", "import pymemcache"), "python3-pymemcache"),
    Client("php-memcached-text", "php", ("text",),
           ("php", "-r", "exit(class_exists('Memcached') ? 0 : 1);"), "php-cli php-memcached"),
    Client("php-memcached-binary", "php", ("binary",),
           ("php", "-r", "exit(class_exists('Memcached') ? 0 : 1);"), "php-cli php-memcached"),
    Client("dalli", "ruby", (), ("ruby", "-e", "require 'dalli'"), "ruby ruby-dalli"),
    Client("spymemcached-text", "java", ("text",), ("java", "-version"),
           "openjdk-17-jdk-headless libspymemcached-java"),
    Client("spymemcached-binary", "java", ("binary",), ("java", "-version"),
           "openjdk-17-jdk-headless libspymemcached-java"),
    Client("perl-memcached-fast", "perl", (), ("perl", "-MCache::Memcached::Fast", "-e", "1"),
           "libcache-memcached-fast-perl"),
    Client("gomemcache", "go", (), ("go", "version"), "golang-go golang-github-bradfitz-gomemcache-dev"),
    Client("node-memcached", "node", ("memcached",), ("node", "--version"), "nodejs (with npm)"),
    Client("node-memjs", "node", ("memjs",), ("node", "--version"), "nodejs (with npm)"),
]
CLIENTS_BY_NAME = {c.name: c for c in CLIENTS}


class Toolchains:
    """Builds each language's driver once per session: (argv prefix, env) per
    language, or a failure message that every test of that language repeats."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.done = {}

    def driver(self, lang):
        if lang not in self.done:
            try:
                self.done[lang] = ("ok", getattr(self, "_" + lang)())
            except ToolchainError as e:
                self.done[lang] = ("error", str(e))
        status, value = self.done[lang]
        if status == "error":
            pytest.fail(value, pytrace=False)
        return value

    @staticmethod
    def _run(argv, what, timeout=300, **kw):
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise ToolchainError(f"{what}: {e}")
        if p.returncode != 0:
            raise ToolchainError(f"{what} failed (exit {p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
        return p

    def _python(self):
        return [sys.executable, str(CLIENTS_DIR / "python_driver.py")], None

    def _php(self):
        return ["php", str(CLIENTS_DIR / "php_driver.php")], None

    def _ruby(self):
        return ["ruby", str(CLIENTS_DIR / "ruby_driver.rb")], None

    def _perl(self):
        return ["perl", str(CLIENTS_DIR / "perl_driver.pl")], None

    def _java(self):
        if not os.path.exists(SPYMEMCACHED_JAR):
            raise ToolchainError(f"{SPYMEMCACHED_JAR} is missing: apt-get install libspymemcached-java "
                                 "(scripts/install-deps.sh)")
        if not shutil.which("javac"):
            raise ToolchainError("javac is missing: apt-get install openjdk-17-jdk-headless (scripts/install-deps.sh)")
        out = self.workdir / "java"
        out.mkdir(exist_ok=True)
        self._run(["javac", "-cp", SPYMEMCACHED_JAR, "-d", str(out), str(CLIENTS_DIR / "JavaDriver.java")],
                  "javac JavaDriver.java")
        return ["java", "-cp", f"{out}:{SPYMEMCACHED_JAR}", "JavaDriver"], None

    def _go(self):
        if not shutil.which("go"):
            raise ToolchainError("go is missing: apt-get install golang-go golang-github-bradfitz-gomemcache-dev "
                                 "(scripts/install-deps.sh)")
        out = self.workdir / "go"
        out.mkdir(exist_ok=True)
        # Offline, against Debian's packaged source: GOPATH mode, no modules.
        env = dict(os.environ, GO111MODULE="off", GOPATH=GOMEMCACHE_GOPATH, GOFLAGS="",
                   GOCACHE=str(out / "cache"), GOTOOLCHAIN="local")
        self._run(["go", "build", "-o", str(out / "go_driver"), str(CLIENTS_DIR / "go_driver.go")],
                  "go build go_driver.go (needs golang-github-bradfitz-gomemcache-dev)", env=env)
        return [str(out / "go_driver")], None

    def _node(self):
        if not shutil.which("node") or not shutil.which("npm"):
            raise ToolchainError("node or npm is missing: install nodejs (scripts/install-deps.sh)")
        modules = NODE_DIR / "node_modules"
        NODE_DIR.mkdir(exist_ok=True)
        # One install at a time: pytest-xdist's workers share this directory.
        with open(NODE_DIR / ".install-lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not all(_node_package_version(modules, p) == v for p, v in NODE_PACKAGES.items()):
                specs = [f"{p}@{v}" for p, v in NODE_PACKAGES.items()]
                self._run(["npm", "install", "--prefix", str(NODE_DIR), "--no-save", "--no-package-lock",
                           "--no-audit", "--no-fund", *specs], "npm install " + " ".join(specs))
        return ["node", str(CLIENTS_DIR / "node_driver.js")], {"NODE_PATH": str(modules)}


class ToolchainError(Exception):
    pass


def _node_package_version(modules, package):
    try:
        return json.loads((modules / package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


# --- one run of a client against every target ----------------------------------

@dataclass
class Run:
    client: str
    results: dict = field(default_factory=dict)    # target -> [(op, result)]
    raw: dict = field(default_factory=dict)        # target -> {key: [flags, len, md5]}
    start_errors: dict = field(default_factory=dict)
    stop_problems: dict = field(default_factory=dict)
    logs: dict = field(default_factory=dict)       # target -> ithaca's log
    driver_error: str = ""
    stderr: str = ""


def _stop(server):
    """Stops one server with conftest's checks (crash, sanitizer report,
    ithaca's exit status); returns the problem or None."""
    owned = conftest._Servers()
    owned.add(server)
    try:
        owned.stop_all()
    except pytest.fail.Exception as e:
        return str(e)
    return None


def _start_targets(workdir, name, started):
    """{target: (host, port)}, the oracle included; a target that does not
    start is left out (and its error returned), so the others still run."""
    addrs, errors = {}, {}
    oracle = conftest.start_memcached_like("memcached", conftest.memcached_binary(), [])
    started[ORACLE] = [oracle]
    addrs[ORACLE] = oracle.address
    for target in TARGETS:
        try:
            if target == "cache":
                server = conftest.start_ithaca([], None)
                started[target] = [server]
            else:
                backend = conftest.start_memcached_like("memcached", conftest.memcached_binary(), [])
                started[target] = [backend]
                config = workdir / f"{name}-{target}.yaml"
                config.write_text(router_yaml([f"{backend.host}:{backend.port}"],
                                              protocol=target.split("-")[1]))
                server = conftest.start_ithaca([], config)
                started[target].append(server)
            addrs[target] = server.address
        except pytest.fail.Exception as e:
            errors[target] = str(e)
    return addrs, errors


def _read_raw(address, keys):
    """{key: [flags, length, md5]} for the keys a plain text get finds."""
    out = {}
    with mcwire.Conn(*address) as conn:
        for i in range(0, len(keys), 8):
            reply = conn.call(b"get " + b" ".join(k.encode() for k in keys[i:i + 8]) + b"\r\n")
            for key, flags, data, _cas in mcwire.parse_values(reply):
                out[key.decode()] = [flags, len(data), hashlib.md5(data).hexdigest()]
    return out


def _parse(stdout, targets):
    results = {t: [] for t in targets}
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue     # a library's own chatter on stdout
        row = json.loads(line)
        results[targets[row["t"]]].append((row["op"], row["r"]))
    return results


def run_client(client, toolchains, workdir):
    argv, env_extra = toolchains.driver(client.lang)
    try:
        subprocess.run(client.probe, capture_output=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        pytest.fail(f"{client.name}: the library is not installed (apt-get install {client.install}; "
                    "scripts/install-deps.sh)", pytrace=False)
    run = Run(client.name)
    prefix = client.name + "/"
    started = {}
    try:
        addrs, run.start_errors = _start_targets(workdir, client.name, started)
        targets = list(addrs)
        env = dict(os.environ, **(env_extra or {}))
        cmd = [*argv, *client.args, prefix, *(f"{h}:{p}" for h, p in addrs.values())]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=DRIVER_TIMEOUT, env=env,
                               cwd=workdir)
            run.stderr = p.stderr
            if p.returncode != 0:
                run.driver_error = f"the driver exited with {p.returncode}"
            stdout = p.stdout
        except subprocess.TimeoutExpired as e:
            run.driver_error = f"the driver did not finish in {DRIVER_TIMEOUT}s"
            stdout = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            run.stderr = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        run.results = _parse(stdout, targets)
        maxkey = prefix + "maxkey" + "k" * (250 - len(prefix) - len("maxkey"))
        keys = [prefix + k for k in RAW_KEYS] + [maxkey]
        for target, address in addrs.items():
            try:
                run.raw[target] = _read_raw(address, keys)
            except (OSError, AssertionError) as e:
                run.raw[target] = {"error": f"{type(e).__name__}: {e}"}
    finally:
        for target, servers in started.items():
            problems = [m for m in (_stop(s) for s in servers) if m]
            if problems:
                run.stop_problems[target] = "\n".join(problems)
            ithacas = [s for s in servers if s.name == "ithaca"]
            if ithacas:
                run.logs[target] = ithacas[0].log
    return run


@pytest.fixture(scope="module")
def client_runs(tmp_path_factory):
    """client_runs(name) -> Run: the first test of a client runs its driver
    once against the oracle and every target; the other targets' tests read
    the same run."""
    workdir = tmp_path_factory.mktemp("client-libraries")
    toolchains = Toolchains(workdir)
    runs = {}

    def get(name):
        if name not in runs:
            runs[name] = run_client(CLIENTS_BY_NAME[name], toolchains, workdir)
        return runs[name]

    return get


# --- the comparison ------------------------------------------------------------

def _short(value, limit=300):
    s = json.dumps(value)
    return s if len(s) <= limit else s[:limit] + "..."


def _differences(oracle, got):
    """Lines naming each step whose result differs, in workload order."""
    lines = []
    got_ops = [op for op, _ in got]
    oracle_ops = [op for op, _ in oracle]
    if got_ops != oracle_ops:
        lines.append(f"steps differ: the oracle ran {len(oracle_ops)}, this target {len(got_ops)}; "
                     f"first missing: {next((o for o in oracle_ops if o not in got_ops), None)}")
    for (op, want), (_op, have) in zip(oracle, got):
        if want != have:
            lines.append(f"  {op}: memcached {_short(want)}\n  {' ' * len(op)}  ithaca    {_short(have)}")
    return lines


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("client", [c.name for c in CLIENTS])
def test_client_library_matches_memcached(client, target, client_runs):
    run = client_runs(client)
    if target in run.start_errors:
        pytest.fail(f"{target} did not start:\n{run.start_errors[target]}", pytrace=False)

    oracle = run.results.get(ORACLE, [])
    got = run.results.get(target, [])
    report = []
    if run.driver_error:
        report.append(f"{client}: {run.driver_error}; its stderr ends:\n{run.stderr[-3000:]}")
    oracle_by_op = dict(oracle)
    for op, piece in ORACLE_SANITY:
        if piece not in json.dumps(oracle_by_op.get(op)):
            report.append(f"the oracle's own run is wrong (the driver, not ithaca): {op} gave "
                          f"{_short(oracle_by_op.get(op))}, expected it to contain {piece}")
    report += _differences(oracle, got)
    if run.raw.get(target) != run.raw.get(ORACLE):
        keys = sorted(set(run.raw.get(target, {})) | set(run.raw.get(ORACLE, {})))
        report.append("stored items differ (key: memcached [flags, length, md5] / ithaca):")
        report += [f"  {k}: {run.raw.get(ORACLE, {}).get(k)} / {run.raw.get(target, {}).get(k)}"
                   for k in keys if run.raw.get(ORACLE, {}).get(k) != run.raw.get(target, {}).get(k)]
    if target in run.stop_problems:
        report.append(run.stop_problems[target])
    if ORACLE in run.stop_problems:
        report.append(f"the oracle: {run.stop_problems[ORACLE]}")
    if report:
        log = run.logs.get(target, "")
        pytest.fail(f"{client} through ithaca ({target}) differs from memcached:\n" + "\n".join(report)
                    + (f"\n--- ithaca's log (last 3000 bytes) ---\n{log[-3000:]}" if log else ""),
                    pytrace=False)
