"""mcrouter's own configs for its failover options and route kinds (set B),
read by ithaca as they are, their `localhost:PORT` servers mapped to real
memcacheds this test starts (or to fake_backend.py's servers where a test
needs one to fail in a controlled way), and what mcrouter's Python tests
assert for each, asserted over the wire. Each config is mcrouter's file
(facebook/mcrouter, mcrouter/test/, MIT licence), named above it."""
import json
import signal
import time

import pytest

from conftest import HOST, ithaca_binary
from fake_backend import FakeBackend
from mcrouter_hash import furc_hash
from mcwire import Conn, parse_stats
from test_leases import lease_get, lease_set

# mcrouter/test/test_custom_failover.json (MIT licence)
CUSTOM_FAILOVER = """{
  "pools": {
    "A.wildcard": {
      "servers": [ "localhost:12345" ]
    },
    "B.wildcard": {
      "servers": [ "localhost:12346" ]
    }
  },
  "route": {
    "type": "FailoverRoute",
    "children": ["PoolRoute|A.wildcard", "PoolRoute|B.wildcard"],
    "failover_errors": ["remote_error"]
  }
}
"""

# mcrouter/test/test_custom_failover_override.json (MIT licence)
CUSTOM_FAILOVER_OVERRIDE = """{
  "pools": {
    "A.wildcard": {
      "servers": [ "localhost:12345" ]
    },
    "B.wildcard": {
      "servers": [ "localhost:12346" ]
    }
  },
  "route": {
    "type": "FailoverRoute",
    "children": ["PoolRoute|A.wildcard", "PoolRoute|B.wildcard"],
    "failover_errors": {
      "gets": ["remote_error"],
      "updates": []
    }
  }
}
"""

# mcrouter/test/test_deterministic_failover.json (MIT licence)
DETERMINISTIC_FAILOVER = """{
  "pools": {
    "A.wildcard": {
      "servers": [ "localhost:5001",
                   "localhost:5002",
                   "localhost:5003",
                   "localhost:5004",
                   "localhost:5005"]
    }
  },
  "route": {
    "type": "FailoverRoute",
    "children": ["PoolRoute|A.wildcard",
                {
                  "type":"Pool",
                  "name":"B1",
                  "protocol":"caret",
                  "servers": [ "localhost:5006",
                               "localhost:5007",
                               "localhost:5008",
                               "localhost:5009",
                               "localhost:5010",
                               "localhost:5011",
                               "localhost:5012",
                               "localhost:5013",
                               "localhost:5014",
                               "localhost:5015",
                               "localhost:5016",
                               "localhost:5017"]
                }
                ],
    "failover_policy": {
      "type": "DeterministicOrderPolicy",
      "max_tries": 10,
      "max_error_tries": 3
    }
  }
}
"""

# mcrouter/test/test_deterministic_failover_big_retries.json (MIT licence)
DETERMINISTIC_FAILOVER_BIG_RETRIES = """{
  "pools": {
    "A.wildcard": {
      "servers": [ "localhost:5001",
                   "localhost:5002",
                   "localhost:5003",
                   "localhost:5004",
                   "localhost:5005"]
    }
  },
  "route": {
    "type": "FailoverRoute",
    "children": ["PoolRoute|A.wildcard",
                {
                  "type":"Pool",
                  "name":"B1",
                  "protocol":"caret",
                  "servers": [ "localhost:5006",
                               "localhost:5007",
                               "localhost:5008",
                               "localhost:5009",
                               "localhost:5010",
                               "localhost:5011",
                               "localhost:5012",
                               "localhost:5013",
                               "localhost:5014",
                               "localhost:5015",
                               "localhost:5016",
                               "localhost:5017"]
                }
                ],
    "failover_policy": {
      "type": "DeterministicOrderPolicy",
      "max_tries": 100,
      "max_error_tries": 300
    }
  }
}
"""

# mcrouter/test/test_get_failover_with_failover_tag.json (MIT licence)
GET_FAILOVER_WITH_FAILOVER_TAG = """{
  "pools": {
    "A.gut": {
      "servers": [ "localhost:12345" ]
    },
    "A.wildcard": {
      "servers": [ "localhost:12346" ]
    }
  },
  "route": {
    "type": "FailoverWithExptimeRoute",
    "failover": "PoolRoute|A.gut",
    "normal": "PoolRoute|A.wildcard",
    "failover_exptime": 3,
    "failover_tag": true
  }
}
"""

# mcrouter/test/test_lease_pairing_basic.json (MIT licence)
LEASE_PAIRING_BASIC = """{
  "pools": {
    "A": {
      "servers": [
        "localhost:11130",
        "localhost:11131"
      ]
    }
  },
  "route": {
    "type": "FailoverRoute",
    "name": "01",
    "enable_lease_pairing": true,
    "children": "Pool|A"
  }
}
"""

# mcrouter/test/test_deterministic_failover3.json (MIT licence)
SALTED_FAILOVER = """{
  "pools": {
    "A": {
      "servers": [ "localhost:5001",
                   "localhost:5002",
                   "localhost:5003",
                   "localhost:5004",
                   "localhost:5005",
                   "localhost:5006",
                   "localhost:5007",
                   "localhost:5008",
                   "localhost:5009",
                   "localhost:5010",
                   "localhost:5011",
                   "localhost:5012",
                   "localhost:5013",
                   "localhost:5014",
                   "localhost:5015",
                   "localhost:5016",
                   "localhost:5017",
                   "localhost:5018",
                   "localhost:5019",
                   "localhost:5020",
                   "localhost:5021",
                   "localhost:5022",
                   "localhost:5023"]
    }
  },
  "routes": {
      "/Route/A/": "Route_A"
  },
  "named_handles": {
      "Route_A": {
        "type": "SaltedFailoverRoute",
        "pool": "A",
        "hash": {
          "hash_func": "WeightedCh3",
          "weights": [
            0.7,
            0.65,
            1.0,
            0.8,
            0.5,
            0.7,
            0.65,
            1.0,
            0.8,
            0.7,
            0.65,
            1.0,
            0.8,
            0.5,
            0.75,
            0.5,
            0.75,
            0.7,
            0.65,
            1.0,
            0.5,
            0.75,
            0.55,
            0.81
          ]
        },
        "failover_policy": {
          "type": "DeterministicOrderPolicy",
          "max_tries": 12,
          "max_error_tries": 3
        }
      }
  }
}
"""

# mcrouter/test/test_deterministic_failover4.json (MIT licence)
SALTED_FAILOVER_FAILURE_DOMAINS = """{
  "pools": {
    "A": {
      "servers": [ "localhost:5001",
                   "localhost:5002",
                   "localhost:5003",
                   "localhost:5004",
                   "localhost:5005",
                   "localhost:5006",
                   "localhost:5007",
                   "localhost:5008",
                   "localhost:5009",
                   "localhost:5010",
                   "localhost:5011",
                   "localhost:5012",
                   "localhost:5013",
                   "localhost:5014",
                   "localhost:5015",
                   "localhost:5016",
                   "localhost:5017",
                   "localhost:5018",
                   "localhost:5019",
                   "localhost:5020",
                   "localhost:5021",
                   "localhost:50220",
                   "localhost:50231"],
      "failure_domains": [ 1,
                   2,
                   3,
                   4,
                   5,
                   6,
                   7,
                   8,
                   9,
                   10,
                   11,
                   12,
                   1,
                   2,
                   3,
                   4,
                   5,
                   6,
                   7,
                   8,
                   9,
                   10,
                   11]
    }
  },
  "routes": {
      "/Route/A/": "Route_A"
  },
  "named_handles": {
      "Route_A": {
        "type": "SaltedFailoverRoute",
        "pool": "A",
        "hash": {
          "hash_func": "WeightedCh3",
          "weights": [
            0.7,
            0.65,
            1.0,
            0.8,
            0.5,
            0.7,
            0.65,
            1.0,
            0.8,
            0.7,
            0.65,
            1.0,
            0.8,
            0.5,
            0.75,
            0.5,
            0.75,
            0.7,
            0.65,
            1.0,
            0.5,
            0.75,
            0.55,
            0.81
          ]
        },
        "failover_policy": {
          "type": "DeterministicOrderPolicy",
          "max_tries": 12,
          "max_error_tries": 3,
          "enable_failure_domains": true

        }
      }
  }
}
"""

# mcrouter/test/test_routing_group_route.json (MIT licence)
ROUTING_GROUP = """{
  "pools": {
    "A": {
      "servers": ["127.0.0.1:11111"],
      "protocol": "caret"
    },
    "B": {
      "servers": ["127.0.0.1:22222"],
      "protocol": "caret"
    },
    "C": {
      "servers": ["127.0.0.1:33333"],
      "protocol": "caret"
    },
    "D": {
      "servers": ["127.0.0.1:44444"],
      "protocol": "caret"
    }
  },
  "route": {
    "type": "RoutingGroupRoute",
    "default_policy": "ErrorRoute|A",
    "routing_group_policies": {
      "get_like": "PoolRoute|A",
      "update_like": "PoolRoute|B",
      "delete_like": "PoolRoute|C",
      "arithmetic_like": "PoolRoute|D"
    }
  }
}
"""

# mcrouter/test/test_routing_group_route_incomplete.json (MIT licence)
ROUTING_GROUP_INCOMPLETE = """{
  "pools": {
    "A": {
      "servers": ["127.0.0.1:11111"],
      "protocol": "caret"
    },
    "B": {
      "servers": ["127.0.0.1:22222"],
      "protocol": "caret"
    }
  },
  "route": {
    "type": "RoutingGroupRoute",
    "default_policy": "PoolRoute|A",
    "routing_group_policies": {
      "get_like": "PoolRoute|B",
      "update_like": "PoolRoute|B"
    }
  }
}
"""

# mcrouter/test/test_basic_l1_l2.json (MIT licence)
BASIC_L1_L2 = """{
  "pools": {
    "A": {
      "servers": [ "localhost:12345" ]
    },
    "B": {
      "servers": [ "localhost:12346" ]
    }
  },
  "route": {
    "type": "L1L2CacheRoute",
    "l1": "PoolRoute|A",
    "l2": "PoolRoute|B",
    "upgradingL1Exptime": 0
  }
}
"""

# mcrouter/test/test_basic_l1_l2_ncache.json (MIT licence)
BASIC_L1_L2_NCACHE = """{
  "pools": {
    "A": {
      "servers": [ "localhost:12345" ]
    },
    "B": {
      "servers": [ "localhost:12346" ]
    }
  },
  "route": {
    "type": "L1L2CacheRoute",
    "l1": "PoolRoute|A",
    "l2": "PoolRoute|B",
    "upgradingL1Exptime": 0,
    "ncacheExptime": 3600,
    "ncacheUpdatePeriod": 5
  }
}
"""

# mcrouter/test/test_loadbalancer_route.json (MIT licence)
LOADBALANCER_ROUTE = """{
  "pools": {
    "A.wildcard": {
      "servers": [
        "127.0.0.1:11610",
        "127.0.0.1:11611",
        "127.0.0.1:11612",
        "127.0.0.1:11613",
        "127.0.0.1:11614",
        "127.0.0.1:11615",
        "127.0.0.1:11616",
        "127.0.0.1:11617"
      ],
      "protocol": "caret"
    }
  },
  "route": {
    "type": "PoolRoute",
    "pool": "A.wildcard",
    "hash": {
      "hash_func": "LoadBalancer",
      "load_ttl_ms": 100,
      "default_server_load_percent": 50
    }
  }
}
"""


def address(server):
    return f"{HOST}:{server.port}"


def mcrouter_router(tmp_path, ithaca_factory, text, ports, extra_args=()):
    """ithaca on mcrouter's config `text`, each `localhost:PORT` in it
    replaced by ports[PORT] ("127.0.0.1:N", a server the test started), or
    each "HOST:PORT" by ports["HOST:PORT"]."""
    if ithaca_binary()[1]:
        pytest.skip("an mcrouter config read by ithaca")
    for port, target in ports.items():
        written = port if isinstance(port, str) else f"localhost:{port}"
        assert written in text, port
        text = text.replace(written, target)
    path = tmp_path / "mcrouter.json"
    path.write_text(text)
    return ithaca_factory(args=["--config", str(path), *extra_args])


def get(server, key):
    """The value of `key` (bytes), None on a miss, or the error line."""
    with Conn(server.host, server.port) as c:
        r = c.call(b"get %s\r\n" % key)
    if r == b"END\r\n":
        return None
    if r.startswith(b"VALUE "):
        return r.split(b"\r\n")[1]
    return r.strip()


def set_(server, key, value, exptime=0):
    with Conn(server.host, server.port) as c:
        return c.call(b"set %s 0 %d %d\r\n%s\r\n" % (key, exptime, len(value), value))


@pytest.fixture
def fakes():
    made = []

    def make(mode, **kw):
        made.append(FakeBackend(mode, **kw))
        return made[-1]

    yield make
    for f in made:
        f.close()


# ---- FailoverRoute: failover_errors (test_custom_failover.py) ----


@pytest.mark.parametrize("config", ["list", "override"])
def test_custom_failover(tmp_path, ithaca_factory, memcached_factory, fakes, config):
    """test_failover / test_failover_gets: a get the first child answers with
    SERVER_ERROR (remote_error, listed for gets in both) fails over."""
    text = CUSTOM_FAILOVER if config == "list" else CUSTOM_FAILOVER_OVERRIDE
    erring, mc2 = fakes("server_error"), memcached_factory()
    router = mcrouter_router(tmp_path, ithaca_factory, text, {12345: erring.address, 12346: address(mc2)})
    assert set_(mc2, b"key", b"value1") == b"STORED\r\n"
    assert get(router, b"key") == b"value1"


def test_custom_failover_no(tmp_path, ithaca_factory, memcached_factory, fakes):
    """test_failover_no: a connect error is not remote_error: no failover."""
    erring, mc2 = fakes("server_error"), memcached_factory()
    router = mcrouter_router(tmp_path, ithaca_factory, CUSTOM_FAILOVER, {12345: erring.address, 12346: address(mc2)})
    erring.close()  # mcrouter's test terminates it
    assert set_(mc2, b"key", b"value1") == b"STORED\r\n"
    assert get(router, b"key").startswith(b"SERVER_ERROR")


def test_custom_failover_override_updates(tmp_path, ithaca_factory, memcached_factory, fakes):
    """test_failover_updates: `"updates": []` fails over nothing, so a set
    the first child refuses is refused (and never reaches the second)."""
    erring, mc2 = fakes("server_error"), memcached_factory()
    router = mcrouter_router(tmp_path, ithaca_factory, CUSTOM_FAILOVER_OVERRIDE,
                             {12345: erring.address, 12346: address(mc2)})
    assert set_(router, b"key", b"value2").startswith(b"SERVER_ERROR")
    assert get(mc2, b"key") is None
    # ... while under the plain list the same set fails over and is stored.
    other = mcrouter_router(tmp_path, ithaca_factory, CUSTOM_FAILOVER, {12345: erring.address, 12346: address(mc2)})
    assert set_(other, b"key", b"value2") == b"STORED\r\n"
    assert get(mc2, b"key") == b"value2"


# ---- FailoverRoute: failover_policy DeterministicOrderPolicy
# (test_deterministic_failover.py) ----


def deterministic_order(key, n, normal_index, max_tries, ignore_normal=False):
    """mcrouter's DeterministicOrderPolicy (FailoverPolicy.h), written again
    from its description: child 0, then Ch3 of the routing key with a salt
    2, 3, ... appended, skipping children used (and normal_index + 1), at
    most 100 draws more per step."""
    routing = key.split(b"|#|")[0]
    used = [False] * n
    used[0] = True
    if not ignore_normal and normal_index + 1 < n:
        used[normal_index + 1] = True
    order, salt = [0], 1
    for _ in range(1, max_tries):
        draws = 0
        while True:
            salt += 1
            index = furc_hash(routing + str(salt).encode(), n)
            if not used[index] or draws >= 100:
                break
            draws += 1
        used[index] = True
        order.append(index)
    return order


def deterministic_config(text):
    # Pool B1's "protocol": "caret" is mcrouter's own binary protocol, which
    # memcached does not speak; ascii is what its servers here answer.
    assert '"protocol":"caret"' in text
    return text.replace('"protocol":"caret"', '"protocol":"ascii"')


@pytest.mark.parametrize("config,max_tries,max_error_tries", [
    (DETERMINISTIC_FAILOVER, 10, 3),
    (DETERMINISTIC_FAILOVER_BIG_RETRIES, 13, 13),  # 100 and 300: at most the 13 children
], ids=["max_error_tries_3", "big_retries"])
def test_deterministic_failover_all_servers_erring(tmp_path, ithaca_factory, fakes, config, max_tries,
                                                   max_error_tries):
    """TestDeterministicFailoverAllSleepServers, its first steps: every server
    fails (here answering SERVER_ERROR, which never marks a server down), so
    each get costs max_error_tries errors (3, 6, 9 ...) on the servers the
    policy picks for its key, in its order, every time the same."""
    servers = [fakes("server_error") for _ in range(17)]
    router = mcrouter_router(tmp_path, ithaca_factory, deterministic_config(config),
                             {5001 + i: s.address for i, s in enumerate(servers)})
    pool_a, b1 = servers[:5], servers[5:]
    children = 1 + len(b1)  # PoolRoute|A.wildcard, then each server of B1
    errors = 0
    for i in range(10):
        key = b"key_%d_abc_%d" % (i, 17 * i)
        for attempt in range(2):
            for s in servers:
                s.lines.clear()
            assert get(router, key).startswith(b"SERVER_ERROR")
            normal = furc_hash(key, 5)
            order = deterministic_order(key, children, normal, max_tries)[:max_error_tries]
            expected = [pool_a[normal] if c == 0 else b1[c - 1] for c in order]
            # A server drawn again after 100 draws is asked again, as in mcrouter.
            asked = [s.port for s in servers for line in s.lines]
            assert all(line == b"get " + key for s in servers for line in s.lines)
            assert sorted(asked) == sorted(s.port for s in expected), (i, attempt)
            errors += len(asked)
        assert errors == 2 * (i + 1) * max_error_tries


# ---- failover_tag (test_mcrouter_serialized.py, TestGetFailoverWithFailoverTag) ----


def test_get_failover_with_failover_tag(tmp_path, ithaca_factory, memcached_factory):
    gut, wildcard = memcached_factory(), memcached_factory()
    router = mcrouter_router(tmp_path, ithaca_factory, GET_FAILOVER_WITH_FAILOVER_TAG,
                             {12345: address(gut), 12346: address(wildcard)})
    key = b"testkey|#|extra=1"
    assert get(router, key) is None
    assert set_(router, key, b"bizbang") == b"STORED\r\n"
    assert get(router, key) == b"bizbang"
    # kill the main host so everything fails over to gut
    wildcard.proc.send_signal(signal.SIGTERM)
    wildcard.proc.wait(10)
    assert get(router, key) is None
    assert set_(router, key, b"bizbang-fail") == b"STORED\r\n"
    assert get(router, key) == b"bizbang-fail"
    # Verify the failover tag was appended
    assert get(router, key) == b"bizbang-fail"
    assert get(gut, key + b":failover=1") == b"bizbang-fail"
    assert get(gut, key) is None
    # A key without a hash stop goes to the gutter as it is.
    assert set_(router, b"plain", b"p") == b"STORED\r\n"
    assert get(gut, b"plain") == b"p"
    # A multi-key get: each key from the gutter under its own tagged key.
    with Conn(router.host, router.port) as c:
        assert c.call(b"get %s plain\r\n" % key) == (
            b"VALUE %s 0 12\r\nbizbang-fail\r\nVALUE plain 0 1\r\np\r\nEND\r\n" % key)


# ---- enable_lease_pairing (test_lease_pairing.py) ----
# Leases reach memcached only over meta (its mg N / ms C), and an mcrouter
# pool speaks ascii, so these run the same trees written in ithaca's YAML
# with `protocol: meta` pools; mcrouter's own config is checked to load.


def lease_yaml(pools, route):
    lines = ["pools:"]
    for name, server in pools.items():
        lines += [f"  {name}:", f'    servers: ["{server}"]', "    protocol: meta", "    timeout: 300ms"]
    return "\n".join(lines + [f"route: {route}"]) + "\n"


def test_lease_pairing_basic_config_loads(tmp_path):
    if ithaca_binary()[1]:
        pytest.skip("an mcrouter config read by ithaca")
    from test_mcrouter_config import check_config
    path = tmp_path / "lease.json"
    path.write_text(LEASE_PAIRING_BASIC.replace("localhost:11130", "127.0.0.1:1").replace("localhost:11131",
                                                                                          "127.0.0.1:2"))
    assert check_config(path) == (0, "configuration OK")


def paused_memcached(memcached_factory, fakes):
    """A memcached behind a relay that starts out hung (mcrouter's pause())."""
    real = memcached_factory()
    return real, fakes("hang", target=(real.host, real.port))


@pytest.mark.parametrize("pairing", [True, False])
def test_lease_pairing_basic(ithaca_factory, memcached_factory, fakes, pairing):
    mc0, relay0 = paused_memcached(memcached_factory, fakes)
    mc1 = memcached_factory()
    flag = "true" if pairing else "false"
    router = ithaca_factory(config_text=lease_yaml(
        {"a0": relay0.address, "a1": address(mc1)},
        f"{{type: failover, enable_lease_pairing: {flag}, children: [pool:a0, pool:a1]}}"))
    # lease get: memcacheds[0] is paused, so it goes to memcacheds[1]
    with Conn(router.host, router.port) as c:
        kind, token, _flags, _data = lease_get(c, b"key")
    assert kind == "lease" and token > 1
    relay0.mode = "forward"  # bring memcacheds[0] up
    # lease set (on another connection) goes where the lease get went
    with Conn(router.host, router.port) as c:
        reply = lease_set(c, b"key", token, b"abc")
    if pairing:
        assert reply == b"STORED\r\n"
        assert get(mc0, b"key") is None
        assert get(mc1, b"key") == b"abc"
    else:
        # without pairing it goes to the first child, whose memcached holds no
        # such lease; memcacheds[1] keeps only the lease's empty placeholder
        assert reply != b"STORED\r\n"
        assert get(mc1, b"key") == b""


def test_lease_pairing_nested(ithaca_factory, memcached_factory, fakes):
    """test_lease_pairing_nested_basic and _two_failovers: pool A's both
    servers and one of B's paused, the lease lands on B's second."""
    mcs, relays = [], []
    for _ in range(3):
        real, relay = paused_memcached(memcached_factory, fakes)
        mcs.append(real)
        relays.append(relay)
    mcs.append(memcached_factory())
    servers = {"a0": relays[0].address, "a1": relays[1].address, "b0": relays[2].address, "b1": address(mcs[3])}
    child = "{{type: failover, enable_lease_pairing: true, children: [pool:{}, pool:{}]}}"
    router = ithaca_factory(config_text=lease_yaml(
        servers, "{type: failover, enable_lease_pairing: true, children: [" + child.format("a0", "a1") + ", " +
        child.format("b0", "b1") + "]}"))
    with Conn(router.host, router.port) as c:
        kind, token, _flags, _data = lease_get(c, b"key")
    assert kind == "lease" and token > 1
    for r in relays:
        r.mode = "forward"  # bring up all memcacheds
    with Conn(router.host, router.port) as c:
        assert lease_set(c, b"key", token, b"abc") == b"STORED\r\n"
    assert [get(m, b"key") for m in mcs] == [None, None, None, b"abc"]


# ---- SaltedFailoverRoute (test_deterministic_failover.py,
# TestDeterministicFailoverAllSleepServersSharedConfig) ----


def salted_keys():
    return [b"key_%d_hYgGEs_%d_kBVq9Z_%d" % (13 * i, i, 71 * i) for i in range(8)]


def test_salted_failover_all_servers_erring(tmp_path, ithaca_factory, memcached_factory, fakes):
    """Every server fails: each get costs max_error_tries (3) errors, on three
    different servers (the normal route's own server is skipped among the
    failover children), the same three every time; keys spread."""
    servers = [fakes("server_error") for _ in range(23)]
    router = mcrouter_router(tmp_path, ithaca_factory, SALTED_FAILOVER,
                             {5001 + i: s.address for i, s in enumerate(servers)})
    firsts = set()
    errors = 0
    for key in salted_keys():
        seen = []
        for _ in range(2):
            for s in servers:
                s.lines.clear()
            assert get(router, key).startswith(b"SERVER_ERROR")
            asked = [i for i, s in enumerate(servers) for line in s.lines]
            assert all(line == b"get " + key for s in servers for line in s.lines)
            assert len(asked) == 3 and len(set(asked)) == 3, asked
            seen.append(sorted(asked))
            errors += len(asked)
        assert seen[0] == seen[1], key
        firsts.add(tuple(seen[0]))
    assert errors == 3 * 2 * len(salted_keys())  # mcrouter's 3, 6, 9, ... with no server marked down
    assert len(firsts) > 4, firsts

    # A set fails over to the key's first failover server (the second one
    # asked): made a real one, it stores the value, and the third is not asked.
    key = salted_keys()[0]
    for s in servers:
        s.lines.clear()
        s.times.clear()
    assert get(router, key).startswith(b"SERVER_ERROR")
    normal, first, third = sorted((s for s in servers if s.lines), key=lambda s: s.times[0])
    real = memcached_factory()
    first.mode, first.target = "forward", (real.host, real.port)
    third.lines.clear()
    assert set_(router, key, b"salted") == b"STORED\r\n"
    assert get(real, key) == b"salted"
    assert get(router, key) == b"salted"
    assert third.lines == []


def test_salted_failover_with_failure_domains_is_read(tmp_path):
    """The pool's failure_domains and the policy's enable_failure_domains are
    taken (test_mcrouter_failover_stats.py tests what they do); a list of
    domains that is not one per server is refused, as mcrouter refuses it."""
    if ithaca_binary()[1]:
        pytest.skip("an mcrouter config read by ithaca")
    from test_mcrouter_config import check_config
    path = tmp_path / "salted.json"
    path.write_text(SALTED_FAILOVER_FAILURE_DOMAINS)
    rc, out = check_config(path)
    assert rc == 0, out
    cfg = json.loads(SALTED_FAILOVER_FAILURE_DOMAINS)
    cfg["pools"]["A"]["failure_domains"].pop()
    path.write_text(json.dumps(cfg))
    rc, out = check_config(path)
    assert rc == 1 and "failure_domains expected to be of the same size as servers" in out, out


# ---- RoutingGroupRoute (test_routing_group_route.py) ----


def routing_group_config(text):
    # The pools' "protocol": "caret" is mcrouter's own binary protocol, which
    # memcached does not speak; ascii is what its servers here answer.
    assert '"protocol": "caret"' in text
    return text.replace('"protocol": "caret"', '"protocol": "ascii"')


def call(server, line):
    with Conn(server.host, server.port) as c:
        return c.call(line)


def test_routing_group_route(tmp_path, ithaca_factory, memcached_factory):
    mc_get, mc_set, mc_delete, mc_arith = (memcached_factory() for _ in range(4))
    router = mcrouter_router(tmp_path, ithaca_factory, routing_group_config(ROUTING_GROUP), {
        "127.0.0.1:11111": address(mc_get), "127.0.0.1:22222": address(mc_set),
        "127.0.0.1:33333": address(mc_delete), "127.0.0.1:44444": address(mc_arith)})
    # test_get
    assert set_(mc_get, b"key_get", b"val_get") == b"STORED\r\n"
    assert get(router, b"key_get") == b"val_get"
    # test_set
    assert set_(router, b"key_set", b"val_set") == b"STORED\r\n"
    assert get(mc_set, b"key_set") == b"val_set"
    # test_delete
    assert set_(mc_delete, b"key_del", b"val_del") == b"STORED\r\n"
    assert call(router, b"delete key_del\r\n") == b"DELETED\r\n"
    assert get(mc_delete, b"key_del") is None
    # test_arith
    assert set_(mc_arith, b"key_arith", b"5") == b"STORED\r\n"
    assert call(router, b"incr key_arith 2\r\n") == b"7\r\n"
    assert get(mc_arith, b"key_arith") == b"7"
    # carbon's groups: gat is get_like; touch is in none (the ErrorRoute default)
    assert call(router, b"gat 0 key_get\r\n") == b"VALUE key_get 0 7\r\nval_get\r\nEND\r\n"
    assert call(router, b"touch key_get 0\r\n") == b"SERVER_ERROR A\r\n"
    assert all(get(m, b"key_set") is None for m in (mc_get, mc_delete, mc_arith))


def test_routing_group_route_incomplete(tmp_path, ithaca_factory, memcached_factory):
    mc_a, mc_b = memcached_factory(), memcached_factory()
    router = mcrouter_router(tmp_path, ithaca_factory, routing_group_config(ROUTING_GROUP_INCOMPLETE),
                             {"127.0.0.1:11111": address(mc_a), "127.0.0.1:22222": address(mc_b)})
    # test_set_get
    assert set_(router, b"key0", b"val0") == b"STORED\r\n"
    assert get(mc_b, b"key0") == b"val0"
    assert get(router, b"key0") == b"val0"
    # test_delete: the default, A
    assert set_(mc_a, b"key0", b"val0") == b"STORED\r\n"
    call(router, b"delete key0\r\n")
    assert get(mc_a, b"key0") is None
    assert get(mc_b, b"key0") == b"val0"
    # test_arith: the default, A
    assert set_(mc_a, b"key0", b"2") == b"STORED\r\n"
    call(router, b"incr key0 1\r\n")
    assert get(mc_a, b"key0") == b"3"


# ---- L1L2CacheRoute (test_mcrouter_basic.py, TestMcrouterBasicL1L2) ----


def gat(server, key, exptime=0, cmd=b"gat"):
    with Conn(server.host, server.port) as c:
        r = c.call(b"%s %d %s\r\n" % (cmd, exptime, key))
    if r == b"END\r\n":
        return None
    if r.startswith(b"VALUE "):
        return r.split(b"\r\n")[1]
    return r.strip()


def eventually(check, what, seconds=5.0):
    """A background write lands: polls `check` (bounded), never sleeps blind."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def l1l2_router(tmp_path, ithaca_factory, memcached_factory, config):
    l1, l2 = memcached_factory(), memcached_factory()
    router = mcrouter_router(tmp_path, ithaca_factory, config, {12345: address(l1), 12346: address(l2)})
    return router, l1, l2


def stop(server):
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(10)


def test_l1_l2_get(tmp_path, ithaca_factory, memcached_factory):
    mcr, l1, l2 = l1l2_router(tmp_path, ithaca_factory, memcached_factory, BASIC_L1_L2)
    assert get(mcr, b"key1") is None
    # set keys in only l1 pool
    assert set_(l1, b"key1", b"value1") == b"STORED\r\n"
    assert get(mcr, b"key1") == b"value1"
    assert gat(mcr, b"key1") == b"value1"
    assert gat(mcr, b"key1", cmd=b"gats") == b"value1"
    # set key only in l2 pool
    assert set_(l2, b"key2", b"value2") == b"STORED\r\n"
    assert get(l1, b"key2") is None
    assert get(mcr, b"key2") == b"value2"
    assert gat(mcr, b"key2") == b"value2"
    assert gat(mcr, b"key2", cmd=b"gats") == b"value2"
    # the value is upgraded to l1
    eventually(lambda: get(l1, b"key2") == b"value2", "an L2 hit was not added to L1")
    # writes go to l1 alone (mcrouter's L1L2CacheRoute)
    assert set_(mcr, b"key3", b"value3") == b"STORED\r\n"
    assert get(l1, b"key3") == b"value3" and get(l2, b"key3") is None
    # a multi-key get: each key on its own
    with Conn(mcr.host, mcr.port) as c:
        assert c.call(b"get key1 nope key2\r\n") == (
            b"VALUE key1 0 6\r\nvalue1\r\nVALUE key2 0 6\r\nvalue2\r\nEND\r\n")


def test_l1_l2_get_l1_down(tmp_path, ithaca_factory, memcached_factory):
    mcr, l1, l2 = l1l2_router(tmp_path, ithaca_factory, memcached_factory, BASIC_L1_L2)
    assert set_(l1, b"key1", b"value1") == b"STORED\r\n"
    assert set_(l2, b"key1", b"value1") == b"STORED\r\n"
    stop(l1)
    # we should still be able to get from l2
    assert get(mcr, b"key1") == b"value1"
    assert gat(mcr, b"key1") == b"value1"
    assert gat(mcr, b"key1", cmd=b"gats") == b"value1"


def test_l1_l2_get_l2_down(tmp_path, ithaca_factory, memcached_factory):
    mcr, l1, l2 = l1l2_router(tmp_path, ithaca_factory, memcached_factory, BASIC_L1_L2)
    assert set_(l1, b"key1", b"value1") == b"STORED\r\n"
    assert set_(l2, b"key1", b"value1") == b"STORED\r\n"
    stop(l2)
    # we should still be able to get from l1
    assert get(mcr, b"key1") == b"value1"
    assert gat(mcr, b"key1") == b"value1"
    assert gat(mcr, b"key1", cmd=b"gats") == b"value1"
    stop(l1)
    # we should get nothing back
    assert get(mcr, b"key1").startswith(b"SERVER_ERROR")
    assert gat(mcr, b"key1").startswith(b"SERVER_ERROR")
    assert gat(mcr, b"key1", cmd=b"gats").startswith(b"SERVER_ERROR")


@pytest.mark.parametrize("cmd", [b"get", b"gat"])
def test_l1_l2_ncache(tmp_path, ithaca_factory, memcached_factory, cmd):
    """test_l1_l2_get_ncache / test_l1_l2_gat_ncache."""
    mcr, l1, l2 = l1l2_router(tmp_path, ithaca_factory, memcached_factory, BASIC_L1_L2_NCACHE)

    def ask(server, key):
        return get(server, key) if cmd == b"get" else gat(server, key)

    # get a non-existent key
    assert ask(mcr, b"key1") is None
    eventually(lambda: get(l1, b"key1") == b"ncache", "an L2 miss left no ncache marker in L1")
    with Conn(l1.host, l1.port) as c:
        assert c.call(b"get key1\r\n") == b"VALUE key1 65536 6\r\nncache\r\nEND\r\n"
    assert set_(l2, b"key1", b"value1") == b"STORED\r\n"
    # four marker hits answer a miss; the fifth too, and refreshes L1 from L2
    for _ in range(5):
        assert ask(mcr, b"key1") is None
    eventually(lambda: get(l1, b"key1") == b"value1", "the fifth marker hit did not refresh L1")
    assert ask(mcr, b"key1") == b"value1"
    assert ask(l1, b"key1") == b"value1"


# ---- LoadBalancerRoute (test_loadbalancer_route.py) ----


def lb_config(text):
    # The pool's "protocol": "caret" is mcrouter's own; memcached speaks ascii.
    assert '"protocol": "caret"' in text
    return text.replace('"protocol": "caret"', '"protocol": "ascii"')


def cmd_get(server):
    with Conn(server.host, server.port) as c:
        return int(parse_stats(c.call(b"stats\r\n"))["cmd_get"])


def test_loadbalancer(tmp_path, ithaca_factory, memcached_factory):
    """20,000 gets spread over 8 servers at 1/8 each (within 0.02): with no
    load reported, weighted hashing is WeightedCh3 of the routing key with
    every weight 1 (so each key on the server Ch3 names)."""
    servers = [memcached_factory() for _ in range(8)]
    router = mcrouter_router(tmp_path, ithaca_factory, lb_config(LOADBALANCER_ROUTE),
                             {f"127.0.0.1:{11610 + i}": address(s) for i, s in enumerate(servers)})
    num_reqs = 20000
    with Conn(router.host, router.port) as c:
        for start in range(0, num_reqs, 500):
            c.send(b"".join(b"get someprefix:%d:|#|id=123\r\n" % i for i in range(start, start + 500)))
            assert c.read_replies(500) == [b"END\r\n"] * 500
    counts = [cmd_get(s) for s in servers]
    assert sum(counts) == num_reqs
    assert all(abs(n / num_reqs - 0.125) <= 0.02 for n in counts), counts
    # where each key goes: Ch3 of its part before |#|
    keys = [b"user:%d|#|x" % i for i in range(200)]
    with Conn(router.host, router.port) as c:
        c.send(b"".join(b"set %s 0 0 1\r\nv\r\n" % k for k in keys))
        assert c.read_replies(len(keys)) == [b"STORED\r\n"] * len(keys)
    for k in keys:
        holder = [i for i, s in enumerate(servers) if get(s, k) is not None]
        assert holder == [furc_hash(k.split(b"|#|")[0], 8)], k


def test_loadbalancer_failover_count(tmp_path, ithaca_factory, memcached_factory, fakes):
    """failover_count 2: a key whose server fails goes to a second one,
    drawn as mcrouter draws it (the first taken out, swapped with the last;
    the key hashed again with the tries left, "1", appended)."""
    servers = [memcached_factory() for _ in range(3)]
    dead = fakes("server_error")
    addresses = [address(s) for s in servers] + [dead.address]
    text = ('{"pools": {"A": {"servers": %s}},\n "route": {"type": "LoadBalancerRoute", "children": "Pool|A",'
            ' "failover_count": 2}}\n' % json.dumps(addresses))
    path = tmp_path / "lb.json"
    path.write_text(text)
    router = ithaca_factory(args=["--config", str(path)])
    members = servers + [dead]
    moved = 0
    for i in range(100):
        key = b"k%d" % i
        assert set_(router, key, b"v") == b"STORED\r\n"
        first = furc_hash(key, 4)
        expected = first
        if members[first] is dead:
            index_map = [0, 1, 2, 3]
            index_map[first], index_map[-1] = index_map[-1], index_map[first]
            index_map.pop()
            expected = index_map[furc_hash(key + b"1", 3)]
            moved += 1
        holder = [j for j, s in enumerate(servers) if get(s, key) is not None]
        assert holder == [expected], key
    assert moved > 10


def test_loadbalancer_two_random_choices_follows_calls_in_flight(ithaca_factory, memcached_factory, fakes):
    """two-random-choices: once a request is stuck on a hung server, the
    server has a call in flight and every later pair sends elsewhere."""
    a, b = memcached_factory(), memcached_factory()
    hung = fakes("hang")
    pools = {"a": address(a), "b": address(b), "hung": hung.address}
    lines = ["pools:"]
    for name, server in pools.items():
        lines += [f"  {name}:", f'    servers: ["{server}"]', "    protocol: ascii", "    timeout: 30s"]
    lines.append("route: {type: load_balancer, algorithm: two-random-choices, children: [pool:a, pool:b, pool:hung]}")
    router = ithaca_factory(config_text="\n".join(lines) + "\n")
    stuck, conns = 0, []
    try:
        for i in range(60):
            c = Conn(router.host, router.port, timeout=0.5)
            conns.append(c)
            c.send(b"set k%d 0 0 1\r\nv\r\n" % i)
            try:
                assert c.read_line() == b"STORED\r\n"
            except AssertionError:
                stuck += 1
    finally:
        for c in conns:
            c.close()
    assert stuck == 1
    assert sum(get(s, b"k%d" % i) is not None for s in (a, b) for i in range(60)) == 59
