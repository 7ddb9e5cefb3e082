"""Roles that follow a virtual IP (replication.role: auto), in process: two
ithaca nodes in their own network namespaces on one bridge (netns.py), the
test's clients in a third, and the address moved between the nodes as
keepalived would move it. The holder is the master; the other follows
virtual_ip:port; a move, a kill or a restart changes roles without a restart
of the survivor, and every test ends with both nodes holding the same items,
compared key by key. With `replication.ack: slave` on both nodes no write a
client saw acknowledged is lost when the address moves under load or the
master is killed; with `ack: none` the move test prints how many were."""
import re
import signal
import threading
import time

import pytest

from conftest import SANITIZER_MARKERS, START_TIMEOUT, Server, _Servers, ithaca_binary
from mcwire import Conn, parse_stats
from netns import lan  # noqa: F401 (a fixture)
from replica import SYNC_TIMEOUT, dump, stats, wait_same
from test_replication import item_set, write_items

PORT, REPL = 11211, 11213  # inside the namespaces: free by construction
ROLE_BOUND = 10.0          # s: a role change seen by the clients (check 100 ms, failover_delay 2 s)
ACK_TIMEOUT = "1s"         # ack: slave; below the writers' 2 s read timeout, so they see the error
UNCONFIRMED = b"SERVER_ERROR applied on the master but not confirmed by a slave\r\n"


def node_config(vip, serve_reads=True, ack="none", failover_delay="2s", extra=""):
    """extra: more lines of the replication section."""
    return f"""
replication:
  virtual_ip: {vip}
  ack: {ack}
  ack_timeout: {ACK_TIMEOUT}
  listen: 0.0.0.0
  port: {REPL}
  check_interval: 100ms
  failover_delay: {failover_delay}
  slave_timeout: 3s
  heartbeat_interval: 100ms
  serve_reads: {"true" if serve_reads else "false"}
{extra}logging:
  level: info
"""


class Nodes:
    """ithaca on node "a" or "b" of the LAN; every process is stopped (and
    checked for crashes and sanitizer reports) at teardown."""

    def __init__(self, lan, tmp_path):
        self.lan, self.tmp_path = lan, tmp_path
        self.path, is_memcached = ithaca_binary()
        if is_memcached:
            pytest.fail("roles by virtual IP need the ithaca binary", pytrace=False)
        self.owned = _Servers()
        self.started = 0

    def start(self, node, memory=64, serve_reads=True, ack="none", failover_delay="2s", extra="", config=None):
        """config: the whole file instead of node_config's."""
        self.started += 1
        cfg = self.tmp_path / f"{node}-{self.started}.yaml"
        cfg.write_text(config or node_config(self.lan.vip, serve_reads, ack, failover_delay, extra))
        s = Server("ithaca", ["ip", "netns", "exec", self.lan.ns[node], self.path, "-l", "0.0.0.0", "-p",
                                str(PORT), "-U", "0", "-t", "2", "-m", str(memory), "--config", str(cfg)])
        s.host, s.port = self.lan.addr[node], PORT
        self.owned.add(s)
        assert s.wait_for_log(re.compile(r"listening on tcp"), START_TIMEOUT), s.describe()
        return s

    def kill(self, s):
        """SIGKILL, on purpose: no longer checked at teardown (its log is,
        here, for what it printed so far)."""
        for marker in SANITIZER_MARKERS:
            assert marker not in s.log, s.describe()
        s.proc.kill()
        s.proc.wait()
        self.owned.servers.remove(s)

    def logs(self):
        return "\n\n".join(s.describe() for s in self.owned.servers)


@pytest.fixture
def nodes(lan, tmp_path):
    n = Nodes(lan, tmp_path)
    yield n
    n.owned.stop_all()


def wait_for(what, fn, timeout, nodes):
    """Polls fn() (bounded) until it returns something true; returns that."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout}s\n{nodes.logs()}", pytrace=False)
        time.sleep(0.05)


def call_once(addr, request):
    with Conn(*addr) as c:
        return c.call(request)


def role_of(lan, server):
    return lan.run(lambda: stats(server.address))["repl_role"]


def wait_role(lan, nodes, server, role, timeout=ROLE_BOUND):
    wait_for(f"{server.host} is {role}", lambda: role_of(lan, server) == role, timeout, nodes)


def master_and_slave(lan, nodes, n_items, ack="none", failover_delay="2s", extra=""):
    """a holds the address and is the master; b follows it; n_items written
    through the address and on b too. With ack: slave the seed waits for b's
    sync (until then a write has no slave to confirm it)."""
    lan.add_vip("a")
    a = nodes.start("a", ack=ack, failover_delay=failover_delay, extra=extra)
    assert a.wait_for_log(re.compile(r"starting as master"), START_TIMEOUT), a.describe()
    b = nodes.start("b", ack=ack, failover_delay=failover_delay, extra=extra)
    assert b.wait_for_log(re.compile(r"starting as slave"), START_TIMEOUT), b.describe()
    if ack == "slave":
        wait_synced(lan, nodes, a)
    items = item_set(b"seed", n_items)
    lan.run(lambda: write_items((lan.vip, PORT), items))
    keys = [k for k, _, _ in items]
    lan.run(lambda: wait_same(a.address, b.address, keys, "b follows a"))
    return a, b, keys


def take_over(lan, nodes, new, keys, before, promoted, n_more, log_timeout):
    """Moves the address to `new` and checks it promotes (its log matches
    `promoted` within log_timeout s) with the data it had replicated (`before`, over `keys`), then
    writes n_more new items through the address. Returns them."""
    lan.move_vip("a", "b")
    wait_role(lan, nodes, new, "master")
    assert new.wait_for_log(promoted, log_timeout), new.describe()
    assert lan.run(lambda: dump(new.address, keys)) == before
    more = item_set(b"after", n_more)
    lan.run(lambda: write_items((lan.vip, PORT), more))
    return more


def wait_synced(lan, nodes, master, syncs=1):
    """Until master has one slave and has finished `syncs` initial syncs."""
    def synced():
        s = lan.run(lambda: stats(master.address))
        return s["repl_slaves"] == "1" and int(s["repl_syncs_done"]) >= syncs
    wait_for(f"{master.host} has a synced slave", synced, ROLE_BOUND, nodes)


class Writer(threading.Thread):
    """Sets <prefix>:<n> through the virtual IP one at a time until stopped,
    reconnecting after any error; remembers each acknowledged write, when it
    was sent and when its STORED came. Only STORED is an acknowledgement: an
    error reply (a slave's read-only refusal, ack: slave's "not confirmed"),
    a timeout or a closed connection is not."""

    def __init__(self, lan, prefix):
        super().__init__(daemon=True)
        self.lan, self.prefix = lan, prefix
        self.acked = []  # (key, value, sent, acknowledged): monotonic times
        self.refused = 0      # a read-only slave's refusal
        self.unconfirmed = 0  # ack: slave: applied, but no slave confirmed it
        self.stop = threading.Event()
        self.error = None

    def run(self):
        try:
            self.lan.run(self.loop)
        except BaseException as e:  # reported by the test
            self.error = e

    def loop(self):
        conn, n = None, 0
        while not self.stop.is_set():
            key, value = b"%s:%d" % (self.prefix, n), b"value-%d" % n
            n += 1
            try:
                if conn is None:
                    conn = Conn(self.lan.vip, PORT, timeout=2)
                sent = time.monotonic()
                conn.send(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value))
                reply = conn.read_line()
                if reply == b"STORED\r\n":
                    self.acked.append((key, value, sent, time.monotonic()))
                else:  # while the roles change
                    if reply == UNCONFIRMED:
                        self.unconfirmed += 1
                    else:
                        self.refused += 1
                    time.sleep(0.01)
            except (OSError, AssertionError):
                if conn is not None:
                    conn.close()
                conn = None
                time.sleep(0.01)
        if conn is not None:
            conn.close()

    def sent_after(self, t):
        return [w for w in self.acked if w[2] > t]


def start_writers(lan, count=4):
    writers = [Writer(lan, b"w%d" % i) for i in range(count)]
    for w in writers:
        w.start()
    return writers


def stop_writers(writers):
    for w in writers:
        w.stop.set()
    for w in writers:
        w.join(30)
    assert all(w.error is None for w in writers), [w.error for w in writers]
    return [x for w in writers for x in w.acked]


def missing(items, acked):
    """The acknowledged writes whose value `items` (a dump) lacks."""
    return [k for k, v, _, _ in acked if items.get(k, (None, None))[1] != v]


def counts(writers):
    return (f"{sum(w.refused for w in writers)} refused by a read-only slave, "
            f"{sum(w.unconfirmed for w in writers)} not confirmed by a slave")


def wait_acked(writers, count, nodes, sent_after=0.0):
    """Until every writer has `count` acknowledged writes sent after the time given."""
    wait_for(f"{count} writes acknowledged per writer",
             lambda: all(len(w.sent_after(sent_after)) >= count for w in writers), ROLE_BOUND, nodes)


def test_the_holder_is_master_and_the_other_syncs(lan, nodes):
    a, b, keys = master_and_slave(lan, nodes, 5000)
    sa, sb = lan.run(lambda: stats(a.address)), lan.run(lambda: stats(b.address))
    assert (sa["repl_role"], sa["repl_slaves"], sa["repl_role_changes"]) == ("master", "1", "0")
    assert (sb["repl_role"], sb["repl_master_connects"], sb["repl_role_changes"]) == ("slave", "1", "0")
    assert sa["repl_syncs_done"] == "1"
    # The slave closes nobody (serve_reads) but refuses writes; a SIGHUP
    # rebuilds each node's tree for the role in force, not for the file's.
    for server in (a, b):
        server.proc.send_signal(signal.SIGHUP)
        assert server.wait_for_log(re.compile(r"SIGHUP: .* is valid"), START_TIMEOUT), server.describe()
    assert lan.run(lambda: call_once(b.address, b"set x 0 0 1\r\nx\r\n")).startswith(
        b"SERVER_ERROR read-only replica")
    assert lan.run(lambda: call_once(a.address, b"set x 0 0 1\r\nx\r\n")) == b"STORED\r\n"
    assert lan.run(lambda: stats(b.address))["repl_role"] == "slave"


@pytest.mark.parametrize("ack", ["none", "slave"])
def test_the_address_moves_under_write_load(lan, nodes, ack):
    """Both nodes run with the same `ack`. ack: slave: every write either
    master acknowledged is on the final master and on its slave (the old
    master, resynced), and the gate follows the promotion; ack: none: what
    the old master acknowledged but had not streamed is lost, and counted."""
    a, b, keys = master_and_slave(lan, nodes, 3000, ack)
    writers = start_writers(lan)
    try:
        wait_acked(writers, 300, nodes)
        # The gate is on in the master: what it acknowledged, a slave confirmed.
        acked_so_far = sum(len(w.acked) for w in writers)
        confirmed_on_a = int(lan.run(lambda: stats(a.address))["repl_ack_confirmed"])
        lan.move_vip("a", "b")
        # From here a request can only reach b (a has dropped the address and
        # the neighbour caches are flushed): b promotes within the bound and
        # takes writes through the address.
        moved_at = time.monotonic()
        wait_acked(writers, 1, nodes, sent_after=moved_at)
        first_after = min(ack for w in writers for _, _, _, ack in w.sent_after(moved_at))
        wait_acked(writers, 300, nodes, sent_after=moved_at)
    finally:
        acked = stop_writers(writers)
    assert first_after - moved_at < ROLE_BOUND
    print(f"\nack: {ack}: writes acknowledged again {first_after - moved_at:.3f} s after the address moved")
    wait_role(lan, nodes, b, "master")
    wait_role(lan, nodes, a, "slave")
    assert b.wait_for_log(re.compile(r"promoted to master"), 1), b.describe()
    assert a.wait_for_log(re.compile(r"demoted to slave: local data dropped"), 1), a.describe()
    # The old master forgot its data and resynced from the new one.
    all_keys = keys + [k for k, _, _, _ in acked]
    items = lan.run(lambda: wait_same(b.address, a.address, all_keys, "a follows b after the move"))
    sa, sb = lan.run(lambda: stats(a.address)), lan.run(lambda: stats(b.address))
    assert (sa["repl_role_changes"], sb["repl_role_changes"]) == ("1", "1")
    assert sb["repl_slaves"] == "1"
    assert all(items.get(k) is not None for k in keys)
    # What the new master acknowledged is there in both modes: it had a
    # slave (ack: none) or it waited for one (ack: slave).
    after = [x for w in writers for x in w.sent_after(moved_at)]
    assert not missing(items, after)
    lost = missing(items, acked)
    print(f"ack: {ack}: {len(lost)} of {len(acked)} acknowledged writes lost across the move by "
          f"{len(writers)} writers ({counts(writers)} meanwhile)")
    if ack == "none":
        assert (confirmed_on_a, sb["repl_ack_confirmed"]) == (0, "0")
        return
    assert not lost, f"acknowledged but lost: {lost[:10]}"
    # Each acknowledgement was a confirmation, on a before the move and on
    # b after it (b's come from a, back as its slave).
    assert confirmed_on_a >= acked_so_far
    assert int(sb["repl_ack_confirmed"]) >= len(after)
    assert sa["repl_stream_errors"] == "0"


def test_master_killed_and_the_address_moved(lan, nodes):
    a, b, keys = master_and_slave(lan, nodes, 3000)
    before = lan.run(lambda: dump(a.address, keys))
    nodes.kill(a)
    # Promoted with the data it had replicated.
    more = take_over(lan, nodes, b, keys, before, re.compile(r"promoted to master"), 1000, 1)
    # The old master comes back without the address: a slave that resyncs.
    a2 = nodes.start("a")
    assert a2.wait_for_log(re.compile(r"starting as slave"), START_TIMEOUT), a2.describe()
    all_keys = keys + [k for k, _, _ in more]
    items = lan.run(lambda: wait_same(b.address, a2.address, all_keys, "the restarted a follows b"))
    assert len(items) == 4000


def test_master_killed_under_write_load_loses_no_acknowledged_write(lan, nodes):
    """ack: slave: the master is SIGKILLed under load and the address moved;
    the promoted slave holds every write the dead master acknowledged, and
    once the old master is back as its slave the gate confirms again."""
    a, b, keys = master_and_slave(lan, nodes, 3000, "slave")
    writers = start_writers(lan)
    try:
        wait_acked(writers, 300, nodes)
        nodes.kill(a)
        killed_at = time.monotonic()
        lan.move_vip("a", "b")
        wait_role(lan, nodes, b, "master")
        assert b.wait_for_log(re.compile(r"promoted to master"), 1), b.describe()
        # Sent before the kill: acknowledged by a (the replies came before
        # the writers reconnected, long before b took writes).
        acked_by_a = [x for w in writers for x in w.acked if x[2] < killed_at]
        # Key by key, before b has any slave (which would resync from it).
        got = lan.run(lambda: dump(b.address, [k for k, _, _, _ in acked_by_a]))
        lost = missing(got, acked_by_a)
        assert not lost, f"{len(lost)} of {len(acked_by_a)} acknowledged by the dead master lost: {lost[:10]}"
        # The gate came with the promotion: with no slave, b applies writes
        # but acknowledges none (its writers see the error) until the old
        # master is back as its slave.
        wait_for("b refuses to acknowledge without a slave",
                 lambda: sum(w.unconfirmed for w in writers) > 0, ROLE_BOUND, nodes)
        assert int(lan.run(lambda: stats(b.address))["repl_ack_unreplicated"]) > 0
        a2 = nodes.start("a", ack="slave")
        assert a2.wait_for_log(re.compile(r"starting as slave"), START_TIMEOUT), a2.describe()
        wait_synced(lan, nodes, b)
        synced_at = time.monotonic()
        wait_acked(writers, 100, nodes, sent_after=synced_at)
    finally:
        acked = stop_writers(writers)
    print(f"\nack: slave, master killed: {len(acked_by_a)} writes acknowledged by the dead master, 0 lost; "
          f"{len(acked)} in all ({counts(writers)})")
    all_keys = keys + [k for k, _, _, _ in acked]
    items = lan.run(lambda: wait_same(b.address, a2.address, all_keys, "the restarted a follows b"))
    assert not missing(items, acked)
    assert all(items.get(k) is not None for k in keys)
    sb = lan.run(lambda: stats(b.address))
    assert int(sb["repl_ack_confirmed"]) >= len([x for x in acked if x[2] > killed_at])
    assert sb["repl_role_changes"] == "1"


def test_a_demoted_master_follows_the_new_one_without_waiting_failover_delay(lan, nodes):
    """The address goes from a to a host where no ithaca runs, so a, demoted,
    cannot connect when it looks for the new master; then b takes it. a has
    dropped its data, so it keeps trying (every second) instead of waiting
    failover_delay (30 s here) and b, ack: slave, acknowledges writes again
    within the bound. (A demoted master that looks before the new one has
    promoted is the common case of a move: both check independently.)"""
    a, b, keys = master_and_slave(lan, nodes, 1000, "slave", failover_delay="30s")
    lan.move_vip("a", "net")
    wait_role(lan, nodes, a, "slave")
    assert a.wait_for_log(re.compile(r"cannot connect to the master"), ROLE_BOUND), a.describe()
    lan.move_vip("net", "b")
    moved_at = time.monotonic()
    wait_role(lan, nodes, b, "master")
    wait_synced(lan, nodes, b)
    assert lan.run(lambda: call_once((lan.vip, PORT), b"set k 0 0 1\r\nv\r\n")) == b"STORED\r\n"
    print(f"\nthe demoted master synced from the new one {time.monotonic() - moved_at:.3f} s after the move")
    items = lan.run(lambda: wait_same(b.address, a.address, keys + [b"k"], "a follows b"))
    assert len(items) == len(keys) + 1
    sa = lan.run(lambda: stats(a.address))
    assert (sa["repl_role"], sa["repl_role_changes"]) == ("slave", "1")


def test_slave_killed_mid_sync_resyncs(lan, nodes):
    lan.add_vip("a")
    a = nodes.start("a", memory=128)
    assert a.wait_for_log(re.compile(r"starting as master"), START_TIMEOUT), a.describe()
    items = item_set(b"big", 60000, size=500)  # ~33 MB: the sync takes a while
    lan.run(lambda: write_items((lan.vip, PORT), items))
    b = nodes.start("b", memory=128)
    # Freeze the slave as soon as it connects, so that it is killed while
    # the sync is surely under way (a running one could finish first).
    assert b.wait_for_log(re.compile(r"following the master"), START_TIMEOUT), b.describe()
    b.proc.send_signal(signal.SIGSTOP)

    def sync_started():
        s = lan.run(lambda: stats(a.address))
        return s if int(s["repl_sync_items"]) > 0 else None

    s = wait_for("the sync has sent items", sync_started, ROLE_BOUND, nodes)
    assert s["repl_syncs_done"] == "0", "the sync ended before the slave was stopped"
    nodes.kill(b)
    wait_for("the master dropped the killed slave",
             lambda: lan.run(lambda: stats(a.address))["repl_slaves"] == "0", ROLE_BOUND, nodes)
    b2 = nodes.start("b", memory=128)
    keys = [k for k, _, _ in items]
    got = lan.run(lambda: wait_same(a.address, b2.address, keys, "the restarted slave resyncs"))
    assert len(got) == len(items)
    sa = lan.run(lambda: stats(a.address))
    assert (sa["repl_syncs_done"], sa["repl_slaves"]) == ("1", "1")
    assert int(sa["repl_slaves_dropped"]) >= 1


def test_a_demoted_master_closes_its_clients_without_serve_reads(lan, nodes):
    """serve_reads: false (yrmcds's way): once a has lost the address, a
    client it had is closed at its next request (stats still answered, so a
    monitor keeps its view), and a new client is closed at once."""
    lan.add_vip("a")
    a = nodes.start("a", serve_reads=False)
    b = nodes.start("b", serve_reads=False)

    def scenario():
        with Conn(*a.address) as old:
            assert old.call(b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"
            lan.move_vip("a", "b")
            deadline = time.monotonic() + ROLE_BOUND
            while parse_stats(old.call(b"stats\r\n"))["repl_role"] != "slave":
                assert time.monotonic() < deadline, a.log
                time.sleep(0.05)
            old.send(b"get k\r\n")
            assert old.is_closed()
        with Conn(*a.address) as new:
            assert new.is_closed()
        deadline = time.monotonic() + ROLE_BOUND
        while True:  # b takes over the address and the writes
            try:
                if call_once((lan.vip, PORT), b"set k 0 0 1\r\nw\r\n") == b"STORED\r\n":
                    break
            except (OSError, AssertionError):  # closed while b is still a slave
                pass
            assert time.monotonic() < deadline, b.log
            time.sleep(0.05)

    lan.run(scenario)
    assert a.wait_for_log(re.compile(r"demoted to slave: local data dropped \(was master\); clients: closed"), 1), \
        a.describe()
