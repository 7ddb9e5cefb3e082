"""Loading an mcrouter config through `ithaca --mcrouter` as mcrouter does
(issue 32), with real memcacheds behind:

- a config that cannot be read is "Can not read config from file:PATH" on
  stderr, and the process exits 1 (mcrouter's words, which its users grep);
- an unknown route type is "Unknown RouteHandle: TYPE line: N", N the line
  of the object's "type", as mcrouter counts it;
- `--validate-config` exits 0 on a config that loads, 1 on one that does
  not, without serving;
- `--config-dump-root`: the last config that loaded is kept in mcrouter's
  layout, and a start whose config does not load serves it while it is
  younger than `--max-dumped-config-age`;
- a PoolRoute with `"hash": "Latest"` (mcrouter's LatestRoute over the
  pool's servers): every key goes to one server of the host's drawing; with
  that server stopped they all go to one other (failover_count 2), and none
  to the third.
"""
import json
import os
import re
import signal
import subprocess
import time
import urllib.parse

import pytest

import conftest
from conftest import HOST, Server, free_port
from mcwire import Conn

ERROR_LINE = "Unknown RouteHandle: XYZRoute line: 3"


def ithaca_path():
    path, is_memcached = conftest.ithaca_binary()
    if is_memcached:
        pytest.fail("this test runs ithaca's mcrouter entry point: it cannot run with ITHACA_BIN=memcached",
                    pytrace=False)
    return os.path.abspath(path)


def run(argv, timeout=10):
    """`ithaca --mcrouter argv` to its end: (exit code, stderr)."""
    proc = subprocess.run([ithaca_path(), "--mcrouter", *argv], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return proc.returncode, proc.stderr.decode(errors="replace")


def test_unreadable_config(tmp_path):
    rc, err = run(["-f", "/dev/null/doesnotexist", "-p", str(free_port())])
    assert rc == 1, err
    assert "Can not read config from file:/dev/null/doesnotexist" in err, err


def test_unknown_route_type_names_the_line_of_its_type(tmp_path):
    path = tmp_path / "xyz.json"
    path.write_text('{\n  "route": {\n    "type": "XYZRoute",\n    "pool": {"name": "A", "servers": []}\n  }\n}\n')
    rc, err = run(["--config", f"file:{path}", "-p", str(free_port())])
    assert rc == 1, err
    assert f"{path}:3: {ERROR_LINE}" in err, err
    assert "Can not read config from file:" in err, err


def test_validate_config_exit_codes(tmp_path, memcached):
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"pools": {"A": {"servers": [f"{HOST}:{memcached.port}"]}},
                                "route": "PoolRoute|A"}))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"route": "PoolRoute|nosuchpool"}))
    port = free_port()
    assert run(["--config", f"file:{good}", "-p", str(port), "--validate-config"]) == (0, "")
    rc, err = run(["--config", f"file:{bad}", "-p", str(port), "--validate-config"])
    assert rc == 1 and "nosuchpool" in err, err
    # Validating serves nothing: the port is still free.
    with pytest.raises(ConnectionRefusedError):
        Conn(HOST, port, timeout=1)


def holders(backends, keys):
    """For each backend, how many of `keys` it holds."""
    counts = []
    for b in backends:
        with Conn(HOST, b.port) as c:
            counts.append(sum(c.call(b"get " + k + b"\r\n") != b"END\r\n" for k in keys))
    return counts


def test_latest_hash_sends_every_key_to_one_server_then_fails_over(tmp_path, memcached_factory):
    backends = [memcached_factory() for _ in range(3)]
    cfg = {"pools": {"A": {"servers": [f"{HOST}:{b.port}" for b in backends]}},
           "route": {"type": "PoolRoute", "pool": "A", "hash": {"hash_func": "Latest", "failover_count": 2}}}
    path = tmp_path / "latest.json"
    path.write_text(json.dumps(cfg))
    port = free_port()
    router = Server("ithaca", [ithaca_path(), "--mcrouter", "--config", f"file:{path}", "-p", str(port),
                               "--server-timeout", "500"])
    router.port = port
    try:
        assert router.wait_accepting(10), router.describe()
        keys = [b"key%d" % i for i in range(40)]
        with Conn(HOST, port) as c:
            for k in keys:
                assert c.call(b"set " + k + b" 0 0 1\r\nv\r\n") == b"STORED\r\n"
        counts = holders(backends, keys)
        assert sorted(counts) == [0, 0, len(keys)], counts
        first = counts.index(len(keys))
        backends[first].proc.terminate()  # memcached exits 0 on SIGTERM
        backends[first].proc.wait(10)
        later = [b"later%d" % i for i in range(40)]
        with Conn(HOST, port) as c:
            for k in later:
                assert c.call(b"set " + k + b" 0 0 1\r\nw\r\n") == b"STORED\r\n"
        rest = [b for i, b in enumerate(backends) if i != first]
        assert sorted(holders(rest, later)) == [0, len(later)]
    finally:
        rc, killed = router.stop()
        assert rc == 0 and not killed, router.describe()



def wait_until(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


def test_config_dump_root(tmp_path, memcached_factory):
    """--config-dump-root keeps the last config that loaded (at start and at
    each reload, never a refused one) in mcrouter's layout; a start whose
    config does not load serves that copy while it is younger than
    --max-dumped-config-age, and refuses to start past it."""
    a, b = memcached_factory(), memcached_factory()
    path = tmp_path / "conf.json"
    dump_root = tmp_path / "dumps"
    port = free_port()
    dumped = dump_root / "mcrouter" / str(port) / ("file-" + urllib.parse.quote(str(path), safe="-_.~"))

    def config_for(server):
        return json.dumps({"pools": {"A": {"servers": [f"{HOST}:{server.port}"]}}, "route": "PoolRoute|A"})

    def start(*extra):
        router = Server("ithaca", [ithaca_path(), "--mcrouter", "--config", f"file:{path}", "-p", str(port),
                                   "--config-dump-root", str(dump_root), *extra])
        router.port = port
        return router

    def stop(router):
        rc, killed = router.stop()
        assert rc == 0 and not killed, router.describe()

    path.write_text(config_for(a))
    router = start()
    try:
        assert router.wait_accepting(10), router.describe()
        wait_until(dumped.exists, 5, "the config dumped at start")
        assert dumped.read_text() == config_for(a)
        # A reload that applies the file dumps it; one that is refused does
        # not (SIGHUP: the file watch reloads the same way, later).
        path.write_text(config_for(b))
        router.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: dumped.read_text() == config_for(b), 10, "the reloaded config dumped")
        path.write_text('{"route": "PoolRoute|nosuchpool"}')
        router.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: "reload refused" in router.log, 10, "the bad config refused")
        assert dumped.read_text() == config_for(b)
    finally:
        stop(router)
    # The file is bad now: a start serves the dumped copy (b's pool).
    router = start()
    try:
        assert router.wait_accepting(10), router.describe()
        with Conn(HOST, port) as c:
            assert c.call(b"set dumped 0 0 1\r\nd\r\n") == b"STORED\r\n"
        assert holders([a, b], [b"dumped"]) == [0, 1]
        # The log is read by a thread of the test: waited for, not sampled.
        assert router.wait_for_log(re.compile(r"serving the last valid config, dumped to"), 10), router.log
    finally:
        stop(router)
    # Too old for --max-dumped-config-age: the start fails.
    old = time.time() - 3600
    os.utime(dumped, (old, old))
    rc, err = run(["--config", f"file:{path}", "-p", str(port), "--config-dump-root", str(dump_root),
                   "--max-dumped-config-age", "60"])
    assert rc == 1 and "too old to be trusted" in err, err
