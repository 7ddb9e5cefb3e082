"""mcrouter's route kinds of set A served from mcrouter's own test configs
(facebook/mcrouter, mcrouter/test/*.json, MIT licence), each copied below as
it is with a line naming it: `dev_null` (DevNullRoute), `latency_injection` (LatencyInjectionRoute),
`l1l2_size_split` (L1L2SizeSplitRoute), `migrate` (MigrateRoute),
`modify_key` (ModifyKeyRoute), `host_id` (HostIdRoute),
`logging` (LoggingRoute). Each config's
`localhost:PORT` servers are mapped to real memcacheds this test starts, and
each test asserts what mcrouter's own Python test (named in it) asserts over
the same config; the assertions are ported, the code is ours."""

import ipaddress
import json
import re
import subprocess
import zlib
import threading
import time

import pytest

import mcwire
from conftest import ithaca_binary
from test_ascii_diff import SERVER_ARGS
from test_router import stats, wait_for

# mcrouter's test configs (facebook/mcrouter, mcrouter/test/, MIT licence).
MCROUTER_CONFIGS = {
    # mcrouter/test/test_dev_null.json
    "test_dev_null.json": """{
  "pools": {
    "A.good": {
      "servers": [ "localhost:12345" ]
    },
    "A.wildcard": {
      "servers": [ "localhost:12347" ]
    }
  },
  "route": {
    "type": "PrefixSelectorRoute",
    "policies": {
      "good": "PoolRoute|A.good",
      "null": "DevNullRoute"
    },
    "wildcard": "PoolRoute|A.wildcard"
  }
}
""",
    # mcrouter/test/test_latency_injection_before.json
    "test_latency_injection_before.json": """{
  "pools": {
    "A": {
      "servers": [ "127.0.0.1:11610" ],
      "protocol": "caret"
    }
  },
  "route": {
    "type": "LatencyInjectionRoute",
    "child": "PoolRoute|A",
    "before_latency_ms": 2000
  }
}
""",
    # mcrouter/test/test_latency_injection_after.json
    "test_latency_injection_after.json": """{
  "pools": {
    "A": {
      "servers": [ "127.0.0.1:11610" ],
      "protocol": "caret"
    }
  },
  "route": {
    "type": "LatencyInjectionRoute",
    "child": "PoolRoute|A",
    "after_latency_ms": 1000
  }
}
""",
    # mcrouter/test/test_latency_injection_total.json
    "test_latency_injection_total.json": """{
  "pools": {
    "A": {
      "servers": [ "127.0.0.1:11610" ],
      "protocol": "caret"
    }
  },
  "route": {
    "type": "LatencyInjectionRoute",
    "child": "PoolRoute|A",
    "total_latency_ms": 2000
  }
}
""",
    # mcrouter/test/test_basic_l1_l2_sizesplit.json
    "test_basic_l1_l2_sizesplit.json": """{
  "pools": {
    "A": {
      "servers": [ "localhost:12345:caret" ]
    },
    "B": {
      "servers": [ "localhost:12346:caret" ]
    }
  },
  "route": {
    "type": "L1L2SizeSplitRoute",
    "l1": "PoolRoute|A",
    "l2": "PoolRoute|B",
    "threshold": 8,
    "both_full_set": false
  }
}
""",
    # mcrouter/test/test_basic_l1_l2_sizesplit_bothset.json
    "test_basic_l1_l2_sizesplit_bothset.json": """{
  "pools": {
    "A": {
      "servers": [ "localhost:12345:caret" ]
    },
    "B": {
      "servers": [ "localhost:12346:caret" ]
    }
  },
  "route": {
    "type": "L1L2SizeSplitRoute",
    "l1": "PoolRoute|A",
    "l2": "PoolRoute|B",
    "threshold": 8,
    "both_full_set": true
  }
}
""",
    # mcrouter/test/test_basic_l1_l2_sizesplit_retry_invalid.json
    "test_basic_l1_l2_sizesplit_retry_invalid.json": """{
  "pools": {
    "A": {
      "servers": [ "localhost:12345:caret" ]
    },
    "B": {
      "servers": [ "localhost:12346:caret" ]
    }
  },
  "route": {
    "type": "L1L2SizeSplitRoute",
    "l1": "PoolRoute|A",
    "l2": "PoolRoute|B",
    "threshold": 8,
    "both_full_set": false,
    "retries": 100
  }
}
""",
    # mcrouter/test/test_basic_l1_l2_sizesplit_retry_valid.json
    "test_basic_l1_l2_sizesplit_retry_valid.json": """{
  "pools": {
    "A": {
      "servers": [ "localhost:12345:caret" ]
    },
    "B": {
      "servers": [ "localhost:12346:caret" ]
    }
  },
  "route": {
    "type": "L1L2SizeSplitRoute",
    "l1": "PoolRoute|A",
    "l2": "PoolRoute|B",
    "threshold": 8,
    "both_full_set": false,
    "retries": 3
  }
}
""",
    # mcrouter/test/test_basic_l1_multiple_l2_sizesplit.json
    "test_basic_l1_multiple_l2_sizesplit.json": """{
  "pools": {
    "A": {
      "servers": [ "localhost:12345:caret" ]
    },
    "B": {
      "servers": [ "localhost:12346:caret", "localhost:12347:caret", "localhost:12348:caret" ]
    }
  },
  "route": {
    "type": "L1L2SizeSplitRoute",
    "l1": "PoolRoute|A",
    "l2": "PoolRoute|B",
    "threshold": 8,
    "both_full_set": false
  }
}
""",
    # mcrouter/test/test_migrated_pools.json
    "test_migrated_pools.json": """{
  "pools": {
    "wildcard-new": {
      "servers": [ "localhost:12345" ]
    },
    "wildcard-old": {
      "servers": [ "localhost:12346" ]
    }
  },
  "route": {
    "type": "MigrateRoute",
    "from": "PoolRoute|wildcard-old",
    "to": "PoolRoute|wildcard-new",
    "start_time": START_TIME,
    "interval": 4
  }
}
""",
    # mcrouter/test/test_migrated_failover.json
    "test_migrated_failover.json": """{
  "pools": {
    "A-old": {
      "servers": [ "127.0.0.1:11610" ]
    },
    "A-new": {
      "servers": [ "127.0.0.1:11611" ]
    },
    "B-old": {
      "servers": [ "127.0.0.1:11612" ]
    },
    "B-new": {
      "servers": [ "127.0.0.1:11613" ]
    }
  },
  "route": {
    "type": "FailoverWithExptimeRoute",
    "normal": {
      "type": "MigrateRoute",
      "from": "PoolRoute|A-old",
      "to": "PoolRoute|A-new",
      "start_time": 0,
      "interval": 120
    },
    "failover": {
      "type": "MigrateRoute",
      "from": "PoolRoute|B-old",
      "to": "PoolRoute|B-new",
      "start_time": 0,
      "interval": 120
    }
  }
}
""",
    # mcrouter/test/test_migrated_pools_failover.json
    "test_migrated_pools_failover.json": """{
  "pools": {
    "A-new": {
      "servers": [ "localhost:12345" ]
    },
    "A-old": {
      "servers": [ "localhost:12346" ]
    },
    "B-new": {
      "servers": [ "localhost:12347" ]
    },
    "B-old": {
      "servers": [ "localhost:12348" ]
    }
  },
  "route": {
    "type": "FailoverWithExptimeRoute",
    "failover": {
      "type": "MigrateRoute",
      "from": "PoolRoute|B-old",
      "to": "PoolRoute|B-new",
      "start_time": START_TIME,
      "interval": 4
    },
    "normal": {
      "type": "MigrateRoute",
      "from": "PoolRoute|A-old",
      "to": "PoolRoute|A-new",
      "start_time": START_TIME,
      "interval": 4
    }
  }
}
""",
    # mcrouter/test/test_modify_key.json
    "test_modify_key.json": """{
  "pools": {
    "A": {
      "keep_routing_prefix": true,
      "servers": [ "localhost:12345" ]
    }
  },
  "routes": [
    {
      "aliases": [ "/a/a/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "set_routing_prefix": "/a/b/",
        "ensure_key_prefix": "foo:"
      }
    },
    {
      "aliases": [ "/b/c/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "ensure_key_prefix": "foo:"
      }
    },
    {
      "aliases": [ "/c/d/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "set_routing_prefix": ""
      }
    },
    {
      "aliases": [ "/d/e/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "set_routing_prefix": "",
        "ensure_key_prefix": ""
      }
    },
    {
      "aliases": [ "/e/f/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "ensure_key_prefix": "bar:",
        "modify_inplace": true
      }
    },
    {
      "aliases": [ "/f/g/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "ensure_key_prefix": "bar:",
        "modify_inplace": false
      }
    },
    {
      "aliases": [ "/g/h/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "set_routing_prefix": "/a/b/",
        "ensure_key_prefix": "bar:",
        "modify_inplace": true
      }
    },
    {
      "aliases": [ "/h/i/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "set_routing_prefix": "",
        "ensure_key_prefix": "bar:",
        "modify_inplace": true
      }
    },
    {
      "aliases": [ "/i/j/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "set_routing_prefix": "",
        "ensure_key_prefix": "",
        "modify_inplace": true
      }
    },
    {
      "aliases": [ "/d/w/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "set_key_suffix": ":bar"
      }
    },
    {
      "aliases": [ "/e/w/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "set_key_suffix": "foo",
        "ensure_key_prefix": "bar:",
        "modify_inplace": true
      }
    },
    {
      "aliases": [ "/f/w/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "set_key_suffix": "foo",
        "ensure_key_prefix": "bar:",
        "set_routing_prefix": "",
        "modify_inplace": true
      }
    },
    {
      "aliases": [ "/j/k/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "ensure_key_prefix": "bar.",
        "replace_key_prefix": "foo."
      }
    },
    {
      "aliases": [ "/j/l/" ],
      "route": {
        "type": "ModifyKeyRoute",
        "target": "PoolRoute|A",
        "ensure_key_prefix": "bar.",
        "set_key_suffix": "moot",
        "replace_key_prefix": "foo."
      }
    }
  ]
}
""",
    # mcrouter/test/test_empty_pool.json
    "test_empty_pool.json": """{
  "pools": {
    "A-foo": {
      "servers": []
    }
  },
  "route": {
    "type": "AllSyncRoute",
    "children": [
      "AllAsyncRoute|Pool|A-foo",
      "AllFastestRoute|Pool|A-foo",
      "AllInitialRoute|Pool|A-foo",
      "AllMajorityRoute|Pool|A-foo",
      "AllSyncRoute|Pool|A-foo",
      "FailoverRoute|Pool|A-foo",
      "HashRoute|Pool|A-foo",
      "HostIdRoute|Pool|A-foo",
      "LatestRoute|Pool|A-foo",
      "MissFailoverRoute|Pool|A-foo",
      "PoolRoute|A-foo",
      "RandomRoute|Pool|A-foo"
    ]
  }
}
""",
    # mcrouter/test/test_logging_route_mc.json
    "test_logging_route_mc.json": """{
  "pools": {
    "mc": {
      "servers": [ "localhost:11000" ]
    }
  },
  "route": "PoolRoute|mc"
}
""",
    # mcrouter/test/test_logging_route_server.json
    "test_logging_route_server.json": """{
  "pools": {
    "mc": {
      "protocol": "caret",
      "servers": [ "localhost:11000" ]
    },
    "mcr": {
      "protocol": "caret",
      "servers": [ "localhost:11001" ]
    }
  },
  "route": "PoolRoute|mcr"
}
""",
}

# A server as mcrouter's samples write it; ":caret" (mcrouter's Carbon
# protocol, which ithaca does not speak) is dropped with the mapping.
SERVER_RE = re.compile(r'"(?:localhost|127\.0\.0\.1):(\d+)(?::caret)?"')


def mcrouter_ports(name):
    """mcrouter's server ports in the config, in order of first appearance."""
    seen = []
    for port in SERVER_RE.findall(MCROUTER_CONFIGS[name]):
        if port not in seen:
            seen.append(port)
    return seen


def serve_mcrouter_config(tmp_path, ithaca_factory, name, backends, edit=None):
    """Starts ithaca on mcrouter's config `name`, its servers mapped in order
    of first appearance to `backends` (real memcacheds); `edit` changes the
    text first (what ithaca refuses of it, said where it is used)."""
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    text = MCROUTER_CONFIGS[name]
    ports = mcrouter_ports(name)
    assert len(ports) == len(backends), f"{name} names {len(ports)} servers"
    mapping = {p: b for p, b in zip(ports, backends)}
    text = SERVER_RE.sub(lambda m: f'"{mapping[m.group(1)].host}:{mapping[m.group(1)].port}"', text)
    if edit is not None:
        text = edit(text)
    path = tmp_path / name
    path.write_text(text)
    return ithaca_factory(args=["--config", str(path)])


def direct_get(server, key):
    with mcwire.Conn(server.host, server.port) as c:
        values = mcwire.parse_values(c.call(b"get " + key + b"\r\n"))
    return values[0][2] if values else None


def direct_set(server, key, value):
    with mcwire.Conn(server.host, server.port) as c:
        assert c.call(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value)) == b"STORED\r\n"


def route_counter(conn, kind, field):
    """The sum of FIELD over the `stats routes` nodes of KIND."""
    s = stats(conn, "routes")
    total, found = 0, False
    for k, v in s.items():
        if re.fullmatch(r"route:\d+", k) and v.split(" ")[0] == kind:
            found = True
            total += int(s.get(k + ":" + field, "0"))
    assert found, f"no {kind} route in stats routes: {s}"
    return total


# ---- DevNullRoute (mcrouter/test/test_mcrouter.py, TestDevNull)


def test_dev_null_drops_requests_and_counts_them(tmp_path, ithaca_factory, memcached_factory):
    good, wild = memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS)
    router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_dev_null.json", [good, wild])
    with mcwire.Conn(*router.address) as c:
        assert c.call(b"set good:key 0 0 13\r\nshould_be_set\r\n") == b"STORED\r\n"
        assert c.call(b"set key 0 0 18\r\nshould_be_set_wild\r\n") == b"STORED\r\n"
        # Dropped: answered as NullRoute answers a store, stored nowhere.
        assert c.call(b"set null:key 0 0 17\r\nshould_not_be_set\r\n") == b"NOT_STORED\r\n"
        assert direct_get(good, b"good:key") == b"should_be_set"
        assert direct_get(wild, b"null:key") is None
        assert direct_get(good, b"null:key") is None
        assert direct_get(wild, b"key") == b"should_be_set_wild"
        # mcrouter's test: delete answers no DELETED (its NOT_FOUND).
        assert c.call(b"delete null:key2\r\n") == b"NOT_FOUND\r\n"
        # mcrouter counts dev_null_requests in `stats all` (its test reads
        # it there); ithaca per route too.
        assert int(stats(c, "all")["dev_null_requests"]) == 2
        assert route_counter(c, "dev_null", "dev_null_requests") == 2
        # A get through it misses; it is counted too.
        assert c.call(b"get null:key\r\n") == b"END\r\n"
        assert route_counter(c, "dev_null", "dev_null_requests") == 3
        assert int(stats(c, "all")["dev_null_requests"]) == 3


# ---- LatencyInjectionRoute (mcrouter/test/test_latency_injection_route.py)


def no_caret(text):
    """mcrouter's samples talk Carbon (caret) to their mock; ithaca speaks
    ascii or meta to a memcached (caret is refused), so the line goes."""
    return text.replace(',\n      "protocol": "caret"', "")


def timed_get(conn, key):
    start = time.monotonic()
    reply = conn.call(b"get " + key + b"\r\n")
    return reply, time.monotonic() - start


@pytest.mark.parametrize("name,key,least", [
    ("test_latency_injection_before.json", b"key1", 2.0),
    ("test_latency_injection_after.json", b"key2", 1.0),
    ("test_latency_injection_total.json", b"key3", 2.0),
])
def test_latency_injection_delays_the_reply(tmp_path, ithaca_factory, memcached_factory, name, key, least):
    mc = memcached_factory(args=SERVER_ARGS)
    router = serve_mcrouter_config(tmp_path, ithaca_factory, name, [mc], edit=no_caret)
    value = b"value" + key[-1:]
    direct_set(mc, key, value)
    with mcwire.Conn(*router.address) as c:
        reply, took = timed_get(c, key)
        assert reply == b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (key, len(value), value)
        assert took >= least, f"{name}: answered in {took:.3f}s"
        assert took < least + 1.5, f"{name}: answered in {took:.3f}s"
        field = name.split("_")[-1].split(".")[0] + "_latency_injected"
        assert route_counter(c, "latency_injection", field) == 1


def test_latency_injection_waits_without_holding_the_worker(tmp_path, ithaca_factory, memcached_factory):
    """Waits run side by side: pipelined gets on one connection and gets on
    other connections all wait their 2 s at once (in turn they would take
    2 s each), replies in request order; a connection to the same router
    through another route is not held at all."""
    mc = memcached_factory(args=SERVER_ARGS)
    router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_latency_injection_before.json", [mc],
                                   edit=no_caret)
    for i in range(4):
        direct_set(mc, b"k%d" % i, b"v%d" % i)
    results = {}

    def one(i):
        with mcwire.Conn(*router.address) as c:
            results[i] = timed_get(c, b"k%d" % i)

    start = time.monotonic()
    threads = [threading.Thread(target=one, args=(i,)) for i in (2, 3)]
    for t in threads:
        t.start()
    with mcwire.Conn(*router.address) as c:
        c.send(b"get k0\r\nget k1\r\nversion\r\n")
        replies = c.read_replies(3)
    took = time.monotonic() - start
    for t in threads:
        t.join(10)
    assert replies[0] == b"VALUE k0 0 2\r\nv0\r\nEND\r\n"
    assert replies[1] == b"VALUE k1 0 2\r\nv1\r\nEND\r\n"
    assert replies[2].startswith(b"VERSION ")
    assert 2.0 <= took < 3.5, f"pipelined waits took {took:.3f}s"
    for i in (2, 3):
        reply, t = results[i]
        assert reply == b"VALUE k%d 0 2\r\nv%d\r\nEND\r\n" % (i, i)
        assert 2.0 <= t < 3.5, f"client {i}: {t:.3f}s"
    # Served while nothing waits: `version` is the server's own.
    with mcwire.Conn(*router.address) as c:
        start = time.monotonic()
        assert c.call(b"version\r\n").startswith(b"VERSION ")
        assert time.monotonic() - start < 1.0


def test_latency_injection_wait_ends_with_its_client_or_the_server(tmp_path, ithaca_factory, memcached_factory):
    """A client that goes away while its request waits costs nothing after
    the wait; a server stopped while requests wait exits at once (the
    factory fails a stop that takes more than its timeout)."""
    mc = memcached_factory(args=SERVER_ARGS)
    router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_latency_injection_before.json", [mc],
                                   edit=no_caret)
    direct_set(mc, b"gone", b"x")
    for _ in range(20):
        c = mcwire.Conn(*router.address)
        c.send(b"get gone\r\nset gone 0 0 1\r\ny\r\n")
        c.close()
    with mcwire.Conn(*router.address) as c:
        reply, took = timed_get(c, b"gone")
        # A closed connection (FIN) still gets its replies, so its set goes
        # on after its wait (y); one the server saw reset is orphaned and
        # nothing of it resumes (x). Either way the router answers here.
        assert reply in (b"VALUE gone 0 1\r\ny\r\nEND\r\n", b"VALUE gone 0 1\r\nx\r\nEND\r\n")
        assert took >= 2.0
        c.send(b"get gone\r\n")  # still waiting when the server stops
        start = time.monotonic()
        router.proc.terminate()
        router.proc.wait(timeout=10)
        assert time.monotonic() - start < 2.0, "the server waited for the injected latency to stop"
        assert router.proc.returncode == 0


# ---- L1L2SizeSplitRoute (mcrouter/test/test_mcrouter_basic.py,
# TestMcrouterBasicL1L2SizeSplit, TestMcrouterBasicL1MultipleL2SizeSplit,
# TestMcrouterWithRetries)

SIZE_SPLIT_FLAG = 0x20  # mcrouter's MC_MSG_FLAG_SIZE_SPLIT


def direct_item(server, key):
    """(flags, data, cas) of KEY on SERVER, or None."""
    with mcwire.Conn(server.host, server.port) as c:
        values = mcwire.parse_values(c.call(b"gets " + key + b"\r\n"))
    return (values[0][1], values[0][2], values[0][3]) if values else None


def router_gets(conn, key):
    values = mcwire.parse_values(conn.call(b"gets " + key + b"\r\n"))
    return (values[0][2], values[0][3]) if values else None


def set_line(key, value, flags=0):
    return b"set %s %d 0 %d\r\n%s\r\n" % (key, flags, len(value), value)


@pytest.fixture
def split_pair(tmp_path, ithaca_factory, memcached_factory):
    def make(name):
        l1, l2 = memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS)
        return serve_mcrouter_config(tmp_path, ithaca_factory, name, [l1, l2]), l1, l2
    return make


def test_size_split_sets_go_to_the_right_place_and_gets_follow(split_pair):
    router, l1, l2 = split_pair("test_basic_l1_l2_sizesplit.json")
    with mcwire.Conn(*router.address) as c:
        assert c.call(b"get key1\r\n") == b"END\r\n"
        assert c.call(set_line(b"key1", b"value1")) == b"STORED\r\n"
        assert direct_get(l1, b"key1") == b"value1"  # small: L1 only
        assert direct_get(l2, b"key1") is None
        assert c.call(b"get key1\r\n") == b"VALUE key1 0 6\r\nvalue1\r\nEND\r\n"
        value2 = b"foo" * 200
        assert c.call(set_line(b"key2", value2, flags=5)) == b"STORED\r\n"
        flags, data, _ = direct_item(l1, b"key2")  # a sentinel: empty, flagged
        assert data == b"" and flags & SIZE_SPLIT_FLAG and flags & 5 == 5
        assert direct_get(l2, b"key2") == value2  # the whole value on L2
        assert c.call(b"get key2\r\n") == b"VALUE key2 5 600\r\n" + value2 + b"\r\nEND\r\n"
        # One multiget over both kinds of keys and a missing one, in order.
        assert c.call(b"get key2 nope key1\r\n") == (
            b"VALUE key2 5 600\r\n" + value2 + b"\r\nVALUE key1 0 6\r\nvalue1\r\nEND\r\n")
        assert route_counter(c, "l1l2_size_split", "split_sets") == 1


def test_size_split_both_full_set_writes_both(split_pair):
    router, l1, l2 = split_pair("test_basic_l1_l2_sizesplit_bothset.json")
    with mcwire.Conn(*router.address) as c:
        assert c.call(b"get key1\r\n") == b"END\r\n"
        assert c.call(set_line(b"key1", b"value1")) == b"STORED\r\n"
        assert direct_get(l1, b"key1") == b"value1"
        assert direct_get(l2, b"key1") is None
        assert c.call(b"get key1\r\n") == b"VALUE key1 0 6\r\nvalue1\r\nEND\r\n"
        value2 = b"foo" * 200
        assert c.call(set_line(b"key2", value2)) == b"STORED\r\n"
        assert direct_get(l1, b"key2") == value2
        wait_for(lambda: direct_get(l2, b"key2") == value2, what="the background set on L2")
        assert c.call(b"get key2\r\n") == b"VALUE key2 0 600\r\n" + value2 + b"\r\nEND\r\n"


def test_size_split_l2_down_is_an_error_and_the_sentinel_goes(tmp_path, ithaca_factory, memcached_factory):
    from conftest import free_port
    from test_router import start_memcached_on
    l1 = memcached_factory(args=SERVER_ARGS)
    l2 = start_memcached_on(free_port())  # killed by this test: not the fixture's
    router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_basic_l1_l2_sizesplit.json", [l1, l2])
    value = b"foob" * 200
    with mcwire.Conn(*router.address) as c:
        assert c.call(set_line(b"key", value)) == b"STORED\r\n"
        l2.stop()
        assert direct_get(l1, b"key") == b""
        assert c.call(b"get key\r\n").startswith(b"SERVER_ERROR ")
        # mcrouter's test_l1l2_l1_hit_l2_lookup_fail: the sentinel is gone.
        assert direct_get(l1, b"key") is None
        # A large set while L2 is down answers L2's failure (a plain set, as
        # mcrouter's; a lease-set is kept in L1 instead, tested below).
        assert c.call(set_line(b"key", value)).startswith(b"SERVER_ERROR ")
        assert c.call(set_line(b"key", b"small")) == b"STORED\r\n"
        assert c.call(b"get key\r\n") == b"VALUE key 0 5\r\nsmall\r\nEND\r\n"
        assert not direct_item(l1, b"key")[0] & SIZE_SPLIT_FLAG


def test_size_split_cas_small(split_pair):
    router, l1, _ = split_pair("test_basic_l1_l2_sizesplit.json")
    with mcwire.Conn(*router.address) as c:
        assert c.call(b"get key\r\n") == b"END\r\n"
        assert c.call(set_line(b"key", b"value1")) == b"STORED\r\n"
        _, cas = router_gets(c, b"key")
        assert c.call(b"cas key 0 0 6 %d\r\nvalue2\r\n" % cas) == b"STORED\r\n"
        value, cas2 = router_gets(c, b"key")
        assert value == b"value2" and cas2 != cas
        assert not direct_item(l1, b"key")[0] & SIZE_SPLIT_FLAG


def test_size_split_cas_large_goes_to_l1_and_a_second_cas_fails(split_pair):
    router, l1, _ = split_pair("test_basic_l1_l2_sizesplit.json")
    with mcwire.Conn(*router.address) as c:
        assert c.call(b"get key1\r\n") == b"END\r\n"
        value = b"foo" * 200
        assert c.call(set_line(b"key", value)) == b"STORED\r\n"
        got, cas = router_gets(c, b"key")
        assert got == value
        assert cas == direct_item(l1, b"key")[2]  # the sentinel's CAS: cas goes to L1
        assert c.call(b"cas key 0 0 14 %d\r\nvalue_modified\r\n" % cas) == b"STORED\r\n"
        got, cas2 = router_gets(c, b"key")
        assert got == b"value_modified" and cas2 != cas
        flags, data, _ = direct_item(l1, b"key")
        assert not flags & SIZE_SPLIT_FLAG and data == b"value_modified"
        assert c.call(b"cas key 0 0 15 %d\r\nvalue_modified2\r\n" % cas) == b"EXISTS\r\n"


def test_size_split_gets_reads_l1_again_after_a_dead_sentinel(split_pair):
    """An L2 value gone (evicted): gets removes the sentinel and reads L1
    again (mcrouter's retries), a get answers an error and removes it."""
    router, l1, l2 = split_pair("test_basic_l1_l2_sizesplit.json")
    value = b"x" * 100
    with mcwire.Conn(*router.address) as c:
        for key in (b"a", b"b"):
            assert c.call(set_line(key, value)) == b"STORED\r\n"
        with mcwire.Conn(l2.host, l2.port) as d:
            assert d.call(b"delete a\r\n") == b"DELETED\r\n"
            assert d.call(b"delete b\r\n") == b"DELETED\r\n"
        assert c.call(b"gets a\r\n") == b"END\r\n"
        assert direct_get(l1, b"a") is None
        assert c.call(b"get b\r\n").startswith(b"SERVER_ERROR ")
        assert direct_get(l1, b"b") is None
        assert route_counter(c, "l1l2_size_split", "sentinels_removed") == 2


def lease_token(c, key):
    """A router's lease-get of a missing KEY: its token (> 1)."""
    from test_leases import lease_get
    kind, token, _flags, data = lease_get(c, key)
    assert kind == "lease" and token > 1 and data == b"", (kind, token, data)
    return token


def lease_set_line(key, token, value, flags=0, exptime=0):
    return b"lease-set %s %d %d %d %d\r\n%s\r\n" % (key, token, flags, exptime, len(value), value)


def l2_copy(l2s, key, suffix):
    """The L2 copy of a split lease-set (KEY|==|SUFFIX) on whichever of l2s has it."""
    found = [direct_get(s, key + b"|==|" + suffix) for s in l2s]
    return [v for v in found if v is not None]


def test_size_split_with_several_l2_servers(tmp_path, ithaca_factory, memcached_factory):
    """TestMcrouterBasicL1MultipleL2SizeSplit: a lease-set of a long value
    after a lease-get is split (L1 a sentinel naming KEY|==|R, L2 the value
    under that key, spread over the L2 servers by it), and a get always reads
    the value back."""
    l1 = memcached_factory(args=SERVER_ARGS)
    l2s = [memcached_factory(args=SERVER_ARGS) for _ in range(3)]
    router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_basic_l1_multiple_l2_sizesplit.json", [l1, *l2s])
    long_value = b"foo" * 200
    keys = [b"key%d" % i for i in range(12)]
    holders = set()
    with mcwire.Conn(*router.address) as c:
        for key in keys:
            token = lease_token(c, key)
            assert c.call(lease_set_line(key, token, long_value)) == b"STORED\r\n"
        for key in keys:
            flags, suffix, _ = direct_item(l1, key)
            assert flags & SIZE_SPLIT_FLAG and suffix.isdigit(), (flags, suffix)
            assert l2_copy(l2s, key, suffix) == [long_value]
            holders |= {i for i, s in enumerate(l2s) if direct_get(s, key + b"|==|" + suffix) == long_value}
            assert c.call(b"get " + key + b"\r\n") == b"VALUE %s 0 600\r\n%s\r\nEND\r\n" % (key, long_value)
    assert len(holders) > 1, "every key on one L2 server"


def test_size_split_lease_set_splits_and_lease_get_follows(split_pair):
    """A large lease-set: L2 gets a set of KEY|==|R, L1 the lease-set (its
    token honoured) of R with the sentinel flag; lease-get, get and gets all
    read the value from L2 (gets with L1's CAS). A small one stays in L1,
    and a lease-set with a token memcached did not hand out is refused."""
    router, l1, l2 = split_pair("test_basic_l1_l2_sizesplit.json")
    value = b"foo" * 20
    with mcwire.Conn(*router.address) as c:
        token = lease_token(c, b"key1")
        assert c.call(lease_set_line(b"key1", token, value, flags=3)) == b"STORED\r\n"
        flags, suffix, cas = direct_item(l1, b"key1")
        assert flags == 3 | SIZE_SPLIT_FLAG and suffix.isdigit(), (flags, suffix)
        assert direct_get(l2, b"key1|==|" + suffix) == value and direct_get(l2, b"key1") is None
        assert c.call(b"lease-get key1\r\n") == b"VALUE key1 3 60\r\n%s\r\nEND\r\n" % value
        assert c.call(b"get key1\r\n") == b"VALUE key1 3 60\r\n%s\r\nEND\r\n" % value
        assert c.call(b"gets key1\r\n") == b"VALUE key1 3 60 %d\r\n%s\r\nEND\r\n" % (cas, value)
        assert route_counter(c, "l1l2_size_split", "split_sets") == 1
        # small: L1 only, as it is
        token = lease_token(c, b"key2")
        assert c.call(lease_set_line(b"key2", token, b"tiny")) == b"STORED\r\n"
        assert direct_item(l1, b"key2")[:2] == (0, b"tiny") and direct_get(l2, b"key2") is None
        assert c.call(b"lease-get key2\r\n") == b"VALUE key2 0 4\r\ntiny\r\nEND\r\n"
        # a stale token: L1 refuses the sentinel (L2's copy is an orphan, as in mcrouter)
        token = lease_token(c, b"key3")
        assert c.call(b"set key3 0 0 3\r\nnew\r\n") == b"STORED\r\n"
        assert c.call(lease_set_line(b"key3", token, value)) == b"NOT_STORED\r\n"
        assert c.call(b"get key3\r\n") == b"VALUE key3 0 3\r\nnew\r\nEND\r\n"


def test_size_split_lease_get_of_a_stale_sentinel_is_a_plain_miss(split_pair):
    """A sentinel marked stale in L1 (memcached's md I): L1's lease-get hands
    out a token with the stale sentinel, which the client gets as a plain
    miss with that token (mcrouter's doFilter), never the sentinel's flags;
    the token then fills the key, split again."""
    router, l1, l2 = split_pair("test_basic_l1_l2_sizesplit.json")
    value = b"stale" * 20
    with mcwire.Conn(*router.address) as c:
        assert c.call(set_line(b"k", value, flags=4)) == b"STORED\r\n"
        with mcwire.Conn(l1.host, l1.port) as d:
            assert d.call(b"md k I T30\r\n") == b"HD\r\n"
        from test_leases import lease_get
        kind, token, flags, data = lease_get(c, b"k")
        assert (kind, flags, data) == ("lease", 0, b"") and token > 1
        assert c.call(lease_set_line(b"k", token, value, flags=4)) == b"STORED\r\n"
        assert direct_item(l1, b"k")[0] == 4 | SIZE_SPLIT_FLAG
        assert c.call(b"lease-get k\r\n") == b"VALUE k 4 100\r\n%s\r\nEND\r\n" % value


def test_size_split_both_full_set_lease_set_keeps_the_key(split_pair):
    """both_full_set: a large lease-set goes whole to L1 (its token), then to
    L2 as a plain set of the same key in the background (mcrouter renames
    the key to KEY|==|R in both, which a later get of KEY does not find)."""
    router, l1, l2 = split_pair("test_basic_l1_l2_sizesplit_bothset.json")
    value = b"foo" * 200
    with mcwire.Conn(*router.address) as c:
        token = lease_token(c, b"key")
        assert c.call(lease_set_line(b"key", token, value)) == b"STORED\r\n"
        assert direct_item(l1, b"key")[:2] == (0, value)
        wait_for(lambda: direct_get(l2, b"key") == value, what="the background set on L2")
        assert c.call(b"lease-get key\r\n") == b"VALUE key 0 600\r\n%s\r\nEND\r\n" % value


def test_size_split_lease_get_after_a_dead_sentinel_gets_a_new_token(split_pair):
    """The L2 copy gone: lease-get removes the sentinel and asks L1 again
    (mcrouter's retries), whose miss hands out a token that fills the key."""
    router, l1, l2 = split_pair("test_basic_l1_l2_sizesplit.json")
    value = b"bar" * 30
    with mcwire.Conn(*router.address) as c:
        token = lease_token(c, b"k")
        assert c.call(lease_set_line(b"k", token, value)) == b"STORED\r\n"
        suffix = direct_item(l1, b"k")[1]
        with mcwire.Conn(l2.host, l2.port) as d:
            assert d.call(b"delete k|==|%s\r\n" % suffix) == b"DELETED\r\n"
        token = lease_token(c, b"k")
        assert route_counter(c, "l1l2_size_split", "sentinels_removed") == 1
        assert c.call(lease_set_line(b"k", token, value)) == b"STORED\r\n"
        assert c.call(b"lease-get k\r\n") == b"VALUE k 0 90\r\n%s\r\nEND\r\n" % value


def test_size_split_lease_set_with_l2_down_stays_in_l1_with_failure_ttl(tmp_path, ithaca_factory, memcached_factory):
    """mcrouter's test_l1l2_l1_hit_l2_lookup_fail: L2 gone, a get of a split
    key fails and removes the sentinel; a lease-get then gets a token and the
    lease-set keeps the whole value in L1, its TTL cut to failure_ttl (60 s
    by default), no sentinel."""
    from conftest import free_port
    from test_router import start_memcached_on
    l1 = memcached_factory(args=SERVER_ARGS)
    l2 = start_memcached_on(free_port())  # killed by this test: not the fixture's
    router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_basic_l1_l2_sizesplit.json", [l1, l2])
    value = b"foo" * 20
    with mcwire.Conn(*router.address) as c:
        token = lease_token(c, b"key1")
        assert c.call(lease_set_line(b"key1", token, value)) == b"STORED\r\n"
        assert direct_item(l1, b"key1")[0] & SIZE_SPLIT_FLAG
        l2.stop()
        assert c.call(b"get key1\r\n").startswith(b"SERVER_ERROR ")
        assert direct_get(l1, b"key1") is None
        token = lease_token(c, b"key1")
        assert c.call(lease_set_line(b"key1", token, value, exptime=3600)) == b"STORED\r\n"
        assert c.call(b"get key1\r\n") == b"VALUE key1 0 60\r\n%s\r\nEND\r\n" % value
        flags, data, _ = direct_item(l1, b"key1")
        assert not flags & SIZE_SPLIT_FLAG and data == value
    with mcwire.Conn(l1.host, l1.port) as d:
        ttl = int(re.match(rb"HD t(-?\d+)\r\n$", d.call(b"mg key1 t\r\n")).group(1))
    assert 0 < ttl <= 60, ttl


@pytest.mark.parametrize("name,ok", [("test_basic_l1_l2_sizesplit_retry_valid.json", True),
                                     ("test_basic_l1_l2_sizesplit_retry_invalid.json", False)])
def test_size_split_retries_are_checked(tmp_path, name, ok):
    if ithaca_binary()[1]:
        pytest.skip("an ithaca option (--check-config)")
    from test_mcrouter_config import check_config
    path = tmp_path / name
    path.write_text(SERVER_RE.sub('"127.0.0.1:11211"', MCROUTER_CONFIGS[name]))
    rc, out = check_config(path)
    if ok:
        assert (rc, out) == (0, "configuration OK")
    else:
        assert rc == 1 and "L1L2SizeSplitRoute: maximum number of retries is 10" in out, out


# ---- MigrateRoute (mcrouter/lib/routes/MigrateRoute.h's phases over
# test_migrated_pools.json; mcrouter/test/test_mcrouter_serialized.py,
# TestMigratedPoolsFailover; mcrouter/test/test_migrated_failover.py)


def wait_until(unix_time):
    # A little past it: the server reads time() (the kernel's coarse clock,
    # a tick behind time.time()), and a request sent in the very first
    # milliseconds of the second was still routed as the second before.
    while time.time() < unix_time + 0.1:
        time.sleep(0.05)


def killable_memcached():
    from conftest import free_port
    from test_router import start_memcached_on
    return start_memcached_on(free_port())


def test_migrate_moves_gets_and_sets_and_deletes_go_to_both_meanwhile(tmp_path, ithaca_factory, memcached_factory):
    new, old = memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS)
    # Room for starting three processes on a loaded machine (a sanitized
    # build, parallel tests) before the migration's first interval.
    start = int(time.time()) + 6
    router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_migrated_pools.json", [new, old],
                                   edit=lambda t: t.replace("START_TIME", str(start)))
    for server, value in ((old, b"old"), (new, b"new")):
        for i in range(1, 4):
            direct_set(server, b"get-key-%d" % i, value)
            direct_set(server, b"del-key-%d" % i, value)
    with mcwire.Conn(*router.address) as c:
        # Before the start: everything goes to `from` (old).
        assert time.time() < start
        assert c.call(b"get get-key-1\r\n") == b"VALUE get-key-1 0 3\r\nold\r\nEND\r\n"
        assert c.call(set_line(b"set-key-1", b"1")) == b"STORED\r\n"
        assert c.call(b"delete del-key-1\r\n") == b"DELETED\r\n"
        assert direct_get(old, b"set-key-1") == b"1" and direct_get(new, b"set-key-1") is None
        assert direct_get(old, b"del-key-1") is None and direct_get(new, b"del-key-1") == b"new"
        # The first interval: gets and sets still to old, deletes to both.
        wait_until(start)
        assert c.call(b"get get-key-2\r\n") == b"VALUE get-key-2 0 3\r\nold\r\nEND\r\n"
        assert c.call(set_line(b"set-key-2", b"2")) == b"STORED\r\n"
        assert direct_get(old, b"set-key-2") == b"2" and direct_get(new, b"set-key-2") is None
        assert c.call(b"delete del-key-2\r\n") == b"DELETED\r\n"
        assert direct_get(old, b"del-key-2") is None and direct_get(new, b"del-key-2") is None
        # Deleted on one side only: the worse reply (NOT_FOUND) is the client's.
        assert c.call(b"delete del-key-1\r\n") == b"NOT_FOUND\r\n"
        assert direct_get(new, b"del-key-1") is None
        # After both intervals: everything goes to `to` (new).
        wait_until(start + 2 * 4)
        assert c.call(b"get get-key-3\r\n") == b"VALUE get-key-3 0 3\r\nnew\r\nEND\r\n"
        assert c.call(set_line(b"set-key-3", b"3")) == b"STORED\r\n"
        assert direct_get(new, b"set-key-3") == b"3" and direct_get(old, b"set-key-3") is None
        assert c.call(b"delete del-key-3\r\n") == b"DELETED\r\n"
        assert direct_get(new, b"del-key-3") is None and direct_get(old, b"del-key-3") == b"old"


def test_migrated_pools_failover(tmp_path, ithaca_factory, memcached_factory):
    """TestMigratedPoolsFailover: each side of a gutter is a MigrateRoute;
    the killed old, then new, pool fails over to the B pools' same side."""
    a_new, a_old = killable_memcached(), killable_memcached()
    b_new, b_old = memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS)
    phase_2 = int(time.time()) + 7  # start time: room to start five processes on a loaded machine
    phase_3 = phase_2 + 4
    phase_4 = phase_3 + 4
    try:
        router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_migrated_pools_failover.json",
                                       [a_new, a_old, b_new, b_old],
                                       edit=lambda t: t.replace("START_TIME", str(phase_2)))
        for phase in range(1, 5):
            direct_set(a_old, b"get-key-%d" % phase, b"%d" % phase)
            direct_set(a_new, b"get-key-%d" % phase, b"%d" % (phase * 10))
            direct_set(b_old, b"get-key-%d" % phase, b"%d" % (phase * 100))
            direct_set(b_new, b"get-key-%d" % phase, b"%d" % (phase * 1000))
        with mcwire.Conn(*router.address) as c:
            assert time.time() < phase_2, "the setup took the whole first phase"
            assert mcwire.parse_values(c.call(b"get get-key-1\r\n"))[0][2] == b"1"
            assert c.call(set_line(b"set-key-1", b"42")) == b"STORED\r\n"
            assert direct_get(a_old, b"set-key-1") == b"42"
            a_old.stop()
            assert mcwire.parse_values(c.call(b"get get-key-1\r\n"))[0][2] == b"100"
            assert c.call(set_line(b"set-key-1", b"42")).startswith(b"STORED")
            assert direct_get(b_old, b"set-key-1") == b"42"
            wait_until(phase_2)
            assert time.time() < phase_3
            assert mcwire.parse_values(c.call(b"get get-key-2\r\n"))[0][2] == b"200"
            assert c.call(set_line(b"set-key-2", b"42")).startswith(b"STORED")
            assert direct_get(b_old, b"set-key-2") == b"42"
            wait_until(phase_4 + 1)
            assert mcwire.parse_values(c.call(b"get get-key-3\r\n"))[0][2] == b"30"
            assert c.call(set_line(b"set-key-3", b"424242")) == b"STORED\r\n"
            assert direct_get(a_new, b"set-key-3") == b"424242"
            a_new.stop()
            assert mcwire.parse_values(c.call(b"get get-key-3\r\n"))[0][2] == b"3000"
    finally:
        a_new.stop()
        a_old.stop()


def test_migrated_failover(tmp_path, ithaca_factory, memcached_factory):
    """test_migrated_failover.py: a migration long over (start 0) sends to
    the new pools; the new A killed, the get fails over to the new B."""
    old_a, old_b = memcached_factory(args=SERVER_ARGS), memcached_factory(args=SERVER_ARGS)
    mc_a, mc_b = killable_memcached(), memcached_factory(args=SERVER_ARGS)
    try:
        router = serve_mcrouter_config(tmp_path, ithaca_factory, "test_migrated_failover.json",
                                       [old_a, mc_a, old_b, mc_b])
        direct_set(mc_a, b"key", b"a")
        direct_set(mc_b, b"key", b"b")
        with mcwire.Conn(*router.address) as c:
            assert c.call(b"get key\r\n") == b"VALUE key 0 1\r\na\r\nEND\r\n"
            mc_a.stop()
            wait_for(lambda: c.call(b"get key\r\n") == b"VALUE key 0 1\r\nb\r\nEND\r\n",
                     what="the get failing over to B-new")
    finally:
        mc_a.stop()


# ---- ModifyKeyRoute (mcrouter/test/test_modify_key.py)
#
# mcrouter's config has one route per routing prefix (`routes` with
# `aliases`), which ithaca does not read yet: each route is served on its
# own, and the client's keys carry no routing prefix. So each assertion of
# mcrouter's test is ported without its prefix: mcrouter stores "/b/c/key"
# through /b/c/ as "/b/c/foo:key" (keep_routing_prefix, also dropped: ithaca
# sends the key as it made it); here "key" is stored as "foo:key".
MODIFY_KEY_CASES = [
    # (the route's alias, the client's key, the key the server gets)
    ("/a/a/", b"key", b"/a/b/foo:key"),
    ("/a/a/", b"foo:bar", b"/a/b/foo:bar"),
    ("/a/a/", b"o:", b"/a/b/foo:o:"),
    ("/b/c/", b"key", b"foo:key"),
    ("/c/d/", b"123", b"123"),
    ("/d/e/", b"123", b"123"),
    ("/e/f/", b"akey", b"bar:"),
    ("/e/f/", b"mykeys", b"bar:ys"),
    ("/e/f/", b"key", b"bar:key"),
    ("/e/f/", b"bar:key", b"bar:key"),
    ("/f/g/", b"akey", b"bar:akey"),
    ("/g/h/", b"akey", b"/a/b/bar:"),
    ("/g/h/", b"mykeys", b"/a/b/bar:ys"),
    ("/g/h/", b"key", b"/a/b/bar:key"),
    ("/h/i/", b"mykeys", b"bar:ys"),
    ("/h/i/", b"hi", b"bar:hi"),
    ("/h/i/", b"keys", b"bar:"),
    ("/i/j/", b"keys", b"keys"),
    ("/j/k/", b"foo.sup", b"bar.sup"),
    ("/d/w/", b"foo.sup", b"foo.sup:bar"),
    ("/e/w/", b"akey", b"bar:foo"),
    ("/e/w/", b"mykeys", b"bar:ysfoo"),
    ("/f/w/", b"akey", b"bar:foo"),
    ("/j/k/", b"baz.sup", b"bar.baz.sup"),  # no replace prefix: ensure appends
    ("/j/l/", b"baz.sup", b"bar.baz.supmoot"),
]


def modify_key_route(alias):
    doc = json.loads(MCROUTER_CONFIGS["test_modify_key.json"])
    for entry in doc["routes"]:
        if alias in entry["aliases"]:
            return entry["route"]
    raise KeyError(alias)


@pytest.fixture
def modify_key_router(tmp_path, ithaca_factory, memcached_factory):
    mc = memcached_factory(args=SERVER_ARGS)
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")

    def make(alias):
        path = tmp_path / ("modify_key" + alias.replace("/", "_") + ".json")
        path.write_text(json.dumps({"pools": {"A": {"servers": [f"{mc.host}:{mc.port}"]}},
                                    "route": modify_key_route(alias)}, indent=2))
        return ithaca_factory(args=["--config", str(path)])
    return make, mc


def test_modify_key_rewrites_keys_as_mcrouter(modify_key_router):
    make, mc = modify_key_router
    routers = {}
    for n, (alias, key, stored) in enumerate(MODIFY_KEY_CASES):
        if alias not in routers:
            routers[alias] = make(alias)
        value = b"value%d" % n
        with mcwire.Conn(*routers[alias].address) as c:
            assert c.call(set_line(key, value)) == b"STORED\r\n", (alias, key)
            assert direct_get(mc, stored) == value, (alias, key, stored)
            # Read back through the route: the reply names the client's key.
            assert c.call(b"get " + key + b"\r\n") == b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (key, len(value), value)
        if stored != key:
            assert direct_get(mc, key) is None or key == b"bar:key", (alias, key)


def test_modify_key_multiget_and_invalid_keys(modify_key_router):
    make, mc = modify_key_router
    router = make("/b/c/")  # ensure_key_prefix foo:
    direct_set(mc, b"foo:a", b"1")
    direct_set(mc, b"foo:c", b"3")
    with mcwire.Conn(*router.address) as c:
        assert c.call(b"get a b c foo:a\r\n") == (
            b"VALUE a 0 1\r\n1\r\nVALUE c 0 1\r\n3\r\nVALUE foo:a 0 1\r\n1\r\nEND\r\n")
        # 248 bytes + "foo:" is over 250: mcrouter's LOCAL_ERROR.
        long_key = b"k" * 248
        reply = c.call(set_line(long_key, b"x"))
        assert reply == b"SERVER_ERROR ModifyKeyRoute: invalid key: too long\r\n", reply
        assert c.call(b"delete a\r\n") == b"DELETED\r\n"
        assert direct_get(mc, b"foo:a") is None


def test_modify_key_config_mistakes_are_refused_at_their_line(tmp_path):
    if ithaca_binary()[1]:
        pytest.skip("an ithaca option (--check-config)")
    from test_mcrouter_config import check_config
    path = tmp_path / "mk.json"
    path.write_text('{\n  "pools": {"A": {"servers": ["127.0.0.1:11211"]}},\n'
                    '  "route": {"type": "ModifyKeyRoute", "target": "PoolRoute|A",\n'
                    '            "replace_key_prefix": "a", "modify_inplace": true}\n}\n')
    rc, out = check_config(path)
    assert rc == 1 and "replace_key_prefix and modify_inplace cannot be used together" in out, out
    path.write_text('{\n  "pools": {"A": {"servers": ["127.0.0.1:11211"]}},\n'
                    '  "route": {"type": "ModifyKeyRoute", "target": "PoolRoute|A",\n'
                    '            "set_routing_prefix": "a/b"}\n}\n')
    rc, out = check_config(path)
    assert rc == 1 and f"{path}:4: ModifyKeyRoute: set_routing_prefix" in out, out


# ---- HostIdRoute (mcrouter/test/test_empty_pool.json uses it; mcrouter's
# own test of it is a unit test with a mocked host id)


def host_address():
    """The host's first address that is not loopback or link-local, IPv4
    before IPv6, in interface order (getifaddrs'), as text; "" if none."""
    out = subprocess.run(["ip", "-j", "addr"], capture_output=True, text=True, check=True, timeout=10).stdout
    found = {4: "", 6: ""}
    for iface in json.loads(out):
        for a in iface.get("addr_info", []):
            ip = ipaddress.ip_address(a["local"])
            if ip.is_loopback or ip.is_link_local or found[ip.version]:
                continue
            found[ip.version] = str(ip)
    return found[4] or found[6]


def host_id_child(n, salt=""):
    address = host_address()
    return (zlib.crc32((address + salt).encode()) if address else 0) % n


@pytest.mark.parametrize("salt", ["", "some salt"])
def test_host_id_picks_the_child_of_this_host(tmp_path, ithaca_factory, memcached_factory, salt):
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    backends = [memcached_factory(args=SERVER_ARGS) for _ in range(5)]
    route = {"type": "HostIdRoute", "children": [f"PoolRoute|P{i}" for i in range(5)]}
    if salt:
        route["salt"] = salt
    path = tmp_path / "host_id.json"
    path.write_text(json.dumps({"pools": {f"P{i}": {"servers": [f"{b.host}:{b.port}"]} for i, b in enumerate(backends)},
                                "route": route}))
    router = ithaca_factory(args=["--config", str(path)])
    keys = [b"k%d" % i for i in range(20)]
    with mcwire.Conn(*router.address) as c:
        for key in keys:
            assert c.call(set_line(key, b"v")) == b"STORED\r\n"
    chosen = host_id_child(5, salt)
    for i, b in enumerate(backends):
        held = [key for key in keys if direct_get(b, key) is not None]
        assert held == (keys if i == chosen else []), (i, chosen, host_address())


def test_host_id_short_form_and_the_empty_pool_sample(tmp_path, ithaca_factory, memcached_factory):
    """"HostIdRoute|Pool|A": one of A's servers for every key. mcrouter's
    test_empty_pool.json (its HostIdRoute and LatestRoute over an empty pool
    are NullRoutes, its PoolRoute an error: test_routes_mcrouter_c.py serves
    it) is taken, and so is a LatestRoute over several children
    (test_mcrouter_config_loading.py serves one)."""
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    from test_mcrouter_config import check_config
    backends = [memcached_factory(args=SERVER_ARGS) for _ in range(3)]
    servers = json.dumps([f"{b.host}:{b.port}" for b in backends])
    path = tmp_path / "short.json"
    path.write_text('{"pools": {"A": {"servers": %s}}, "route": "HostIdRoute|Pool|A"}' % servers)
    router = ithaca_factory(args=["--config", str(path)])
    keys = [b"k%d" % i for i in range(20)]
    with mcwire.Conn(*router.address) as c:
        for key in keys:
            assert c.call(set_line(key, b"v")) == b"STORED\r\n"
    held = [i for i, b in enumerate(backends) for key in keys if direct_get(b, key) is not None]
    assert held == [host_id_child(3)] * len(keys)
    sample = tmp_path / "test_empty_pool.json"
    sample.write_text(MCROUTER_CONFIGS["test_empty_pool.json"])
    assert check_config(sample) == (0, "configuration OK")
    sample.write_text(MCROUTER_CONFIGS["test_empty_pool.json"].replace(
        '"servers": []', '"servers": ["127.0.0.1:1", "127.0.0.1:2"]'))
    assert check_config(sample) == (0, "configuration OK")


# ---- LoggingRoute (mcrouter/test/test_logging_route.py: mcrouter wraps its
# root in a LoggingRoute with --enable-logging-route, tested in
# test_mcrouter_cli.py; the same pool under an explicit LoggingRoute here)


def logging_config(name):
    """mcrouter's config with its route under a LoggingRoute."""
    doc = json.loads(MCROUTER_CONFIGS[name])
    for pool in doc["pools"].values():
        pool.pop("protocol", None)  # caret: see no_caret()
    doc["route"] = {"type": "LoggingRoute", "target": doc["route"]}
    return json.dumps(doc, indent=2)


def test_logging_route_logs_hits_and_stored_writes(tmp_path, ithaca_factory, memcached_factory):
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    mc = memcached_factory(args=SERVER_ARGS)
    path = tmp_path / "logging.json"
    path.write_text(SERVER_RE.sub(f'"{mc.host}:{mc.port}"', logging_config("test_logging_route_mc.json")))
    router = ithaca_factory(args=["-v", "--config", str(path)])  # -v: info lines
    with mcwire.Conn(*router.address) as c:
        assert c.call(set_line(b"foo", b"value")) == b"STORED\r\n"
        assert c.call(b"get foo\r\n") == b"VALUE foo 0 5\r\nvalue\r\nEND\r\n"
        assert direct_get(mc, b"foo") == b"value"
        assert c.call(b"get missing\r\n") == b"END\r\n"
        assert c.call(b"add foo 0 0 1\r\nx\r\n") == b"NOT_STORED\r\n"
        assert router.logged("logging route logging: set foo: stored (5 bytes)")
        assert router.logged("logging route logging: get foo: hit (flags 0, 5 bytes)")
        assert route_counter(c, "logging", "logged_replies") == 2
    assert "missing" not in router.log and "add foo" not in router.log


def test_logging_route_without_target_answers_as_null(tmp_path, ithaca_factory, memcached_factory):
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")
    mc = memcached_factory(args=SERVER_ARGS)
    doc = json.loads(SERVER_RE.sub(f'"{mc.host}:{mc.port}"', logging_config("test_logging_route_server.json")))
    # mcrouter's second config's pools, a prefix selector over them: the
    # LoggingRoute without target answers as a NullRoute.
    doc["route"] = {"type": "PrefixSelectorRoute", "policies": {"none:": {"type": "LoggingRoute"}},
                    "wildcard": {"type": "LoggingRoute", "target": "PoolRoute|mcr"}}
    path = tmp_path / "logging2.json"
    path.write_text(json.dumps(doc))
    router = ithaca_factory(args=["--config", str(path)])
    with mcwire.Conn(*router.address) as c:
        assert c.call(set_line(b"none:k", b"v")) == b"NOT_STORED\r\n"
        assert c.call(b"get none:k\r\n") == b"END\r\n"
        assert c.call(set_line(b"k", b"v")) == b"STORED\r\n"
        assert c.call(b"get k\r\n") == b"VALUE k 0 1\r\nv\r\nEND\r\n"
