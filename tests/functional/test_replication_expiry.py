"""A slave applies its master's stream as the master's truth about expiry.

A scripted master (this test, speaking yrmcds's stream: SetQ, Touch, DeleteQ)
feeds a real ithaca slave, so the timing of each record is exact:

- a Touch (or a SetQ) that arrives after the item's old deadline on the
  slave's clock must revive (or replace) it, not find nothing: the master
  still holds the key (it touched it in time on its own clock, or the record
  lagged), and a slave that dropped it would lose it for good (issue 20.1);
- the slave's GC does not reclaim an item the master has not expired: only
  the master's DeleteQ removes it, as on a yrmcds slave (which runs no GC);
- an absolute exptime ends on the slave at that unix second, not up to a
  second early (its server clock ticks on the wall clock's seconds).
"""
import socket
import struct
import threading
import time

from mcwire import OP_DELETEQ, OP_SETQ, OP_TOUCH, Conn, pack_request, set_extras
from replica import stats

SLAVE_CONFIG = """
replication:
  role: slave
  master: 127.0.0.1
  port: {port}
  heartbeat_interval: 100ms
  serve_reads: true
cache:
  gc_interval: 100ms
"""


class ScriptedMaster:
    """Accepts one slave on 127.0.0.1 and sends it the records the test queues;
    reads and discards its heartbeat bytes."""

    def __init__(self):
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4)
        self.port = self.listener.getsockname()[1]
        self.conn = None
        self.stop = threading.Event()
        self.reader = None

    def accept(self, timeout=10.0):
        self.listener.settimeout(timeout)
        self.conn, _ = self.listener.accept()
        self.conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self):
        self.conn.settimeout(0.2)
        while not self.stop.is_set():
            try:
                if not self.conn.recv(4096):
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    def send(self, *packets):
        self.conn.sendall(b"".join(packets))

    def close(self):
        self.stop.set()
        if self.reader:
            self.reader.join(2)
        for s in (self.conn, self.listener):
            if s:
                s.close()


def setq(key, value, exptime, flags=0):
    return pack_request(OP_SETQ, key, set_extras(flags, exptime), value)


def touch(key, exptime):
    return pack_request(OP_TOUCH, key, struct.pack(">I", exptime))


def deleteq(key):
    return pack_request(OP_DELETEQ, key)


def get(addr, key):
    with Conn(*addr) as c:
        reply = c.call(b"get %s\r\n" % key)
    return None if reply == b"END\r\n" else reply.split(b"\r\n")[1]


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def applied(master, slave, tag):
    """A sentinel SetQ after the records under test: once the slave shows it,
    every record before it has been applied (the stream is in order)."""
    master.send(setq(b"sentinel", tag, 0))
    wait_for(lambda: get(slave.address, b"sentinel") == tag, 10, f"sentinel {tag!r}")


def start_slave(ithaca_factory):
    master = ScriptedMaster()
    slave = ithaca_factory(config_text=SLAVE_CONFIG.format(port=master.port))
    master.accept()
    return master, slave


def test_touch_after_the_old_deadline_revives_the_item(ithaca_factory):
    master, slave = start_slave(ithaca_factory)
    try:
        now = int(time.time())
        master.send(setq(b"touched", b"kept", now + 2))
        applied(master, slave, b"1")
        assert get(slave.address, b"touched") == b"kept"
        # The deadline passes on the slave's clock; its GC runs every 100 ms.
        wait_for(lambda: get(slave.address, b"touched") is None, 5, "the old deadline to pass on the slave")
        gc_runs = int(stats(slave.address)["gc_runs"])
        wait_for(lambda: int(stats(slave.address)["gc_runs"]) >= gc_runs + 3, 5, "three GC sweeps")
        # The master touched it in time on its clock; the Touch arrives late.
        master.send(touch(b"touched", int(time.time()) + 100))
        applied(master, slave, b"2")
        assert get(slave.address, b"touched") == b"kept", "the slave lost a key its master keeps"
        assert int(stats(slave.address)["repl_touched"]) == 1
        # Only the master's delete removes it.
        master.send(deleteq(b"touched"))
        applied(master, slave, b"3")
        assert get(slave.address, b"touched") is None
        master.send(touch(b"touched", 0))
        applied(master, slave, b"4")
        assert get(slave.address, b"touched") is None
    finally:
        master.close()


def test_set_with_a_deadline_already_past_here_is_kept_for_the_master(ithaca_factory):
    master, slave = start_slave(ithaca_factory)
    try:
        # The record lagged (or the clocks differ): its absolute exptime has
        # passed on the slave by the time it is applied.
        master.send(setq(b"late", b"value", int(time.time()) - 1, flags=7))
        applied(master, slave, b"1")
        assert get(slave.address, b"late") is None  # expired here: hidden from reads
        master.send(touch(b"late", 0))
        applied(master, slave, b"2")
        with Conn(*slave.address) as c:
            assert c.call(b"get late\r\n") == b"VALUE late 7 5\r\nvalue\r\nEND\r\n"
    finally:
        master.close()


def test_absolute_exptime_ends_at_its_unix_second_on_the_slave(ithaca_factory):
    # Start the slave half-way through a wall-clock second: a server clock
    # whose seconds start at its own start expired everything 0.5 s early.
    frac = time.time() % 1.0
    time.sleep((1.5 - frac) % 1.0)
    master, slave = start_slave(ithaca_factory)
    try:
        end = int(time.time()) + 3
        master.send(setq(b"timed", b"v", end))
        applied(master, slave, b"1")
        # A get that starts before the item's end may be served after it
        # (a slow machine): the first miss is judged by when its get started.
        first_miss = None
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            t = time.time()
            if get(slave.address, b"timed") is None:
                first_miss = t
                break
            time.sleep(0.01)
        assert first_miss is not None, "the item never expired on the slave"
        assert first_miss >= end - 0.2, f"expired {end - first_miss:.3f} s before its unix second {end}"
        assert first_miss < end + 0.4, f"expired {first_miss - end:.3f} s after its unix second {end}"
    finally:
        master.close()


def start_at_fraction(frac, start):
    """Runs start() once the wall clock is `frac` of the way into a second."""
    time.sleep((frac - time.time() % 1.0) % 1.0)
    return start()


def test_keys_kept_alive_by_touches_are_never_lost_on_the_slave(ithaca_factory):
    """A real ithaca master and slave, started at opposite ends of a wall-clock
    second (their old server clocks then disagreed by 0.8 s about when each
    absolute exptime ends), under clients that keep short-lived keys alive with
    touches. At the end every key the master still holds is touched to never
    expire: the slave must then hold every one of them."""
    from replica import catch_up, master_config, repl_port_of, slave_config
    master = start_at_fraction(0.9, lambda: ithaca_factory(
        config_text=master_config(0, "cache:\n  gc_interval: 100ms\n")))
    repl = repl_port_of(master)
    slave = start_at_fraction(0.1, lambda: ithaca_factory(
        config_text=slave_config(repl) + "cache:\n  gc_interval: 100ms\n"))
    keys = [b"alive:%d" % i for i in range(200)]
    with Conn(*master.address) as c:
        c.send(b"".join(b"set %s 0 2 1\r\nv\r\n" % k for k in keys))
        assert c.read_replies(len(keys)) is not None
        end = time.monotonic() + 4
        while time.monotonic() < end:
            # Touch every key at a steady pace; a key the master let expire is set again.
            for k in keys:
                if c.call(b"touch %s 2\r\n" % k) == b"NOT_FOUND\r\n":
                    assert c.call(b"set %s 0 2 1\r\nv\r\n" % k) == b"STORED\r\n"
                time.sleep(0.004)
        held = [k for k in keys if c.call(b"touch %s 0\r\n" % k) == b"TOUCHED\r\n"]
    catch_up(master.address, slave.address, b"done")
    # (A loaded machine touches slower and lets more keys lapse on the master;
    # the check below needs enough kept keys to mean something.)
    assert len(held) >= 60, f"only {len(held)} keys kept alive: too few to check"
    with Conn(*slave.address) as c:
        missing = [k for k in held if c.call(b"get %s\r\n" % k) == b"END\r\n"]
    assert not missing, f"the slave lost {len(missing)} of {len(held)} keys its master keeps: {missing[:5]}"
