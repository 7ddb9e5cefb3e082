"""The memory limit bounds what the process really holds (issue 33, part 2).

A server filled with several times its -m of items keeps its anonymous memory
(the heap, the hash table, the receive buffers: what RssAnon counts; the code
pages of the program and its libraries are file-backed and not the cache's) at
-m plus the allowance memcached needs for the same fill, measured here on a
real memcached given the same traffic. ithaca's items live in one region of
-m bytes whose top stays under the limit less the hash table, the eviction
queues, the workers' receive rings, the log queue and the rest of its anonymous
memory (INTERNALS.md, "Item memory"); with malloc'd items and nothing else
counted, the same fill at -m 16 held about 19 MiB of anonymous memory over the
limit. The allowance is at least
1 MiB (memcached's own hash table and buffers are outside its -m) and never
more than 4 MiB, so a memcached that held far more would not excuse ithaca.
"""
import os
import random
import socket
import time

import pytest

from mcwire import Conn

SANITIZED = bool(os.environ.get("ITHACA_SANITIZED"))

MB = 32
LIMIT = MB * 1024 * 1024
SLACK = 256 * 1024  # pages a 1 s GC pass may not have given back yet, stack and heap noise


def rss_anon(server):
    with open(f"/proc/{server.proc.pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no RssAnon in /proc/PID/status")


def stats(c):
    out = {}
    for line in c.call(b"stats\r\n").decode().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "STAT":
            out[parts[1]] = parts[2]
    return out


def fill(server, sizes, sets, keyspace, seed):
    """`sets` pipelined noreply sets of random keys from `keyspace`, each value
    of one of `sizes` (by key), then a round trip so all were applied."""
    rnd = random.Random(seed)
    values = {z: b"v" * z for z in sizes}
    sock = socket.create_connection(server.address, timeout=30)
    try:
        batch = []
        for _ in range(sets):
            k = rnd.randrange(keyspace)
            z = sizes[k % len(sizes)]
            batch.append(b"set key:%08d 0 0 %d noreply\r\n%s\r\n" % (k, z, values[z]))
            if len(batch) == 1000:
                sock.sendall(b"".join(batch))
                batch.clear()
        sock.sendall(b"".join(batch) + b"version\r\n")
        got = b""
        while b"VERSION" not in got:
            chunk = sock.recv(65536)
            assert chunk, "the server closed the connection during the fill"
            got += chunk
    finally:
        sock.close()


@pytest.mark.parametrize("sizes", [[100], [100, 400, 1500]], ids=["100B", "mix"])
def test_anonymous_memory_stays_within_the_limit_under_a_fill_of_four_times_it(
        sizes, ithaca_factory, memcached_factory):
    args = ["-t", "1", "-m", str(MB)]
    servers = {
        "memcached": memcached_factory(args),
        # No GC pass during the test: it would evict down to its low watermark (80% of
        # the limit) and the items held would say nothing of the accounting.
        "ithaca": ithaca_factory(args, config_text="cache:\n  gc_interval: 1h\n"),
    }
    mean = sum(sizes) / len(sizes) + 70  # the value, header and key
    sets = int(4 * LIMIT / mean)
    anon, items = {}, {}
    for name, server in servers.items():
        fill(server, sizes, sets, keyspace=sets, seed=len(sizes))
        with Conn(*server.address) as c:
            s = stats(c)
        assert int(s["evictions"]) > 0, (name, s)  # the fill went well past the limit
        anon[name] = rss_anon(server)
        items[name] = (int(s["curr_items"]), int(s["bytes"]))
    allowance = min(max(anon["memcached"] - LIMIT, 1024 * 1024), 4 * 1024 * 1024)
    # Under AddressSanitizer (ITHACA_SANITIZED) its shadow memory and quarantine are most
    # of the process's anonymous memory (128 MiB here): the bound is the release build's;
    # what the items hold (below) is checked in both.
    if not SANITIZED:
        assert anon["ithaca"] <= LIMIT + allowance + SLACK, (anon, items, allowance)
    # The limit is not met by storing less: ithaca holds as much as memcached within 10%
    # (its overhead inside the limit, 3.5 MiB here, against memcached's class rounding, 30
    # bytes of each 100 B item's 192-byte chunk). For the mix, the bytes of items (stats
    # `bytes`, memcached's measure on both): memcached's per-class eviction keeps more of
    # the small ones, ithaca's one CLOCK keeps the sizes as they come.
    assert items["ithaca"][1] >= items["memcached"][1] * 0.9, items
    if len(sizes) == 1:
        assert items["ithaca"][0] >= items["memcached"][0] * 0.9, items


def test_a_lowered_limit_gives_the_memory_back(ithaca_factory):
    if SANITIZED:
        pytest.skip("AddressSanitizer's shadow of the region and its quarantine stay resident: "
                    "what the trim gives back is the release build's measure")
    """cache_memlimit 8 after 30 MiB of items: the sweep evicts down to 8 MiB and
    the item region's emptied pages go back to the kernel (the cron's trim,
    MADV_DONTNEED over its free blocks). Only whole free pages can go: a 4 KiB
    page holding four 1 KiB items stays while one of them lives, so part of the
    evicted memory stays resident. memcached 1.6 gives back nothing (36.5 MB
    before and 10 s after the same command)."""
    server = ithaca_factory(["-t", "1"], config_text="cache:\n  gc_interval: 100ms\n")
    value = b"v" * 1000
    with Conn(*server.address) as c:
        batch = b"".join(b"set key:%d 0 0 1000 noreply\r\n%s\r\n" % (i, value) for i in range(30000))
        assert c.exchange_until_sentinel(batch + b"version\r\n") == []
        before = rss_anon(server)
        assert before > 30 * 1024 * 1024, before
        assert c.call(b"cache_memlimit 8\r\n") == b"OK\r\n"
        deadline = time.monotonic() + 10
        while rss_anon(server) > before * 0.7 and time.monotonic() < deadline:
            time.sleep(0.1)
        after = rss_anon(server)
        assert after <= before * 0.7, (before, after, stats(c))
        assert int(stats(c)["evictions"]) > 0


def test_a_raised_limit_commits_more_of_the_region_up_to_its_reservation(ithaca_factory):
    """The item region reserves four times the start's -m (at least 16 GiB) of
    address space: cache_memlimit raises the limit within it; past it the limit
    is taken as memcached takes any (OK, limit_maxbytes says it) and the items
    stay within the reservation."""
    server = ithaca_factory(["-t", "1", "-m", "16"])
    with Conn(*server.address) as c:
        assert c.call(b"cache_memlimit 64\r\n") == b"OK\r\n"
        assert stats(c)["limit_maxbytes"] == str(64 * 1024 * 1024)
        # The raised limit is memory the items can use: 40 MiB of them stay.
        value = b"v" * 1000
        batch = b"".join(b"set key:%d 0 0 1000 noreply\r\n%s\r\n" % (i, value) for i in range(40000))
        assert c.exchange_until_sentinel(batch + b"version\r\n") == []
        s = stats(c)
        assert int(s["evictions"]) == 0, s
        assert int(s["curr_items"]) == 40000, s
        assert c.call(b"cache_memlimit 20000\r\n") == b"OK\r\n"
        assert stats(c)["limit_maxbytes"] == str(20000 * 1024 * 1024)
        assert c.call(b"get key:1\r\n") == b"VALUE key:1 0 1000\r\n" + value + b"\r\nEND\r\n"
