"""Helpers for the replication consistency tests: a master and a slave over
127.0.0.1, a fast key-by-key dump, and a way to know the slave has caught up.

dump(addr, keys) reads every key with pipelined multi-key gets (100 keys a
get, 20 gets in flight), so comparing 100,000 keys takes about a second.
catch_up(master, slave) writes a sentinel on the master and waits (bounded)
until the slave holds it: records enter the ring in the order they were
applied, so every write acknowledged before the sentinel is then on the slave.
"""
import re
import time

from mcwire import Conn, parse_stats

SYNC_TIMEOUT = 60.0
KEYS_PER_GET = 100
GETS_IN_FLIGHT = 20


def master_config(repl_port, extra=""):
    """repl_port 0: any free port (repl_port_of reads it from the log)."""
    return f"""
replication:
  role: master
  listen: 127.0.0.1
  port: {repl_port}
  slave_timeout: 5s
{extra}"""


def slave_config(repl_port):
    return f"""
replication:
  role: slave
  master: 127.0.0.1
  port: {repl_port}
  heartbeat_interval: 100ms
  serve_reads: true
"""


def repl_port_of(server):
    m = server.wait_for_log(re.compile(r"replication: accepting slaves on 127\.0\.0\.1:(\d+)"), 10)
    assert m, server.log
    return int(m.group(1))


def stats(addr):
    with Conn(*addr) as c:
        c.send(b"stats\r\n")
        return parse_stats(c.read_until(b"END\r\n"))


def _parse_get(reply, out):
    pos = 0
    while reply.startswith(b"VALUE ", pos):
        end = reply.index(b"\r\n", pos)
        _, key, flags, n = reply[pos:end].split(b" ")[:4]
        start = end + 2
        out[key] = (int(flags), reply[start:start + int(n)])
        pos = start + int(n) + 2


def dump(addr, keys, timeout=30):
    """{key: (flags, value)} for the keys present, read with pipelined gets."""
    out = {}
    with Conn(*addr, timeout=timeout) as c:
        step = KEYS_PER_GET * GETS_IN_FLIGHT
        for i in range(0, len(keys), step):
            window = keys[i:i + step]
            gets = [window[j:j + KEYS_PER_GET] for j in range(0, len(window), KEYS_PER_GET)]
            c.send(b"".join(b"get " + b" ".join(g) + b"\r\n" for g in gets))
            for _ in gets:
                _parse_get(c.read_until(b"END\r\n"), out)
    return out


def diff(want, got, limit=5):
    """A short description of how got differs from want ('' if equal)."""
    if want == got:
        return ""
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    wrong = [(k, want[k], got[k]) for k in want if k in got and got[k] != want[k]]
    return (f"{len(want)} vs {len(got)} items; {len(missing)} missing {missing[:limit]}, "
            f"{len(extra)} extra {extra[:limit]}, {len(wrong)} different {wrong[:limit]}")


def catch_up(master, slave, tag):
    """Writes key `sentinel` = tag on the master and waits until the slave has it."""
    with Conn(*master) as c:
        assert c.call(b"set sentinel 0 0 %d\r\n%s\r\n" % (len(tag), tag)) == b"STORED\r\n"
    deadline = time.monotonic() + SYNC_TIMEOUT
    with Conn(*slave) as c:
        while c.call(b"get sentinel\r\n") != b"VALUE sentinel 0 %d\r\n%s\r\nEND\r\n" % (len(tag), tag):
            assert time.monotonic() < deadline, f"the slave did not receive sentinel {tag!r} in {SYNC_TIMEOUT}s"
            time.sleep(0.01)


def assert_same(master, slave, keys, what, settle=5.0):
    """The slave holds exactly the master's items for `keys` (flags and value).
    Called after catch_up; a difference that lasts `settle` seconds fails."""
    deadline = time.monotonic() + settle
    while True:
        want, got = dump(master, keys), dump(slave, keys)
        if want == got:
            return want
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: the slave differs from the master: {diff(want, got)}")
        time.sleep(0.1)


def wait_same(master, slave, keys, what):
    """Polls (bounded by SYNC_TIMEOUT) until the slave holds exactly the
    master's items for `keys`; returns them."""
    return assert_same(master, slave, keys, what, settle=SYNC_TIMEOUT)
