"""Per-key order under concurrent writers: eight connections, spread over the
master's four workers, change the same few keys at the same moment; the slave
must apply each key's changes in the order the master applied them.

Every change reaches the slave as the resulting item (a SetQ carries the whole
value) or its removal, so a reordered pair of records is repaired by the next
change of that key, and only a reordering of a key's last changes stays
visible. Hence many short rounds, each on fresh keys and each ending with all
writers racing: after every round the test waits for the slave (sentinel) and
compares the round's keys exactly.

How the test was checked against a broken hand-off: with the router's drain
swapping each pair of adjacent stream records (a reordered ring), both tests
fail within the first rounds (see the commit message)."""
import random
import threading

import pytest

from mcwire import Conn
from replica import assert_same, catch_up, master_config, repl_port_of, slave_config, stats

WORKERS = 4
WRITERS = 8
KEYS = 6
ROUNDS = 25
OPS = 80  # per writer and round, sent pipelined in one write


@pytest.fixture
def pair(ithaca_factory):
    master = ithaca_factory(args=["-t", str(WORKERS)], config_text=master_config(0))
    slave = ithaca_factory(config_text=slave_config(repl_port_of(master)))
    conns = [Conn(*master.address, timeout=30) for _ in range(WRITERS)]
    try:
        yield master, slave, conns
    finally:
        for c in conns:
            c.close()
    s = stats(master.address)
    assert s["repl_slaves_dropped"] == "0" and s["repl_queue_overflows"] == "0", s


def race(conns, make_requests, check_reply):
    """Every writer sends its pipelined batch at the same moment (barrier),
    then reads and checks its replies. Returns each writer's requests."""
    barrier = threading.Barrier(len(conns))
    batches = [make_requests(w) for w in range(len(conns))]
    errors = []

    def run(w):
        try:
            barrier.wait(30)
            conns[w].send(b"".join(batches[w]))
            for req in batches[w]:
                line = conns[w].read_line()
                assert check_reply(req, line), (req, line)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,), daemon=True) for w in range(len(conns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)
    return batches


def mixed_request(rng, key):
    """A set, append, prepend, incr, decr, delete, add or replace of a numeric
    value, so every kind applies to every key in any order."""
    r = rng.random()
    digits = b"%d" % rng.randrange(10**6)
    flags = rng.randrange(2**32)
    if r < 0.25:
        return b"set %s %d 0 %d\r\n%s\r\n" % (key, flags, len(digits), digits)
    if r < 0.35:
        return b"append %s 0 0 1\r\n%d\r\n" % (key, rng.randrange(10))
    if r < 0.40:
        return b"prepend %s 0 0 1\r\n%d\r\n" % (key, rng.randrange(1, 10))
    if r < 0.60:
        return b"incr %s %d\r\n" % (key, rng.randrange(1, 10**6))
    if r < 0.70:
        return b"decr %s %d\r\n" % (key, rng.randrange(1, 10**3))
    if r < 0.82:
        return b"delete %s\r\n" % key
    if r < 0.92:
        return b"add %s %d 0 %d\r\n%s\r\n" % (key, flags, len(digits), digits)
    return b"replace %s %d 0 %d\r\n%s\r\n" % (key, flags, len(digits), digits)


def mixed_reply_ok(req, line):
    if req.startswith((b"incr", b"decr")):
        # a value grown past 20 digits by appends is no number any more
        return line[:-2].isdigit() or line == b"NOT_FOUND\r\n" or \
            line == b"CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
    if req.startswith(b"delete"):
        return line in (b"DELETED\r\n", b"NOT_FOUND\r\n")
    return line in (b"STORED\r\n", b"NOT_STORED\r\n")


def test_per_key_order_of_mixed_changes(pair):
    master, slave, conns = pair
    total = 0
    for rnd in range(ROUNDS):
        keys = [b"mix:%d:%d" % (rnd, k) for k in range(KEYS)]

        def make(w):
            rng = random.Random(rnd * 1000 + w)
            return [mixed_request(rng, rng.choice(keys)) for _ in range(OPS)]

        race(conns, make, mixed_reply_ok)
        catch_up(master.address, slave.address, b"mix-%d" % rnd)
        total += len(assert_same(master.address, slave.address, keys, f"round {rnd}"))
    assert total > ROUNDS  # the rounds did not end with every key deleted


def test_per_key_order_of_appends_each_writers_last_write_checked(pair):
    """Appends only: each writer appends its own numbered tokens "w.i," to the
    shared keys, so a value lists its appends in the master's order. On master
    and slave alike, every key holds each writer's tokens in the order the
    writer sent them, none missing, and ends with the writer's known last
    append to that key; the slave's value equals the master's."""
    master, slave, conns = pair
    for rnd in range(ROUNDS):
        keys = [b"app:%d:%d" % (rnd, k) for k in range(KEYS)]
        with Conn(*master.address) as c:
            c.send(b"".join(b"set %s 0 0 0\r\n\r\n" % k for k in keys))
            assert c.read_exact(8 * KEYS) == b"STORED\r\n" * KEYS
        sent = {}  # (writer, key) -> [token index, ...] in sending order

        def make(w):
            rng = random.Random(rnd * 1000 + w)
            out = []
            for i in range(OPS):
                k = rng.choice(keys)
                token = b"%d.%d," % (w, i)
                sent.setdefault((w, k), []).append(i)
                out.append(b"append %s 0 0 %d\r\n%s\r\n" % (k, len(token), token))
            return out

        race(conns, make, lambda req, line: line == b"STORED\r\n")
        catch_up(master.address, slave.address, b"app-%d" % rnd)
        items = assert_same(master.address, slave.address, keys, f"round {rnd}")
        for k in keys:  # the master's values, which the slave's equal
            seen = {}
            for token in items[k][1].split(b",")[:-1]:
                w, i = token.split(b".")
                seen.setdefault(int(w), []).append(int(i))
            for w in range(WRITERS):
                want = sent.get((w, k), [])
                assert seen.get(w, []) == want, f"round {rnd}, {k!r}: writer {w}'s appends {seen.get(w)} != sent {want}"
