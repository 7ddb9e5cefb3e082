"""The router speaks TLS to its backend servers (issue 19): a pool's `tls:`
(or `router.tls:`, or mcrouter's `use_ssl` with --pem-* flags) in front of
Debian's `memcached -Z`. Certificates are made by the test with `openssl`
(test_tls.py's `certs`: ca, server with IP:127.0.0.1 and localhost, client,
and a stranger from another CA). Every Debian memcached port is TLS with -Z,
so an answer through the router proves it spoke TLS."""
import signal
import ssl
import subprocess

import pytest

import mcwire
from conftest import HOST, ithaca_binary
from test_reload import reload_with
from test_router import addr, stats, wait_for
from test_tls import OPENSSL, certs  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed")


def memcached_tls(factory, certs, extra=""):
    opts = f"ssl_chain_cert={certs / 'server.pem'},ssl_key={certs / 'server.key'}"
    return factory(args=["-Z", "-o", opts + ("," + extra if extra else ""), "-I", "1m"])


def tls_yaml(servers, tls, *, protocol="ascii", workers=1, router_tls=None, extra="", io_backend="auto"):
    lines = ["logging:", "  level: info", "server:", f"  workers: {workers}", f"  io_backend: {io_backend}"]
    if router_tls:
        lines += ["router:", "  tls:"] + [f"    {k}: {v}" for k, v in router_tls.items()]
    lines += ["pools:", "  main:", "    servers: [" + ", ".join(f'"{s}"' for s in servers) + "]",
              f"    protocol: {protocol}", "    timeout: 5s", "    connect_timeout: 2s",
              "    retry_interval: 200ms", "    retry_interval_max: 400ms"]
    if isinstance(tls, dict):
        lines += ["    tls:"] + [f"      {k}: {v}" for k, v in tls.items()]
    else:
        lines += [f"    tls: {tls}"]
    lines += [extra] if extra else []
    lines += ["route:", "  type: pool", "  pool: main"]
    return "\n".join(lines) + "\n"


def backend_stats(server, certs):
    """`stats` of a memcached -Z, asked over TLS."""
    ctx = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    with mcwire.Conn(server.host, server.port) as c:
        c.sock = ctx.wrap_socket(c.sock, server_hostname="localhost")
        return mcwire.parse_stats(c.call(b"stats\r\n"))


def server_stats(conn, server):
    s = stats(conn, "servers")
    prefix = f"main/{addr(server)}:"
    return {k[len(prefix):]: v for k, v in s.items() if k.startswith(prefix)}


@pytest.mark.parametrize("io_backend", ["io_uring", "epoll"])
@pytest.mark.parametrize("protocol", ["ascii", "meta", "auto"])
def test_sets_gets_multigets_and_a_large_value_over_tls(ithaca_factory, memcached_factory, certs, protocol,
                                                        io_backend):
    backends = [memcached_tls(memcached_factory, certs) for _ in range(2)]
    tls = {"ca_cert": certs / "ca.pem", "server_name": "localhost"}
    router = ithaca_factory(config_text=tls_yaml([addr(b) for b in backends], tls, protocol=protocol,
                                                 io_backend=io_backend))
    keys = [b"tk:%d" % i for i in range(60)]
    big = bytes(range(256)) * 1024  # 256 KiB: many TLS records each way
    with mcwire.Conn(router.host, router.port) as c:
        for k in keys:
            assert c.call(b"set %s 3 0 %d\r\n%s\r\n" % (k, len(k), k)) == b"STORED\r\n"
        for k in keys[:5]:
            assert c.call(b"get %s\r\n" % k) == b"VALUE %s 3 %d\r\n%s\r\nEND\r\n" % (k, len(k), k)
        reply = c.call(b"get " + b" ".join(keys) + b"\r\n")
        for k in keys:
            assert b"VALUE %s 3 %d\r\n%s\r\n" % (k, len(k), k) in reply
        assert reply.endswith(b"END\r\n")
        assert c.call(b"set big 0 0 %d\r\n%s\r\n" % (len(big), big)) == b"STORED\r\n"
        assert c.call(b"get big\r\n") == b"VALUE big 0 %d\r\n%s\r\nEND\r\n" % (len(big), big)
        # Pipelined: many requests in flight on the one TLS connection.
        c.send(b"".join(b"get %s\r\n" % k for k in keys))
        for k in keys:
            assert c.read_reply() == b"VALUE %s 3 %d\r\n%s\r\nEND\r\n" % (k, len(k), k)
        for b in backends:
            st = server_stats(c, b)
            assert st["state"] == "up"
            assert st["tls"] == "on (verify)"
            assert st["protocol"] == ("meta" if protocol != "ascii" else "ascii")
            assert "last_error" not in st
    # The data is on the TLS memcacheds.
    assert sum(int(backend_stats(b, certs)["curr_items"]) for b in backends) == len(keys) + 1


def test_a_wrong_ca_refuses_the_server_as_a_down_one(ithaca_factory, memcached_factory, certs):
    backend = memcached_tls(memcached_factory, certs)
    tls = {"ca_cert": certs / "otherca.pem"}
    router = ithaca_factory(config_text=tls_yaml([addr(backend)], tls))
    with mcwire.Conn(router.host, router.port) as c:
        # The failed connect's answer, then the down server's (fail fast),
        # exactly as for a refused connect.
        assert c.call(b"get k\r\n") == b"SERVER_ERROR connection error\r\n"
        st = server_stats(c, backend)
        assert st["state"] == "down", st
        assert "certificate verify failed" in st["last_error"], st
        assert int(st["failures_connect"]) >= 1
        # Fail fast while it is down, and the prober keeps failing on TLS.
        assert c.call(b"set k 0 0 1\r\nx\r\n") == b"SERVER_ERROR Server unavailable. Reason: mc_res_connect_error\r\n"
    # The log is written by its own thread: the line may trail the replies.
    wait_for(lambda: "certificate verify failed" in router.log, 5, "the TLS failure in the log")


def test_no_verification_without_a_ca(ithaca_factory, memcached_factory, certs):
    backend = memcached_tls(memcached_factory, certs)
    router = ithaca_factory(config_text=tls_yaml([addr(backend)], "true"))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"set k 0 0 2\r\nhi\r\n") == b"STORED\r\n"
        assert server_stats(c, backend)["tls"] == "on (no verify)"


def test_a_wrong_server_name_is_refused(ithaca_factory, memcached_factory, certs):
    backend = memcached_tls(memcached_factory, certs)
    tls = {"ca_cert": certs / "ca.pem", "server_name": "cache.example.org"}
    router = ithaca_factory(config_text=tls_yaml([addr(backend)], tls))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"get k\r\n").startswith(b"SERVER_ERROR")
        assert "certificate verify failed" in server_stats(c, backend)["last_error"]


def test_a_client_certificate_required_by_memcached(ithaca_factory, memcached_factory, certs):
    backend = memcached_tls(memcached_factory, certs, f"ssl_verify_mode=3,ssl_ca_cert={certs / 'ca.pem'}")
    # Without a certificate memcached refuses the connection (TLS 1.3: after
    # the router's side of the handshake, on the first read).
    plain = ithaca_factory(config_text=tls_yaml([addr(backend)], {"ca_cert": certs / "ca.pem"}))
    with mcwire.Conn(plain.host, plain.port) as c:
        assert c.call(b"get k\r\n").startswith(b"SERVER_ERROR")
    tls = {"ca_cert": certs / "ca.pem", "chain_cert": certs / "client.pem", "key": certs / "client.key"}
    router = ithaca_factory(config_text=tls_yaml([addr(backend)], tls))
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"set k 0 0 5\r\nhello\r\n") == b"STORED\r\n"
        assert c.call(b"get k\r\n") == b"VALUE k 0 5\r\nhello\r\nEND\r\n"
        assert server_stats(c, backend)["tls"] == "on (verify, client certificate)"


def test_router_tls_defaults_and_a_reload_keeps_or_renews_connections(ithaca_factory, memcached_factory, certs):
    backend = memcached_tls(memcached_factory, certs)
    defaults = {"ca_cert": certs / "ca.pem", "server_name": "localhost"}
    text = tls_yaml([addr(backend)], "true", router_tls=defaults)
    router = ithaca_factory(config_text=text)
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"set k 0 0 1\r\na\r\n") == b"STORED\r\n"
        assert server_stats(c, backend)["tls"] == "on (verify)"
        before = int(backend_stats(backend, certs)["total_connections"])
        # The same settings: the connection stays (no new one on the backend).
        reload_with(router, text)
        assert c.call(b"get k\r\n") == b"VALUE k 0 1\r\na\r\nEND\r\n"
        # backend_stats itself is one more connection.
        assert int(backend_stats(backend, certs)["total_connections"]) == before + 1
        # TLS settings changed: the pool's servers get new connections.
        reload_with(router, tls_yaml([addr(backend)], {"min_version": "tlsv1.3"}, router_tls=defaults))
        assert c.call(b"get k\r\n") == b"VALUE k 0 1\r\na\r\nEND\r\n"
        assert int(backend_stats(backend, certs)["total_connections"]) >= before + 3


def start_memcached_tls_on(port, certs):
    """A memcached -Z on a given port (a killed backend's, brought back)."""
    from conftest import BASE_ARGS, Server, memcached_binary, root_args
    opts = f"ssl_chain_cert={certs / 'server.pem'},ssl_key={certs / 'server.key'}"
    server = Server("memcached", [memcached_binary(), *root_args(), *BASE_ARGS, "-p", str(port), "-Z", "-o", opts],
                    stop_signal=signal.SIGKILL)
    server.port = port
    assert server.wait_accepting(10), server.describe()
    return server


def test_the_prober_brings_a_restarted_tls_server_back(ithaca_factory, certs):
    from conftest import free_port
    port = free_port()
    backend = start_memcached_tls_on(port, certs)
    try:
        tls = {"ca_cert": certs / "ca.pem", "server_name": "localhost"}
        router = ithaca_factory(config_text=tls_yaml([f"{HOST}:{port}"], tls))
        with mcwire.Conn(router.host, router.port) as c:
            assert c.call(b"set k 0 0 1\r\na\r\n") == b"STORED\r\n"
            backend.stop()
            assert c.call(b"get k\r\n").startswith(b"SERVER_ERROR")
            assert wait_for(lambda: server_stats(c, backend)["state"] == "down", 5, "the server marked down")
            backend = start_memcached_tls_on(port, certs)
            # The prober's `version` must go over TLS for the server to be up again.
            assert wait_for(lambda: server_stats(c, backend)["state"] == "up", 5, "the prober to bring it back")
            assert c.call(b"set k 0 0 1\r\nb\r\n") == b"STORED\r\n"
            assert c.call(b"get k\r\n") == b"VALUE k 0 1\r\nb\r\nEND\r\n"
            assert "last_error" not in server_stats(c, backend)
    finally:
        backend.stop()


def test_mcrouter_config_with_use_ssl_and_pem_flags(ithaca_factory, memcached_factory, certs, tmp_path):
    backend = memcached_tls(memcached_factory, certs)
    config = ('{"pools": {"A": {"servers": ["%s"], "use_ssl": true}},\n "route": "PoolRoute|A"}\n'
              % addr(backend))
    router = ithaca_factory(["--pem-ca-path", str(certs / "ca.pem"), "--pem-cert-path", str(certs / "client.pem"),
                             "--pem-key-path", str(certs / "client.key")], config_text=config)
    with mcwire.Conn(router.host, router.port) as c:
        assert c.call(b"set m 0 0 3\r\nabc\r\n") == b"STORED\r\n"
        assert c.call(b"get m\r\n") == b"VALUE m 0 3\r\nabc\r\nEND\r\n"
        # mcrouter's `stats servers` keys the destination with its security.
        assert list(stats(c, "servers")) == [f"{addr(backend)}:ascii:ssl:notcompressed-1000"]
        st = stats(c, "ithaca_servers")
        assert st[f"A/{addr(backend)}:tls"] == "on (verify, client certificate)"


# --- configuration errors ---------------------------------------------------------------------------


def run(*args, config=None, tmp_path=None):
    binary, is_memcached = ithaca_binary()
    if is_memcached:
        pytest.skip("ithaca's own options")
    argv = [binary, "-p", "0", "-l", HOST, "-U", "0", *args]
    if config is not None:
        path = tmp_path / "c.yaml"
        path.write_text(config)
        argv += ["--config", str(path)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=10)


@pytest.mark.parametrize("tls, message", [
    ("maybe", "tls: expected true, false or a mapping"),
    ({"verify": "sometimes"}, "verify: expected true or false, got 'sometimes'"),
    ({"min_version": "tlsv2"}, "min_version: expected tlsv1.0, tlsv1.1, tlsv1.2 or tlsv1.3, got 'tlsv2'"),
    ({"ca_cert": "/nonexistent/ca.pem"}, "pool 'main': tls: ca_cert /nonexistent/ca.pem: No such file or directory"),
    ({"key": "/etc/hostname"}, "key is given without chain_cert"),
    ({"colour": "blue"}, "colour"),
])
def test_check_config_refuses_bad_tls_settings(tmp_path, tls, message):
    p = run("--check-config", config=tls_yaml(["127.0.0.1:1"], tls), tmp_path=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert message in p.stderr, p.stderr


def test_a_certificate_file_that_is_not_one_fails_the_start(tmp_path):
    bad = tmp_path / "bad.pem"
    bad.write_text("not a certificate\n")
    text = tls_yaml(["127.0.0.1:1"], {"ca_cert": bad})
    assert run("--check-config", config=text, tmp_path=tmp_path).returncode == 0  # readable: checked at start
    p = run(config=text, tmp_path=tmp_path)
    assert p.returncode != 0
    assert f"pool 'main': tls: ca_cert {bad}" in p.stderr + p.stdout, p.stderr


def test_mcrouter_security_mech_other_than_tls_is_refused(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{"pools": {"A": {"servers": ["127.0.0.1:1"], "security_mech": "tls_to_plain"}},'
                    ' "route": "PoolRoute|A"}')
    p = run("--check-config", "--config", str(path))
    assert p.returncode == 1
    assert "security_mech 'tls_to_plain' is not supported" in p.stderr, p.stderr


def tls_conn_to(server, certs):
    ctx = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    c = mcwire.Conn(server.host, server.port)
    c.sock = ctx.wrap_socket(c.sock, server_hostname="localhost")
    return c


def test_spooled_deletes_are_replayed_over_tls(ithaca_factory, certs, tmp_path):
    from conftest import free_port
    port = free_port()
    backend = start_memcached_tls_on(port, certs)
    keys = [b"rd:%d" % i for i in range(10)]
    tls = {"ca_cert": certs / "ca.pem", "server_name": "localhost"}
    extra = "\n".join(["router:", f"  spool_dir: {tmp_path / 'spool'}"])
    text = tls_yaml([f"{HOST}:{port}"], tls).replace("  pool: main\n", "  pool: main\n  reliable_deletes: true\n")
    text = text.replace("retry_interval: 200ms", "retry_interval: 1500ms").replace(
        "retry_interval_max: 400ms", "retry_interval_max: 1500ms")
    router = ithaca_factory(config_text=extra + "\n" + text)
    try:
        with mcwire.Conn(router.host, router.port) as c:
            for k in keys:
                assert c.call(b"set %s 0 0 3\r\nold\r\n" % k) == b"STORED\r\n"
            backend.stop()
            for k in keys:  # spooled: mcrouter's answer
                assert c.call(b"delete %s\r\n" % k) == b"NOT_FOUND\r\n"
            backend = start_memcached_tls_on(port, certs)
            with tls_conn_to(backend, certs) as d:  # a server that kept its data
                for k in keys:
                    assert d.call(b"set %s 0 0 3\r\nold\r\n" % k) == b"STORED\r\n"
            # Marked up only once the replay, over TLS, took every delete.
            assert wait_for(lambda: server_stats(c, backend)["state"] == "up", 10, "the replay and the prober")
            assert server_stats(c, backend)["deletes_replayed"] == str(len(keys))
            with tls_conn_to(backend, certs) as d:
                for k in keys:
                    assert d.call(b"get %s\r\n" % k) == b"END\r\n"
    finally:
        backend.stop()
