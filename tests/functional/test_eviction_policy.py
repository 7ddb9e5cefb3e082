"""cache.eviction (store.h: eviction_policy) over the wire: with s3fifo, a scan
of keys stored once and never read again, several times the memory, leaves a
hot set that was read; with clock (-o eviction=clock, today's behaviour before
s3fifo) the same stream pushes it out. Both are asserted, so neither can pass
by accident. Also the queues' rows in `stats`, the ghost set's admission, and
the policy in `stats settings` from the flag and from the YAML key."""

from mcwire import Conn, parse_stats

HOT = 2000           # hot keys, 100-byte values: about 340 KB of the 2 MB
SCAN = 60000         # one-hit wonders: about 10 MB, five times the memory
VALUE = b"h" * 100


def stats(c, group=b""):
    return parse_stats(c.call(b"stats" + (b" " + group if group else b"") + b"\r\n"))


def store_all(c, keys):
    """Sets with noreply in batches, then a round trip: all are stored."""
    for i in range(0, len(keys), 500):
        c.send(b"".join(b"set %s 0 0 %d noreply\r\n%s\r\n" % (k, len(VALUE), VALUE) for k in keys[i:i + 500]))
        assert c.call(b"version\r\n").startswith(b"VERSION ")


def hits(c, keys):
    """How many of `keys` a multi-get finds (mg-free: plain get, as a client reads)."""
    found = 0
    for i in range(0, len(keys), 100):
        reply = c.call(b"get " + b" ".join(keys[i:i + 100]) + b"\r\n")
        found += reply.count(b"VALUE ")
    return found


def hot_after_scan(factory, args):
    """The hot set's hits after the scan, and the server's stats then."""
    server = factory(["-m", "2", *args], memory_flag=False)
    hot = [b"hot:%d" % i for i in range(HOT)]
    with Conn(*server.address) as c:
        store_all(c, hot)
        for _ in range(2):  # read: the keys a client asks for again
            assert hits(c, hot) == HOT
        for start in range(0, SCAN, 10000):
            store_all(c, [b"scan:%d" % i for i in range(start, start + 10000)])
        found = hits(c, hot)
        return found, stats(c), stats(c, b"settings")


def test_a_scan_of_one_hit_wonders_leaves_the_hot_set_with_s3fifo_and_not_with_clock(ithaca_factory):
    found_s3fifo, st, settings = hot_after_scan(ithaca_factory, [])
    assert settings["eviction_policy"] == "s3fifo"
    assert int(st["evictions"]) > SCAN // 2  # the scan did not fit: most of it went
    assert found_s3fifo >= HOT * 95 // 100, found_s3fifo
    # the queues: the hot set went on to main after its reads; the scan passes through small
    assert int(st["moves_to_warm"]) + int(st["moves_to_cold"]) > 0
    assert int(st["main_queue_items"]) >= HOT * 95 // 100
    assert 0 < int(st["small_queue_items"]) < int(st["curr_items"])
    assert 0 < int(st["small_queue_bytes"]) < int(st["main_queue_bytes"]) + int(st["small_queue_bytes"])
    assert int(st["eviction_queue_bytes"]) > 0

    found_clock, st, settings = hot_after_scan(ithaca_factory, ["-o", "eviction=clock"])
    assert settings["eviction_policy"] == "clock"
    assert int(st["evictions"]) > SCAN // 2
    assert found_clock < HOT // 2, found_clock
    assert int(st["small_queue_items"]) == 0 and int(st["moves_to_warm"]) == 0


def test_a_key_evicted_unread_and_stored_again_is_admitted_from_the_ghost_set(ithaca_factory):
    server = ithaca_factory(["-m", "2"], memory_flag=False)
    with Conn(*server.address) as c:
        store_all(c, [b"again"])
        i = 0
        while c.call(b"mg again u\r\n") != b"EN\r\n":  # u: no bump, not a read
            store_all(c, [b"fill:%d" % k for k in range(i, i + 2000)])
            i += 2000
            assert i < 200000
        before = stats(c)
        store_all(c, [b"again"])  # a look-aside client's set after its miss
        after = stats(c)
        assert int(after["ghost_hits"]) == int(before["ghost_hits"]) + 1
        # in main: the one-hit wonders that follow go through the small queue, not over it
        store_all(c, [b"more:%d" % k for k in range(40000)])
        assert hits(c, [b"again"]) == 1


def test_the_yaml_key_chooses_the_policy(ithaca_factory):
    server = ithaca_factory(config_text="cache:\n  eviction: clock\n")
    with Conn(*server.address) as c:
        assert stats(c, b"settings")["eviction_policy"] == "clock"
