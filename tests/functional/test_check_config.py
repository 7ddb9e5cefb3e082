"""--check-config catches what the start (or a later reload) would trip on,
beyond the file's own consistency (issue 29): a TLS file that cannot be read
is an error naming the key and the file; a server written without a port and
a port another process holds now are warnings on stderr, and the file is
still "configuration OK". The start logs the portless server's warning too,
and that server does take 11211."""

import socket

from conftest import HOST, free_port
from mcwire import Conn
from test_router import wait_for
from test_operations import run_check


def check(tmp_path, text):
    (tmp_path / "c.yaml").write_text(text)
    r = run_check(["--config", "c.yaml", "--check-config"], tmp_path)
    return r.returncode, r.stdout, r.stderr


def test_a_client_tls_certificate_that_does_not_exist_is_an_error(tmp_path):
    rc, out, err = check(tmp_path, f"listen:\n  tcp: [\"{HOST}:{free_port()}\"]\n"
                                   f"tls:\n  enabled: true\n  chain_cert: {tmp_path}/missing.pem\n"
                                   f"  key: {tmp_path}/missing.key\n")
    assert rc == 1, out + err
    assert f"tls.chain_cert (ssl_chain_cert) {tmp_path}/missing.pem: No such file or directory" in err, err
    assert "configuration OK" not in out


def test_router_tls_files_are_checked_before_a_pool_uses_them(tmp_path):
    # No pool speaks TLS yet; a reload that turns one on would fail on it.
    rc, out, err = check(tmp_path, f"router:\n  tls:\n    ca_cert: {tmp_path}/ca.pem\n"
                                   "pools:\n  main:\n    servers: [\"127.0.0.1:11311\"]\n"
                                   "route:\n  type: pool\n  pool: main\n")
    assert rc == 1, out + err
    assert f"router.tls.ca_cert {tmp_path}/ca.pem: No such file or directory" in err, err


def test_a_server_without_a_port_is_a_warning_that_names_the_port_it_takes(tmp_path):
    rc, out, err = check(tmp_path, "pools:\n  main:\n    servers: [\"127.0.0.1\", \"127.0.0.2:11311\"]\n"
                                   "route:\n  type: pool\n  pool: main\n")
    assert rc == 0, out + err
    assert out.strip() == "configuration OK"
    assert "warning: pool 'main': server '127.0.0.1' has no port; it takes 11211 (127.0.0.1:11211)" in err, err
    assert "127.0.0.2" not in err


def test_the_portless_server_takes_11211_and_the_start_says_so(ithaca_factory, tmp_path):
    # The real thing: a memcached-like listener on 11211 would be needed to
    # see the traffic, and 11211 may be taken on this machine; the start's log
    # line and `stats` naming the server are what can be checked everywhere.
    router = ithaca_factory(config_text="logging:\n  level: info\n"
                                        "pools:\n  main:\n    servers: [\"127.0.0.1\"]\n    timeout: 1s\n"
                                        "route:\n  type: pool\n  pool: main\n")
    with Conn(router.host, router.port) as c:
        c.send(b"stats servers\r\n")
        assert b"127.0.0.1:11211" in c.read_until(b"END\r\n")
    wait_for(lambda: "server '127.0.0.1' has no port; it takes 11211" in router.log, 5, "the warning in the log")


def test_a_port_in_use_now_is_a_warning(tmp_path):
    holder = socket.socket()
    holder.bind((HOST, 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        rc, out, err = check(tmp_path, f"listen:\n  tcp: [\"{HOST}:{port}\"]\n")
        assert rc == 0, out + err
        assert f"warning: listen.tcp {HOST}:{port} is in use now (Address already in use)" in err, err
    finally:
        holder.close()
    rc, out, err = check(tmp_path, f"listen:\n  tcp: [\"{HOST}:{port}\"]\n")
    assert rc == 0 and "in use" not in err, err


def test_a_metrics_port_in_use_now_is_a_warning(tmp_path):
    holder = socket.socket()
    holder.bind((HOST, 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        rc, out, err = check(tmp_path, f"listen:\n  tcp: [\"{HOST}:{free_port()}\"]\n"
                                       f"metrics:\n  listen: {HOST}:{port}\n")
        assert rc == 0, out + err
        assert f"warning: metrics.listen {HOST}:{port} is in use now" in err, err
    finally:
        holder.close()


def test_a_spool_directory_the_start_will_make_is_fine(tmp_path):
    spool = tmp_path / "state" / "spool"
    rc, out, err = check(tmp_path, f"router:\n  spool_dir: {spool}\n"
                                   "pools:\n  main:\n    servers: [\"127.0.0.1:11311\"]\n"
                                   "route:\n  type: pool\n  pool: main\n")
    assert (rc, out.strip(), err) == (0, "configuration OK", "")
    assert not spool.exists()  # looked at, nothing made


def test_a_spool_directory_that_cannot_be_made_is_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    rc, out, err = check(tmp_path, f"router:\n  spool_dir: {blocker}/spool\n"
                                   "pools:\n  main:\n    servers: [\"127.0.0.1:11311\"]\n"
                                   "route:\n  type: pool\n  pool: main\n")
    assert rc == 1, out + err
    assert "router.spool_dir:" in err and "not a directory" in err, err


def test_a_config_that_is_fine_has_no_warnings(tmp_path):
    # So that warnings mean something.
    rc, out, err = check(tmp_path, f"listen:\n  tcp: [\"{HOST}:{free_port()}\"]\n")
    assert (rc, out.strip(), err) == (0, "configuration OK", "")
