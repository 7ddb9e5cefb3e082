"""Storage under pressure, over the wire: eviction under a small memory limit,
the GC sweep's expiry of items nobody reads, and values kept in unlinked
temporary files (large_value_threshold / large_value_dir)."""

import os
import re
import threading
import time

import pytest

from mcwire import Conn, parse_stats, parse_values, vm_rss_bytes

KIB = 1024
MIB = 1024 * KIB


def stats(conn, arg=b""):
    reply = conn.call(b"stats" + (b" " + arg if arg else b"") + b"\r\n")
    assert reply.endswith(b"END\r\n"), reply
    return parse_stats(reply)


def poll(predicate, timeout, step=0.05):
    """Calls predicate() until it returns a true value or timeout passes;
    returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(step)


# --- eviction ------------------------------------------------------------------


def test_eviction_keeps_memory_under_the_limit(ithaca_factory):
    server = ithaca_factory(args=["-m", "8"])
    value = b"v" * KIB
    batch = 2048
    total = 40 * KIB  # 40 MiB of 1 KiB values into an 8 MiB cache
    with Conn(*server.address) as c:
        assert c.call(b"version\r\n").startswith(b"VERSION ")
        rss_at_start = vm_rss_bytes(server.proc.pid)
        for start in range(0, total, batch):
            req = b"".join(b"set k%d 0 0 %d\r\n%s\r\n" % (i, len(value), value)
                           for i in range(start, start + batch))
            units = c.exchange_until_sentinel(req + b"version\r\n")
            assert len(units) == batch
            bad = [u for u in units if u != b"STORED\r\n"]
            # memcached answers STORED here (the LRU makes room); its out-of-memory
            # reply is the only acceptable alternative, and only occasionally.
            assert all(u == b"SERVER_ERROR out of memory storing object\r\n" for u in bad), bad[:3]
            assert len(bad) < batch // 100, f"{len(bad)} of {batch} sets refused: {bad[:3]}"
        s = stats(c)
        assert int(s["limit_maxbytes"]) == 8 * MIB
        assert int(s["evictions"]) > 0, s
        # The memory the limit bounds (`bytes` is memcached's item bytes, not memory).
        assert int(stats(c, b"slabs")["total_malloced"]) <= 8 * MIB, s
        assert int(s["curr_items"]) < total // 4, s  # at most 8 MiB of 1 KiB values
        # The most recent keys survived eviction.
        recent = [b"k%d" % i for i in range(total - 100, total)]
        reply = c.call(b"get " + b" ".join(recent) + b"\r\n")
        got = {k: d for k, _f, d, _c in parse_values(reply)}
        assert set(got) == set(recent), sorted(set(recent) - set(got))[:5]
        assert all(d == value for d in got.values())
        # The oldest are gone.
        assert c.call(b"get k0\r\n") == b"END\r\n"
    rss = vm_rss_bytes(server.proc.pid)
    if os.environ.get("ITHACA_SANITIZED"):
        # Under ASan (scripts/test.sh sets ITHACA_SANITIZED) the fixed part
        # (shadow memory, allocator caches) differs from machine to machine
        # (138 to 153 MiB seen), so bound the growth under load instead: the
        # 8 MiB of items with their redzones, ASan's 16 MiB quarantine of freed
        # items, slack; the release run below holds the real bound.
        growth = rss - rss_at_start
        assert growth < 2 * 8 * MIB + 16 * MIB + 24 * MIB, \
            f"VmRSS grew by {growth / MIB:.1f} MiB (from {rss_at_start / MIB:.1f}) with -m 8"
    else:
        # Fixed overhead beyond the 8 MiB of items: the binary, the 2^20-bucket
        # hash, stacks, buffers (the release server's RSS after this load: 30.6 MiB).
        assert rss < 8 * MIB + 64 * MIB, f"VmRSS {rss / MIB:.1f} MiB with -m 8"


def test_gc_sweep_expires_unread_items(ithaca_factory):
    server = ithaca_factory(config_text="cache:\n  gc_interval: 100ms\n")
    with Conn(*server.address) as c:
        n = 200
        req = b"".join(b"set e%d 0 1 3\r\nabc\r\n" % i for i in range(n))
        units = c.exchange_until_sentinel(req + b"set keep 0 0 1\r\nx\r\nversion\r\n")
        assert units == [b"STORED\r\n"] * (n + 1)
        assert int(stats(c)["curr_items"]) == n + 1
        # Nobody reads the e* keys: only the GC sweep can take them out.
        assert poll(lambda: int(stats(c)["curr_items"]) == 1, timeout=3.5), stats(c)
        s = stats(c)
        assert int(s["expired_unfetched"]) == n, s
        assert int(s["gc_runs"]) > 0, s
        assert c.call(b"get keep\r\n") == b"VALUE keep 0 1\r\nx\r\nEND\r\n"


# --- the hash table's growth ------------------------------------------------------------


def test_the_hash_table_doubles_under_load_and_no_client_misses_a_key(ithaca_factory):
    """memcached's rule: more than 1.5 items per bucket doubles the table, moved one
    bucket lock at a time while clients go on (stats hash_power_level, hash_bytes,
    hash_is_expanding), whatever the gc_interval. Here 2^10 buckets grow to 2^14 for 20,000 keys, while a second
    client reads keys already stored the whole time and must never miss one."""
    # An hour between GC sweeps: the growth is checked every 100 ms, not with the sweep.
    server = ithaca_factory(config_text="logging:\n  level: info\ncache:\n  hash_power: 10\n  gc_interval: 1h\n")
    n = 20000
    stored = [0]  # keys below this are stored and acknowledged
    stop = threading.Event()
    misses = []
    reads = [0]

    def reader():
        with Conn(*server.address) as r:
            i = 0
            while not stop.is_set():
                upto = stored[0]
                if upto == 0:
                    time.sleep(0.001)
                    continue
                keys = [b"g%d" % ((i * 7919 + j * 104729) % upto) for j in range(20)]
                i += 1
                got = {k: d for k, _f, d, _c in parse_values(r.call(b"get " + b" ".join(keys) + b"\r\n"))}
                reads[0] += len(keys)
                for k in keys:
                    if got.get(k) != b"value-of-" + k:
                        misses.append((k, got.get(k)))

    t = threading.Thread(target=reader)
    t.start()
    try:
        with Conn(*server.address) as c:
            assert int(stats(c)["hash_power_level"]) == 10
            batch = 500
            for start in range(0, n, batch):
                req = b"".join(b"set g%d 0 0 %d\r\nvalue-of-g%d\r\n" % (i, len(b"value-of-g%d" % i), i)
                               for i in range(start, start + batch))
                units = c.exchange_until_sentinel(req + b"version\r\n")
                assert units == [b"STORED\r\n"] * batch
                stored[0] = start + batch
                time.sleep(0.01)  # let the growth overlap the traffic

            def grown():
                s = stats(c)
                return s if s["hash_power_level"] == "14" and s["hash_is_expanding"] == "0" else None

            s = poll(grown, timeout=10)
            assert s, stats(c)
            assert int(s["hash_bytes"]) == (1 << 14) * 8 + (1 << 10)  # heads, and the first table's locks
            assert int(s["curr_items"]) == n
            time.sleep(0.2)  # the reader goes on over the grown table
    finally:
        stop.set()
        t.join()
    assert reads[0] > 1000
    assert not misses, misses[:5]
    assert re.search(r"hash table: grew from 2\^10 to 2\^1[1-4] buckets \(\d+ items\)", server.log), server.log
    assert re.search(r"hash table: grew from 2\^1[0-3] to 2\^14 buckets", server.log), server.log
    with Conn(*server.address) as c:
        for start in range(0, n, 100):
            keys = [b"g%d" % i for i in range(start, start + 100)]
            got = {k: d for k, _f, d, _c in parse_values(c.call(b"get " + b" ".join(keys) + b"\r\n"))}
            assert got == {k: b"value-of-" + k for k in keys}
        settings = stats(c, b"settings")
        assert settings["hashpower_init"] == "10", settings


# --- temp-file values ----------------------------------------------------------------

SIZES = [4 * KIB + 1, 5000, 64 * KIB, 300 * KIB + 7, 900 * KIB]


def pattern(size, seed):
    """Distinct, position-dependent bytes: a misplaced chunk shows."""
    block = bytes((seed * 31 + i * 7) & 0xFF for i in range(251))
    return (block * (size // len(block) + 1))[:size]


@pytest.fixture
def large_server(ithaca_factory, tmp_path):
    vdir = tmp_path / "values"
    vdir.mkdir()
    server = ithaca_factory(config_text=f"cache:\n  large_value_threshold: 4k\n  large_value_dir: {vdir}\n")
    server.value_dir = vdir
    return server


def open_files_in(pid, directory):
    """Descriptors of pid whose target lies in directory (unlinked or not)."""
    out = []
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith(str(directory) + "/"):
            out.append(target)
    return out


def test_large_values_round_trip_through_unlinked_files(large_server):
    server = large_server
    with Conn(*server.address) as c:
        for n, size in enumerate(SIZES):
            key = b"big%d" % n
            data = pattern(size, n)
            assert c.call(b"set %s %d 0 %d\r\n%s\r\n" % (key, n, size, data)) == b"STORED\r\n"
            assert parse_values(c.call(b"get %s\r\n" % key)) == [(key, n, data, None)]
            # gets: the same bytes and a cas
            [(k, f, d, cas)] = parse_values(c.call(b"gets %s\r\n" % key))
            assert (k, f, d) == (key, n, data) and cas
            # meta mg v
            reply = c.call(b"mg %s v f\r\n" % key)
            assert reply == b"VA %d f%d\r\n%s\r\n" % (size, n, data)
        s = stats(c)
        assert int(s["large_values"]) == len(SIZES), s  # each stored outside the heap
        assert int(s["large_value_disk_bytes"]) >= sum(SIZES), s
        # The values share one file under the directory, unlinked when it was
        # created: the directory listing stays empty.
        assert os.listdir(server.value_dir) == []
        held = open_files_in(server.proc.pid, server.value_dir)
        assert len(held) == 1, held
        assert all(t.endswith("(deleted)") for t in held), held

        # append / prepend across the threshold, then cas with the gets token
        small = pattern(3000, 9)
        assert c.call(b"set grow 0 0 %d\r\n%s\r\n" % (len(small), small)) == b"STORED\r\n"
        tail = pattern(200 * KIB, 10)
        assert c.call(b"append grow 0 0 %d\r\n%s\r\n" % (len(tail), tail)) == b"STORED\r\n"
        head = pattern(5 * KIB, 11)
        assert c.call(b"prepend grow 0 0 %d\r\n%s\r\n" % (len(head), head)) == b"STORED\r\n"
        [(_k, _f, d, cas)] = parse_values(c.call(b"gets grow\r\n"))
        assert d == head + small + tail
        new = pattern(700 * KIB, 12)
        assert c.call(b"cas grow 0 0 %d %d\r\n%s\r\n" % (len(new), cas, new)) == b"STORED\r\n"
        assert parse_values(c.call(b"get grow\r\n"))[0][2] == new

        # delete releases the values' disk space (the one file stays open)
        for n in range(len(SIZES)):
            assert c.call(b"delete big%d\r\n" % n) == b"DELETED\r\n"
            assert c.call(b"get big%d\r\n" % n) == b"END\r\n"
        grow_disk = (len(new) + 4095) // 4096 * 4096
        assert poll(lambda: int(stats(c)["large_value_disk_bytes"]) == grow_disk, timeout=3), stats(c)
        assert len(open_files_in(server.proc.pid, server.value_dir)) == 1
        # large_values counts values stored in files (a counter, not a gauge):
        # the five sets, then append, prepend and cas of "grow".
        assert int(stats(c)["large_values"]) == len(SIZES) + 3
        assert os.listdir(server.value_dir) == []


def test_large_value_survives_concurrent_replacement(large_server):
    """A reader streaming a file-backed value must get one whole version
    while a second client keeps replacing it."""
    server = large_server
    size = 600 * KIB
    versions = [pattern(size, s) for s in range(4)]
    with Conn(*server.address) as c:
        assert c.call(b"set hot 0 0 %d\r\n%s\r\n" % (size, versions[0])) == b"STORED\r\n"

    stop = threading.Event()
    errors = []

    def writer():
        try:
            with Conn(*server.address) as w:
                i = 0
                while not stop.is_set():
                    i += 1
                    v = versions[i % len(versions)]
                    r = w.call(b"set hot 0 0 %d\r\n%s\r\n" % (size, v))
                    if r != b"STORED\r\n":
                        errors.append(r)
                        return
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        with Conn(*server.address) as r:
            seen = set()
            for _ in range(40):
                # Pipeline several reads so some overlap a replacement.
                units = r.exchange_until_sentinel(b"get hot\r\n" * 3 + b"mg hot v\r\n" + b"version\r\n")
                assert len(units) == 4
                for u in units[:3]:
                    [(_k, _f, d, _c)] = parse_values(u)
                    assert d in versions, "a torn or corrupt value"
                    seen.add(versions.index(d))
                assert units[3].startswith(b"VA %d\r\n" % size)
                assert units[3][len(b"VA %d\r\n" % size):-2] in versions
    finally:
        stop.set()
        t.join(10)
    assert not t.is_alive()
    assert not errors, errors
    assert len(seen) > 1, "the writer never replaced the value during the reads"
    assert os.listdir(server.value_dir) == []


# --- large values, bounded --------------------------------------------------------------


def disk_blocks_in(pid, directory):
    """Bytes of disk held by pid's open files under directory (unlinked too)."""
    total = 0
    fd_dir = f"/proc/{pid}/fd"
    for fd in os.listdir(fd_dir):
        path = os.path.join(fd_dir, fd)
        try:
            if os.readlink(path).startswith(str(directory) + "/"):
                total += os.stat(path).st_blocks * 512
        except OSError:
            continue
    return total


def test_large_values_stay_within_memory_descriptors_and_disk_budget(ithaca_factory, tmp_path):
    """-m 64 and a 256 MiB disk budget; 600 values of 1,000,000 bytes: RSS stays
    near the memory limit, the values share one descriptor, their disk stays in
    the budget (the coldest evicted by the CLOCK), and what is kept reads back."""
    vdir = tmp_path / "values"
    vdir.mkdir()
    budget = 256 * MIB
    server = ithaca_factory(config_text=f"cache:\n  large_value_disk_limit: 256m\n  large_value_dir: {vdir}\n")
    pid = server.proc.pid
    fds_before = len(os.listdir(f"/proc/{pid}/fd"))
    size = 1000000
    with Conn(*server.address, timeout=30) as c:
        for i in range(600):
            data = pattern(size, i)
            assert c.call(b"set v%d 0 0 %d\r\n%s\r\n" % (i, size, data)) == b"STORED\r\n", i
            if i % 100 == 99:
                assert disk_blocks_in(pid, vdir) <= budget
        s = stats(c)
        assert int(s["large_value_disk_bytes"]) <= budget, s
        assert int(s["large_value_disk_limit"]) == budget, s
        assert int(s["evictions"]) >= 600 - budget // size, s
        # The memory the limit bounds (`bytes` counts the values on disk too, as
        # memcached's item bytes).
        assert int(stats(c, b"slabs")["total_malloced"]) <= 64 * MIB, s
        # The most recent values are kept and intact.
        for i in range(590, 600):
            assert parse_values(c.call(b"get v%d\r\n" % i)) == [(b"v%d" % i, 0, pattern(size, i), None)]
        kept = sum(1 for i in range(600) if c.call(b"mg v%d\r\n" % i) == b"HD\r\n")
        assert 100 <= kept <= budget // size, kept
    assert disk_blocks_in(pid, vdir) <= budget
    assert len(open_files_in(pid, vdir)) == 1
    assert len(os.listdir(f"/proc/{pid}/fd")) <= fds_before + 4
    rss_limit = (64 + 96) * MIB if not os.environ.get("ITHACA_SANITIZED") else (64 + 400) * MIB
    assert vm_rss_bytes(pid) <= rss_limit, vm_rss_bytes(pid) // MIB
    assert os.listdir(vdir) == []


def test_gc_sweep_brings_large_values_under_the_disk_low_watermark(ithaca_factory, tmp_path):
    """A 1 MiB disk budget filled to 93.75% (240 one-extent values): no set had
    to evict, and with no further request the cron's GC sweep evicts the
    coldest large values until the arena is under 80% of the budget, which
    `stats` reports as large_value_gc_evictions."""
    vdir = tmp_path / "values"
    vdir.mkdir()
    budget = MIB
    server = ithaca_factory(config_text=(
        "cache:\n  large_value_threshold: 1k\n  large_value_disk_limit: 1m\n"
        f"  gc_interval: 100ms\n  large_value_dir: {vdir}\n"))
    page = 4096
    with Conn(*server.address, timeout=10) as c:
        data = b"d" * 4000  # one 4 KiB extent each
        c.send(b"".join(b"set v%d 0 0 %d\r\n%s\r\n" % (i, len(data), data) for i in range(240)))
        assert c.read_replies(240) == [b"STORED\r\n"] * 240
        s = stats(c)
        assert int(s["large_value_inline_evictions"]) == 0, s  # every set found room
        assert int(s["large_value_disk_bytes"]) <= 240 * page, s
        low = budget // 100 * 80
        # Under the watermark, and the sweep's evictions all counted: the
        # sweep frees an extent before it counts the eviction, and a stats
        # read between the two (a loaded machine) saw 33 of 36.
        def swept(s):
            done = int(s["large_value_disk_bytes"]) <= low
            counted = int(s["curr_items"]) + int(s["large_value_gc_evictions"]) == 240
            return s if done and counted else None

        s = poll(lambda: swept(stats(c)), timeout=10)
        assert s, stats(c)
        evicted = int(s["large_value_gc_evictions"])
        assert evicted >= 240 - low // page, s
        assert int(s["large_value_inline_evictions"]) == 0, s
        assert int(s["evictions"]) == evicted, s
        assert int(s["curr_items"]) == 240 - evicted, s
        # The sweep stops at the low watermark: most values are still there.
        assert int(s["large_value_disk_bytes"]) >= low - 32 * page, s
    assert len(open_files_in(server.proc.pid, vdir)) == 1


# UBSan's vptr check probes memory through a pipe; while the descriptor table
# is full that fails and it reports every virtual call as made on an "invalid
# vptr" (a false report, seen only then, and only under the sanitizers).
VPTR_PROBE_FAILED = re.compile(r"^.*(runtime error: member (access|call) .* which does not point to an "
                               r"object of type|note: object has invalid vptr|<memory cannot be printed>|"
                               r"invalid vptr|^ *[0-9a-f ]+$|^ +\^~+).*\n?", re.M)


def _with_nofile(limit, start):
    """Runs start() (which spawns the server) under RLIMIT_NOFILE = limit:
    the child inherits it. A sanitized server also gets UBSan's
    halt_on_error=0: the false vptr report above would otherwise kill it
    (test.sh sets halt_on_error=1), and the test would see every client
    refused; the report is still printed, and only its lines are disregarded."""
    import resource
    old = resource.getrlimit(resource.RLIMIT_NOFILE)
    old_ubsan = os.environ.get("UBSAN_OPTIONS")
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, old[1]))
    os.environ["UBSAN_OPTIONS"] = ":".join(filter(None, [old_ubsan, "halt_on_error=0"]))
    try:
        server = start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, old)
        if old_ubsan is None:
            del os.environ["UBSAN_OPTIONS"]
        else:
            os.environ["UBSAN_OPTIONS"] = old_ubsan
    server.ignored_report_lines = VPTR_PROBE_FAILED
    return server


def test_many_large_values_under_ulimit_1024_keep_the_server_accepting(ithaca_factory):
    """1,012 values of 262,145 bytes (just over the threshold) under
    `ulimit -n 1024`: no descriptor per value, so new connections still work."""
    server = _with_nofile(1024, lambda: ithaca_factory())
    value = b"L" * 262145
    with Conn(*server.address, timeout=30) as c:
        for start in range(0, 1012, 100):
            n = min(100, 1012 - start)
            req = b"".join(b"set big%d 0 0 %d noreply\r\n%s\r\n" % (i, len(value), value)
                           for i in range(start, start + n))
            assert c.exchange_until_sentinel(req + b"version\r\n") == []
        assert int(stats(c)["large_values"]) == 1012
    for _ in range(20):
        with Conn(*server.address) as other:
            assert other.call(b"get big1011\r\n") == b"VALUE big1011 0 262145\r\n" + value + b"\r\nEND\r\n"
    assert "Too many open files" not in server.log


def test_a_full_descriptor_table_refuses_cleanly_and_recovers(ithaca_factory):
    """More clients than descriptors: the accept loop refuses the excess
    (closed at once, counted in rejected_connections) instead of spinning,
    logs once per interval, and accepts again once descriptors are free."""
    server = _with_nofile(128, lambda: ithaca_factory(args=["-c", "10000"]))
    clients = []
    refused = 0
    try:
        for _ in range(200):
            c = Conn(*server.address, timeout=5)
            clients.append(c)
        for c in clients:
            try:
                if c.call(b"version\r\n").startswith(b"VERSION "):
                    continue
            except (AssertionError, OSError):
                pass
            refused += 1
        assert refused > 0, "the descriptor table never filled up"
        assert refused < len(clients)
    finally:
        for c in clients:
            c.close()
    # The first connection after the table freed up may be the one whose slot
    # goes back to the spare descriptor (closed at once, counted as refused):
    # each try is a new connection.
    def answers():
        try:
            with Conn(*server.address) as c:
                return c.call(b"version\r\n").startswith(b"VERSION ")
        except (AssertionError, OSError):
            return False

    assert poll(answers, timeout=5)
    with Conn(*server.address) as c:
        assert int(stats(c)["rejected_connections"]) >= 1
    assert server.log.count("descriptor table full") <= 2, server.log[-2000:]


# --- replies a client does not read ---------------------------------------------


def test_a_multiget_of_one_big_value_repeated_is_streamed_not_buffered(ithaca_factory):
    """`get big big big ...` names one 512 KiB value 2,000 times: a 1 GB reply.
    The server must hold only about a megabyte of it at a time, waiting for the
    reader, and keep serving everyone else meanwhile."""
    server = ithaca_factory()
    value = b"b" * (512 * KIB)
    repeats = 2000
    with Conn(*server.address) as setter:
        assert setter.call(b"set big 0 0 %d\r\n%s\r\n" % (len(value), value)) == b"STORED\r\n"
    before = vm_rss_bytes(server.proc.pid)
    hog = Conn(*server.address)
    try:
        hog.send(b"get" + b" big" * repeats + b"\r\n")
        # Until the server stops writing to the hog (its socket buffers are
        # full and it waits for the reader), within a bound.
        with Conn(*server.address) as watcher:
            written = [int(stats(watcher)["bytes_written"])]

            def settled():
                # The watcher's own stats replies count too: settled when
                # nothing but them (a few KiB per poll) is being written.
                written.append(int(stats(watcher)["bytes_written"]))
                return len(written) > 4 and all(b - a < 8 * KIB for a, b in zip(written[-4:], written[-3:]))
            assert poll(settled, timeout=10, step=0.1), written[-5:]
        grown = vm_rss_bytes(server.proc.pid) - before
        assert grown < 96 * MIB, f"server RSS grew by {grown // MIB} MiB for a reply nobody reads"
        with Conn(*server.address) as other:
            assert other.call(b"set k 0 0 1\r\nx\r\n") == b"STORED\r\n"
            assert other.call(b"get k\r\n") == b"VALUE k 0 1\r\nx\r\nEND\r\n"
    finally:
        hog.close()
    with Conn(*server.address) as c:
        assert c.call(b"version\r\n").startswith(b"VERSION ")


def test_a_streamed_multiget_reply_is_complete_and_in_order(ithaca_factory):
    """The same kind of reply, read to the end: every VALUE in request order,
    then one END, while the server drains it in pieces."""
    server = ithaca_factory()
    big = b"B" * (300 * KIB)
    with Conn(*server.address) as c:
        assert c.call(b"set big 0 0 %d\r\n%s\r\n" % (len(big), big)) == b"STORED\r\n"
        assert c.call(b"set small 0 0 5\r\nsmall\r\n") == b"STORED\r\n"
        keys = [b"big", b"small", b"missing"] * 40  # 12 MiB of replies in one request
        c.send(b"get " + b" ".join(keys) + b"\r\nversion\r\n")
        expected = b"".join(
            b"VALUE big 0 %d\r\n%s\r\n" % (len(big), big) if k == b"big"
            else b"VALUE small 0 5\r\nsmall\r\n" if k == b"small" else b""
            for k in keys) + b"END\r\n"
        got = c.read_exact(len(expected))
        assert got == expected
        assert c.read_line().startswith(b"VERSION ")
