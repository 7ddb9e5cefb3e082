"""mcrouter's error words where its clients match on them (issue 32), through
`ithaca --mcrouter` in front of a real memcached, and the router role's
failure texts in every dialect:

- a key over 250 bytes is `CLIENT_ERROR bad key` for get, set (its value
  swallowed: the next request on the connection is served), delete, append;
- a line mcrouter's parser would not read (`get` with no key, an unknown
  command) is `CLIENT_ERROR malformed request` and the connection closes;
  the requests before it on the same connection are answered first;
- flush_all without --enable-flush-cmd is `SERVER_ERROR Command disabled`,
  and with it reaches memcached (the key is gone);
- a server that never answers: `SERVER_ERROR Reply timeout`; with
  --timeouts-until-tko 1 the next request is `SERVER_ERROR Server
  unavailable. Reason: mc_res_timeout`;
- a server on port 0 (mcrouter accepts `localhost:0`; every connect is
  refused): the refused connect in mcrouter's words (folly's
  AsyncSocketException message, which its client puts in the reply), then
  `Server unavailable. Reason: mc_res_connect_error` while it is marked down;
- an ithaca YAML config keeps memcached's own parse errors (`CLIENT_ERROR
  bad command line format`, `ERROR`, the connection open) while its backend
  failures use the same words as mcrouter's.
"""
import json
import os

import pytest

import conftest
from conftest import HOST, Server, free_port
from fake_backend import FakeBackend
from mcwire import Conn

LONG_KEY = "k" + "x" * 300


def ithaca_path():
    path, is_memcached = conftest.ithaca_binary()
    if is_memcached:
        pytest.fail("this test runs ithaca's mcrouter entry point: it cannot run with ITHACA_BIN=memcached",
                    pytrace=False)
    return os.path.abspath(path)


@pytest.fixture
def mcrouter():
    """mcrouter(servers, *flags) -> Server running `ithaca --mcrouter` with one
    pool of `servers` ("host:port" strings); stopped at teardown."""
    started = []

    def start(servers, *flags):
        port = free_port()
        cfg = json.dumps({"pools": {"A": {"servers": servers}}, "route": "PoolRoute|A"})
        server = Server("ithaca", [ithaca_path(), "--mcrouter", "--config-str", cfg, "-p", str(port), *flags])
        server.port = port
        started.append(server)
        assert server.wait_accepting(10), server.describe()
        return server

    yield start
    for s in started:
        rc, killed = s.stop()
        assert rc == 0 and not killed, s.describe()


@pytest.fixture
def hung():
    fb = FakeBackend("hang")
    yield fb
    fb.close()


def test_bad_key_is_mcrouters(mcrouter, memcached):
    r = mcrouter([f"{HOST}:{memcached.port}"])
    with Conn(HOST, r.port) as c:
        assert c.call(f"get {LONG_KEY}\r\n".encode()) == b"CLIENT_ERROR bad key\r\n"
        # The value of a refused set is swallowed: the next request is served.
        assert c.call(f"set {LONG_KEY} 0 0 3\r\nabc\r\n".encode()) == b"CLIENT_ERROR bad key\r\n"
        assert c.call(b"set ok 0 0 2\r\nhi\r\n") == b"STORED\r\n"
        assert c.call(f"delete {LONG_KEY}\r\n".encode()) == b"CLIENT_ERROR bad key\r\n"
        assert c.call(f"append {LONG_KEY} 0 0 3\r\nabc\r\n".encode()) == b"CLIENT_ERROR bad key\r\n"
        assert c.call(b"get ok\r\n") == b"VALUE ok 0 2\r\nhi\r\nEND\r\n"
    with Conn(HOST, memcached.port) as m:
        assert m.call(b"get ok\r\n") == b"VALUE ok 0 2\r\nhi\r\nEND\r\n"


@pytest.mark.parametrize("bad", [b"get\r\n", b"frobnicate x\r\n", b"set k 0 0 notanumber\r\n"])
def test_malformed_request_closes(mcrouter, memcached, bad):
    r = mcrouter([f"{HOST}:{memcached.port}"])
    with Conn(HOST, r.port) as c:
        c.send(b"set a 0 0 1\r\n1\r\n" + bad + b"get a\r\n")
        assert c.read_line() == b"STORED\r\n"
        assert c.read_line() == b"CLIENT_ERROR malformed request\r\n"
        assert c.is_closed(5), "the connection stays open after a malformed request"
    # Other connections are served as before.
    with Conn(HOST, r.port) as c:
        assert c.call(b"get a\r\n") == b"VALUE a 0 1\r\n1\r\nEND\r\n"


def test_flush_all_disabled_then_enabled(mcrouter, memcached):
    off = mcrouter([f"{HOST}:{memcached.port}"])
    with Conn(HOST, off.port) as c:
        assert c.call(b"set f 0 0 1\r\nx\r\n") == b"STORED\r\n"
        assert c.call(b"flush_all\r\n") == b"SERVER_ERROR Command disabled\r\n"
        assert c.call(b"get f\r\n") == b"VALUE f 0 1\r\nx\r\nEND\r\n"
    on = mcrouter([f"{HOST}:{memcached.port}"], "--enable-flush-cmd")
    with Conn(HOST, on.port) as c:
        assert c.call(b"flush_all\r\n") == b"OK\r\n"
    with Conn(HOST, memcached.port) as m:
        assert m.call(b"get f\r\n") == b"END\r\n"


def test_timeout_then_tko(mcrouter, hung):
    r = mcrouter([hung.address], "--server-timeout", "300", "--timeouts-until-tko", "1")
    with Conn(HOST, r.port) as c:
        assert c.call(b"set k 0 0 1\r\nx\r\n") == b"SERVER_ERROR Reply timeout\r\n"
        assert c.call(b"set k 0 0 1\r\nx\r\n") == b"SERVER_ERROR Server unavailable. Reason: mc_res_timeout\r\n"
        assert c.call(b"get k\r\n") == b"SERVER_ERROR Server unavailable. Reason: mc_res_timeout\r\n"


def test_port_zero_is_a_refused_server(mcrouter):
    r = mcrouter(["localhost:0"])
    with Conn(HOST, r.port) as c:
        assert c.call(b"set k 0 0 1\r\nx\r\n") == (b"SERVER_ERROR AsyncSocketException: connect failed, "
                                                  b"type = Socket not open, errno = 111 (Connection refused)\r\n")
        # A refused connect marks the server down at once.
        assert c.call(b"get k\r\n") == b"SERVER_ERROR Server unavailable. Reason: mc_res_connect_error\r\n"


def test_yaml_router_keeps_memcacheds_parse_errors(ithaca_factory, hung):
    server = ithaca_factory(config_text=f"""
pools:
  p:
    servers: ["{hung.address}"]
    protocol: ascii
    timeout: 300ms
    failure_limit: 1
route:
  type: pool
  pool: p
""")
    with Conn(HOST, server.port) as c:
        assert c.call(f"get {LONG_KEY}\r\n".encode()) == b"CLIENT_ERROR bad command line format\r\n"
        assert c.call(b"frobnicate\r\n") == b"ERROR\r\n"
        assert c.call(b"get k\r\n") == b"SERVER_ERROR Reply timeout\r\n"
        assert c.call(b"get k\r\n") == b"SERVER_ERROR Server unavailable. Reason: mc_res_timeout\r\n"
        assert c.call(b"flush_all\r\n") == b"SERVER_ERROR Command disabled\r\n"
