"""Replication, yrmcds's protocol: an ithaca slave follows an ithaca master
and a yrmcds master, through the initial sync and the stream, while clients
keep writing; afterwards both hold the same items, compared key by key."""
import os
import re
import socket
import subprocess
import threading
import time

import pytest

from conftest import HOST, Server, free_port
from mcwire import Conn
from netns import in_netns, netns  # noqa: F401 (a fixture)
from replica import SYNC_TIMEOUT, assert_same, dump, master_config, repl_port_of, slave_config, stats

YRMCDS = "/usr/sbin/yrmcdsd"


def write_items(addr, items, batch=500):
    """Pipelined sets: items is a list of (key, flags, value)."""
    with Conn(*addr, timeout=30) as c:
        for i in range(0, len(items), batch):
            chunk = items[i:i + batch]
            c.send(b"".join(b"set %s %d 0 %d\r\n%s\r\n" % (k, f, len(v), v) for k, f, v in chunk))
            for _ in chunk:
                assert c.read_line() == b"STORED\r\n"


def item_set(prefix, n, flags=0, size=40):
    return [(b"%s:%d" % (prefix, i), flags + i % 7, (b"%s-%d-" % (prefix, i)) * (size // 10 + i % 5))
            for i in range(n)]


class Churn(threading.Thread):
    """Writes, overwrites, deletes, touches, appends and increments while a
    slave syncs: every kind of change the stream carries."""

    def __init__(self, addr, prefix, n):
        super().__init__(daemon=True)
        self.addr, self.prefix, self.n = addr, prefix, n
        self.error = None

    def run(self):
        try:
            write_items(self.addr, item_set(self.prefix, self.n, flags=3))
            with Conn(*self.addr, timeout=30) as c:
                for i in range(0, self.n, 10):
                    k = b"%s:%d" % (self.prefix, i)
                    c.send(b"delete %s\r\n" % k)
                    assert c.read_line() == b"DELETED\r\n"
                    k = b"%s:%d" % (self.prefix, i + 1)
                    c.send(b"append %s 0 0 3\r\nxyz\r\n" % k)
                    assert c.read_line() == b"STORED\r\n"
                    k = b"%s:%d" % (self.prefix, i + 2)
                    c.send(b"touch %s 100000\r\n" % k)
                    assert c.read_line() == b"TOUCHED\r\n"
                    k = b"num:%d" % i
                    c.send(b"set %s 0 0 1\r\n5\r\nincr %s 7\r\n" % (k, k))
                    assert c.read_line() == b"STORED\r\n"
                    assert c.read_line() == b"12\r\n"
        except Exception as e:  # reported by the test
            self.error = e


def all_keys(*groups):
    keys = [k for g in groups for k, _, _ in g]
    return keys + [b"num:%d" % i for i in range(0, 20000, 10)]


def sync_while_writing(master, n, start_slave, what):
    """n items on the master, then a slave starts and syncs while n more are
    written and churned; returns the items once the slave holds the same."""
    before = item_set(b"before", n)
    write_items(master.address, before)
    slave = start_slave()
    churn = Churn(master.address, b"during", n)
    churn.start()
    churn.join(120)
    assert churn.error is None, churn.error
    return assert_same(master.address, slave.address, all_keys(before, item_set(b"during", n)), what,
                       settle=SYNC_TIMEOUT)


def test_ithaca_slave_follows_ithaca_master_while_clients_write(ithaca_factory):
    master = ithaca_factory(config_text=master_config(free_port()))
    slave = []
    items = sync_while_writing(master, 10000, lambda: slave.append(ithaca_factory(
        config_text=slave_config(repl_port_of(master)))) or slave[0], "ithaca -> ithaca")
    assert len(items) > 19000
    ms = stats(master.address)
    assert ms["repl_role"] == "master"
    assert ms["repl_slaves"] == "1"
    assert ms["repl_syncs_done"] == "1"
    assert int(ms["repl_sync_items"]) >= 10000
    assert ms["repl_slaves_dropped"] == "0"
    ss = stats(slave[0].address)
    assert ss["repl_role"] == "slave"
    assert ss["repl_master_connects"] == "1"
    assert ss["repl_stream_errors"] == "0"


def test_slave_closes_clients_by_default(ithaca_factory):
    master = ithaca_factory(config_text=master_config(free_port()))
    port = repl_port_of(master)
    cfg = slave_config(port).replace("serve_reads: true", "serve_reads: false")
    slave = ithaca_factory(config_text=cfg)
    with Conn(*slave.address) as c:
        assert c.is_closed()


def test_master_drops_a_silent_slave(ithaca_factory):
    import socket
    master = ithaca_factory(config_text=master_config(free_port()).replace("5s", "300ms"))
    s = socket.create_connection((HOST, repl_port_of(master)))
    try:
        deadline = time.monotonic() + 10
        while stats(master.address)["repl_slaves_dropped"] != "1":
            assert time.monotonic() < deadline, master.log
            time.sleep(0.05)
        # The log is asynchronous: the line may come a moment after the counter.
        assert master.wait_for_log(re.compile("no heartbeat for 300 ms"), 10), master.log
    finally:
        s.close()


# ---------------------------------------------------------------- yrmcds

@pytest.fixture
def yrmcds_factory(tmp_path):
    if not os.path.exists(YRMCDS):
        pytest.fail("yrmcds is not installed (apt-get install yrmcds; scripts/install-deps.sh)", pytrace=False)
    started = []

    def make(virtual_ip, port, repl_port, prefix=()):
        d = tmp_path / f"yrmcds-{len(started)}"
        d.mkdir()
        conf = d / "yrmcds.conf"
        conf.write_text(f"""virtual_ip = {virtual_ip}
port = {port}
repl_port = {repl_port}
temp_dir = "{d}"
log.threshold = info
log.file = "{d}/yrmcds.log"
buckets = 100000
memory_limit = 256M
workers = 2
gc_interval = 10
slave_timeout = 5
counter.enable = false
""")
        s = Server("yrmcds", [*prefix, YRMCDS, "-f", str(conf)])
        s.port = port
        s.logfile = d / "yrmcds.log"
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


def test_ithaca_slave_follows_a_yrmcds_master(ithaca_factory, yrmcds_factory):
    port, repl = free_port(), free_port()
    master = yrmcds_factory(HOST, port, repl)  # holds 127.0.0.1: a master
    assert master.wait_accepting(10), master.log
    slave = []
    items = sync_while_writing(master, 3000, lambda: slave.append(ithaca_factory(config_text=slave_config(repl)))
                               or slave[0], "yrmcds -> ithaca")
    assert len(items) > 5000
    ss = stats(slave[0].address)
    assert ss["repl_stream_errors"] == "0"
    assert int(ss["repl_updated"]) >= 3000


# ---------------------------------------------------------------- a yrmcds slave (network namespace)
# netns.py makes the namespace (root needed, as CI runs).

def wait_port_free(port, timeout):
    """Waits until a listener could bind 0.0.0.0:port (SO_REUSEADDR, as servers do)."""
    deadline = time.monotonic() + timeout
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("0.0.0.0", port))
                return
            except OSError:
                assert time.monotonic() < deadline, f"port {port} still bound after {timeout} s"
        time.sleep(0.01)


def slave_log(slave):
    """Whether a yrmcds is running, and the end of its log and output."""
    alive = "running" if slave.proc.poll() is None else f"exited with {slave.proc.returncode}"
    log = slave.logfile.read_text(errors="replace")[-3000:] if slave.logfile.exists() else ""
    return f"yrmcds is {alive}; its log ends:\n{log}\nits output:\n{slave.log[-2000:]}"


def test_yrmcds_slave_follows_an_ithaca_master(tmp_path, netns, yrmcds_factory):
    from conftest import ithaca_binary
    path, is_memcached = ithaca_binary()
    if is_memcached:
        pytest.skip("needs the ithaca binary")
    port, repl, yport = 21211, 21213, 21311  # inside the namespace: free by construction
    cfg = tmp_path / "master.yaml"
    cfg.write_text(master_config(repl).replace("listen: 127.0.0.1", "listen: 0.0.0.0"))
    master = Server("ithaca", ["ip", "netns", "exec", netns, path, "-l", HOST, "-p", str(port), "-U", "0",
                               "-t", "2", "-m", "64", "--config", str(cfg)])
    try:
        assert master.wait_for_log(re.compile(r"listening on tcp"), 10), master.log
        maddr = (HOST, port)
        before = item_set(b"before", 3000)
        in_netns(netns, lambda: write_items(maddr, before))
        # 127.0.0.2 is not on an interface yet: yrmcds is a slave of virtual_ip:repl_port.
        slave = yrmcds_factory("127.0.0.2", yport, repl, prefix=["ip", "netns", "exec", netns])
        churn = Churn(maddr, b"during", 3000)
        churn.run = (lambda run: (lambda: in_netns(netns, run)))(churn.run)
        churn.start()
        churn.join(120)
        assert churn.error is None, churn.error
        deadline = time.monotonic() + SYNC_TIMEOUT
        while True:
            ms = in_netns(netns, lambda: stats(maddr))
            # Still one slave: a yrmcds that died would leave no lag behind.
            assert ms["repl_slaves"] == "1" and slave.proc.poll() is None, (ms, master.log, slave_log(slave))
            if ms["repl_syncs_done"] == "1" and ms["repl_lag_bytes"] == "0":
                break
            assert time.monotonic() < deadline, master.log
            time.sleep(0.1)
        keys = all_keys(before, item_set(b"during", 3000))
        want = in_netns(netns, lambda: dump(maddr, keys))
        # Fail over: the master goes, the address comes to the slave's node
        # within the second yrmcds waits; it promotes itself keeping its data
        # and serves clients, so its items can be read.
        master.proc.kill()
        master.proc.wait()
        # Both nodes share one namespace here, and the dead master's
        # listening socket can outlive its process for a moment (its io_uring
        # requests are cancelled by the kernel after the exit). yrmcds exits
        # if the promotion cannot bind repl_port, so the address moves only
        # once the port is free, as it would be on another host.
        in_netns(netns, lambda: wait_port_free(repl, 10))
        subprocess.run(["ip", "netns", "exec", netns, "ip", "addr", "add", "127.0.0.2/32", "dev", "lo"],
                       check=True)

        def slave_items():
            deadline = time.monotonic() + SYNC_TIMEOUT
            while True:
                try:
                    # A short wait per attempt: a connection made while yrmcds
                    # switches to master may never be accepted (its reactor's
                    # edge-triggered listener event is lost with the slave loop).
                    return dump((HOST, yport), keys, timeout=2)
                except (OSError, AssertionError):
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)

        try:
            got = in_netns(netns, slave_items)
        except (OSError, AssertionError) as e:
            # Say what the yrmcds slave did (promoted? exited?) rather than
            # only that its port stayed shut.
            raise AssertionError(f"the yrmcds slave never served after the failover ({e}); "
                                 f"{slave_log(slave)}") from e
        assert len(want) > 5000
        assert got == want
    finally:
        master.stop()


def test_slave_serving_reads_refuses_writes(ithaca_factory):
    """serve_reads: true answers reads from the replicated data and refuses
    every write (the slave changes only by its master's stream)."""
    import mcwire
    master = ithaca_factory(config_text=master_config(free_port()))
    slave = ithaca_factory(config_text=slave_config(repl_port_of(master)))
    items = item_set(b"ro", 200)
    write_items(master.address, items)
    assert_same(master.address, slave.address, [k for k, _, _ in items], "read-only slave", settle=SYNC_TIMEOUT)
    key = items[0][0]
    refused = b"SERVER_ERROR read-only replica: writes go to the master\r\n"
    with Conn(*slave.address) as c:
        assert c.call(b"get %s\r\n" % key).startswith(b"VALUE %s " % key)
        for write in (b"set %s 0 0 1\r\nx\r\n" % key, b"delete %s\r\n" % key, b"incr num:10 1\r\n",
                      b"touch %s 100\r\n" % key, b"gat 100 %s\r\n" % key, b"flush_all\r\n",
                      b"ms %s 1\r\ny\r\n" % key, b"md %s\r\n" % key, b"mg %s v T30\r\n" % key,
                      b"set %s 0 0 1 noreply\r\nz\r\n" % key):
            assert c.call(write) == refused, write
        assert c.call(b"mg %s s v\r\n" % key).startswith(b"VA ")
    with Conn(*slave.address) as c:
        c.send(mcwire.S(key, b"binary", opaque=7))
        r = c.read_binary_response()
        assert (r["status"], r["opaque"]) == (0x0083, 7)
    # Nothing changed on the slave: it still equals its master key by key.
    assert_same(master.address, slave.address, [k for k, _, _ in items], "after refused writes",
                settle=SYNC_TIMEOUT)

