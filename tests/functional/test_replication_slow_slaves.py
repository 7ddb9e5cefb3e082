"""Slaves that do not read (issue 28, item 7). A master with `send_buffer: 2m`
serves twelve fake slaves that connect, send their heartbeat bytes and never
read, and one honest slave (a real ithaca); two clients write for four
seconds. A non-reader may be dropped, for its own reason only (its backlog
passed send_buffer, or its write timed out); the honest slave is never
dropped and ends holding every key the master holds. And a slave the master
did drop (stopped with SIGSTOP past slave_timeout) reconnects and resyncs to
the master's data while the clients keep writing, dropped no more.

Before the fix (5cf70a7) one drain pass put 2.2 MB into every slave's buffer
before any writer ran: all thirteen were dropped in the same millisecond
("fell behind by more than send_buffer", the honest one's writer idle), and a
resync under the writes was dropped again and again."""
import re
import signal
import socket
import threading
import time

from conftest import HOST, free_port
from mcwire import Conn
from replica import catch_up, diff, dump, master_config, repl_port_of, slave_config, stats, wait_same

NON_READERS = 12
WRITERS = 2
WRITE_SECONDS = 4.0
BATCH = 20
# At most this many sets per writer, however fast the machine: all their
# keys must fit in the master's -m 256 (about 450 B per item, and -m also
# covers the hash table and the process's other memory: INTERNALS.md, "Item
# memory"), which a fast run writing for its whole time did not (835,000
# keys, 64% kept), nor 200,000 per writer once -m covered more than items.
MAX_SETS = 160_000
HOT_KEYS = 50  # per writer: overwritten again and again (the slave must end with the last version)
DROP_RE = re.compile(r"replication: slave (\S+) dropped: (.*)")
JOIN_RE = re.compile(r"replication: slave (\S+) joined")
OWN_REASONS = ("fell behind by more than send_buffer", "not reading (write timed out)")


def slow_master_config(slave_timeout="5s"):
    # info: the "slave ... joined" lines name each slave's address.
    cfg = master_config(free_port(), "  send_buffer: 2m")
    return "logging:\n  level: info\n" + cfg.replace("slave_timeout: 5s", f"slave_timeout: {slave_timeout}")


def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what()
        time.sleep(0.02)


class NonReader(threading.Thread):
    """A slave that connects and sends yrmcds's heartbeat byte every 100 ms,
    so it is never silent, but never reads what the master sends."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = socket.create_connection((HOST, port))
        self.peer = "%s:%d" % self.sock.getsockname()[:2]
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(0.1):
            try:
                self.sock.send(b"\0", socket.MSG_DONTWAIT)
            except OSError:
                return  # dropped: the master closed it

    def close(self):
        self.stop.set()
        self.join(5)
        self.sock.close()


class Writer(threading.Thread):
    """Pipelined sets for `seconds`: new keys (values of 64 B to 4 KB) and
    overwrites of a few hot keys. Remembers every key it wrote."""

    def __init__(self, addr, wid, seconds):
        super().__init__(daemon=True, name=f"writer-{wid}")
        self.addr, self.wid, self.seconds = addr, wid, seconds
        self.keys = set()
        self.sets = 0
        self.error = None

    def run(self):
        try:
            with Conn(*self.addr, timeout=30) as c:
                end = time.monotonic() + self.seconds
                n = 0
                while time.monotonic() < end and n < MAX_SETS:
                    out = []
                    for _ in range(BATCH):
                        if n % 4 == 3:
                            k = b"hot:%d:%d" % (self.wid, n % HOT_KEYS)
                        else:
                            k = b"w:%d:%d" % (self.wid, n)
                        v = (b"%d.%d-" % (self.wid, n)) * (8 + n % 64)
                        out.append(b"set %s %d 0 %d\r\n%s\r\n" % (k, n, len(v), v))
                        self.keys.add(k)
                        n += 1
                    c.send(b"".join(out))
                    assert c.read_exact(8 * len(out)) == b"STORED\r\n" * len(out)
                self.sets = n
        except Exception as e:  # reported by the test
            self.error = e


def write_for(addr, seconds):
    writers = [Writer(addr, w, seconds) for w in range(WRITERS)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(seconds + 60)
        assert not w.is_alive() and w.error is None, w.error
    return sorted(set().union(*(w.keys for w in writers))), sum(w.sets for w in writers)


def drops(master):
    """{peer: why} from the master's "slave ... dropped" lines."""
    return {m.group(1): m.group(2) for m in DROP_RE.finditer(master.log)}


def test_a_slave_that_keeps_up_is_never_dropped_because_others_do_not(ithaca_factory):
    master = ithaca_factory(args=["-m", "256"], config_text=slow_master_config())
    port = repl_port_of(master)
    fakes = [NonReader(port) for _ in range(NON_READERS)]
    try:
        for f in fakes:
            f.start()
        wait_until(lambda: stats(master.address)["repl_syncs_done"] == str(NON_READERS), 10, lambda: master.log)
        honest = ithaca_factory(args=["-m", "256"], config_text=slave_config(port))
        wait_until(lambda: stats(master.address)["repl_syncs_done"] == str(NON_READERS + 1), 10,
                   lambda: master.log)
        fake_peers = {f.peer for f in fakes}
        # The join's log line may trail the stats (the log has a thread of its own).
        wait_until(lambda: any(p not in fake_peers for p in JOIN_RE.findall(master.log)), 10, lambda: master.log)
        honest_peers = {p for p in JOIN_RE.findall(master.log) if p not in fake_peers}
        assert len(honest_peers) == 1, master.log

        keys, sets = write_for(master.address, WRITE_SECONDS)

        # Every non-reader ends dropped within slave_timeout (5 s) of its last
        # write, each for its own reason; the honest slave stays attached.
        wait_until(lambda: stats(master.address)["repl_slaves"] == "1", 15,
                   lambda: f"{stats(master.address)}\n{master.log}")
        catch_up(master.address, honest.address, b"after-%d" % sets)
        want, got = dump(master.address, keys), dump(honest.address, keys)
        assert len(want) == len(keys), f"the master lost keys ({len(want)} of {len(keys)}): raise -m"
        missing = [k for k in want if k not in got]
        assert want == got, (f"the honest slave misses {len(missing)} of {len(want)} keys; "
                             f"{diff(want, got)}\n{master.log}")

        # The log is asynchronous: wait for the twelve drop lines.
        wait_until(lambda: len(drops(master)) >= NON_READERS, 5, lambda: master.log)
        dropped = drops(master)
        for peer in honest_peers:
            assert peer not in dropped, f"the honest slave was dropped: {dropped[peer]}\n{master.log}"
        for peer, why in dropped.items():
            assert peer in fake_peers, master.log
            assert why.startswith(OWN_REASONS), f"{peer} dropped for another's reason: {why}\n{master.log}"
        ms = stats(master.address)
        assert ms["repl_slaves_dropped"] == str(NON_READERS), ms
        assert ms["repl_queue_overflows"] == "0", ms
        hs = stats(honest.address)
        assert hs["repl_master_connects"] == "1", hs
        assert hs["repl_stream_errors"] == "0", hs
    finally:
        for f in fakes:
            f.close()


def test_a_dropped_slave_resyncs_while_clients_write(ithaca_factory):
    master = ithaca_factory(args=["-m", "256"], config_text=slow_master_config("1s"))
    port = repl_port_of(master)
    slave = ithaca_factory(args=["-m", "256"], config_text=slave_config(port))
    wait_until(lambda: stats(master.address)["repl_syncs_done"] == "1", 10, lambda: master.log)
    before, _ = write_for(master.address, 1.0)
    catch_up(master.address, slave.address, b"before")
    writers = [Writer(master.address, 10 + w, 6.0) for w in range(WRITERS)]
    for w in writers:
        w.start()
    slave.proc.send_signal(signal.SIGSTOP)
    try:
        # Stopped, it sends no heartbeat and reads nothing: dropped within
        # slave_timeout (or sooner, once send_buffer is passed).
        with Conn(*master.address) as c:
            for k in before[::3]:
                c.send(b"delete %s\r\n" % k)
                assert c.read_line() == b"DELETED\r\n"
        wait_until(lambda: int(stats(master.address)["repl_slaves_dropped"]) >= 1, 10, lambda: master.log)
    finally:
        slave.proc.send_signal(signal.SIGCONT)
    # Resumed while the clients still write: it finds its connection closed,
    # reconnects, and its new initial sync ends (once, not dropped again).
    wait_until(lambda: int(stats(master.address)["repl_syncs_done"]) >= 2, 15,
               lambda: f"not resynced\n{master.log}\n{slave.log}")
    for w in writers:
        w.join(30)
        assert not w.is_alive() and w.error is None, w.error
    during = set().union(*(w.keys for w in writers))
    catch_up(master.address, slave.address, b"after")
    wait_same(master.address, slave.address, sorted(set(before) | during), "after the resync")
    ss = stats(slave.address)
    assert ss["repl_master_connects"] == "2", f"{ss}\n{master.log}"
    ms = stats(master.address)
    assert ms["repl_slaves"] == "1" and ms["repl_slaves_dropped"] == "1", f"{ms}\n{master.log}"
