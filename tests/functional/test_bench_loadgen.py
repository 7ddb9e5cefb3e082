"""The benchmark load generator's TLS mode (scripts/bench/loadgen --tls, issue 19's
bench rows): it must really speak TLS to a `-Z` server in all three protocols,
count every request it makes, and end (never hang) when the two sides do not
speak the same thing. The loadgen is the one meson built beside $ITHACA_BIN
(build/scripts/loadgen), or $LOADGEN_BIN. Certificates are made here with
`openssl req` (nothing secret is committed)."""
import json
import os
import shutil
import ssl
import subprocess
import time

import pytest

import mcwire
from conftest import HOST

OPENSSL = shutil.which("openssl")
pytestmark = pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed")


def bench_tool(name, env):
    """scripts/NAME as meson built it beside $ITHACA_BIN
    (build/sources/server/ithaca -> build/scripts/NAME), or $ENV."""
    explicit = os.environ.get(env)
    if explicit:
        return explicit
    ithaca = os.environ.get("ITHACA_BIN", "")
    if ithaca == "memcached" or not ithaca:
        pytest.skip(f"no built {name} to find without ITHACA_BIN (set {env})")
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(ithaca))))
    path = os.path.join(build, "scripts", name)
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not built (meson builds it beside ithaca)", pytrace=False)
    return path


def loadgen_binary():
    return bench_tool("loadgen", "LOADGEN_BIN")


def self_signed(d, name):
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
                    "-subj", "/CN=localhost"], cwd=d, check=True, capture_output=True, timeout=30)
    return d / f"{name}.pem", d / f"{name}.key"


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    return self_signed(tmp_path_factory.mktemp("loadgen-tls"), "server")


def tls_args(cert):
    return ["-Z", "-o", f"ssl_chain_cert={cert[0]},ssl_key={cert[1]}"]


def run_loadgen(port, *args, timeout=10):
    """(returncode, the JSON result or None, stderr)."""
    p = subprocess.run([loadgen_binary(), "--host", HOST, "--port", str(port), "--timeout-ms", "2000",
                        *args], capture_output=True, text=True, timeout=timeout)
    result = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
    return p.returncode, result, p.stderr


def tls_stats(port):
    """`stats` of the server over a TLS connection of our own."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    c = mcwire.Conn(HOST, port)
    c.sock = ctx.wrap_socket(c.sock, server_hostname="localhost")
    with c:
        return mcwire.parse_stats(c.call(b"stats\r\n"))


@pytest.mark.parametrize("protocol,value_size,multiget", [
    ("ascii", 100, 1),
    ("binary", 4096, 1),   # 4 KiB values: a pipelined batch spans several TLS records
    ("meta", 100, 4),
])
def test_tls_loadgen_against_ithaca_tls(ithaca_factory, cert, protocol, value_size, multiget):
    server = ithaca_factory(tls_args(cert))
    conns, keys = 4, 400
    rc, r, err = run_loadgen(server.port, "--tls", "--tls-ca", str(cert[0]), "--protocol", protocol,
                             "--duration", "0.5", "--prefill", "--keys", str(keys),
                             "--value-size", str(value_size), "--conns", str(conns), "--depth", "16",
                             "--get-ratio", "0.9", "--multiget", str(multiget))
    assert rc == 0, err
    assert r["tls"].startswith("TLSv1."), r
    assert r["prefill_sets"] == keys and r["prefill_errors"] == 0, r
    assert r["requests"] > 0 and r["gets"] > 0 and r["sets"] > 0, r
    assert r["errors"] == 0 and r["handshake_errors"] == 0 and r["reconnects"] == 0, r
    # Every key was stored by the prefill and nothing evicts 400 small items: all hits.
    assert r["misses"] == 0 and r["hits"] == r["gets"] * multiget, r
    s = tls_stats(server.port)
    # The loadgen's connections (one set for prefill and run) and ours were TLS handshakes.
    assert int(s["ssl_handshakes"]) == conns + 1, s
    assert s["ssl_handshake_errors"] == "0" and s["ssl_proto_errors"] == "0", s


def test_tls_loadgen_reports_server_cpu(ithaca_factory, cert):
    server = ithaca_factory(tls_args(cert))
    rc, r, err = run_loadgen(server.port, "--tls", "--duration", "0.3", "--conns", "2",
                             "--cpu-pid", str(server.proc.pid))
    assert rc == 0, err
    assert r["requests"] > 0 and r["errors"] == 0, r
    assert r["server_cpu_s"] >= 0, r   # -1 means /proc/PID/stat was not read
    rc, r, err = run_loadgen(server.port, "--tls", "--duration", "0.1")
    assert r["server_cpu_s"] == -1, r  # without --cpu-pid


def test_plain_loadgen_on_a_tls_port_counts_errors_and_ends(ithaca_factory, cert):
    server = ithaca_factory(tls_args(cert))
    t0 = time.monotonic()
    rc, r, err = run_loadgen(server.port, "--duration", "0.5", "--conns", "2", "--keys", "100")
    assert time.monotonic() - t0 < 5
    assert rc == 0, err
    assert r["tls"] == "", r
    assert r["requests"] == 0 and r["errors"] > 0, r
    # The server hung up on plaintext and goes on serving TLS clients.
    s = tls_stats(server.port)
    assert int(s["ssl_handshake_errors"]) > 0, s


def test_tls_loadgen_on_a_plain_port_fails_at_once(ithaca_factory):
    server = ithaca_factory()
    rc, r, err = run_loadgen(server.port, "--tls", "--duration", "5")
    assert rc == 2 and r is None
    assert "TLS handshake" in err and "failed" in err, err
    with mcwire.Conn(HOST, server.port) as c:  # the server is unharmed
        assert c.call(b"version\r\n").startswith(b"VERSION ")


def test_tls_loadgen_checks_the_certificate_only_against_tls_ca(ithaca_factory, cert, tmp_path):
    server = ithaca_factory(tls_args(cert))
    other, _ = self_signed(tmp_path, "other")
    rc, r, err = run_loadgen(server.port, "--tls-ca", str(other), "--duration", "5")
    assert rc == 2 and r is None
    assert "certificate verify failed" in err, err
    # Without --tls-ca the same self-signed certificate is taken (a load generator, not a client).
    rc, r, err = run_loadgen(server.port, "--tls", "--duration", "0.1")
    assert rc == 0 and r["requests"] > 0 and r["errors"] == 0, (err, r)
