"""A slave notices a silent master host (replication.master_timeout).

A master whose host goes silent (power loss, a partition, its link down)
closes nothing: without master_timeout its slave's heartbeats wait in the send
buffer and its reads time out for ever. Here the master's link goes down in
its own namespace (netns.py: nodes "a" and "b" on one bridge, the test's
clients in "net"): the slave must count it in repl_master_timeouts within
master_timeout and a margin, keep trying, and sync again once the link is
back; with role: auto and the address moved to it, promote and take writes.
And an idle master (it sends nothing at all) must never be dropped.

master_timeout is 1 s here. The heartbeat interval is either below it (the
unacknowledged heartbeats fail the connection) or above it (keepalive
probes between them do)."""
import re
import time

import pytest

from conftest import START_TIMEOUT
from netns import in_netns, ip, lan  # noqa: F401 (a fixture)
from replica import dump, stats, wait_same
from test_failover import PORT, REPL, master_and_slave, nodes, take_over, wait_for, wait_role  # noqa: F401 (a fixture)
from test_replication import item_set, write_items

MASTER_TIMEOUT = 1.0
# The kernel's timers: a retransmission or keepalive timer fires at most a
# second or so after the timeout is due (keepalive counts whole seconds).
TIMEOUT_MARGIN = 2.0
HEARTBEATS = ["100ms", "3s"]  # below master_timeout, and above it (keepalive's case)


def seconds(duration):
    return float(duration[:-2]) / 1000 if duration.endswith("ms") else float(duration[:-1])


def static_config(role, heartbeat, master="", backend="auto"):
    """slave_timeout (the master's) stays above the heartbeat interval."""
    return f"""
server:
  io_backend: {backend}
replication:
  role: {role}
  {f"master: {master}" if master else "listen: 0.0.0.0"}
  port: {REPL}
  slave_timeout: 10s
  heartbeat_interval: {heartbeat}
  master_timeout: {MASTER_TIMEOUT:g}s
  serve_reads: true
logging:
  level: info
"""


def static_pair(lan, nodes, heartbeat, n_items, backend="auto"):
    """a: role master; b: role slave of a's own address, synced with n_items."""
    a = nodes.start("a", config=static_config("master", heartbeat))
    b = nodes.start("b", config=static_config("slave", heartbeat, lan.addr["a"], backend))
    assert b.wait_for_log(re.compile(r"following the master"), START_TIMEOUT), b.describe()
    items = item_set(b"seed", n_items)
    lan.run(lambda: write_items(a.address, items))
    keys = [k for k, _, _ in items]
    lan.run(lambda: wait_same(a.address, b.address, keys, "b follows a"))
    return a, b, keys


def slave_stats(lan, server):
    return lan.run(lambda: stats(server.address))


def link(lan, node, state):
    """The node's side of its link, up or down (its veth: the bridge's end
    loses its carrier too, so nothing passes either way)."""
    ip("link", "set", "eth0", state, ns=lan.ns[node])


def wait_master_timeout(lan, nodes, slave, since):
    """Until the slave has counted the lost master; returns the seconds it took."""
    wait_for("the slave counts the silent master", lambda: slave_stats(lan, slave)["repl_master_timeouts"] == "1",
             MASTER_TIMEOUT + 10, nodes)
    took = time.monotonic() - since
    m = slave.wait_for_log(re.compile(r"replication: the master \S+ is unreachable: .*"), 2)
    assert m, slave.describe()
    print(f"\n{m.group(0)}")
    return took


def bound(heartbeat):
    """When the slave must have noticed: the first heartbeat after the link
    went down, master_timeout unacknowledged (or keepalive's probe, from
    half the timeout of silence, unanswered at the timeout), and the
    kernel's timer granularity."""
    return MASTER_TIMEOUT + min(seconds(heartbeat), MASTER_TIMEOUT) + TIMEOUT_MARGIN


# The slave on epoll too: there the reader or the heartbeat sender takes the
# socket's error and the other sees the end of the stream (io_uring keeps it).
@pytest.mark.parametrize("heartbeat,backend", [(h, "auto") for h in HEARTBEATS] + [("100ms", "epoll")])
def test_a_slave_notices_a_silent_master_and_syncs_again(lan, nodes, heartbeat, backend):
    a, b, keys = static_pair(lan, nodes, heartbeat, 2000, backend)
    link(lan, "a", "down")
    took = wait_master_timeout(lan, nodes, b, time.monotonic())
    print(f"\nheartbeat {heartbeat}, {backend}: the silent master noticed {took:.3f} s after its link went down "
          f"(master_timeout {MASTER_TIMEOUT:g} s)")
    assert took < bound(heartbeat), b.describe()
    # It keeps trying (one log line per outage, not per attempt).
    assert b.wait_for_log(re.compile(r"cannot connect to the master"), 15), b.describe()
    assert slave_stats(lan, b)["repl_master_connects"] == "1"
    # The master keeps serving on its side meanwhile.
    more = item_set(b"during", 500)
    in_netns(lan.ns["a"], lambda: write_items(("127.0.0.1", PORT), more))
    link(lan, "a", "up")
    wait_for("the slave reconnects", lambda: slave_stats(lan, b)["repl_master_connects"] == "2", 15, nodes)
    all_keys = keys + [k for k, _, _ in more]
    items = lan.run(lambda: wait_same(a.address, b.address, all_keys, "b resyncs from a"))
    assert len(items) == len(all_keys)
    sb = slave_stats(lan, b)
    assert (sb["repl_master_timeouts"], sb["repl_stream_errors"]) == ("1", "0")


def test_with_role_auto_the_slave_promotes_when_the_address_comes(lan, nodes):
    """The master's link goes down; the slave notices, looks for the address
    (failover_delay), the address is moved to it, it promotes with the data it
    had and takes writes. The old master, back, demotes and resyncs."""
    a, b, keys = master_and_slave(lan, nodes, 2000, failover_delay="20s",
                                  extra=f"  master_timeout: {MASTER_TIMEOUT:g}s\n")
    before = lan.run(lambda: dump(a.address, keys))
    link(lan, "a", "down")
    took = wait_master_timeout(lan, nodes, b, time.monotonic())
    assert took < bound("100ms"), b.describe()
    # The session ended: b looks for the address instead of waiting on a
    # connection that nothing will ever close.
    assert b.wait_for_log(re.compile(r"no master at \S+; looking for virtual_ip here"), 5), b.describe()
    more = take_over(lan, nodes, b, keys, before, re.compile(r"promoted to master: .*\(was slave \(master lost\)\)"), 500, 2)
    # a comes back without the address: it demotes and resyncs from b.
    link(lan, "a", "up")
    wait_role(lan, nodes, a, "slave")
    all_keys = keys + [k for k, _, _ in more]
    items = lan.run(lambda: wait_same(b.address, a.address, all_keys, "a follows b"))
    assert len(items) == len(all_keys)
    sa, sb = slave_stats(lan, a), slave_stats(lan, b)
    assert (sb["repl_master_timeouts"], sb["repl_role_changes"], sb["repl_slaves"]) == ("1", "1", "1")
    assert (sa["repl_master_timeouts"], sa["repl_role_changes"]) == ("0", "1")


@pytest.mark.parametrize("heartbeat", HEARTBEATS)
def test_an_idle_master_is_not_dropped(lan, nodes, heartbeat):
    """No client writes: the master sends nothing at all for 3 x
    master_timeout (and two heartbeat intervals), and the slave stays."""
    a, b, _ = static_pair(lan, nodes, heartbeat, 10)
    idle = max(3 * MASTER_TIMEOUT, 2 * seconds(heartbeat))
    # The slave has the items, but the master counts what it sent after its
    # write returns: start from a count that has stopped moving.
    sent = [slave_stats(lan, a)["repl_bytes_sent"]]
    settle_by = time.monotonic() + 10
    while len(sent) < 2 or sent[-1] != sent[-2]:
        assert time.monotonic() < settle_by, f"the master's repl_bytes_sent kept moving: {sent}"
        time.sleep(0.3)
        sent.append(slave_stats(lan, a)["repl_bytes_sent"])
    sent_before = sent[-1]
    deadline = time.monotonic() + idle
    while time.monotonic() < deadline:
        sb = slave_stats(lan, b)
        assert (sb["repl_master_timeouts"], sb["repl_master_connects"]) == ("0", "1"), b.describe()
        time.sleep(0.2)
    sa = slave_stats(lan, a)
    assert sa["repl_bytes_sent"] == sent_before, "the master was not idle"
    assert (sa["repl_slaves"], sa["repl_slaves_dropped"]) == ("1", "0"), a.describe()
    assert "unreachable" not in b.log, b.describe()
