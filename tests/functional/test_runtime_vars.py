"""mcrouter's --runtime-vars-file over the wire, with real memcacheds: a
PoolRoute shadow's key_fraction_range_rv takes its range from the file, read
at start and again when the file changes (watched with the config); a file
that is not JSON, or a range that is not one, keeps the running values and
says why in the log."""

import json

import mcwire
from test_mcrouter_cli import started  # noqa: F401 (the fixture)
from test_router import stats, wait_for
from test_ascii_diff import SERVER_ARGS
from conftest import HOST, free_port

KEYS = [b"rv%d" % i for i in range(400)]


def config(main, shadow):
    return json.dumps({
        "pools": {"main": {"servers": [f"{HOST}:{main.port}"]},
                  "shadow": {"servers": [f"{HOST}:{shadow.port}"]}},
        "route": {"type": "PoolRoute", "pool": "main",
                  "shadows": [{"target": "PoolRoute|shadow", "index_range": [0, 1],
                               "key_fraction_range": [0, 0], "key_fraction_range_rv": "kfr"}]},
    })


def set_all(router, shadow, value):
    """Sets every key to `value` through the router, waits until every
    shadow copy is answered; returns the keys the shadow holds with it."""
    with mcwire.Conn(router.host, router.port) as c:
        c.send(b"".join(b"set %s 0 0 1\r\n%s\r\n" % (k, value) for k in KEYS))
        assert c.read_replies(len(KEYS)) == [b"STORED\r\n"] * len(KEYS)
        prefix = f"shadow/{HOST}:{shadow.port}:"

        def copies_answered():
            s = stats(c, "ithaca_servers")  # an mcrouter config: `stats servers` is mcrouter's form
            return s.get(prefix + "requests", "0") == s.get(prefix + "replies")

        wait_for(copies_answered, what="the shadow copies answered")
    with mcwire.Conn(shadow.host, shadow.port) as d:
        return {k for k in KEYS if d.call(b"get %s\r\n" % k) == b"VALUE %s 0 1\r\n%s\r\nEND\r\n" % (k, value)}


def rewrite(router, path, text, reads):
    """Writes the vars file and waits for the watch's reload to read it
    (the `reads`-th read since the start)."""
    path.write_text(text)
    wait_for(lambda: router.log.count("runtime vars ") >= reads, what=f"read {reads} of the runtime vars")


def test_shadow_range_follows_the_runtime_vars_file(started, memcached_factory, tmp_path):  # noqa: F811
    main, shadow = memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS)
    vars_path = tmp_path / "vars.json"
    vars_path.write_text(json.dumps({"kfr": [0, 0.5], "other": "x"}))
    port = free_port()
    router = started(["--config-str", config(main, shadow), "-p", str(port), "--num-proxies", "1", "-v", "1",
                      "--runtime-vars-file", str(vars_path)], port=port)
    assert router.logged("start: runtime vars read from " + str(vars_path)), router.log
    low = set_all(router, shadow, b"a")
    # The file's first half, not the configured [0, 0] (which shadows none).
    assert 0.3 * len(KEYS) < len(low) < 0.7 * len(KEYS), len(low)

    rewrite(router, vars_path, json.dumps({"kfr": [0.5, 1]}), 2)
    high = set_all(router, shadow, b"b")
    assert not low & high and low | high == set(KEYS), (len(low), len(high))

    # Not JSON: logged, the running range stays.
    rewrite(router, vars_path, '{"kfr": [0, 1]', 3)
    assert router.logged("runtime vars " + str(vars_path) + ": not JSON"), router.log
    assert set_all(router, shadow, b"c") == high
    # Not a range: logged, it stays too.
    rewrite(router, vars_path, json.dumps({"kfr": [0.7, 0.2]}), 5)
    assert router.logged(f"runtime vars {vars_path}: kfr is not a range within [0, 1]"), router.log
    assert set_all(router, shadow, b"d") == high
    # The whole space: every key.
    rewrite(router, vars_path, json.dumps({"kfr": [0, 1]}), 6)
    assert set_all(router, shadow, b"e") == set(KEYS)
