"""scripts/bench/request_path.cc: the cache role's own CPU per request, without sockets.
Its figures only stand if every row really ran the row's requests through the request
loop: the tool itself exits 1 when a batch is not consumed whole, a get misses, a request
is refused, or the store does not hold the prefilled keys. Here: every row runs and
reports, --rows selects, bad usage is refused. The binary is the one meson built beside
$ITHACA_BIN (build/scripts/request_path), or $REQUEST_PATH_BIN."""
import re
import subprocess

from test_bench_loadgen import bench_tool

ROWS = ["get 90% depth16 100B", "multiget10 100B", "set 50% depth16 100B",
        "get 90% depth16 4KiB", "multiget10 4KiB", "set 50% depth16 4KiB",
        "binary get 90% 100B", "binary set 100% 100B", "meta mg 90% 100B", "meta ms 100% 100B"]


def run(*args, timeout=300):
    return subprocess.run([bench_tool("request_path", "REQUEST_PATH_BIN"), *args],
                          capture_output=True, text=True, timeout=timeout)


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
        assert 1 < ns < 1_000_000, (name, ns)


def test_rows_filter_selects_by_regex():
    p = run("--rows", "^meta", "--rounds", "1", "--millis", "10")
    assert p.returncode == 0, p.stderr
    assert list(figures(p.stdout)) == ["meta mg 90% 100B", "meta ms 100% 100B"]


def test_bad_usage_is_refused():
    p = run("--bogus", "1")
    assert p.returncode == 2
    assert "usage: request_path" in p.stderr
