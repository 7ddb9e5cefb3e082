"""Who may take the master's store over the replication port: by default the
port listens where the clients do (`listen.tcp`), not on every interface;
`replication.allow` (CIDRs) refuses any other peer before a byte is sent,
counted in `repl_peers_refused`, and a refused peer holds no slave slot.
yrmcds's handshake is unchanged (a slave just connects)."""
import re
import socket
import time

from conftest import HOST, free_port
from mcwire import Conn
from replica import repl_port_of, slave_config, stats

ITEMS = 200


def master_yaml(repl_port, extra=""):
    return f"""
replication:
  role: master
  port: {repl_port}
  slave_timeout: 5s
{extra}"""


def fill(master, n=ITEMS):
    with Conn(*master.address) as c:
        c.send(b"".join(b"set key:%d 0 0 5\r\nvalue\r\n" % i for i in range(n)))
        assert c.read_exact(8 * n) == b"STORED\r\n" * n


def connect_from(source, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    s.bind((source, 0))
    s.connect((HOST, port))
    return s


def received_before_close(s, timeout=5):
    """Sends a heartbeat byte, then reads until the master closes; returns
    what it sent (the test fails if it does not close within timeout)."""
    got = b""
    try:
        s.sendall(b"\0")
    except OSError:
        pass  # closed already
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, f"not closed; received {len(got)} bytes"
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return got
        if not chunk:
            return got
        got += chunk


def sync_keys(s, n, timeout=10):
    """Reads SetQ packets as a slave would until n keys arrived; returns them."""
    buf, keys = b"", set()
    deadline = time.monotonic() + timeout
    while len(keys) < n:
        assert time.monotonic() < deadline, f"{len(keys)} of {n} keys synced"
        chunk = s.recv(65536)
        assert chunk, f"closed after {len(keys)} keys"
        buf += chunk
        while len(buf) >= 24:
            assert buf[0] == 0x80 and buf[1] == 0x11, buf[:24]  # SetQ
            keylen = int.from_bytes(buf[2:4], "big")
            extlen = buf[4]
            size = 24 + int.from_bytes(buf[8:12], "big")
            if len(buf) < size:
                break
            keys.add(buf[24 + extlen:24 + extlen + keylen])
            buf = buf[size:]
        s.sendall(b"\0")
    return keys


def wait_stat(master, name, value, timeout=5):
    deadline = time.monotonic() + timeout
    while (got := stats(master.address).get(name)) != value:
        assert time.monotonic() < deadline, f"{name} is {got}, not {value}\n{master.log}"
        time.sleep(0.02)


def test_default_listen_host_follows_the_client_listen_address(ithaca_factory):
    """Clients on 127.0.0.1 (-l): slaves are accepted on 127.0.0.1 only, not 0.0.0.0."""
    master = ithaca_factory(config_text=master_yaml(0))
    m = master.wait_for_log(re.compile(r"replication: accepting slaves on (\S+):(\d+)"), 10)
    assert m and m.group(1) == "127.0.0.1", master.log
    assert stats(master.address)["repl_peers_refused"] == "0"


def test_a_peer_outside_allow_gets_nothing_and_is_counted(ithaca_factory):
    repl = free_port()
    master = ithaca_factory(config_text=master_yaml(repl, "  allow: [127.0.0.2/32]\n"))
    repl_port_of(master)
    fill(master)
    strangers = [connect_from("127.0.0.1", repl) for _ in range(20)]
    try:
        for s in strangers:
            assert received_before_close(s) == b""
    finally:
        for s in strangers:
            s.close()
    wait_stat(master, "repl_peers_refused", "20")
    st = stats(master.address)
    assert st["repl_slaves"] == "0" and st["repl_slaves_joined"] == "0", st
    assert master.wait_for_log(re.compile(r"replication: peer 127\.0\.0\.1:\d+ refused: not in replication\.allow"),
                               5), master.log
    # The allowed address still syncs everything (the strangers took no slot).
    with connect_from("127.0.0.2", repl) as s:
        assert sync_keys(s, ITEMS) == {b"key:%d" % i for i in range(ITEMS)}
        wait_stat(master, "repl_slaves", "1")
    assert stats(master.address)["repl_peers_refused"] == "20"


def test_an_allowed_ithaca_slave_syncs(ithaca_factory):
    """allow with a wider block and an IPv6 entry: the ithaca slave (from
    127.0.0.1) is in 127.0.0.0/8 and follows the master."""
    repl = free_port()
    master = ithaca_factory(config_text=master_yaml(repl, "  allow: ['::1', 127.0.0.0/8]\n"))
    repl_port_of(master)
    fill(master)
    slave = ithaca_factory(config_text=slave_config(repl))
    wait_stat(master, "repl_syncs_done", "1", timeout=10)
    deadline = time.monotonic() + 10
    with Conn(*slave.address) as c:
        while c.call(b"get key:%d\r\n" % (ITEMS - 1)) == b"END\r\n":
            assert time.monotonic() < deadline, slave.log
            time.sleep(0.02)
    assert stats(master.address)["repl_peers_refused"] == "0"


def test_slave_slots_stay_bounded_and_refusals_are_counted(ithaca_factory):
    """Without an allow-list, peers past the slot limit (16) are refused
    before anything is sent, and counted."""
    repl = free_port()
    master = ithaca_factory(config_text=master_yaml(repl))
    repl_port_of(master)
    held = [connect_from("127.0.0.1", repl) for _ in range(16)]
    try:
        wait_stat(master, "repl_slaves", "16")
        extra = connect_from("127.0.0.1", repl)
        with extra:
            assert received_before_close(extra) == b""
        wait_stat(master, "repl_peers_refused", "1")
    finally:
        for s in held:
            s.close()


def test_a_bad_allow_entry_is_refused_with_its_line(ithaca_factory, tmp_path):
    import subprocess
    from conftest import ithaca_binary
    path, _ = ithaca_binary()
    for entry, why in [("10.0.0.0/33", "prefix length"), ("10.0.0.1/8", "host bits"),
                       ("not-an-ip", "not an IPv4 or IPv6 address"), ("::1/129", "prefix length")]:
        conf = tmp_path / "m.yaml"
        conf.write_text(master_yaml(free_port(), f"  allow: ['{entry}']\n"))
        out = subprocess.run([path, "--config", str(conf), "--check-config"], capture_output=True, text=True,
                             timeout=10)
        assert out.returncode == 1, out
        assert f"{conf}:6: allow:" in out.stderr and why in out.stderr and entry in out.stderr, out.stderr
