"""Kernel TLS, where the kernel has it: ithaca inside a User-mode Linux
guest (Debian's user-mode-linux kernel, which has the `tls` module;
uml_guest.py), so the kTLS paths are tested even on a machine whose own
kernel has no kTLS. The guest runs guest_ktls.py:
  - ithaca -Z with kernel TLS (its default) on io_uring and on epoll, and
    with `tls.kernel_tls: false`, each answering a Python TLS client (OpenSSL
    in user space) with values from 1 byte to 1 MiB, a 40-key multiget, a
    pipelined batch, meta, binary, and a client that reads nothing while
    4 MiB of replies queue up;
  - the router over a `tls:` pool to a TLS server (ithaca -Z without kTLS:
    Debian's memcached 1.6.18 -Z stalls in the guest on replies over 16 KB);
  - a master and a slave over `replication.tls` (mutual certificates).

With kTLS sending, ithaca writes plaintext to the socket as on a plain
connection (a value's iovecs point into the item) and the kernel makes the
records; the user-space variant must give the same bytes. The kernel's own
counters (/proc/net/tls_stat) say which connections it encrypted.

Not under ASan (ITHACA_SANITIZED): its shadow memory does not fit a UML
guest's address space, so the release pass runs it.
"""

import json
import os
import sys

import pytest

from conftest import ithaca_binary
from test_tls import certs  # noqa: F401 (the fixture: ca, server for localhost, client)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import uml_guest  # noqa: E402

pytestmark = pytest.mark.skipif(bool(os.environ.get("ITHACA_SANITIZED")),
                                reason="ASan's shadow memory does not fit a UML guest; "
                                       "the release pass runs these")


@pytest.fixture(scope="module")
def guest_run(tmp_path_factory, certs):  # noqa: F811
    """One guest boot for the module: every variant's results."""
    why = uml_guest.available()
    if why:
        pytest.fail(why, pytrace=False)
    path, is_memcached = ithaca_binary()
    if is_memcached:
        pytest.fail("this test needs an ithaca config file: it cannot run with ITHACA_BIN=memcached",
                    pytrace=False)
    work = str(tmp_path_factory.mktemp("ktls"))
    status, out = uml_guest.run(work, ["/usr/bin/python3", os.path.join(HERE, "guest_ktls.py"), path,
                                       str(certs), work])
    if status != 0:
        console = open(os.path.join(work, "console.txt")).read()[-3000:]
        logs = ""
        for name in sorted(os.listdir(work)):
            if not name.endswith(".log"):
                continue
            logs += f"\n--- {name}:\n" + open(os.path.join(work, name)).read()[-2000:]
        pytest.fail(f"the guest's run ended with status {status}:\n{out[-3000:]}\n--- console:\n{console}{logs}",
                    pytrace=False)
    return json.loads(out.strip().splitlines()[-1])


def delta(result, name):
    return result["tls_stat_after"][name] - result["tls_stat_before"][name]


def test_the_guest_kernel_offers_the_tls_ulp(guest_run):
    assert "tls" in guest_run["ulp"]


@pytest.mark.parametrize("variant", ["kernel", "kernel_epoll", "user"])
def test_every_reply_arrives_intact(guest_run, variant):
    checks = guest_run[variant]["checks"]
    assert checks and all(v == "ok" for v in checks.values()), checks
    assert guest_run[variant]["version"] == "TLSv1.3"


@pytest.mark.parametrize("variant", ["kernel", "kernel_epoll"])
def test_the_kernel_encrypts_every_connections_sends(guest_run, variant):
    r = guest_run[variant]
    n = r["connections"]
    # every TLS connection (the checks' and the stats one) had kTLS sends,
    # as ithaca counted and as the kernel counted
    assert r["stats"]["ssl_handshakes"] == n
    assert r["stats"]["ssl_kernel_tls_connections"] == n
    assert delta(r, "TlsTxSw") == n
    # all of them were open, and kernel-encrypted, at once
    assert r["tls_stat_open"]["TlsCurrTxSw"] - r["tls_stat_before"]["TlsCurrTxSw"] == n
    assert r["tls_stat_after"]["TlsCurrTxSw"] == r["tls_stat_before"]["TlsCurrTxSw"]
    # OpenSSL 3.0 leaves TLS 1.3 receives in user space; none failed
    assert r["tls_stat_after"]["TlsDecryptError"] == r["tls_stat_before"]["TlsDecryptError"]


def test_routed_values_arrive_intact_over_kernel_tls_to_the_backend(guest_run):
    r = guest_run["router"]
    checks = r["checks"]
    assert checks and all(v == "ok" for v in checks.values()), checks
    # The TLS server keeps its TLS in user space and the client is
    # plaintext: every kernel-encrypted connection is one of the router's to
    # its server, and they were open during the checks.
    assert delta(r, "TlsTxSw") >= 1
    assert r["tls_stat_open"]["TlsCurrTxSw"] - r["tls_stat_before"]["TlsCurrTxSw"] >= 1
    assert delta(r, "TlsDecryptError") == 0


def test_the_replication_stream_goes_over_kernel_tls(guest_run):
    r = guest_run["replication"]
    checks = r["checks"]
    assert checks and all(v == "ok" for v in checks.values()), checks
    # the master's side of the slave's connection (its sync and stream) and
    # the slave's side (its acks and heartbeats): both kernel-encrypted
    assert r["master_log_kernel_tls"]
    assert r["tls_stat_open"]["TlsCurrTxSw"] - r["tls_stat_before"]["TlsCurrTxSw"] == 2
    assert delta(r, "TlsDecryptError") == 0


def test_kernel_tls_off_leaves_the_kernel_out(guest_run):
    r = guest_run["user"]
    assert r["stats"]["ssl_handshakes"] == r["connections"]
    assert r["stats"]["ssl_kernel_tls_connections"] == 0
    assert delta(r, "TlsTxSw") == 0
    assert delta(r, "TlsRxSw") == 0
