"""Initial sync under write load: a master (4 workers) holds 100,000 items; a
slave joins while four clients, spread over the workers, keep writing (sets,
deletes, appends, prepends, touches, incr, new keys). Afterwards master and
slave hold exactly the same items, compared key by key (flags and value), and
the same item count. The writes run from before the slave connects until after
the master reports its sync done, so the scan copies buckets that workers are
changing under it."""
import random
import re
import threading
import time

from mcwire import Conn
from replica import assert_same, catch_up, master_config, repl_port_of, slave_config, stats

ITEMS = 100_000
WRITERS = 4
BATCH = 50
COUNTERS = 10
# Replies a writer accepts: the writers race on the same keys, so a delete or
# an append may find its key gone.
OK_REPLIES = (b"STORED\r\n", b"NOT_STORED\r\n", b"DELETED\r\n", b"NOT_FOUND\r\n", b"TOUCHED\r\n")


def key(i):
    return b"k:%d" % i


def value(i, round_=0):
    # 3 to 160 bytes, different for every overwrite
    return (b"v%d.%d-" % (i, round_)) * (1 + i % 16)


def preload(addr, n, chunk=1000):
    with Conn(*addr, timeout=30) as c:
        for lo in range(0, n, chunk):
            hi = min(n, lo + chunk)
            c.send(b"".join(b"set %s %d 0 %d\r\n%s\r\n" % (key(i), i * 7919 % 2**32, len(value(i)), value(i))
                            for i in range(lo, hi)))
            assert c.read_exact(8 * (hi - lo)) == b"STORED\r\n" * (hi - lo)


class Writer(threading.Thread):
    """One connection writing pipelined batches of mixed changes until stopped."""

    def __init__(self, addr, wid, stop):
        super().__init__(daemon=True, name=f"writer-{wid}")
        self.addr, self.wid, self.stop = addr, wid, stop
        self.ops = 0
        self.created = 0
        self.error = None

    def counter(self, j):
        return b"cnt:%d:%d" % (self.wid, j)

    def new_key(self, i):
        return b"new:%d:%d" % (self.wid, i)

    def keys(self):
        return [self.counter(j) for j in range(COUNTERS)] + [self.new_key(i) for i in range(self.created)]

    def batch(self, rng):
        out = []
        for _ in range(BATCH):
            i = rng.randrange(ITEMS)
            r = rng.random()
            if r < 0.35:
                v = value(i, self.ops + len(out))
                out.append(b"set %s %d 0 %d\r\n%s\r\n" % (key(i), rng.randrange(2**32), len(v), v))
            elif r < 0.50:
                out.append(b"delete %s\r\n" % key(i))
            elif r < 0.60:
                out.append(b"append %s 0 0 3\r\n+%02d\r\n" % (key(i), self.wid))
            elif r < 0.65:
                out.append(b"prepend %s 0 0 3\r\n-%02d\r\n" % (key(i), self.wid))
            elif r < 0.70:
                out.append(b"touch %s 100000\r\n" % key(i))
            elif r < 0.85:
                out.append(b"incr %s %d\r\n" % (self.counter(rng.randrange(COUNTERS)), rng.randrange(1, 1000)))
            else:
                v = b"new-%d-%d" % (self.wid, self.created)
                out.append(b"add %s 5 0 %d\r\n%s\r\n" % (self.new_key(self.created), len(v), v))
                self.created += 1
        return out

    def run(self):
        rng = random.Random(self.wid)
        try:
            with Conn(*self.addr, timeout=30) as c:
                c.send(b"".join(b"set %s 0 0 1\r\n0\r\n" % self.counter(j) for j in range(COUNTERS)))
                assert c.read_exact(8 * COUNTERS) == b"STORED\r\n" * COUNTERS
                while not self.stop.is_set():
                    reqs = self.batch(rng)
                    c.send(b"".join(reqs))
                    for req in reqs:
                        line = c.read_line()
                        assert line in OK_REPLIES or line[:-2].isdigit(), (req, line)
                    self.ops += len(reqs)
        except Exception as e:  # reported by the test
            self.error = e


def test_initial_sync_of_100k_items_while_clients_write(ithaca_factory):
    master = ithaca_factory(args=["-t", "4"], config_text=master_config(0))
    repl_port = repl_port_of(master)
    preload(master.address, ITEMS)

    stop = threading.Event()
    writers = [Writer(master.address, w, stop) for w in range(WRITERS)]
    for w in writers:
        w.start()
    try:
        # Writes while the scan runs: the writers' progress between the slave's
        # join and the end of its sync; when the whole sync fell between two
        # polls (a fast machine: it once did), from just before the slave
        # started, which includes the sync.
        ops_at_start = sum(w.ops for w in writers)
        slave = ithaca_factory(config_text=slave_config(repl_port))
        deadline = time.monotonic() + 60
        ops_at_join = None
        while True:
            s = stats(master.address)
            if ops_at_join is None and s["repl_slaves_joined"] == "1":
                ops_at_join = sum(w.ops for w in writers) if s["repl_syncs_done"] == "0" else ops_at_start
            if s["repl_syncs_done"] == "1":
                ops_at_done = sum(w.ops for w in writers)
                break
            assert all(w.is_alive() for w in writers), [w.error for w in writers]
            assert time.monotonic() < deadline, f"no sync done in 60 s: {s}\n{master.log}"
            time.sleep(0.005)
        # More writes after the sync, through the stream alone.
        target = sum(w.ops for w in writers) + 20 * BATCH
        while sum(w.ops for w in writers) < target and all(w.is_alive() for w in writers):
            time.sleep(0.01)
    finally:
        stop.set()
        for w in writers:
            w.join(60)
    assert all(w.error is None for w in writers), [w.error for w in writers]
    assert ops_at_join is not None and ops_at_done > ops_at_join, \
        f"no write acknowledged during the sync ({ops_at_join} -> {ops_at_done})"

    catch_up(master.address, slave.address, b"done")
    keys = [key(i) for i in range(ITEMS)] + [k for w in writers for k in w.keys()] + [b"sentinel"]
    items = assert_same(master.address, slave.address, keys, "after the initial sync under writes")
    ms, ss = stats(master.address), stats(slave.address)
    assert ms["curr_items"] == ss["curr_items"] == str(len(items)), (ms["curr_items"], ss["curr_items"], len(items))
    assert len(items) > ITEMS // 2
    assert ms["repl_slaves"] == "1" and ms["repl_slaves_dropped"] == "0", ms
    assert int(ms["repl_sync_items"]) >= ITEMS // 2, ms
    assert ss["repl_master_connects"] == "1" and ss["repl_stream_errors"] == "0", ss
    print(f"writes: {ops_at_join} acknowledged at the join, {ops_at_done} at the end of the sync, "
          f"{sum(w.ops for w in writers)} in all; {len(items)} items compared")


def read_sync(sock, items, deadline):
    """Reads the initial sync as a slow slave does (16 KiB, then a 2 ms pause),
    sending a heartbeat byte every 100 ms; returns the packets counted once
    `items` SetQ packets arrived."""
    buf = bytearray()
    packets = 0
    beat = time.monotonic()
    while packets < items:
        assert time.monotonic() < deadline, f"{packets} of {items} sync records read"
        chunk = sock.recv(16384)
        assert chunk, f"the master closed the connection after {packets} records"
        buf += chunk
        pos = 0
        while len(buf) - pos >= 24:
            assert buf[pos] == 0x80 and buf[pos + 1] == 0x11, bytes(buf[pos:pos + 24])  # SetQ
            size = 24 + int.from_bytes(buf[pos + 8:pos + 12], "big")
            if len(buf) - pos < size:
                break
            pos += size
            packets += 1
        del buf[:pos]
        if time.monotonic() - beat > 0.1:
            sock.sendall(b"\0")
            beat = time.monotonic()
        time.sleep(0.002)
    return packets


def test_a_slow_slave_is_not_dropped_during_its_initial_sync(ithaca_factory):
    """The scan waits for its slave: a slave that reads slowly gets every item,
    however small send_buffer is, instead of being dropped for falling behind
    (and resyncing forever). 20 MB through a 256 KiB send_buffer and a 4 MiB
    ring (whose quarter, where the scan pauses, is larger than send_buffer)."""
    import socket
    n, size = 20_000, 1000
    cfg = master_config(0, "  send_buffer: 256k\n  queue_size: 4m\n")
    master = ithaca_factory(args=["-m", "256"], config_text=cfg)
    with Conn(*master.address, timeout=30) as c:
        for lo in range(0, n, 500):
            c.send(b"".join(b"set big:%d 0 0 %d\r\n%s\r\n" % (i, size, b"x" * size) for i in range(lo, lo + 500)))
            assert c.read_exact(8 * 500) == b"STORED\r\n" * 500
    with socket.create_connection((master.host, repl_port_of(master)), timeout=30) as s:
        assert read_sync(s, n, time.monotonic() + 120) == n
        st = stats(master.address)
    assert st["repl_slaves_dropped"] == "0" and st["repl_syncs_done"] == "1", (st, master.log)


def test_a_stuck_slave_is_dropped_and_the_slave_after_it_misses_nothing(ithaca_factory):
    """A slave that stops reading falls behind by more than send_buffer and is
    dropped while the master streams; the slave after it in the master's list
    still gets every record, the one whose delivery dropped the stuck slave
    included. 20 MB of sets through a 256 KiB send_buffer."""
    import socket
    n, size = 20_000, 1000
    master = ithaca_factory(args=["-m", "256"], config_text=master_config(0, "  send_buffer: 256k\n"))
    repl = repl_port_of(master)

    def wait_stats(pred, what):
        deadline = time.monotonic() + 30
        while not pred(stats(master.address)):
            assert time.monotonic() < deadline, f"{what}: {stats(master.address)}\n{master.log}"
            time.sleep(0.02)

    # First in the list: a socket that takes its (empty) sync and never reads again.
    stuck = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.connect((master.host, repl))
    try:
        wait_stats(lambda s: s["repl_slaves"] == "1" and s["repl_syncs_done"] == "1", "the stuck slave's sync")
        slave = ithaca_factory(config_text=slave_config(repl))
        wait_stats(lambda s: s["repl_slaves"] == "2" and s["repl_syncs_done"] == "2", "the second slave's sync")
        keys = [b"big:%d" % i for i in range(n)]
        # Batches of 100 KB, each waited for by the live slave, so that it
        # never falls behind by send_buffer itself.
        with Conn(*master.address, timeout=30) as c:
            for lo in range(0, n, 100):
                c.send(b"".join(b"set big:%d %d 0 %d\r\n%s\r\n" % (i, i, size, b"%08d" % i * (size // 8))
                                for i in range(lo, lo + 100)))
                assert c.read_exact(8 * 100) == b"STORED\r\n" * 100
                catch_up(master.address, slave.address, b"batch %d" % lo)
        assert master.wait_for_log(re.compile(r"dropped: fell behind by more than send_buffer"), 30), master.log
        assert_same(master.address, slave.address, keys, "the slave after a dropped one")
        st = stats(master.address)
        # One drop, and no second sync: the live slave got it all from the stream.
        repl_stats = " ".join(f"{k}={v}" for k, v in st.items() if k.startswith("repl"))
        assert (st["repl_slaves"], st["repl_slaves_dropped"], st["repl_syncs_done"]) == ("1", "1", "2"), \
            repl_stats + "\n" + master.log
    finally:
        stuck.close()
