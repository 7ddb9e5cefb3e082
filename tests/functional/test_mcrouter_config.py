"""An mcrouter JSON config read as it is: `ithaca --config file.json` starts a
router on it whose PoolRoute puts each key on the memcached mcrouter would
choose (mcrouter_hash.py, an independent Python furc_hash / crc32), and
mcrouter's own sample configs pass --check-config. What ithaca cannot do as
mcrouter would is refused with file:line: message. Route kinds other than
pool cannot be served yet (the route builder refuses them), so those samples
are checked with --check-config only."""
import json

import pytest

from conftest import HOST, ithaca_binary
from mcrouter_hash import furc_hash, mcrouter_crc32
from mcwire import Conn
from test_config_file import run_bounded

# mcrouter's own test configs (facebook/mcrouter, mcrouter/test/*.json, MIT
# licence), as they are.
MCROUTER_SAMPLES = {
    # mcrouter/test/test_basic_failover.json
    "test_basic_failover.json": """{
  "pools": {
    "A.wildcard": {
      "servers": [ "localhost:12345" ]
    },
    "B.wildcard": {
      "servers": [ "localhost:12346" ]
    }
  },
  "route": {
    "type": "FailoverWithExptimeRoute",
    "failover": "PoolRoute|B.wildcard",
    "normal": "PoolRoute|A.wildcard"
  }
}
""",
    # mcrouter/test/test_named_handles_list.json
    "test_named_handles_list.json": """{
  "pools": {
    "A": { "servers": [ "localhost:12345" ] },
    "B": { "servers": [ "localhost:12346" ] }
  },
  "named_handles": [
    {
      "type": "PoolRoute",
      "name": "route:A",
      "pool": "A"
    },
    {
      "type": "PoolRoute",
      "name": "route:B",
      "pool": "B"
    },
    {
      "type": "AllSyncRoute",
      "name": "route:C",
      "children": "NullRoute"
    },
    {
      "type": "AllSyncRoute",
      "name": "route:all",
      "children": [ "route:A", "route:B", "route:C" ]
    }
  ],
  "route": "route:all"
}
""",
    # mcrouter/test/test_basic_all_sync.json
    "test_basic_all_sync.json": """{
  "pools": {
    "A.wildcard": {
      "servers": [ "localhost:12345" ]
    },
    "B.wildcard": {
      "servers": [ "localhost:12346" ]
    },
    "C.wildcard": {
      "servers": [ "localhost:12347" ]
    }
  },
  "route": {
    "type": "AllSyncRoute",
    "children": [
      "PoolRoute|A.wildcard",
      "PoolRoute|B.wildcard",
      "PoolRoute|C.wildcard"
    ]
  }
}
""",
}


def check_config(path):
    binary, is_memcached = ithaca_binary()
    if is_memcached:
        pytest.skip("an ithaca option (--check-config)")
    rc, out, why = run_bounded([binary, "--check-config", "--config", str(path)])
    assert why is None, out
    return rc, out.strip()


@pytest.mark.parametrize("name", sorted(MCROUTER_SAMPLES))
def test_mcrouters_own_sample_configs_are_accepted(tmp_path, name):
    path = tmp_path / name
    path.write_text(MCROUTER_SAMPLES[name])
    assert check_config(path) == (0, "configuration OK")


def test_a_commented_config_with_every_mapped_route_type_is_accepted(tmp_path):
    path = tmp_path / "tree.conf"  # no .json: told by its text
    path.write_text("""// A tree as an mcrouter user writes one, comments included.
{
  "pools": {
    "main": {"servers": ["127.0.0.1:11311", "127.0.0.1:11312"], "server_timeout": 200},
    "gutter": {"servers": ["127.0.0.1:11321"]}, /* the gutter pool */
    "cold": {"servers": ["127.0.0.1:11331"], "weights": [0.5]}
  },
  "named_handles": {
    "main_gutter": {"type": "FailoverWithExptimeRoute", "normal": "PoolRoute|main",
                    "failover": "PoolRoute|gutter", "failover_exptime": 10,
                    "failover_errors": ["connect_error", "timeout", "tko"]}
  },
  "route": {
    "type": "PrefixSelectorRoute",
    "policies": {
      "ops:": {"type": "OperationSelectorRoute", "default_policy": "main_gutter",
               "operation_policies": {"delete": "AllSyncRoute|Pool|main", "get": "MissFailoverRoute|Pool|main"}},
      "warm:": {"type": "WarmUpRoute", "cold": "PoolRoute|cold", "warm": "main_gutter", "exptime": 60},
      "shadow:": {"type": "ShadowRoute", "children": "main_gutter",
                  "shadows": [{"target": "PoolRoute|gutter", "key_fraction_range": [0, 0.1]}]},
      "hash:": {"type": "HashRoute", "children": "Pool|main", "hash_func": "Crc32"},
      "rate:": {"type": "RateLimitRoute", "target": "PoolRoute|main", "rates": {"gets_rate": 100}},
      "exp:": {"type": "ModifyExptimeRoute", "target": "PoolRoute|main", "exptime": 30, "action": "min"},
      "all:": {"type": "AllMajorityRoute", "children": ["PoolRoute|main", "PoolRoute|gutter", "NullRoute"]},
      "any:": "RandomRoute|Pool|main",
      "fast:": "AllFastestRoute|Pool|main",
      "async:": "AllAsyncRoute|Pool|main",
      "first:": "AllInitialRoute|Pool|main",
      "fo:": {"type": "FailoverRoute", "children": ["PoolRoute|main", "PoolRoute|gutter"],
              "failover_limit": {"rate": 0.5}},
      "err:": "ErrorRoute|gone"
    },
    "wildcard": "main_gutter"
  }
}
""")
    assert check_config(path) == (0, "configuration OK")


@pytest.mark.parametrize("text,line,message", [
    ('{\n  "pools": {"A": {"servers": ["127.0.0.1:1"]}},\n  "route": "KeyParseRoute|Pool|A"\n}',
     3, "mcrouter's KeyParseRoute is not supported by ithaca"),
    ('{\n  "pools": {"A": {"servers": ["127.0.0.1:1"]}},\n  "route": "@merge(x)"\n}',
     3, "Raw object property 'route': Macro in string 'merge' (line 3): Merge: 'params' is not array"),
    ('{\n  "pools": {"A": {"servers": ["127.0.0.1:1"],\n    "protocol": "caret"}},\n  "route": "PoolRoute|A"\n}',
     3, "pool 'A': protocol 'caret' is not supported by ithaca (ascii)"),
    ('{\n  "pools": {},\n  "route": "PoolRoute|A"\n}', 3, "Can not read pool: A (it is not under `pools`)"),
    ('{\n  "pools": {"A": {"servers": ["127.0.0.1:1"]}},\n  "regional_pools": {\n    "A": {"servers": ["127.0.0.1:2"]}},'
     '\n  "route": "PoolRoute|A"\n}', 4, "pool 'A' is defined in both pools and regional_pools"),
])
def test_what_ithaca_cannot_do_is_refused_at_its_line(tmp_path, text, line, message):
    path = tmp_path / "mcrouter.json"
    path.write_text(text)
    rc, out = check_config(path)
    assert rc == 1
    assert f"{path}:{line}: {message}" in out, out


def placed_keys(backends, keys):
    """Which backend (index) holds each key, asking every one."""
    holder = {}
    for i, b in enumerate(backends):
        with Conn(b.host, b.port) as c:
            for k in keys:
                if c.call(b"get %s\r\n" % k) != b"END\r\n":
                    assert k not in holder, f"{k} on two servers"
                    holder[k] = i
    return holder


@pytest.mark.parametrize("hash_json,place", [
    ('"PoolRoute|A"', furc_hash),                                             # mcrouter's default: Ch3
    ('{"type": "PoolRoute", "pool": "A", "hash": "Crc32"}', mcrouter_crc32),
    ('{"type": "PoolRoute", "pool": "A", "hash": {"hash_func": "Ch3"}}', furc_hash),
])
def test_pool_route_over_three_memcacheds_places_keys_as_mcrouter(tmp_path, ithaca_factory, memcached_factory,
                                                                  hash_json, place):
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    backends = [memcached_factory() for _ in range(3)]
    servers = json.dumps([f"{HOST}:{b.port}" for b in backends])
    path = tmp_path / "mcrouter.json"
    path.write_text("// three memcacheds behind one PoolRoute\n"
                    "{\n"
                    f'  "pools": {{"A": {{"servers": {servers}}}}}, /* as mcrouter writes them */\n'
                    f'  "route": {hash_json}\n'
                    "}\n")
    router = ithaca_factory(args=["--config", str(path)])  # `ithaca --config file.json -p 0`
    keys = [b"user:%d:profile" % i for i in range(200)] + [b"k%d" % i for i in range(200)]
    with Conn(router.host, router.port) as c:
        c.send(b"".join(b"set %s 0 0 1\r\nv\r\n" % k for k in keys))
        assert c.read_replies(len(keys)) == [b"STORED\r\n"] * len(keys)
        # mcrouter hashes a key only up to its hash stop "|#|".
        stopped = [b"tenant%d|#|item%d" % (i % 7, i) for i in range(30)]
        c.send(b"".join(b"set %s 0 0 1\r\nv\r\n" % k for k in stopped))
        assert c.read_replies(len(stopped)) == [b"STORED\r\n"] * len(stopped)
    holder = placed_keys(backends, keys + stopped)
    assert len(holder) == len(keys) + len(stopped)
    wrong = [(k, i, place(k, 3)) for k, i in holder.items() if k in keys and place(k, 3) != i]
    assert not wrong, f"{len(wrong)} keys on another server than mcrouter's: {wrong[:5]}"
    wrong = [(k, i) for k, i in holder.items() if k in stopped and place(k.split(b"|#|")[0], 3) != i]
    assert not wrong, f"hash-stopped keys not placed by their part before |#|: {wrong[:5]}"
    counts = [sum(1 for k in keys if holder[k] == i) for i in range(3)]
    assert min(counts) > 80, counts


def test_sighup_reloads_an_mcrouter_config(tmp_path, ithaca_factory, memcached_factory):
    """SIGHUP reads the JSON file again: the new pool serves at once; a file
    with a mistake is refused at its line and the running tree stays."""
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    from test_reload import refuse_reload_with, reload_with

    first, second = memcached_factory(), memcached_factory()
    conf = '{{\n  "pools": {{"A": {{"servers": ["{}:{}"]}}}},\n  "route": "PoolRoute|A"\n}}\n'
    path = tmp_path / "mcrouter.json"
    path.write_text(conf.format(HOST, first.port))
    router = ithaca_factory(args=["-v", "--config", str(path)])  # -v: the reload's log line (info)
    with Conn(router.host, router.port) as c:
        assert c.call(b"set k1 0 0 1\r\na\r\n") == b"STORED\r\n"
        reload_with(router, conf.format(HOST, second.port))
        assert c.call(b"set k2 0 0 1\r\nb\r\n") == b"STORED\r\n"
        line = refuse_reload_with(router, conf.format(HOST, second.port).replace("PoolRoute|A", "KeyParseRoute|Pool|A"))
        assert f"{path}:3: mcrouter's KeyParseRoute is not supported by ithaca" in line, line
        assert c.call(b"set k3 0 0 1\r\nc\r\n") == b"STORED\r\n"
    with Conn(first.host, first.port) as c:
        assert c.call(b"get k1 k2 k3\r\n") == b"VALUE k1 0 1\r\na\r\nEND\r\n"
    with Conn(second.host, second.port) as c:
        assert c.call(b"get k1 k2 k3\r\n") == b"VALUE k2 0 1\r\nb\r\nVALUE k3 0 1\r\nc\r\nEND\r\n"


@pytest.mark.parametrize("salt", ["", "salt1"])
def test_hash_route_salt_places_keys_as_mcrouter(tmp_path, ithaca_factory, memcached_factory, salt):
    """mcrouter's HashRoute `salt` (test_same_pool_failover.json's): a key
    goes to child furc_hash(key + salt, n), its hashWithSalt over Ch3."""
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    backends = [memcached_factory() for _ in range(3)]
    servers = json.dumps([f"{HOST}:{b.port}" for b in backends])
    path = tmp_path / "mcrouter.json"
    path.write_text(f'{{"pools": {{"A": {{"servers": {servers}}}}},\n'
                    f' "route": {{"type": "HashRoute", "salt": "{salt}", "children": "Pool|A"}}}}\n')
    router = ithaca_factory(args=["--config", str(path)])
    keys = [b"k%d" % i for i in range(150)]
    with Conn(router.host, router.port) as c:
        c.send(b"".join(b"set %s 0 0 1\r\nv\r\n" % k for k in keys))
        assert c.read_replies(len(keys)) == [b"STORED\r\n"] * len(keys)
    holder = placed_keys(backends, keys)
    wrong = [(k, i) for k, i in holder.items() if furc_hash(k + salt.encode(), 3) != i]
    assert len(holder) == len(keys) and not wrong, wrong[:5]
    if salt:  # the salt moves keys: not where the unsalted route puts them
        assert sum(1 for k in keys if furc_hash(k, 3) != holder[k]) > 50


def test_operation_selector_default_key_is_ignored_as_mcrouter(tmp_path, ithaca_factory, memcached_factory):
    """OperationSelectorRoute's `default` (written in mcrouter's own
    test_same_pool_failover.json) is no key mcrouter reads: the config is
    accepted and requests go to default_policy, never to `default`'s route."""
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    a, b = memcached_factory(), memcached_factory()
    path = tmp_path / "mcrouter.json"
    path.write_text(json.dumps({
        "pools": {"A": {"servers": [f"{HOST}:{a.port}"]}, "B": {"servers": [f"{HOST}:{b.port}"]}},
        "route": {"type": "OperationSelectorRoute", "default_policy": "PoolRoute|A",
                  "operation_policies": {"set": "PoolRoute|A"}, "default": "PoolRoute|B"},
    }))
    router = ithaca_factory(args=["--config", str(path)])
    with Conn(router.host, router.port) as c:
        assert c.call(b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"
    assert placed_keys([a, b], [b"k"]) == {b"k": 0}


def test_regional_pools_are_pools_a_prefix_selector_routes_to(tmp_path, ithaca_factory, memcached_factory):
    """mcrouter's test_regional_replicated_pools.json: nine regional pools,
    one memcached each; PrefixSelectorRoute sends a key starting CI3 to
    mctest.CI3 alone and a key starting with the prefix "CI*" (a plain
    prefix, as mcrouter reads it) to all nine."""
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    backends = [memcached_factory() for _ in range(9)]
    regional = {f"mctest.CI{i}": {"servers": [f"{HOST}:{b.port}"]} for i, b in enumerate(backends)}
    policies = {f"CI{i}": f"PoolRoute|mctest.CI{i}" for i in range(9)}
    policies["CI*"] = {"type": "AllSyncRoute", "children": [f"PoolRoute|mctest.CI{i}" for i in range(9)]}
    path = tmp_path / "regional.json"
    path.write_text(json.dumps({"regional_pools": regional,
                                "route": {"type": "PrefixSelectorRoute", "policies": policies}}, indent=2))
    router = ithaca_factory(args=["--config", str(path)])
    with Conn(router.host, router.port) as c:
        for i in range(9):
            assert c.call(b"set CI%d:key 0 0 2\r\nv%d\r\n" % (i, i)) == b"STORED\r\n"
        assert c.call(b"set CI*:all 0 0 3\r\nall\r\n") == b"STORED\r\n"
    for i, b in enumerate(backends):
        with Conn(b.host, b.port) as c:
            expected = b"".join(b"VALUE CI%d:key 0 2\r\nv%d\r\n" % (j, j) for j in range(9) if j == i)
            assert c.call(b"get " + b" ".join(b"CI%d:key" % j for j in range(9)) + b"\r\n") == expected + b"END\r\n"
            assert c.call(b"get CI*:all\r\n") == b"VALUE CI*:all 0 3\r\nall\r\nEND\r\n"
