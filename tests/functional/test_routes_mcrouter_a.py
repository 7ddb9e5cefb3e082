"""mcrouter's route kinds of set A served from mcrouter's own test configs
(facebook/mcrouter, mcrouter/test/*.json, MIT licence), each copied below as
it is with a line naming it: `dev_null` (DevNullRoute), ... . Each config's
`localhost:PORT` servers are mapped to real memcacheds this test starts, and
each test asserts what mcrouter's own Python test (named in it) asserts over
the same config; the assertions are ported, the code is ours."""

import re

import pytest

import mcwire
from conftest import ithaca_binary
from test_ascii_diff import SERVER_ARGS
from test_router import stats

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
}

SERVER_RE = re.compile(r'"(?:localhost|127\.0\.0\.1):(\d+)"')


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
        # mcrouter counts dev_null_requests in `stats all`; ithaca per route.
        assert route_counter(c, "dev_null", "dev_null_requests") == 2
        # A get through it misses; it is counted too.
        assert c.call(b"get null:key\r\n") == b"END\r\n"
        assert route_counter(c, "dev_null", "dev_null_requests") == 3

