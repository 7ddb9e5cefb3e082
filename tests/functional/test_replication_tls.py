"""Replication over mutual TLS (`replication.tls`, issue 19): the master's
slave listener takes only a TLS peer whose certificate chains to its CA, and
an ithaca slave shows its certificate and checks the master's. The initial
sync, the stream and the acks (`ack: slave`) all go through it. A slave with
a certificate from another CA, and a plaintext slave, are refused and get
nothing. Certificates: test_tls.py's `certs` (ca; server = the master's,
client = the slave's; stranger from otherca)."""
import time

import pytest

from conftest import free_port
from mcwire import Conn
from replica import master_config, repl_port_of, slave_config, stats
from test_tls import OPENSSL, certs  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(OPENSSL is None, reason="openssl is not installed")
TIMEOUT = 10.0


def tls_section(certs, cert, ca="ca", server_name=None):
    lines = ["  tls:", f"    chain_cert: {certs / (cert + '.pem')}", f"    key: {certs / (cert + '.key')}",
             f"    ca_cert: {certs / (ca + '.pem')}"]
    if server_name:
        lines.append(f"    server_name: {server_name}")
    return "\n".join(lines) + "\n"


def tls_master(factory, certs, extra="", io_backend="auto"):
    return factory(config_text=f"logging:\n  level: info\nserver:\n  io_backend: {io_backend}\n" +
                   master_config(free_port(), extra + tls_section(certs, "server")))


def tls_slave(factory, certs, port, cert="client", ca="ca", server_name="localhost", io_backend="auto"):
    return factory(config_text=f"logging:\n  level: info\nserver:\n  io_backend: {io_backend}\n" +
                   slave_config(port) + tls_section(certs, cert, ca, server_name))


def poll(pred, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.02)
    pytest.fail(f"timed out after {timeout}s waiting for {what}", pytrace=False)


@pytest.mark.parametrize("io_backend", ["io_uring", "epoll"])
def test_sync_stream_and_acks_over_mutual_tls(ithaca_factory, certs, io_backend):
    master = tls_master(ithaca_factory, certs, "  ack: slave\n  ack_timeout: 5s\n", io_backend)
    with Conn(*master.address) as m:
        # Before the slave: these reach it by the initial sync (the answer
        # without a slave is the ack error; the item is stored all the same).
        for i in range(50):
            m.call(b"set old:%d 0 0 4\r\nv%03d\r\n" % (i, i))
    slave = tls_slave(ithaca_factory, certs, repl_port_of(master), io_backend=io_backend)
    poll(lambda: stats(master.address)["repl_syncs_done"] == "1", "the initial sync")
    assert master.logged("shows /CN=client"), master.describe()
    assert slave.logged("over TLSv1."), slave.describe()
    with Conn(*master.address) as m, Conn(*slave.address) as s:
        # The stream, each write confirmed by the slave through TLS (ack: slave).
        assert m.call(b"set new 0 0 3\r\nabc\r\n") == b"STORED\r\n"
        assert s.call(b"get new\r\n") == b"VALUE new 0 3\r\nabc\r\nEND\r\n"
        assert m.call(b"delete old:0\r\n") == b"DELETED\r\n"
        assert s.call(b"get old:0\r\n") == b"END\r\n"
        for i in range(1, 50):
            assert s.call(b"get old:%d\r\n" % i) == b"VALUE old:%d 0 4\r\nv%03d\r\nEND\r\n" % (i, i)
        big = b"x" * 200000  # several TLS records
        assert m.call(b"set big 0 0 %d\r\n%s\r\n" % (len(big), big)) == b"STORED\r\n"
        assert s.call(b"get big\r\n") == b"VALUE big 0 %d\r\n%s\r\nEND\r\n" % (len(big), big)
    st = stats(master.address)
    assert int(st["repl_ack_confirmed"]) >= 3
    assert st["repl_tls_refused"] == "0"


def test_a_slave_with_a_certificate_from_another_ca_gets_nothing(ithaca_factory, certs):
    master = tls_master(ithaca_factory, certs)
    with Conn(*master.address) as m:
        assert m.call(b"set secret 0 0 1\r\ns\r\n") == b"STORED\r\n"
    # It trusts the master (ca) but shows the stranger's certificate (otherca).
    slave = tls_slave(ithaca_factory, certs, repl_port_of(master), cert="stranger")
    poll(lambda: int(stats(master.address)["repl_tls_refused"]) >= 1, "the master to refuse the slave")
    st = stats(master.address)
    assert st["repl_slaves_joined"] == "0"
    assert int(st["repl_peers_refused"]) >= 1
    assert master.logged("replication.tls:") and master.logged("refused"), master.describe()
    with Conn(*slave.address) as s:
        assert s.call(b"get secret\r\n") == b"END\r\n"
    assert stats(slave.address)["repl_updated"] == "0"


def test_a_slave_that_distrusts_the_master_does_not_follow_it(ithaca_factory, certs):
    master = tls_master(ithaca_factory, certs)
    slave = tls_slave(ithaca_factory, certs, repl_port_of(master), ca="otherca")
    poll(lambda: int(stats(slave.address)["repl_master_tls_failures"]) >= 1, "the slave to refuse the master")
    assert slave.logged("certificate verify failed"), slave.describe()
    assert stats(master.address)["repl_slaves_joined"] == "0"


def test_a_plaintext_slave_is_refused(ithaca_factory, certs):
    master = tls_master(ithaca_factory, certs)
    with Conn(*master.address) as m:
        assert m.call(b"set secret 0 0 1\r\ns\r\n") == b"STORED\r\n"
    slave = ithaca_factory(config_text=slave_config(repl_port_of(master)))
    poll(lambda: int(stats(master.address)["repl_tls_refused"]) >= 1, "the master to refuse the plaintext slave")
    assert stats(master.address)["repl_slaves_joined"] == "0"
    with Conn(*slave.address) as s:
        assert s.call(b"get secret\r\n") == b"END\r\n"
    assert stats(slave.address)["repl_updated"] == "0"
