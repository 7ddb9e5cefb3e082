"""TLS for clients (issue 19): memcached's -Z / -o ssl_* flags and the YAML
`tls:` section, over real TLS clients (Python's ssl module, pymemcache,
`openssl s_client`), with Debian's memcached -Z as the oracle for the flags
and the `stats` names. Certificates are made at test time with `openssl`
into a temporary directory (nothing secret is committed)."""
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time

import pytest

import mcwire
from conftest import ithaca_binary, memcached_binary, root_args, HOST

OPENSSL = shutil.which("openssl")
pytestmark = pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed")


def _openssl(*args, cwd):
    subprocess.run([OPENSSL, *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def _issue(d, name, ca, serial, cn, ext=None):
    """A key and a certificate signed by `ca` (name of a key/pem pair in d)."""
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}", cwd=d)
    args = ["x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
            "-set_serial", str(serial), "-days", "2", "-out", f"{name}.pem"]
    if ext:
        (d / f"{name}.ext").write_text(ext)
        args += ["-extfile", f"{name}.ext"]
    _openssl(*args, cwd=d)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """ca, server (serial 1001), server2 (serial 2002, same CA), client (same
    CA), stranger (a client cert from another CA)."""
    d = tmp_path_factory.mktemp("tls")
    for ca in ("ca", "otherca"):
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "2", "-subj", f"/CN={ca}", cwd=d)
    san = "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
    _issue(d, "server", "ca", 1001, "localhost", san)
    _issue(d, "server2", "ca", 2002, "localhost", san)
    _issue(d, "client", "ca", 3003, "client")
    _issue(d, "stranger", "otherca", 4004, "stranger")
    return d


def tls_flags(d, cert="server", extra=""):
    opts = f"ssl_chain_cert={d / (cert + '.pem')},ssl_key={d / (cert + '.key')}"
    return ["-Z", "-o", opts + ("," + extra if extra else "")]


def client_context(d, cert=None):
    ctx = ssl.create_default_context(cafile=str(d / "ca.pem"))
    if cert:
        ctx.load_cert_chain(str(d / f"{cert}.pem"), str(d / f"{cert}.key"))
    return ctx


class TlsConn(mcwire.Conn):
    """mcwire.Conn over TLS (the server's certificate checked against ca)."""

    def __init__(self, host, port, ctx, timeout=10.0):
        super().__init__(host, port, timeout)
        self.sock = ctx.wrap_socket(self.sock, server_hostname="localhost")

    def serial(self):
        return int(self.sock.getpeercert()["serialNumber"], 16)


def stats(conn, arg=b""):
    return mcwire.parse_stats(conn.call(b"stats " + arg + b"\r\n" if arg else b"stats\r\n"))


def s_client(port, *args, data=b"version\r\nquit\r\n"):
    """openssl s_client: (returncode, output). With -quiet a command is sent."""
    p = subprocess.run([OPENSSL, "s_client", "-connect", f"{HOST}:{port}", "-quiet", *args],
                       input=data, capture_output=True, timeout=10)
    return p.returncode, p.stdout + p.stderr


def wait_for(pred, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


# --- the cache role over TLS -----------------------------------------------------------------------


def test_set_get_and_tls_stats_over_tls(ithaca_factory, certs):
    server = ithaca_factory(tls_flags(certs))
    assert server.logged("(TLS)"), server.describe()
    with TlsConn(*server.address, client_context(certs)) as c:
        assert c.sock.version() in ("TLSv1.2", "TLSv1.3")
        assert c.serial() == 1001
        assert c.call(b"set k 5 0 5\r\nhello\r\n") == b"STORED\r\n"
        assert c.call(b"get k\r\n") == b"VALUE k 5 5\r\nhello\r\nEND\r\n"
        # A value larger than one TLS record (16 KiB) and many small pieces.
        big = os.urandom(200_000).hex().encode()
        assert c.call(b"set big 0 0 %d\r\n%s\r\n" % (len(big), big)) == b"STORED\r\n"
        assert c.call(b"get big\r\n") == b"VALUE big 0 %d\r\n%s\r\nEND\r\n" % (len(big), big)
        many = b"".join(b"set m%d 0 0 1\r\nx\r\n" % i for i in range(200))
        c.send(many)
        assert c.read_replies(200) == [b"STORED\r\n"] * 200
        s = stats(c)
        assert s["ssl_handshake_errors"] == "0"
        assert s["ssl_proto_errors"] == "0"
        assert int(s["time_since_server_cert_refresh"]) >= 0
        assert s["ssl_handshakes"] == "1"
        assert "ssl_new_sessions" not in s  # only with ssl_session_cache, as memcached
        # kTLS needs the kernel's `tls` module; where it is missing OpenSSL
        # encrypts in user space and the count stays 0.
        ulp = open("/proc/sys/net/ipv4/tcp_available_ulp").read().split()
        if "tls" not in ulp:
            assert s["ssl_kernel_tls_connections"] == "0"
        st = stats(c, b"settings")
        assert st["ssl_enabled"] == "yes"
        assert st["ssl_chain_cert"] == str(certs / "server.pem")
        assert st["ssl_key"] == str(certs / "server.key")
        assert st["ssl_verify_mode"] == "0"
        assert st["ssl_min_version"] == "tlsv1.2"
        assert st["ssl_ca_cert"] == "NULL"


def test_plaintext_client_on_a_tls_port_is_hung_up(ithaca_factory, certs):
    server = ithaca_factory(tls_flags(certs))
    with TlsConn(*server.address, client_context(certs)) as good:
        before = int(stats(good)["ssl_handshake_errors"])
        with mcwire.Conn(*server.address, timeout=3) as plain:
            plain.send(b"version\r\n")
            assert plain.is_closed(wait=3.0)
            assert not plain.buf  # nothing in the clear
        assert wait_for(lambda: int(stats(good)["ssl_handshake_errors"]) == before + 1)
        assert good.call(b"version\r\n").startswith(b"VERSION ")
    with TlsConn(*server.address, client_context(certs)) as again:
        assert again.call(b"version\r\n").startswith(b"VERSION ")
    assert server.proc.poll() is None


def test_a_corrupt_record_counts_a_protocol_error(ithaca_factory, certs):
    server = ithaca_factory(tls_flags(certs))
    ctx = client_context(certs)
    with TlsConn(*server.address, ctx) as bad:
        assert bad.call(b"version\r\n").startswith(b"VERSION ")
        # An application-data record with a MAC that cannot verify, written
        # under the TLS layer: the server drops this connection only.
        os.write(bad.sock.fileno(), b"\x17\x03\x03\x00\x20" + b"\x00" * 32)
        bad.sock.settimeout(3)
        with pytest.raises(ssl.SSLError, match="BAD_RECORD_MAC"):  # the server's alert, then close
            bad.sock.recv(100)
    with TlsConn(*server.address, ctx) as c:
        s = stats(c)
        assert s["ssl_proto_errors"] == "1"
        assert s["ssl_handshake_errors"] == "0"


def test_a_stalled_handshake_is_timed_out(ithaca_factory, certs):
    server = ithaca_factory(tls_flags(certs), config_text="server:\n  idle_timeout: 300ms\n")
    with socket.create_connection(server.address, timeout=3) as raw:
        start = time.monotonic()
        raw.settimeout(3)
        try:
            assert raw.recv(100) == b""  # closed by the server, nothing sent
        except ConnectionResetError:
            pass
        assert time.monotonic() - start < 2.5
    with TlsConn(*server.address, client_context(certs)) as c:
        assert int(stats(c)["ssl_handshake_errors"]) == 1


def test_notls_listener_beside_a_tls_one(ithaca_factory, certs):
    port = mcwire_free_port()
    server = ithaca_factory(tls_flags(certs) + ["-l", f"notls:{HOST}:{port}"])
    # The pooler logs each listener as it opens it: the second line may come
    # after the server answers on the first.
    assert server.wait_for_log(re.compile(rf"listening on tcp {HOST}:{port}\n"), 5), server.log
    with mcwire.Conn(HOST, port) as plain, TlsConn(*server.address, client_context(certs)) as secure:
        assert plain.call(b"set k 0 0 1\r\na\r\n") == b"STORED\r\n"
        assert secure.call(b"get k\r\n") == b"VALUE k 0 1\r\na\r\nEND\r\n"
        assert stats(plain)["ssl_handshakes"] == "1"


def mcwire_free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def test_unix_socket_stays_plaintext(ithaca_factory, certs, tmp_path):
    path = tmp_path / "mc.sock"
    server = ithaca_factory(tls_flags(certs), config_text=f"listen:\n  unix: [\"{path}\"]\n")
    # Listeners open one by one: the unix one may come after the TCP port answers.
    assert server.wait_for_log(re.compile(r"listening on unix "), 5), server.log
    with socket.socket(socket.AF_UNIX) as u:
        u.settimeout(3)
        u.connect(str(path))
        u.sendall(b"version\r\n")
        assert u.recv(100).startswith(b"VERSION ")
    with TlsConn(*server.address, client_context(certs)) as c:
        assert c.call(b"version\r\n").startswith(b"VERSION ")


def test_yaml_tls_section(ithaca_factory, certs):
    server = ithaca_factory(config_text=(
        "tls:\n  enabled: true\n"
        f"  chain_cert: {certs / 'server.pem'}\n  key: {certs / 'server.key'}\n"
        "  min_version: tlsv1.3\n  session_cache: true\n"))
    with TlsConn(*server.address, client_context(certs)) as c:
        assert c.sock.version() == "TLSv1.3"
        s = stats(c)
        assert "ssl_new_sessions" in s
        st = stats(c, b"settings")
        assert st["ssl_min_version"] == "tlsv1.3"
        assert st["ssl_session_cache"] == "yes"


# --- protocol versions and client certificates (openssl s_client) ------------------------------------


def test_min_version_tls13_refuses_a_tls12_client(ithaca_factory, certs):
    server = ithaca_factory(tls_flags(certs, extra="ssl_min_version=3"))
    rc, out = s_client(server.port, "-tls1_2")
    assert b"VERSION " not in out, out
    rc, out = s_client(server.port, "-tls1_3", "-CAfile", str(certs / "ca.pem"))
    assert rc == 0 and b"VERSION " in out, out
    with TlsConn(*server.address, client_context(certs)) as c:
        assert int(stats(c)["ssl_handshake_errors"]) == 1


def test_min_version_default_takes_tls12(ithaca_factory, certs):
    server = ithaca_factory(tls_flags(certs))
    rc, out = s_client(server.port, "-tls1_2", "-CAfile", str(certs / "ca.pem"))
    assert rc == 0 and b"VERSION " in out, out


def test_verify_mode_2_requires_a_client_certificate_from_the_ca(ithaca_factory, certs):
    server = ithaca_factory(tls_flags(certs, extra=f"ssl_ca_cert={certs / 'ca.pem'},ssl_verify_mode=2"))
    ca = ["-CAfile", str(certs / "ca.pem")]
    rc, out = s_client(server.port, *ca)
    assert b"VERSION " not in out, out
    rc, out = s_client(server.port, *ca, "-cert", str(certs / "stranger.pem"), "-key", str(certs / "stranger.key"))
    assert b"VERSION " not in out, out
    rc, out = s_client(server.port, *ca, "-cert", str(certs / "client.pem"), "-key", str(certs / "client.key"))
    assert rc == 0 and b"VERSION " in out, out
    with TlsConn(*server.address, client_context(certs, cert="client")) as c:
        s = stats(c)
        assert s["ssl_handshake_errors"] == "2"
        assert s["ssl_handshakes"] == "2"
        assert stats(c, b"settings")["ssl_verify_mode"] == "3"  # OpenSSL's flags, as memcached prints


def test_btls_and_mtls_listeners_override_the_verify_mode(ithaca_factory, certs):
    """memcached 1.6's listener prefixes: with ssl_verify_mode=2 (a client
    certificate required everywhere) a btls: listener asks for none; with the
    default mode 0 an mtls: listener requires one from ssl_ca_cert."""
    basic, mutual = mcwire_free_port(), mcwire_free_port()
    ca = ["-CAfile", str(certs / "ca.pem")]
    client = ["-cert", str(certs / "client.pem"), "-key", str(certs / "client.key")]
    stranger = ["-cert", str(certs / "stranger.pem"), "-key", str(certs / "stranger.key")]
    strict = ithaca_factory(tls_flags(certs, extra=f"ssl_ca_cert={certs / 'ca.pem'},ssl_verify_mode=2") +
                            ["-l", f"{HOST}:0", "-l", f"btls:{HOST}:{basic}"])
    assert strict.wait_for_log(re.compile(rf"listening on tcp {HOST}:{basic} \(TLS, no client certificate\)"), 5)
    rc, out = s_client(basic, *ca)
    assert rc == 0 and b"VERSION " in out, out
    rc, out = s_client(strict.port, *ca)
    assert b"VERSION " not in out, out  # the default listener still requires one
    lax = ithaca_factory(tls_flags(certs, extra=f"ssl_ca_cert={certs / 'ca.pem'}") +
                         ["-l", f"{HOST}:0", "-l", f"mtls:{HOST}:{mutual}"])
    assert lax.wait_for_log(re.compile(rf"listening on tcp {HOST}:{mutual} \(TLS, client certificate required\)"), 5)
    rc, out = s_client(mutual, *ca)
    assert b"VERSION " not in out, out
    rc, out = s_client(mutual, *ca, *stranger)
    assert b"VERSION " not in out, out
    rc, out = s_client(mutual, *ca, *client)
    assert rc == 0 and b"VERSION " in out, out
    rc, out = s_client(lax.port, *ca)
    assert rc == 0 and b"VERSION " in out, out  # mode 0 elsewhere: no certificate needed
    with TlsConn(*lax.address, client_context(certs)) as c:
        assert stats(c)["ssl_handshake_errors"] == "2"
    for prefix in ("btls", "mtls"):
        p = run_ithaca("-l", f"{prefix}:{HOST}:0")
        assert p.returncode != 0 and f"'{prefix}' option is valid only when SSL is enabled" in p.stderr, p.stderr
    p = run_ithaca(*tls_flags(certs), "-l", f"mtls:{HOST}:0")
    assert p.returncode != 0 and "ssl_ca_cert" in p.stderr, p.stderr


# --- certificate reload --------------------------------------------------------------------------


def test_refresh_certs_and_sighup_swap_the_certificate(ithaca_factory, certs, tmp_path):
    live_pem, live_key = tmp_path / "live.pem", tmp_path / "live.key"
    shutil.copy(certs / "server.pem", live_pem)
    shutil.copy(certs / "server.key", live_key)
    server = ithaca_factory(["-Z", "-o", f"ssl_chain_cert={live_pem},ssl_key={live_key}"])
    ctx = client_context(certs)
    with TlsConn(*server.address, ctx) as old:
        assert old.serial() == 1001
        assert old.call(b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"
        # refresh_certs with the new pair in place.
        shutil.copy(certs / "server2.pem", live_pem)
        shutil.copy(certs / "server2.key", live_key)
        assert old.call(b"refresh_certs\r\n") == b"OK\r\n"
        with TlsConn(*server.address, ctx) as new:
            assert new.serial() == 2002
            assert new.call(b"get k\r\n") == b"VALUE k 0 1\r\nv\r\nEND\r\n"
        assert old.call(b"get k\r\n") == b"VALUE k 0 1\r\nv\r\nEND\r\n"  # kept its session
        # A broken file: memcached's error, and the running certificate stays.
        live_pem.write_text("not a certificate\n")
        reply = old.call(b"refresh_certs\r\n")
        assert reply.startswith(b"Error loading the certificate chain: " + str(live_pem).encode()), reply
        with TlsConn(*server.address, ctx) as still:
            assert still.serial() == 2002
        # SIGHUP with the first pair back.
        shutil.copy(certs / "server.pem", live_pem)
        shutil.copy(certs / "server.key", live_key)
        server.proc.send_signal(signal.SIGHUP)

        def first_cert_served():
            with TlsConn(*server.address, ctx) as c:
                return c.serial() == 1001
        assert wait_for(first_cert_served)
        assert old.call(b"get k\r\n") == b"VALUE k 0 1\r\nv\r\nEND\r\n"


def test_refresh_certs_without_tls(ithaca):
    with mcwire.Conn(*ithaca.address) as c:
        assert c.call(b"refresh_certs\r\n") == b"Error TLS not enabled\r\n"
        assert "ssl_handshake_errors" not in stats(c)
        assert stats(c, b"settings")["ssl_enabled"] == "no"


# --- start-up errors -----------------------------------------------------------------------------


def run_ithaca(*args):
    path, is_memcached = ithaca_binary()
    if is_memcached:
        pytest.skip("ithaca's own messages")
    return subprocess.run([path, "-p", "0", "-l", HOST, "-U", "0", *args], capture_output=True, text=True,
                          timeout=10)


def test_start_errors_in_memcacheds_words(certs):
    p = run_ithaca("-Z", "-o", f"ssl_chain_cert={certs / 'missing.pem'},ssl_key={certs / 'server.key'}")
    assert p.returncode != 0
    assert f"Error loading the certificate chain: {certs / 'missing.pem'}" in p.stderr, p.stderr
    p = run_ithaca("-Z", "-o", f"ssl_chain_cert={certs / 'server.pem'},ssl_key={certs / 'server2.key'}")
    assert p.returncode != 0
    assert "Error validating the certificate" in p.stderr or "Error loading the key" in p.stderr, p.stderr
    p = run_ithaca("-Z", "-o", f"ssl_chain_cert={certs / 'server.pem'},ssl_key={certs / 'nokey.key'}")
    assert p.returncode != 0 and f"Error loading the key: {certs / 'nokey.key'}" in p.stderr, p.stderr
    p = run_ithaca("-Z")
    assert p.returncode != 0 and "ssl_chain_cert" in p.stderr, p.stderr
    p = run_ithaca("-l", "notls:127.0.0.1:0")
    assert p.returncode != 0 and "'notls' option is valid only when SSL is enabled" in p.stderr, p.stderr
    p = run_ithaca(*tls_flags(certs, extra="ssl_verify_mode=9"))
    assert p.returncode != 0 and "Invalid ssl_verify_mode. Use help to see valid options." in p.stderr, p.stderr
    # A -o option memcached does not know, beside the TLS ones: its words.
    p = run_ithaca("-o", "ssl_session_cache,ssl_bogus=1")
    assert p.returncode != 0 and 'Illegal suboption "ssl_bogus=1"' in p.stderr, p.stderr


# --- real clients: pymemcache against the cache and the router roles --------------------------------


def test_pymemcache_over_tls_cache_and_router(ithaca_factory, memcached_factory, certs):
    pymemcache = pytest.importorskip("pymemcache.client.base")
    cache = ithaca_factory(tls_flags(certs))
    backend = memcached_factory()
    router = ithaca_factory(tls_flags(certs), config_text=(
        "pools:\n  main:\n"
        f'    servers: ["{backend.host}:{backend.port}"]\n'
        "route:\n  type: pool\n  pool: main\n"))
    for server in (cache, router):
        client = pymemcache.Client(server.address, tls_context=client_context(certs), timeout=5, connect_timeout=5)
        try:
            client.set("greeting", b"hello over tls")
            assert client.get("greeting") == b"hello over tls"
            client.set_many({f"k{i}": str(i).encode() for i in range(50)})
            got = client.get_many([f"k{i}" for i in range(50)])
            assert got == {f"k{i}": str(i).encode() for i in range(50)}
        finally:
            client.close()
    # The router's writes reached the plaintext backend.
    with mcwire.Conn(*backend.address) as b:
        assert b.call(b"get greeting\r\n") == b"VALUE greeting 0 14\r\nhello over tls\r\nEND\r\n"


def test_watch_over_tls(ithaca_factory, certs):
    server = ithaca_factory(tls_flags(certs))
    ctx = client_context(certs)
    with TlsConn(*server.address, ctx) as w, TlsConn(*server.address, ctx) as c:
        assert w.call(b"watch fetchers\r\n") == b"OK\r\n"
        c.call(b"get watched_key\r\n")
        line = w.read_until(b"\n")
        assert b"watched_key" in line, line


# --- differential: Debian's memcached -Z takes the same command line ---------------------------------


def test_memcached_takes_the_same_flags_and_stats_names_match(ithaca_factory, certs):
    flags = tls_flags(certs, extra=f"ssl_ca_cert={certs / 'ca.pem'},ssl_verify_mode=1,ssl_min_version=2")
    real = subprocess.run([memcached_binary(), "-h"], capture_output=True, text=True, timeout=10)
    if "enable-ssl" not in real.stdout:
        pytest.skip("this memcached is built without TLS")
    port = mcwire_free_port()
    proc = subprocess.Popen([memcached_binary(), *root_args(), "-l", HOST, "-p", str(port), "-U", "0", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        ctx = client_context(certs)

        def up():
            try:
                TlsConn(HOST, port, ctx, timeout=1).close()
                return True
            except OSError:
                return False
        assert wait_for(up, 5), "memcached -Z did not start"
        server = ithaca_factory(flags)
        with TlsConn(HOST, port, ctx) as theirs, TlsConn(*server.address, ctx) as ours:
            for arg in (b"", b"settings"):
                mine = [k for k in stats(ours, arg) if k.startswith("ssl_") or k.startswith("time_since")]
                real_keys = [k for k in stats(theirs, arg) if k.startswith("ssl_") or k.startswith("time_since")]
                # Every one of memcached's, in its order (1.6.18 has no
                # ssl_proto_errors yet; ithaca adds ssl_handshakes and
                # ssl_kernel_tls_connections).
                assert real_keys and [k for k in mine if k in real_keys] == real_keys, (mine, real_keys)
            mine, real_s = stats(ours, b"settings"), stats(theirs, b"settings")
            for k in ("ssl_enabled", "ssl_chain_cert", "ssl_key", "ssl_verify_mode", "ssl_keyformat",
                      "ssl_ca_cert", "ssl_ciphers", "ssl_wbuf_size", "ssl_min_version"):
                assert mine[k] == real_s[k], k
            assert theirs.call(b"refresh_certs\r\n") == ours.call(b"refresh_certs\r\n") == b"OK\r\n"
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("backend", ["epoll", "io_uring"])
def test_large_pipelined_traffic_on_each_io_backend(ithaca_factory, certs, backend):
    """The TLS stream waits on the io backend's readiness (edge-triggered with
    epoll): replies larger than the socket buffers and pipelined requests
    must neither stall nor be lost on either backend."""
    server = ithaca_factory(tls_flags(certs), config_text=f"server:\n  io_backend: {backend}\n")
    with TlsConn(*server.address, client_context(certs)) as c:
        value = os.urandom(300_000)
        assert c.call(b"set v 0 0 %d\r\n%s\r\n" % (len(value), value)) == b"STORED\r\n"
        c.send(b"get v\r\n" * 20)
        for _ in range(20):
            assert c.read_reply() == b"VALUE v 0 %d\r\n%s\r\nEND\r\n" % (len(value), value)
        assert stats(c, b"settings")["io_backend"] in (backend, "auto")


def mapped_libraries(pid):
    with open(f"/proc/{pid}/maps") as f:
        return {line.split()[-1].rsplit("/", 1)[-1] for line in f if "/" in line}


def test_openssl_is_loaded_only_for_tls(ithaca_factory, certs):
    """ithaca links neither libssl nor libcrypto: a server without TLS never
    maps them (about 1.7 MiB of resident memory saved), one with a TLS
    listener loads them when it makes its context and serves TLS."""
    plain = ithaca_factory([])
    with mcwire.Conn(*plain.address) as c:
        assert c.call(b"version\r\n").startswith(b"VERSION ")
    libs = mapped_libraries(plain.proc.pid)
    assert not any(l.startswith(("libssl.so", "libcrypto.so")) for l in libs), sorted(libs)
    tls = ithaca_factory(tls_flags(certs))
    with TlsConn(*tls.address, client_context(certs)) as c:
        assert c.call(b"set k 0 0 1\r\nx\r\n") == b"STORED\r\n"
    libs = mapped_libraries(tls.proc.pid)
    assert any(l.startswith("libssl.so.3") for l in libs) and any(l.startswith("libcrypto.so.3") for l in libs), \
        sorted(libs)
