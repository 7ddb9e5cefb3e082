"""mcrouter configs with JSONM macros (mcrouter's preprocessor): `ithaca
--check-config --preprocessed` prints the expansion as mcrouter's
preprocessed config (keys sorted), a router started on a macro config routes
gets and sets as the expansion says (two real memcacheds), and errors, the
preprocessor's or the reader's on expanded values, name the file's line.
mcrouter_test_same_pool_failover.json is mcrouter's own
(facebook/mcrouter, mcrouter/test/test_same_pool_failover.json, MIT)."""
import json
import pathlib

import pytest

from conftest import HOST, ithaca_binary
from mcwire import Conn
from test_config_file import run_bounded

HERE = pathlib.Path(__file__).parent

# Pools made by a foreach over a constant, a route by a macro with a
# default, vars, a @select and an escaped '@' (line numbers matter below).
MACRO_CONFIG = """// two memcacheds, written with mcrouter's macros
{
  "macros": {
    "backends": { "type": "constDef", "result": { "A": "%s", "B": "%s" } },
    "both": {
      "type": "macroDef",
      "params": [ "first", { "name": "second", "default": "B" } ],
      "result": {
        "type": "AllSyncRoute",
        "children": [ "PoolRoute|%%first%%", "PoolRoute|%%second%%" ]
      }
    },
    "one": { "type": "macroDef", "params": [ "p" ], "result": "PoolRoute|%%p%%" }
  },
  "pools": {
    "type": "foreach",
    "from": "%%backends%%",
    "use": { "%%key%%": { "servers": [ "%%item%%" ] } }
  },
  "route": %s
}
"""


def write_config(tmp_path, a, b, route, name="mcrouter.json"):
    path = tmp_path / name
    path.write_text(MACRO_CONFIG % (f"{HOST}:{a.port}", f"{HOST}:{b.port}", route))
    return path


def run(*args):
    binary, memcached_mode = ithaca_binary()
    if memcached_mode:
        pytest.skip("an ithaca config file")
    return run_bounded([binary, *args])


def holds(server, key):
    with Conn(server.host, server.port) as c:
        return c.call(b"get %s\r\n" % key) != b"END\r\n"


def test_preprocessed_prints_the_expansion_with_sorted_keys(tmp_path, memcached_factory):
    a, b = memcached_factory(), memcached_factory()
    path = write_config(tmp_path, a, b, '{ "vars": { "which": "A" }, "r": "@one(%which%)", "at": "\\\\@home" }')
    rc, out, why = run("--check-config", "--preprocessed", "--config", str(path))
    assert why is None and rc == 0, out
    expected = {
        "pools": {"A": {"servers": [f"{HOST}:{a.port}"]}, "B": {"servers": [f"{HOST}:{b.port}"]}},
        "route": {"at": "@home", "r": "PoolRoute|A"},
    }
    text = out
    assert json.loads(text) == expected
    assert text.strip() == json.dumps(expected, indent=2, sort_keys=True)


def test_mcrouters_own_macro_config_expands_as_mcrouter_does(tmp_path):
    path = tmp_path / "same_pool_failover.json"
    path.write_text((HERE / "mcrouter_test_same_pool_failover.json").read_text())
    rc, out, why = run("--check-config", "--preprocessed", "--config", str(path))
    assert why is None and rc == 0, out
    route = json.loads(out)["route"]
    salted = lambda salt: {"type": "HashRoute", "name": f"salted-pool-A.wildcard-{salt}", "salt": salt,
                           "children": "Pool|A.wildcard"}
    assert route == {
        "type": "OperationSelectorRoute",
        "operation_policies": {
            "delete": "AllSyncRoute|Pool|A.wildcard",
            "get": {"type": "FailoverWithExptimeRoute", "name": "reliable-hash-pool-A.wildcard",
                    "normal": salted(""), "failover": [salted("salt%d" % i) for i in range(5)]},
            "set": "reliable-hash-pool-A.wildcard",
        },
        "default": salted(""),
    }
    # ithaca reads its salts (test_mcrouter_config.py places them), and
    # accepts the OperationSelectorRoute's `default` unread, as mcrouter
    # ignores it (it reads `default_policy`).
    rc, out, why = run("--check-config", "--config", str(path))
    assert why is None and rc == 0, out


def test_a_router_on_a_macro_config_routes_as_the_expansion_says(tmp_path, ithaca_factory, memcached_factory):
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    a, b = memcached_factory(), memcached_factory()
    both = write_config(tmp_path, a, b, '"@both(A)"', "both.json")
    rc, out, why = run("--check-config", "--config", str(both))
    assert rc == 0, out
    router = ithaca_factory(args=["--config", str(both)])
    with Conn(router.host, router.port) as c:
        assert c.call(b"set k1 0 0 2\r\nv1\r\n") == b"STORED\r\n"
        assert c.call(b"get k1\r\n") == b"VALUE k1 0 2\r\nv1\r\nEND\r\n"
    assert holds(a, b"k1") and holds(b, b"k1")  # AllSyncRoute over A and B (B: the default)

    only_b = write_config(tmp_path, a, b, '{ "vars": { "p": "B" }, "type": "define", "result": "@one(%p%)" }',
                          "only_b.json")
    router = ithaca_factory(args=["--config", str(only_b)])
    with Conn(router.host, router.port) as c:
        assert c.call(b"set k2 0 0 2\r\nv2\r\n") == b"STORED\r\n"
        assert c.call(b"get k2\r\n") == b"VALUE k2 0 2\r\nv2\r\nEND\r\n"
    assert holds(b, b"k2") and not holds(a, b"k2")


@pytest.mark.parametrize("route,line,message", [
    # The preprocessor's own error: at the call, naming it.
    ('"@both"', 20, "Raw object property 'route': Macro in string 'both' (line 20): Too few arguments for "
                    "macro both. Expected at least 1 got 0"),
    ('"@nosuch(A)"', 20, "Raw object property 'route': Macro: 'nosuch' not found"),
    # The reader's error on an expanded value: the macro's line that wrote it.
    ('"@both(A, C)"', 10, "Can not read pool: C (it is not under `pools`"),
])
def test_errors_in_macros_name_the_files_line(tmp_path, memcached_factory, route, line, message):
    a, b = memcached_factory(), memcached_factory()
    path = write_config(tmp_path, a, b, route)
    for flags in (["--check-config"], ["--check-config", "--preprocessed"]):
        rc, out, why = run(*flags, "--config", str(path))
        if "--preprocessed" in flags and "pools" in message:
            assert rc == 0, out  # the expansion itself is fine
            continue
        assert rc == 1, out
        assert f"{path}:{line}: {message}" in out, out


def test_config_params_fill_the_configs_variables(tmp_path, ithaca_factory, memcached_factory):
    """mcrouter's test_config_params.py: its test_config_params.json names
    its server's port and its pool as %PORT% and %POOL%, given by
    --config-params."""
    mc = memcached_factory()
    corpus = pathlib.Path(__file__).resolve().parent / "mcrouter_corpus"
    path = tmp_path / "test_config_params.json"
    path.write_text((corpus / "test_config_params.json").read_text())
    params = f"PORT:{mc.port},POOL:A"
    router = ithaca_factory(args=["--config-params", params, "--config", str(path)])
    with Conn(router.host, router.port) as c:
        assert c.call(b"set key 0 0 5\r\nvalue\r\n") == b"STORED\r\n"
        assert c.call(b"get key\r\n") == b"VALUE key 0 5\r\nvalue\r\nEND\r\n"
    with Conn(mc.host, mc.port) as c:
        assert c.call(b"get key\r\n") == b"VALUE key 0 5\r\nvalue\r\nEND\r\n"
    # Without them the variable is unknown, as in mcrouter.
    binary, _ = ithaca_binary()
    rc, out, _why = run_bounded([binary, "--check-config", "--config", str(path)])
    assert rc == 1 and "Param in string: 'PORT' not found" in out, out
    # A malformed pair is refused by the flag itself.
    rc, out, _why = run_bounded([binary, "--check-config", "--config-params", "PORT", "--config", str(path)])
    assert rc != 0 and "expected name:value" in out, out
