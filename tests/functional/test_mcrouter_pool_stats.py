"""mcrouter's --pool-stats-config-file through `ithaca --mcrouter` (issue 32),
with real memcached backends and a server that never answers, as mcrouter's
test_poolstats: the pools named in the file's "stats_enabled_pools" get
GROUP.requests.sum, .final_result_error.sum, .connections, .duration_us.avg
and .total_duration_us.avg, in `stats` and in the --stats-root stats file.

The routes are test_poolstats.json's: west and west.1 (both counted in the
group "west": the longest listed name that prefixes a pool's), east (a
server that accepts and never answers: every request an error), north (a
failover from south, which never answers, to north): south is each north
request's first group, so south counts the final results (no errors: north
answered) and north's total_duration_us stays 0.
"""
import json
import socket
import subprocess

import pytest

from conftest import HOST, free_port
from mcwire import Conn, parse_stats
from test_mcrouter_files import ithaca_path, mcrouter, read_json, wait_until  # noqa: F401 (fixture)

COUNT = 20
GROUPS = ["twmemcache.CI.west", "twmemcache.CI.east", "twmemcache.CI.north", "twmemcache.CI.south"]
SUFFIXES = [".requests.sum", ".final_result_error.sum", ".connections", ".duration_us.avg",
            ".total_duration_us.avg"]
TIMEOUT_MS = 200


@pytest.fixture
def silent_servers():
    """silent_servers() -> the port of a new server that accepts connections
    (the kernel's backlog) and never answers (mcrouter's SleepServer)."""
    socks = []

    def make():
        s = socket.socket()
        s.bind((HOST, 0))
        s.listen(64)
        socks.append(s)
        return s.getsockname()[1]

    yield make
    for s in socks:
        s.close()


def poolstats_config(west1, west, north, south, east, wc):
    pools = {"twmemcache.CI.west.1": west1, "twmemcache.CI.west": west, "twmemcache.CI.north": north,
             "twmemcache.CI.south": south, "twmemcache.CI.east": east, "wc": wc}
    return {
        "pools": {name: {"servers": [f"{HOST}:{port}"]} for name, port in pools.items()},
        "route": {
            "type": "PrefixSelectorRoute",
            "policies": {
                "twmemcache.CI.west.1": "PoolRoute|twmemcache.CI.west.1",
                "twmemcache.CI.west": "PoolRoute|twmemcache.CI.west",
                "twmemcache.CI.east": "PoolRoute|twmemcache.CI.east",
                "twmemcache.CI.north": {"type": "FailoverRoute",
                                        "children": ["PoolRoute|twmemcache.CI.south",
                                                     "PoolRoute|twmemcache.CI.north"]},
            },
            "wildcard": "PoolRoute|wc",
        },
    }


def group_lines(stats):
    return {k: v for k, v in stats.items() if any(k.endswith(g + s) for g in GROUPS for s in SUFFIXES)}


def test_pool_stats_groups(tmp_path, mcrouter, memcached_factory, silent_servers):  # noqa: F811
    west1, west, north = memcached_factory(), memcached_factory(), memcached_factory()
    config = tmp_path / "conf.json"
    # As in mcrouter's test, south, east and wc are servers of their own.
    config.write_text(json.dumps(poolstats_config(west1.port, west.port, north.port, silent_servers(),
                                                  silent_servers(), silent_servers())))
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"stats_enabled_pools": GROUPS}))
    root = tmp_path / "stats"
    router, port = mcrouter("--config", f"file:{config}", f"--pool-stats-config-file={groups}",
                            "--timeouts-until-tko=50", "--num-proxies=4", "-t", str(TIMEOUT_MS),
                            "--stats-root", str(root), "--stats-logging-interval", "100")
    with Conn(HOST, port) as c:
        for i in range(4 * COUNT):
            pool = ["west", "west.1", "north", "east"][i % 4]
            reply = c.call(b"get twmemcache.CI.%s:%d:|#|id=123\r\n" % (pool.encode(), i))
            if pool == "east":
                assert reply.startswith(b"SERVER_ERROR"), reply
            else:
                assert reply == b"END\r\n", reply
        stats = parse_stats(c.call(b"stats\r\n"))

    def g(name):
        return int(stats["twmemcache.CI." + name])

    assert len(group_lines(stats)) == len(GROUPS) * len(SUFFIXES), group_lines(stats)
    # east: every request reached it and failed (timed out).
    assert g("east.requests.sum") == COUNT and g("east.final_result_error.sum") == COUNT
    assert g("east.duration_us.avg") >= TIMEOUT_MS * 1000 * 0.9
    assert g("east.total_duration_us.avg") >= g("east.duration_us.avg")
    # west: its own pool and west.1's, one connection each.
    assert g("west.requests.sum") == 2 * COUNT and g("west.final_result_error.sum") == 0
    assert g("west.connections") == 2
    assert 0 < g("west.duration_us.avg") <= g("west.total_duration_us.avg")
    # north: the failover's second child answered every request, first for none.
    assert g("north.requests.sum") == COUNT and g("north.final_result_error.sum") == 0
    assert g("north.connections") == 1
    assert g("north.duration_us.avg") > 0 and g("north.total_duration_us.avg") == 0
    # south: first for every north request; its timeouts were failed over, so
    # the final results were no errors; the total includes the failover.
    assert g("south.requests.sum") == COUNT and g("south.final_result_error.sum") == 0
    assert g("south.duration_us.avg") >= TIMEOUT_MS * 1000 * 0.9
    assert g("south.total_duration_us.avg") >= g("south.duration_us.avg")
    # A connection whose reply timed out stays open for the late reply (as
    # mcrouter's does): one to each silent server, as mcrouter's test wants.
    assert g("east.connections") == 1 and g("south.connections") == 1

    # The stats file holds the same lines under mcrouter's prefix.
    prefix = f"libmcrouter.mcrouter.{port}."
    stats_file = root / f"{prefix}stats"

    def in_file():
        data = read_json(stats_file) or {}
        return data.get(prefix + "twmemcache.CI.east.requests.sum") == COUNT and data

    wait_until(in_file, 10, "the groups' counts in the stats file")
    data = read_json(stats_file)
    want = {prefix + k: int(v) for k, v in group_lines(stats).items()}
    assert {k: v for k, v in data.items() if k in want} == want
    assert len(group_lines(data)) == len(want)


def test_no_groups_no_lines(tmp_path, mcrouter, memcached):  # noqa: F811
    config = json.dumps({"pools": {"A": {"servers": [f"{HOST}:{memcached.port}"]}}, "route": "PoolRoute|A"})
    router, port = mcrouter("--config-str", config)
    with Conn(HOST, port) as c:
        assert c.call(b"get k\r\n") == b"END\r\n"
        stats = parse_stats(c.call(b"stats\r\n"))
    assert not [k for k in stats if k.endswith((".requests.sum", ".connections"))]


@pytest.mark.parametrize("text, why", [
    ("{\"stats_enabled_pools\": [\"a\",", "line"),
    ("[\"a\"]", "not a JSON object"),
    ("{\"pools\": [\"a\"]}", "\"stats_enabled_pools\" must be an array"),
    ("{\"stats_enabled_pools\": [\"a\", 3]}", "every element must be a string"),
    ("{\"stats_enabled_pools\": [\"a\", \"a\"]}", "listed twice"),
])
def test_bad_pool_stats_file(tmp_path, memcached, text, why):
    groups = tmp_path / "groups.json"
    groups.write_text(text)
    config = json.dumps({"pools": {"A": {"servers": [f"{HOST}:{memcached.port}"]}}, "route": "PoolRoute|A"})
    p = subprocess.run([ithaca_path(), "--mcrouter", "-p", str(free_port()), "--config-str", config,
                        f"--pool-stats-config-file={groups}"], capture_output=True, text=True, timeout=20)
    assert p.returncode != 0
    out = p.stdout + p.stderr
    assert "--pool-stats-config-file" in out and str(groups) in out and why in out, out


def test_missing_pool_stats_file(tmp_path, memcached):
    config = json.dumps({"pools": {"A": {"servers": [f"{HOST}:{memcached.port}"]}}, "route": "PoolRoute|A"})
    missing = tmp_path / "nope.json"
    p = subprocess.run([ithaca_path(), "--mcrouter", "-p", str(free_port()), "--config-str", config,
                        f"--pool-stats-config-file={missing}"], capture_output=True, text=True, timeout=20)
    assert p.returncode != 0 and str(missing) in p.stdout + p.stderr
