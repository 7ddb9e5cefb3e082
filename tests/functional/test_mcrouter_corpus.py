"""mcrouter's own test configs, every one (mcrouter_corpus/, from
facebook/mcrouter's mcrouter/test/ and mcrouter/test/cpp_unit_tests/files/,
MIT licence): each that needs no caret or thrift backend is accepted by
`--check-config` unless listed below with the reason ithaca still refuses
it, and ithaca started on it, its servers mapped to real memcacheds, serves
set, get and delete. A config that starts being accepted fails this test
until it leaves the list, so the list is what ithaca refuses today.
`scripts/mcrouter-corpus` prints the same table."""
import re

import pytest

import mcrouter_corpus as corpus
from conftest import ithaca_binary
from mcwire import Conn

# What ithaca still refuses, and the words it says it with.
STILL_REFUSED = {
}

CONFIGS = dict(corpus.configs())


def kind(name):
    if name in corpus.INVALID_ON_PURPOSE:
        return "invalid"
    if corpus.needs_caret_or_thrift(CONFIGS[name]):
        return "caret/thrift"
    return "refused" if name in STILL_REFUSED else "accepted"


def binary_or_skip():
    binary, is_memcached = ithaca_binary()
    if is_memcached:
        pytest.skip("an ithaca option (--check-config)")
    return binary


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_check_config(name):
    ok, first = corpus.check(binary_or_skip(), name, CONFIGS[name])
    expected = kind(name)
    if expected == "accepted":
        assert ok, f"{name} is refused: {first}"
    elif expected == "refused":
        assert not ok, f"{name} is accepted now: take it out of STILL_REFUSED"
        assert STILL_REFUSED[name] in first, first
    else:
        # Refused at a line, saying what (caret, thrift, or the invalid part).
        assert not ok and re.match(re.escape(name) + r":\d+: ", first), first


SERVER = re.compile(r"\b(?:localhost|127\.0\.0\.1):(\d+)\b")
REPLY = re.compile(rb"^(STORED|NOT_STORED|EXISTS|NOT_FOUND|DELETED|END|VALUE |SERVER_ERROR |CLIENT_ERROR )")


@pytest.mark.parametrize("name", sorted(n for n in CONFIGS if kind(n) == "accepted"))
def test_serves_set_get_delete(tmp_path, name, ithaca_factory, memcached_factory):
    """Every server of the config is one of two real memcacheds; set, get and
    delete get a reply a client can read (a NullRoute's NOT_STORED, an
    ErrorRoute's SERVER_ERROR, ...) and the server goes on serving."""
    binary_or_skip()
    # Each listens on 127.0.0.1 to 127.0.0.32, so each server of the config
    # is an address of its own (a server listed twice is a config's choice).
    more = ",".join(f"127.0.0.{i}" for i in range(2, 33))
    backends = [memcached_factory(args=["-l", more]), memcached_factory(args=["-l", more])]
    servers = {}

    def mapped(m):
        if m.group(1) not in servers:
            n = len(servers)
            servers[m.group(1)] = f"127.0.0.{1 + n // 2}:{backends[n % 2].port}"
        return servers[m.group(1)]

    text = SERVER.sub(mapped, corpus.fill(CONFIGS[name]))
    params = ",".join(f"{k}:{backends[0].port if k.startswith('PORT') else v}"
                      for k, v in (p.split(":") for p in corpus.CONFIG_PARAMS.split(",")))
    for path in corpus.CORPUS.glob("*.json"):  # what it imports, beside it
        (tmp_path / path.name).write_text(SERVER.sub(mapped, corpus.fill(path.read_text())))
    conf = tmp_path / name
    conf.write_text(text)
    router = ithaca_factory(args=["--config-params", params, "--config", str(conf)])
    with Conn(router.host, router.port) as c:
        for request in (b"set corpus-key 0 0 5\r\nvalue\r\n", b"get corpus-key\r\n", b"delete corpus-key\r\n"):
            reply = c.call(request)
            assert REPLY.match(reply), (request, reply)
        assert c.call(b"version\r\n").startswith(b"VERSION ")
    assert router.proc.poll() is None
