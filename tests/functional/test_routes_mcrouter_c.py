"""mcrouter's own test configs (mcrouter_corpus/, copied as they are from
facebook/mcrouter's mcrouter/test/*.json, MIT licence in
mcrouter_corpus/LICENSE) served by ithaca in front of real memcacheds, each
`localhost:PORT` of the file mapped to a memcached the test starts; the
assertions are those of mcrouter's Python test of the same name
(test_shadow.py, test_bucketized_poolroute.py, test_shard_splits.py,
test_slow_warmup.py, test_const_shard_hash.py, test_empty_pool.py,
test_mcrouter.py's duplicate servers (both files), test_modify_exptime.py,
test_bigvalue.py), ported. Plus mcrouter's ErrorRoute results, each answered
with the line mcrouter's ascii server writes for it (AsciiSerialized.cpp),
KeySplitRoute (mcrouter has no Python test of it) and test_mcrefill.json
(none uses it)."""
import json
import pathlib
import re
import time

import pytest

from conftest import HOST, ithaca_binary
from mcwire import Conn, parse_stats

CONFIGS = pathlib.Path(__file__).parent / "mcrouter_corpus"
ADDRESS = re.compile(r'"(?:localhost|127\.0\.0\.1|\[::1\]):(\d+)"')


def serve(name, tmp_path, ithaca_factory, memcached_factory, text=None, args=()):
    """ithaca on mcrouter config `name` (or `text`), each of its ports a real
    memcached, with more flags `args`. Returns (router, {config port:
    memcached})."""
    if ithaca_binary()[1]:
        pytest.skip("an mcrouter config file")
    text = text if text is not None else (CONFIGS / name).read_text()
    ports = []
    for m in ADDRESS.finditer(text):
        if m.group(1) not in ports:
            ports.append(m.group(1))
    backends = {p: memcached_factory() for p in ports}
    text = ADDRESS.sub(lambda m: f'"{HOST}:{backends[m.group(1)].port}"', text)
    path = tmp_path / name
    path.write_text(text)
    if args:
        return ithaca_factory(args=["--config", str(path), *args], memory_flag=False), backends
    return ithaca_factory(args=["--config", str(path)]), backends


def get(server, key):
    """The value of `key` on `server` (a memcached or the router), or None."""
    with Conn(server.host, server.port) as c:
        reply = c.call(b"get %s\r\n" % key.encode())
    if reply == b"END\r\n":
        return None
    assert reply.startswith(b"VALUE "), reply
    return reply.split(b"\r\n")[1].decode()


def set_(server, key, value, exptime=0):
    with Conn(server.host, server.port) as c:
        return c.call(b"set %s 0 %d %d\r\n%s\r\n" % (key.encode(), exptime, len(value), value.encode()))


def wait_until(what, check, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not within {timeout}s: {what}"
        time.sleep(0.05)


# ---- test_shadow_route.py: a ShadowRoute over several children

def test_shadow_route_over_several_children(tmp_path, ithaca_factory, memcached_factory):
    """test_shadow_route.json: an AllSyncRoute over ShadowRoute over
    "Pool|foo" (one child per server); each shadow's index_range [0, 2]
    covers both children, so each child is shadowed, the keys in
    key_fraction_range [0, 0.1] of SpookyHash copied to both shadow pools.
    The keys are mcrouter's test's own list."""
    router, mc = serve("test_shadow_route.json", tmp_path, ithaca_factory, memcached_factory)
    shadow_list = [5, 7, 13, 33, 43, 46, 58, 71, 83, 85, 89, 91, 93]
    kv = [("f%d" % i, "value%d" % i) for i in range(100)]
    for key, value in kv:
        assert set_(router, key, value) == b"STORED\r\n"
    foo0, foo1, foo_shadow, bar_shadow = (mc[p] for p in ("11710", "11711", "11712", "11722"))
    last = kv[shadow_list[-1]][0]
    wait_until("the shadow copies", lambda: get(foo_shadow, last) and get(bar_shadow, last))
    for i, (key, value) in enumerate(kv):
        assert get(foo0, key) == value and get(foo1, key) == value
        want = value if i in shadow_list else None
        assert get(foo_shadow, key) == want, key
        assert get(bar_shadow, key) == want, key


# ---- test_shadow.py: a PoolRoute's shadows (mcrouter_configs/test_shadow.json)

FOO_0, FOO_1, BAR_0, BAR_1 = "11710", "11711", "11720", "11721"
FOO_SHADOW, FOO_SHADOW_KEYS, BAR_SHADOW = "11712", "11713", "11722"


def set_all_then_wait_for_shadows(router, kv, shadows):
    """Sets every pair through the router, then waits until each shadow
    server in `shadows` ({memcached: keys}) holds its keys: mcrouter's test
    sleeps a second, shadows being asynchronous."""
    with Conn(router.host, router.port) as c:
        c.send(b"".join(b"set %s 0 0 %d\r\n%s\r\n" % (k.encode(), len(v), v.encode()) for k, v in kv))
        assert c.read_replies(len(kv)) == [b"STORED\r\n"] * len(kv)
    values = dict(kv)
    for server, keys in shadows.items():
        wait_until(f"shadow copies on {server.port}",
                   lambda: all(get(server, k) == values[k] for k in keys))


def test_normal_shadow(tmp_path, ithaca_factory, memcached_factory):
    router, mc = serve("test_shadow.json", tmp_path, ithaca_factory, memcached_factory)
    # SpookyHashV2 will choose these values for 0.0 .. 0.1 (mcrouter's words)
    shadow_list = [5, 7, 13, 33, 43, 46, 58, 71, 83, 85, 89, 91, 93]
    kv = [("f%d" % i, "value%d" % i) for i in range(100)]
    shadow_keys = {kv[i][0] for i in shadow_list}
    set_all_then_wait_for_shadows(router, kv, {mc[FOO_SHADOW]: shadow_keys, mc[BAR_SHADOW]: shadow_keys})
    for key, value in kv:
        assert get(mc[FOO_0], key) == value or get(mc[FOO_1], key) == value
        if key in shadow_keys:
            assert get(mc[FOO_SHADOW], key) == value
            assert get(mc[BAR_SHADOW], key) == value
        else:
            assert get(mc[FOO_SHADOW], key) is None, key
            assert get(mc[BAR_SHADOW], key) is None, key
    # the broken and unknown shadows of the list were left out, not built
    assert get(mc[FOO_SHADOW_KEYS], "f5") is None


def test_normal_shadow_specific_keys(tmp_path, ithaca_factory, memcached_factory):
    router, mc = serve("test_shadow.json", tmp_path, ithaca_factory, memcached_factory)
    # hashstop and after should be ignored as far as routing goes
    kv = [("f%d|#|ignored" % i, "value%d" % i) for i in range(101, 111)]
    shadow_keys = {kv[i - 101][0] for i in range(101, 107)}
    set_all_then_wait_for_shadows(router, kv, {mc[FOO_SHADOW_KEYS]: shadow_keys})
    for key, value in kv:
        assert get(mc[FOO_0], key) == value or get(mc[FOO_1], key) == value
        if key in shadow_keys:
            assert get(mc[FOO_SHADOW_KEYS], key) == value
        else:
            assert get(mc[FOO_SHADOW_KEYS], key) is None, key


def test_regional_shadow(tmp_path, ithaca_factory, memcached_factory):
    """foo-regional carries "pool_locality": "region", which mcrouter's code
    never reads: the same servers as foo, its shadow alike."""
    router, mc = serve("test_shadow.json", tmp_path, ithaca_factory, memcached_factory)
    shadow_list = [20, 30, 39, 57, 69, 71]
    kv = [("reg_f%d" % i, "value%d" % i) for i in range(100)]
    shadow_keys = {kv[i][0] for i in shadow_list}
    set_all_then_wait_for_shadows(router, kv, {mc[FOO_SHADOW]: shadow_keys})
    for key, value in kv:
        assert get(mc[FOO_0], key) == value or get(mc[FOO_1], key) == value
        if key in shadow_keys:
            assert get(mc[FOO_SHADOW], key) == value
        else:
            assert get(mc[FOO_SHADOW], key) is None, key


@pytest.mark.parametrize("prefix,shadow_list,holder,other", [
    # a MigrateRoute from pool-migrate-old to pool-migrate-new whose
    # start_time and interval are long past: every key on the new one
    ("b_migrate", [26, 30, 39, 63], BAR_1, BAR_0),
    ("b_old", [10, 33, 35, 43, 45, 46, 47, 62, 85], BAR_0, BAR_1),
    ("b_new", [10, 11, 15, 34, 40, 43, 47, 71, 93], BAR_1, BAR_0),
])
def test_migrated_shadow(tmp_path, ithaca_factory, memcached_factory, prefix, shadow_list, holder, other):
    """test_migrated_shadow, test_migrated_old_shadow and
    test_migrated_new_shadow: named handles (PoolRoutes with shadows) used by
    a prefix, and by a MigrateRoute."""
    router, mc = serve("test_shadow.json", tmp_path, ithaca_factory, memcached_factory)
    kv = [("%s%d" % (prefix, i), "value%d" % i) for i in range(100)]
    shadow_keys = {kv[i][0] for i in shadow_list}
    set_all_then_wait_for_shadows(router, kv, {mc[BAR_SHADOW]: shadow_keys})
    for key, value in kv:
        assert get(mc[holder], key) == value
        assert get(mc[other], key) is None
        if key in shadow_keys:
            assert get(mc[BAR_SHADOW], key) == value
        else:
            assert get(mc[BAR_SHADOW], key) is None, key


# ---- test_const_shard_hash.py


def test_const_shard_hash(tmp_path, ithaca_factory, memcached_factory):
    router, mc = serve("test_const_shard_hash.json", tmp_path, ithaca_factory, memcached_factory)
    mc1, mc2 = mc["11610"], mc["11611"]
    assert set_(router, "foo:0:test", "value0") == b"STORED\r\n"
    assert get(mc1, "foo:0:test") == "value0"
    assert get(mc2, "foo:0:test") is None
    assert set_(router, "foo:1:test", "value1") == b"STORED\r\n"
    assert get(mc1, "foo:1:test") is None
    assert get(mc2, "foo:1:test") == "value1"


# ---- test_empty_pool.py


def test_empty_pool(tmp_path, ithaca_factory, memcached_factory):
    """A pool with `"servers": []` under every kind of route: mcrouter
    answers LOCAL_ERROR "HashRoute with empty children" (to an ascii client:
    SERVER_ERROR and its message)."""
    router, _ = serve("test_empty_pool.json", tmp_path, ithaca_factory, memcached_factory)
    with Conn(router.host, router.port) as c:
        reply = c.call(b"get foo\r\n")
    assert reply.startswith(b"SERVER_ERROR "), reply
    assert b"HashRoute with empty children" in reply, reply


# ---- test_mcrouter.py: TestDuplicateServers


def mcrouter_servers(router):
    """`stats servers` in mcrouter's form: {destination key: value}."""
    with Conn(router.host, router.port) as c:
        return parse_stats(c.call(b"stats servers\r\n"))


def test_duplicate_servers(tmp_path, ithaca_factory, memcached_factory):
    """A server listed twice in a pool is one destination (mcrouter: one
    proxy destination for both): `stats servers` has one line, keyed with
    the default timeout, whose results count every set; `stats
    ithaca_servers` lists the pool's two places, and both are the one
    server, which counted every request."""
    router, mc = serve("test_duplicate_servers.json", tmp_path, ithaca_factory, memcached_factory)
    keys = ["key%d" % i for i in range(40)]
    for k in keys:
        assert set_(router, k, "v") == b"STORED\r\n"
    for k in keys:
        assert get(mc["12345"], k) == "v"
    stats = mcrouter_servers(router)
    key = f"{HOST}:{mc['12345'].port}:ascii:plain:notcompressed-1000"
    assert list(stats) == [key], stats
    assert stats[key].endswith(f"; stored:{len(keys)}"), stats
    with Conn(router.host, router.port) as c:
        lines = c.call(b"stats ithaca_servers\r\n").split(b"\r\n")
    name = f"A.wildcard/{HOST}:{mc['12345'].port}:requests".encode()
    counts = [int(line.split()[2]) for line in lines if line.startswith(b"STAT " + name + b" ")]
    assert counts == [len(keys), len(keys)], lines


def test_duplicate_servers_difftimeouts(tmp_path, ithaca_factory, memcached_factory):
    """The same server in two pools with different timeouts is two
    destinations (mcrouter: one per address and timeout, the timeout in the
    key of `stats servers`): each pool's two places are one server, which
    counted that pool's requests only."""
    router, mc = serve("test_duplicate_servers_difftimeouts.json", tmp_path, ithaca_factory, memcached_factory)
    for i in range(10):
        assert set_(router, "/a/a/ka%d" % i, "v") == b"STORED\r\n"
    for i in range(6):
        assert set_(router, "/b/b/kb%d" % i, "v") == b"STORED\r\n"
    assert get(mc["12345"], "ka0") == "v" and get(mc["12345"], "kb0") == "v"
    stats = mcrouter_servers(router)
    key = f"{HOST}:{mc['12345'].port}:ascii:plain:notcompressed-"
    assert sorted(stats) == [key + "1000", key + "2000"], stats
    # A (server_timeout 1000) took the 10 sets, B (2000) the 6.
    assert stats[key + "1000"].endswith("; stored:10") and stats[key + "2000"].endswith("; stored:6"), stats
    with Conn(router.host, router.port) as c:
        lines = c.call(b"stats ithaca_servers\r\n").split(b"\r\n")

    def requests(pool):
        name = f"{pool}/{HOST}:{mc['12345'].port}:requests".encode()
        return [int(line.split()[2]) for line in lines if line.startswith(b"STAT " + name + b" ")]

    assert requests("A.wildcard") == [10, 10], lines
    assert requests("B.wildcard") == [6, 6], lines


# ---- test_modify_exptime.py


@pytest.fixture
def exptime_router(tmp_path, ithaca_factory, memcached_factory):
    router, mc = serve("test_modify_exptime.json", tmp_path, ithaca_factory, memcached_factory)
    return router, mc["12345"]


def test_modify_negative_exptime(exptime_router):
    mcr, mc = exptime_router
    assert set_(mc, "a", "value") == b"STORED\r\n"
    assert get(mcr, "a") == "value"
    # "exptime": -1: the write is stored already expired
    assert set_(mcr, "a", "value2") == b"STORED\r\n"
    assert get(mc, "a") is None
    assert get(mcr, "a") is None


def test_modify_infinite_exptime(exptime_router):
    mcr, mc = exptime_router
    assert set_(mcr, "b", "value", exptime=-1) == b"STORED\r\n"
    assert get(mc, "b") == "value"
    assert get(mcr, "b") == "value"


@pytest.mark.parametrize("key", ["c", "d"])
def test_modify_smaller_and_min_exptime(exptime_router, key):
    """c: set to 2 s; d: capped at 2 s. mcrouter's test sleeps 5 s; this one
    waits for the expiry, at most 5 s."""
    mcr, mc = exptime_router
    assert set_(mcr, key, "value") == b"STORED\r\n"
    assert get(mc, key) == "value"
    assert get(mcr, key) == "value"
    wait_until("the value expired", lambda: get(mc, key) is None, timeout=5.0)
    assert get(mcr, key) is None


# ---- ErrorRoute's results (mcrouter's McResUtil: every error result)

ERROR_LINES = {  # as mcrouter's ascii server writes a reply with no message
    "mc_res_ooo": "SERVER_ERROR out of order",
    "mc_res_timeout": "SERVER_ERROR timeout",
    "mc_res_connect_timeout": "SERVER_ERROR connection timeout",
    "mc_res_connect_error": "SERVER_ERROR connection error",
    "mc_res_busy": "SERVER_ERROR 307 busy",
    "mc_res_try_again": "SERVER_ERROR 302 try again",
    "mc_res_shutdown": "SERVER_ERROR 301 shutdown",
    "mc_res_tko": "SERVER_ERROR unavailable",
    "mc_res_bad_command": "CLIENT_ERROR bad command",
    "mc_res_bad_key": "CLIENT_ERROR bad key",
    "mc_res_bad_flags": "CLIENT_ERROR bad flags",
    "mc_res_bad_exptime": "CLIENT_ERROR bad exptime",
    "mc_res_bad_lease_id": "CLIENT_ERROR bad lease_id",
    "mc_res_bad_cas_id": "CLIENT_ERROR bad cas_id",
    "mc_res_bad_value": "SERVER_ERROR bad value",
    "mc_res_aborted": "SERVER_ERROR aborted",
    "mc_res_client_error": "CLIENT_ERROR",
    "mc_res_local_error": "SERVER_ERROR local error",
    "mc_res_remote_error": "SERVER_ERROR remote error",
    "mc_res_deadline_exceeded": "SERVER_ERROR request deadline exceeded",
    "mc_res_permission_denied": "SERVER_ERROR permission denied",
    "mc_res_hot_key": "SERVER_ERROR hot key",
    "mc_res_overloaded": "SERVER_ERROR overloaded",
}


def test_error_route_results(tmp_path, ithaca_factory, memcached_factory):
    policies = {f"r{i}:": {"type": "ErrorRoute", "result": name} for i, name in enumerate(ERROR_LINES)}
    policies["msg:"] = {"type": "ErrorRoute", "result": "mc_res_busy", "response": "go away"}
    policies["cli:"] = {"type": "ErrorRoute", "result": "mc_res_client_error", "response": "no"}
    policies["plain:"] = "ErrorRoute"
    text = json.dumps({"pools": {"A": {"servers": ["localhost:12345"]}},
                       "route": {"type": "PrefixSelectorRoute", "policies": policies,
                                 "wildcard": "PoolRoute|A"}}, indent=1)
    router, _ = serve("errors.json", tmp_path, ithaca_factory, memcached_factory, text=text)
    with Conn(router.host, router.port) as c:
        for i, (name, line) in enumerate(ERROR_LINES.items()):
            assert c.call(b"get r%d:k\r\n" % i) == line.encode() + b"\r\n", name
            assert c.call(b"set r%d:k 0 0 1\r\nv\r\n" % i) == line.encode() + b"\r\n", name
        assert c.call(b"get msg:k\r\n") == b"SERVER_ERROR go away\r\n"
        assert c.call(b"delete cli:k\r\n") == b"CLIENT_ERROR no\r\n"
        assert c.call(b"get plain:k\r\n") == b"SERVER_ERROR local error\r\n"
        assert c.call(b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"


# ---- test_bucketized_poolroute.py


@pytest.mark.parametrize("name,holder", [
    # key1 maps to bucketId 808 and server #5 with bucketization
    ("mcrouter_test_bucketized_poolroute_bucketized.json", "12349"),
    # key1 maps to server #3 without bucketization
    ("mcrouter_test_bucketized_poolroute_nonbucketized.json", "12347"),
])
def test_bucketized_pool_route(tmp_path, ithaca_factory, memcached_factory, name, holder):
    router, mc = serve(name, tmp_path, ithaca_factory, memcached_factory)
    assert set_(router, "key1", "value1") == b"STORED\r\n"
    assert get(router, "key1") == "value1"
    for port, server in mc.items():
        assert get(server, "key1") == ("value1" if port == holder else None), port


# ---- test_shard_splits.py: a PoolRoute's shard_splits


def call(server, request):
    with Conn(server.host, server.port) as c:
        return c.call(request)


def test_shard_splits_basic(tmp_path, ithaca_factory, memcached_factory):
    router, mc = serve("test_shard_splits.json", tmp_path, ithaca_factory, memcached_factory)
    # set, get, direct get (by split shard id)
    assert set_(router, "a:1:blah", "value") == b"STORED\r\n"
    assert set_(router, "a:1aa:blah", "value_aa") == b"STORED\r\n"
    assert set_(router, "a:1ba:blah", "value_ba") == b"STORED\r\n"
    # a get without a copy named goes to this host's copy, one of the three
    assert get(router, "a:1:blah") in ("value", "value_aa", "value_ba")
    assert get(router, "a:1aa:blah") == "value_aa"
    assert get(router, "a:1ba:blah") == "value_ba"
    assert get(router, "a:1ca:blah") is None
    # under the client's key, whichever copy answered
    assert call(router, b"get a:1:blah\r\n").startswith(b"VALUE a:1:blah 0 ")
    # each copy is a key of its own on the servers: three keys stored
    held = sum(get(m, k) is not None for m in mc.values() for k in ("a:1:blah", "a:1aa:blah", "a:1ba:blah"))
    assert held == 3


def test_shard_splits_update(tmp_path, ithaca_factory, memcached_factory):
    router, mc = serve("test_shard_splits.json", tmp_path, ithaca_factory, memcached_factory)
    # set & delete with splits
    for k in ("a:1:foo", "a:1aa:foo", "a:1ba:foo"):
        assert set_(router, k, "value") == b"STORED\r\n"
    for k in ("a:1:foo", "a:1aa:foo", "a:1ba:foo"):
        assert get(router, k) == "value"
    call(router, b"delete a:1:foo\r\n")
    # the delete reaches every copy (the others in the background)
    wait_until("every copy deleted",
               lambda: all(get(router, k) is None for k in ("a:1:foo", "a:1aa:foo", "a:1ba:foo")))
    # no splits
    assert set_(router, "a:5:bar", "value2") == b"STORED\r\n"
    assert get(router, "a:5:bar") == "value2"
    assert call(router, b"delete a:5:bar\r\n") == b"DELETED\r\n"
    assert get(router, "a:5:bar") is None
    # arithmetic with splits: this host's copy
    assert set_(router, "a:1:counter", "5") == b"STORED\r\n"
    assert call(router, b"incr a:1:counter 1\r\n") == b"6\r\n"
    assert get(router, "a:1:counter") == "6"
    assert call(router, b"decr a:1:counter 3\r\n") == b"3\r\n"
    assert get(router, "a:1:counter") == "3"
    # arithmetic without splits
    assert set_(router, "a:125:counter", "125") == b"STORED\r\n"
    assert call(router, b"incr a:125:counter 1\r\n") == b"126\r\n"
    assert get(router, "a:125:counter") == "126"
    assert get(router, "a:125aa:counter") is None
    assert call(router, b"decr a:125:counter 124\r\n") == b"2\r\n"
    assert get(router, "a:125:counter").rstrip() == "2"  # memcached pads a shorter decr with spaces
    assert get(router, "a:125aa:counter") is None


def test_shard_splits_multiget_answers_under_the_clients_keys(tmp_path, ithaca_factory, memcached_factory):
    """A multi-key get whose keys are split: each key read from this host's
    copy, the reply in the client's order under the client's keys."""
    router, _ = serve("test_shard_splits.json", tmp_path, ithaca_factory, memcached_factory)
    for k, v in (("a:1:x", "one"), ("a:5:y", "five"), ("a:2:z", "two")):
        assert set_(router, k, v) == b"STORED\r\n"
    assert call(router, b"get a:1:x a:5:y nope a:2:z\r\n") == (
        b"VALUE a:1:x 0 3\r\none\r\nVALUE a:5:y 0 4\r\nfive\r\nVALUE a:2:z 0 3\r\ntwo\r\nEND\r\n")


# ---- test_slow_warmup.py: a PoolRoute's slow_warmup


def test_slow_warmup(tmp_path, ithaca_factory, memcached_factory):
    router, mc = serve("test_slow_warmup.json", tmp_path, ithaca_factory, memcached_factory)
    hit_key, miss_key = "abc", "ghi"
    assert set_(mc["11130"], hit_key, "123") == b"STORED\r\n"
    with Conn(router.host, router.port) as c:
        # warm: hits only
        replies = [c.call(b"get abc\r\n") for _ in range(10)]
        assert replies == [b"VALUE abc 0 3\r\n123\r\nEND\r\n"] * 10
        # make this box cold
        for _ in range(100):
            assert c.call(b"get ghi\r\n") == b"END\r\n"
        # now some gets go to the failover target (a NullRoute: a miss).
        # mcrouter's test asks 30 times; each reaches the server with
        # probability about 0.1 + 0.1 (start + hit rate * step), so 60 make a
        # run without a hit (0.8^60) as good as impossible.
        replies = [c.call(b"get abc\r\n") for _ in range(60)]
    hits = replies.count(b"VALUE abc 0 3\r\n123\r\nEND\r\n")
    misses = replies.count(b"END\r\n")
    assert misses > 0 and hits > 0 and hits + misses == 60, replies


# ---- test_bigvalue.py: mcrouter's --big-value-split-threshold

SPLIT_SIZE = 5000
BIG_VALUE_ARGS = ["--big-value-split-threshold", str(SPLIT_SIZE), "--big-value-batch-size", "2",
                  "-m", "256", "-I", "64m"]  # a 21 MB value is read from the client whole
MC_MSG_FLAG_BIG_VALUE = 0x8000


def test_bigvalue(tmp_path, ithaca_factory, memcached_factory):
    router, mc = serve("test_bigvalue.json", tmp_path, ithaca_factory, memcached_factory, args=BIG_VALUE_ARGS)
    # a series of characters that makes different pieces, the last one
    # shorter than the threshold
    value = b"abc" * (7 * 1000 * 1000 + 5)
    with Conn(router.host, router.port, timeout=60) as c:
        assert c.call(b"set key 0 0 %d\r\n%s\r\n" % (len(value), value)) == b"STORED\r\n"
        reply = c.call(b"get key\r\n")
    header = b"VALUE key %d %d\r\n" % (MC_MSG_FLAG_BIG_VALUE, len(value))
    assert reply.startswith(header), reply[:100]
    assert reply == header + value + b"\r\nEND\r\n"  # not ==-printed: 21 MB
    # on the server: KEY is the chunks' description, each chunk a key of its own
    with Conn(mc["10001"].host, mc["10001"].port) as c:
        meta = c.call(b"get key\r\n")
        m = re.match(rb"VALUE key 32768 \d+\r\n1-(\d+)-(\d+)\r\nEND\r\n$", meta)
        assert m, meta
        chunks, suffix = int(m.group(1)), m.group(2)
        assert chunks == (len(value) + SPLIT_SIZE - 1) // SPLIT_SIZE
        assert c.call(b"get key:0:%s\r\n" % suffix) == b"VALUE key:0:%s 0 5000\r\n%s\r\nEND\r\n" % (
            suffix, value[:SPLIT_SIZE])
        last = value[(chunks - 1) * SPLIT_SIZE:]
        assert c.call(b"get key:%d:%s\r\n" % (chunks - 1, suffix)) == b"VALUE key:%d:%s 0 %d\r\n%s\r\nEND\r\n" % (
            chunks - 1, suffix, len(last), last)


def lease_value(c, key):
    """A lease-get's answer: (token or None, value)."""
    from test_leases import lease_get
    r = lease_get(c, key)
    assert r[0] in ("value", "lease"), r
    return (None, r[2]) if r[0] == "value" else (r[1], r[3])


def test_bigvalue_leases(tmp_path, ithaca_factory, memcached_factory):
    """test_bigvalue_leases (smaller): a lease-set of a big value is split
    as a set is, KEY's metadata written by the lease-set with its token; the
    value is then read whole, by get and lease-get."""
    router, mc = serve("test_bigvalue.json", tmp_path, ithaca_factory, memcached_factory, args=BIG_VALUE_ARGS)
    value = b"xyz" * 4000  # 3 chunks
    with Conn(router.host, router.port) as c:
        token, got = lease_value(c, b"key")
        assert token > 1 and got == b""
        assert lease_value(c, b"key") == (1, b"")  # a hot miss
        assert c.call(b"lease-set key %d 0 0 %d\r\n%s\r\n" % (token, len(value), value)) == b"STORED\r\n"
        assert lease_value(c, b"key") == (None, value)
        assert c.call(b"get key\r\n") == b"VALUE key %d %d\r\n%s\r\nEND\r\n" % (
            MC_MSG_FLAG_BIG_VALUE, len(value), value)
    with Conn(mc["10001"].host, mc["10001"].port) as c:
        assert re.match(rb"VALUE key 32768 \d+\r\n1-3-\d+\r\nEND\r\n$", c.call(b"get key\r\n"))


def test_bigvalue_lease_get_missing_a_chunk_gets_a_token(tmp_path, ithaca_factory, memcached_factory):
    """test_bigvalue_leases_hit_meta_miss_piece: the metadata is there, a
    chunk is not: the metadata is invalidated and the lease-get answered with
    a token, which fills the key anew."""
    router, mc = serve("test_bigvalue.json", tmp_path, ithaca_factory, memcached_factory, args=BIG_VALUE_ARGS)
    value = b"a" * SPLIT_SIZE + b"a"
    with Conn(router.host, router.port) as c:
        assert c.call(b"set key %d 0 8\r\n1-2-1234\r\n" % MC_MSG_FLAG_BIG_VALUE) == b"STORED\r\n"
        assert c.call(b"set key:0:1234 0 0 %d\r\n%s\r\n" % (SPLIT_SIZE, value[:SPLIT_SIZE])) == b"STORED\r\n"
        assert c.call(b"set key:1:1234 0 0 1\r\na\r\n") == b"STORED\r\n"
        assert lease_value(c, b"key") == (None, value)
        assert c.call(b"delete key:1:1234\r\n") == b"DELETED\r\n"
        token, got = lease_value(c, b"key")
        assert token > 1 and got == b""  # no metadata shown as a stale value
        assert c.call(b"lease-set key %d 0 0 3\r\nnew\r\n" % token) == b"STORED\r\n"
        assert c.call(b"get key\r\n") == b"VALUE key 0 3\r\nnew\r\nEND\r\n"


def test_bigvalue_read_from_hand_made_chunks(tmp_path, ithaca_factory, memcached_factory):
    """test_bigvalue_leases_hit_meta_miss_piece's first half: chunks written
    by hand as mcrouter writes them are read back whole; one deleted makes
    the key a miss."""
    router, _ = serve("test_bigvalue.json", tmp_path, ithaca_factory, memcached_factory, args=BIG_VALUE_ARGS)
    value = b"a" * SPLIT_SIZE + b"a"
    with Conn(router.host, router.port) as c:
        assert c.call(b"set key %d 0 8\r\n1-2-1234\r\n" % MC_MSG_FLAG_BIG_VALUE) == b"STORED\r\n"
        assert c.call(b"set key:0:1234 0 0 %d\r\n%s\r\n" % (SPLIT_SIZE, value[:SPLIT_SIZE])) == b"STORED\r\n"
        assert c.call(b"set key:1:1234 0 0 1\r\na\r\n") == b"STORED\r\n"
        assert c.call(b"get key other\r\n") == b"VALUE key %d %d\r\n%s\r\nEND\r\n" % (
            MC_MSG_FLAG_BIG_VALUE, len(value), value)
        assert c.call(b"delete key:1:1234\r\n") == b"DELETED\r\n"
        assert c.call(b"get key\r\n") == b"END\r\n"
        # flagged but no chunk description: a miss (mcrouter's DefaultReply)
        assert c.call(b"set key %d 0 4\r\njunk\r\n" % MC_MSG_FLAG_BIG_VALUE) == b"STORED\r\n"
        assert c.call(b"get key\r\n") == b"END\r\n"
        # a key too long for its chunks' keys: the write is refused, as the
        # chunk writes would be
        long_key = b"L" * 230
        assert c.call(b"set %s 0 0 %d\r\n%s\r\n" % (long_key, len(value), value)) == b"CLIENT_ERROR bad key\r\n"
        assert c.call(b"get %s\r\n" % long_key) == b"END\r\n"
        # a value at the threshold is stored as it is
        small = b"s" * SPLIT_SIZE
        assert c.call(b"set small 5 0 %d\r\n%s\r\n" % (SPLIT_SIZE, small)) == b"STORED\r\n"
        assert c.call(b"get small\r\n") == b"VALUE small 5 %d\r\n%s\r\nEND\r\n" % (SPLIT_SIZE, small)


# ---- KeySplitRoute (no Python test of mcrouter's: its KeySplitRoute.h)


def key_split_router(tmp_path, ithaca_factory, memcached_factory, options):
    text = json.dumps({"pools": {"A": {"servers": ["localhost:12345"]}},
                       "route": {"type": "KeySplitRoute", "destination": "PoolRoute|A", "replicas": 3, **options}})
    router, mc = serve("key_split.json", tmp_path, ithaca_factory, memcached_factory, text=text)
    return router, mc["12345"]


def test_key_split_all_sync_writes_and_deletes_every_replica(tmp_path, ithaca_factory, memcached_factory):
    router, mc = key_split_router(tmp_path, ithaca_factory, memcached_factory, {"all_sync": True})
    replicas = ["hot", "hot::1", "hot::2"]
    assert set_(router, "hot", "v") == b"STORED\r\n"
    wait_until("every replica written", lambda: all(get(mc, k) == "v" for k in replicas))
    assert get(router, "hot") == "v"
    assert call(router, b"get hot\r\n") == b"VALUE hot 0 1\r\nv\r\nEND\r\n"  # the client's key
    assert call(router, b"delete hot\r\n") == b"DELETED\r\n"
    wait_until("every replica deleted", lambda: all(get(mc, k) is None for k in replicas))
    # a hash stop: the replica number goes before it
    assert set_(router, "a|#|b", "w") == b"STORED\r\n"
    wait_until("replicas before the hash stop", lambda: all(get(mc, k) == "w" for k in ["a|#|b", "a::1|#|b", "a::2|#|b"]))


def test_key_split_reads_and_writes_one_replica(tmp_path, ithaca_factory, memcached_factory):
    """Without all_sync a set reaches this host's replica only; a get reads
    that one; a delete still reaches all."""
    router, mc = key_split_router(tmp_path, ithaca_factory, memcached_factory, {"all_sync": False})
    replicas = ["k", "k::1", "k::2"]
    assert set_(router, "k", "one") == b"STORED\r\n"
    held = [r for r in replicas if get(mc, r) == "one"]
    assert len(held) == 1, held
    for r in replicas:  # written elsewhere: a get reads this host's replica, whichever it is
        assert set_(mc, r, "other" if r != held[0] else "one") == b"STORED\r\n"
    assert get(router, "k") == "one"
    assert call(router, b"get k x\r\n") == b"VALUE k 0 3\r\none\r\nEND\r\n"
    assert call(router, b"delete k\r\n") == b"DELETED\r\n"
    wait_until("every replica deleted", lambda: all(get(mc, r) is None for r in replicas))


def test_key_split_first_hit(tmp_path, ithaca_factory, memcached_factory):
    """first_hit: a get asks every replica and answers the first hit."""
    router, mc = key_split_router(tmp_path, ithaca_factory, memcached_factory, {"all_sync": False, "first_hit": True})
    assert set_(mc, "f::2", "only") == b"STORED\r\n"
    assert call(router, b"get f\r\n") == b"VALUE f 0 4\r\nonly\r\nEND\r\n"
    assert call(router, b"get g\r\n") == b"END\r\n"


# ---- McRefillRoute (mcrouter_configs/test_mcrefill.json; no Python test uses it)


def test_mcrefill(tmp_path, ithaca_factory, memcached_factory):
    """A get primary misses is read from refill and the value added back to
    primary; what primary holds is answered from it."""
    router, mc = serve("test_mcrefill.json", tmp_path, ithaca_factory, memcached_factory)
    primary, refill = mc["5000"], mc["5001"]
    assert set_(refill, "r", "from-refill") == b"STORED\r\n"
    assert get(router, "r") == "from-refill"
    wait_until("refilled into primary", lambda: get(primary, "r") == "from-refill")
    assert set_(primary, "p", "primary") == b"STORED\r\n"
    assert set_(refill, "p", "stale") == b"STORED\r\n"
    assert get(router, "p") == "primary"
    assert set_(router, "w", "x") == b"STORED\r\n"  # writes go to primary
    assert get(primary, "w") == "x" and get(refill, "w") is None
