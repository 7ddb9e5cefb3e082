"""The files `ithaca --mcrouter` writes where mcrouter writes them (issue 32),
in front of a real memcached:

- `--stats-root DIR --stats-logging-interval MS`: DIR/libmcrouter.mcrouter.PORT.
  {stats, startup_options, config_sources_info}, rewritten every interval:
  the stats file holds every `stats` line under mcrouter's prefix (numbers as
  JSON numbers) and follows the traffic (gets through the router show in
  cmd_get); startup_options says the default route given with -R;
  config_sources_info names the config file and its MD5;
- `-a DIR`: failed deletes in mcrouter's asynclog (v1, and v2 with
  `--use-asynclog-version2`), none with `--asynclog-disable`.
"""
import hashlib
import json
import os
import time

import pytest

import conftest
from conftest import HOST, Server, free_port
from mcwire import Conn


def ithaca_path():
    path, is_memcached = conftest.ithaca_binary()
    if is_memcached:
        pytest.fail("this test runs ithaca's mcrouter entry point: it cannot run with ITHACA_BIN=memcached",
                    pytrace=False)
    return os.path.abspath(path)


def wait_until(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


@pytest.fixture
def mcrouter():
    """mcrouter(*argv) -> (Server running `ithaca --mcrouter -p PORT argv`, PORT)."""
    started = []

    def start(*argv):
        port = free_port()
        server = Server("ithaca", [ithaca_path(), "--mcrouter", "-p", str(port), *argv])
        server.port = port
        started.append(server)
        assert server.wait_accepting(10), server.describe()
        return server, port

    yield start
    for s in started:
        rc, killed = s.stop()
        assert rc == 0 and not killed, s.describe()


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def test_stats_root_files(tmp_path, mcrouter, memcached):
    config = tmp_path / "conf.json"
    config.write_text(json.dumps({"pools": {"A": {"servers": [f"{HOST}:{memcached.port}"]}},
                                  "route": "PoolRoute|A"}))
    root = tmp_path / "stats"
    router, port = mcrouter("--config", f"file:{config}", "-R", "/a/b/", "--stats-root", str(root),
                            "--stats-logging-interval", "100")
    prefix = f"libmcrouter.mcrouter.{port}"
    stats_file = root / f"{prefix}.stats"
    options_file = root / f"{prefix}.startup_options"
    sources_file = root / f"{prefix}.config_sources_info"
    wait_until(lambda: all(p.exists() for p in (stats_file, options_file, sources_file)), 10, "the three files")

    stats = read_json(stats_file)
    assert stats[f"{prefix}.uptime"] >= 0
    assert isinstance(stats[f"{prefix}.pid"], int) and stats[f"{prefix}.pid"] == router.proc.pid
    assert read_json(options_file)["default_route"] == "/a/b/"
    assert read_json(sources_file) == {"config_file": str(config),
                                       "mcrouter_config": hashlib.md5(config.read_bytes()).hexdigest()}
    # The stats follow the traffic.
    before = stats[f"{prefix}.cmd_get"]
    with Conn(HOST, port) as c:
        for i in range(7):
            assert c.call(b"get k%d\r\n" % i) == b"END\r\n"
    wait_until(lambda: (read_json(stats_file) or {}).get(f"{prefix}.cmd_get", 0) >= before + 7, 10,
               "cmd_get in the stats file")
    # Every file is rewritten each round.
    now = time.time()
    wait_until(lambda: all(os.path.getmtime(p) > now for p in (stats_file, options_file, sources_file)), 10,
               "the files rewritten")


def asynclog_lines(root):
    lines = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            with open(os.path.join(dirpath, name)) as f:
                lines += [json.loads(line) for line in f if line.strip()]
    return lines


@pytest.mark.parametrize("version2", [False, True])
def test_asynclog_of_failed_deletes(tmp_path, mcrouter, memcached, version2):
    """-a DIR: a delete whose server cannot be reached is answered NOT_FOUND
    and written to mcrouter's asynclog under DIR (hourly folder, one file,
    one JSON line per delete, AS1.0 or with --use-asynclog-version2 AS2.0);
    a delete the server answers is not. With --asynclog-disable the client
    gets the error and nothing is written."""
    config = json.dumps({"pools": {"down": {"servers": ["localhost:0"]},
                                   "up": {"servers": [f"{HOST}:{memcached.port}"]}},
                         "route": {"type": "PrefixSelectorRoute", "policies": {"up:": "PoolRoute|up"},
                                   "wildcard": "PoolRoute|down"}})
    root = tmp_path / "spool"
    flags = ["--use-asynclog-version2"] if version2 else []
    router, port = mcrouter("--config-str", config, "-a", str(root), "-R", "/east/c1/", *flags)
    with Conn(HOST, port) as c:
        assert c.call(b"delete gone1\r\n") == b"NOT_FOUND\r\n"
        assert c.call(b"delete gone2\r\n") == b"NOT_FOUND\r\n"
        assert c.call(b"delete up:there\r\n") == b"NOT_FOUND\r\n"  # memcached's own answer
    wait_until(lambda: len(asynclog_lines(root)) >= 2, 10, "two asynclog lines")
    files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
    assert len(files) == 1 and f"-mcrouter-{port}-t" in os.path.basename(files[0]), files
    lines = asynclog_lines(root)
    assert len(lines) == 2, lines
    for line, key in zip(lines, ["gone1", "gone2"]):
        assert line[2] == "C" and line[1] > 1.6e9
        if version2:
            assert line[0] == "AS2.0"
            assert line[3] == {"a": {"al": 1}, "f": "", "h": "[localhost]:0", "k": key, "p": "down", "r": "east",
                               "s": "mcrouter"}, line
        else:
            assert line[0] == "AS1.0" and line[3] == ["localhost", 0, f"delete {key}\r\n"], line

    off = tmp_path / "off"
    router, port = mcrouter("--config-str", config, "-a", str(off), "--asynclog-disable", *flags)
    with Conn(HOST, port) as c:
        assert c.call(b"delete gone1\r\n").startswith(b"SERVER_ERROR ")
    assert asynclog_lines(off) == []
