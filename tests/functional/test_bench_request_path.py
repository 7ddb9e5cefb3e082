"""scripts/bench/request_path.cc: the cache role's own CPU per request, without sockets.
Its figures only stand if every row really ran the row's requests through the request
loop: the tool itself exits 1 when a batch is not consumed whole, a get misses, a request
is refused, or the store does not hold the prefilled keys. Here: every row runs and
reports, --rows selects, bad usage is refused; and its figure stays a fraction of two baselines
measured in the same test, which move with the machine: what a real memcached spends per request
of the same row, and a fixed zlib workload (so a regression of 10x fails on any CI host, loaded or
not). The binary is the one
meson built beside $ITHACA_BIN (build/scripts/request_path), or $REQUEST_PATH_BIN."""
import json
import os
import re
import subprocess

from test_bench_loadgen import bench_tool

ROWS = ["get 90% depth16 100B", "multiget10 100B", "set 50% depth16 100B",
        "get 90% depth16 4KiB", "multiget10 4KiB", "set 50% depth16 4KiB",
        "binary get 90% 100B", "binary set 100% 100B", "meta mg 90% 100B", "meta ms 100% 100B"]


def run(*args, timeout=300, tool=None):
    return subprocess.run([tool or bench_tool("request_path", "REQUEST_PATH_BIN"), *args],
                          capture_output=True, text=True, timeout=timeout)


# A sanitized build's request path is no measure of its speed: AddressSanitizer
# and UBSan at -O1 made "get 90% depth16 100B" cost 2,180 ns where the release
# build's costs ~150 (CI, 2 cores). The speed check of a sanitized run takes
# the release build's tool when it is there (scripts/test.sh builds and tests
# release first: build/scripts/request_path), else the sanitized one with its
# bounds widened by that measured factor, rounded up.
SANITIZER_FACTOR = 20


def speed_tool():
    """(the request_path to time, how much slower than release it is)."""
    tool = bench_tool("request_path", "REQUEST_PATH_BIN")
    if not os.environ.get("ITHACA_SANITIZED") or os.environ.get("REQUEST_PATH_BIN"):
        return tool, 1
    release = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "scripts", "request_path")
    if os.access(release, os.X_OK):
        return release, 1
    return tool, SANITIZER_FACTOR


def figures(out):
    rows = {}
    for line in out.splitlines()[1:]:
        m = re.fullmatch(r"(.+?)\s+([0-9.]+)", line.strip())
        assert m, line
        rows[m.group(1)] = float(m.group(2))
    return rows


def test_every_row_runs_its_requests_and_reports_a_figure():
    p = run("--rounds", "1", "--millis", "20")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].split() == ["row", "ns/request"]
    rows = figures(p.stdout)
    assert list(rows) == ROWS
    for name, ns in rows.items():
        assert ns > 0, (name, ns)


def test_rows_filter_selects_by_regex():
    p = run("--rows", "^meta", "--rounds", "1", "--millis", "10")
    assert p.returncode == 0, p.stderr
    assert list(figures(p.stdout)) == ["meta mg 90% 100B", "meta ms 100% 100B"]


def test_bad_usage_is_refused():
    p = run("--bogus", "1")
    assert p.returncode == 2
    assert "usage: request_path" in p.stderr


def memcached_ns_per_request(server, duration):
    """A real memcached's CPU (user and system, its kernel TCP work
    included: what /proc/PID/stat counts) per request of scripts/bench/run's
    row "get 90% depth16 100B", driven by the loadgen over the timed window
    (--cpu-pid)."""
    p = subprocess.run([bench_tool("loadgen", "LOADGEN_BIN"), "--host", server.host, "--port", str(server.port),
                        "--threads", "1", "--conns", "8", "--depth", "16", "--get-ratio", "0.9",
                        "--keys", "10000", "--value-size", "100", "--prefill", "--duration", str(duration),
                        "--timeout-ms", "5000", "--cpu-pid", str(server.proc.pid)],
                       capture_output=True, text=True, timeout=duration + 120)
    assert p.returncode == 0, p.stderr
    result = json.loads(next(line for line in p.stdout.splitlines() if line.startswith("{")))
    assert result["errors"] == 0 and result["requests"] > 0, result
    return result["server_cpu_s"] * 1e9 / result["requests"]


def zlib_ns_per_kib():
    """A fixed CPU-bound reference measured here, in this process's CPU time:
    zlib level 6 over 256 KiB of pseudo-random words (the same bytes every
    run), ns per KiB, best of five. Like request_path it is integer code
    running in one core's caches, so a loaded machine slows both alike."""
    import random
    import time
    import zlib
    rng = random.Random(31)
    words = ["".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(2, 9))) for _ in range(500)]
    data = " ".join(rng.choice(words) for _ in range(60000)).encode()[:256 * 1024]
    best = None
    for _ in range(5):
        start = time.thread_time_ns()
        zlib.compress(data, 6)
        spent = time.thread_time_ns() - start
        best = spent if best is None else min(best, spent)
    return best / 256


# The bounds. Measured on the 2-core CI machine under a loaded run (load
# average 13): request_path ~140-180 ns, memcached ~5,000 ns per request
# (ratio ~0.03; on a quiet machine memcached spends some 1,000 ns: ~0.15),
# zlib ~28,000 ns per KiB (ratio ~0.006). A 10x slower request path breaks
# the reference's bound on any machine, loaded or not, and memcached's on a
# quiet one; either bound sits 3 times above what this machine measured.
MAX_RATIO_TO_MEMCACHED = 0.5
MAX_RATIO_TO_REFERENCE = 0.02


def test_the_request_path_costs_a_fraction_of_its_baselines(memcached):
    """request_path's figure (ithaca's own part of a request, in CPU time)
    against two baselines measured in the same run: a real memcached's CPU per
    request of the same row, kernel TCP work and syscalls included (its part
    and the kernel's); and the zlib reference above. Interleaved, each side's
    best of three, so a burst of load on the shared cores meets one
    measurement of each at most."""
    row = "get 90% depth16 100B"
    tool, factor = speed_tool()
    ours, theirs, reference = [], [], []
    for _ in range(3):
        theirs.append(memcached_ns_per_request(memcached, 1))
        reference.append(zlib_ns_per_kib())
        p = run("--rows", "^" + re.escape(row) + "$", "--rounds", "3", "--millis", "200", tool=tool)
        assert p.returncode == 0, p.stderr
        ours.append(figures(p.stdout)[row])
    seen = (f"{tool}: request_path {ours} ns/request, memcached {theirs} ns/request, "
            f"zlib {reference} ns/KiB")
    assert min(ours) / min(theirs) < MAX_RATIO_TO_MEMCACHED * factor, seen
    assert min(ours) / min(reference) < MAX_RATIO_TO_REFERENCE * factor, seen
