"""ithaca's memcached_* figures against memcached_exporter's on the same traffic.

The same traffic goes to a real memcached and to ithaca (the cache role; and
the router role in front of a real memcached). The exporter's series are
computed from the memcached's stats with the exporter's own mapping
(exporter_oracle.py, written from its source), ithaca's /metrics page is
scraped, and for every series both show:

- the TYPE is the same;
- the value is the same where it is a function of the traffic (commands by
  status, items, current and total items, bytes, evictions, the per-class
  series, their chunk sizes and chunks in use);
- where the value is a property of memcached's allocator, ithaca shows what
  INTERNALS.md ("Size classes") decided, asserted exactly here: a class's
  pages are those its chunks in use fill now, at least one once it had an
  item (memcached keeps its high-water mark: the traffic makes the two
  differ on purpose), and memcached_malloced_bytes is the memory ithaca's
  items hold (what -m bounds, as memcached's figure is what its -m bounds);
- values that depend on timing (uptime, CPU, ages, the background LRU
  maintainer's and crawler's reclaims, bytes of stats replies) are compared
  by type only;
- per-class series exist for the same classes, and the families the
  exporter has that ithaca lacks are exactly the documented ones.
"""

import math
import time

import pytest

from conftest import HOST
from exporter_oracle import (COUNTER, GAUGE, exporter_series, families, key, parse_page, scrape_memcached)
from mcwire import Conn
from test_metrics import page, start

# --- the traffic ------------------------------------------------------------------------

BIG = 350000  # memcached class 38 (394,840-byte chunks, 2 to a page): 3 items need 2 pages


def cas_of(reply):
    return reply.split(b"\r\n")[0].split()[4]


def wait_expired(probe, key_name, timeout=5.0):
    """Polls `me KEY` (which no exporter series counts) until the item is gone."""
    deadline = time.monotonic() + timeout
    while probe.call(b"me " + key_name + b"\r\n") != b"EN\r\n":
        assert time.monotonic() < deadline, f"{key_name!r} never expired"
        time.sleep(0.05)


def traffic(c, probe):
    """Sets of several sizes, gets that hit and miss, cas, incr/decr in place
    and growing, append, touch, gat, deletes, meta commands, an expiry, a
    flush_all and what comes after. Returns the replies (the same from every
    server). `probe` polls the expiry without counting (see wait_expired)."""
    replies = []

    def call(req):
        replies.append(c.call(req))
        return replies[-1]

    def getm(req):  # a get line: its reply up to END
        c.send(req)
        replies.append(c.read_until(b"END\r\n"))
        return replies[-1]

    call(b"set a 0 0 5\r\nhello\r\n")
    call(b"set b 3 0 100\r\n" + b"b" * 100 + b"\r\n")
    call(b"set c 0 0 2000\r\n" + b"c" * 2000 + b"\r\n")
    for k in (b"d1", b"d2", b"d3"):
        call(b"set " + k + b" 0 0 %d\r\n" % BIG + b"d" * BIG + b"\r\n")
    call(b"set big 0 0 600000\r\n" + b"z" * 600000 + b"\r\n")  # chunked in memcached
    getm(b"get a b nope\r\n")
    getm(b"get d1\r\n")
    c.send(b"gets a\r\n")
    cas = cas_of(c.read_until(b"END\r\n"))  # not kept: each server numbers CAS its own way
    call(b"cas a 0 0 5 " + cas + b"\r\nHELLO\r\n")
    call(b"cas a 0 0 5 " + cas + b"\r\nhowdy\r\n")
    call(b"cas nope 0 0 1 1\r\nx\r\n")
    call(b"set n 0 0 1\r\n9\r\n")
    call(b"incr n 1\r\n")   # 10: longer, a new item (total_items)
    call(b"incr n 1\r\n")   # 11: in place
    call(b"decr n 5\r\n")   # "6 ": in place, padded
    call(b"decr n 100\r\n")  # "0 "
    getm(b"get n\r\n")
    call(b"incr nope 1\r\n")
    call(b"decr nope 1\r\n")
    call(b"incr a 1\r\n")  # not a number: counted nowhere
    call(b"append a 0 0 3\r\nxyz\r\n")
    call(b"prepend b 0 0 2\r\nzz\r\n")
    call(b"append nope 0 0 1\r\nx\r\n")
    call(b"add a 0 0 1\r\nx\r\n")
    call(b"replace nope 0 0 1\r\nx\r\n")
    call(b"replace c 0 0 10\r\n0123456789\r\n")
    call(b"touch b 100\r\n")
    call(b"touch nope 100\r\n")
    getm(b"gat 100 c\r\n")
    getm(b"gat 100 nope\r\n")
    getm(b"gats 100 a\r\n")
    call(b"delete c\r\n")
    call(b"delete nope\r\n")
    call(b"delete d2\r\n")
    call(b"delete d3\r\n")
    call(b"ms m 2\r\nhi\r\n")
    call(b"mg m v\r\n")
    call(b"mg nope v\r\n")
    call(b"ma n\r\n")  # "1 " in place
    call(b"md m\r\n")
    call(b"md nope\r\n")
    call(b"set x 0 1 1\r\nz\r\n")
    wait_expired(probe, b"x")
    getm(b"get x\r\n")
    call(b"flush_all\r\n")
    # Every key: flushed, so each is a miss (and unlinked), whether or not a
    # background reclaim got to it first.
    getm(b"get a b d1 n big x m\r\n")
    call(b"set p 0 0 5\r\nhello\r\n")
    call(b"set r 7 0 100\r\n" + b"r" * 100 + b"\r\n")
    getm(b"get p r\r\n")
    return replies


# What ithaca's items hold after the traffic: p (key 1, value 5) and r (1, 100).
LIVE = [(1, 5), (1, 100)]


def block(n):
    """The item region's block for n bytes of item (header, key, value): its
    8-byte block header, rounded up to 8, 32 at least (item_region.h). The same
    in a build with AddressSanitizer: the region is ithaca's own allocator."""
    return max(32, (n + 8 + 7) & ~7)


def item_memory(live):
    """ithaca's memory charge for these items: one region block each, its
    48-byte header, the key, the value (INTERNALS.md, "Item memory")."""
    return sum(block(48 + k + v) for k, v in live)


def emulated_pages(used, per_page):
    """INTERNALS.md's rule for a class's pages: what its chunks in use fill,
    at least one once it had an item."""
    return max(1, math.ceil(used / per_page))


# --- the comparison ------------------------------------------------------------------------

# Families whose value is a function of the traffic (cache role).
EXACT = {
    "memcached_up", "memcached_commands_total", "memcached_current_items", "memcached_items_total",
    "memcached_current_bytes", "memcached_items_evicted_total", "memcached_limit_bytes",
    "memcached_max_connections", "memcached_accepting_connections",
    "memcached_slab_current_items", "memcached_slab_mem_requested_bytes", "memcached_slab_chunk_size_bytes",
    "memcached_slab_chunks_per_page", "memcached_slab_chunks_used", "memcached_slab_chunks_free_end",
    "memcached_slab_commands_total", "memcached_slab_items_evicted_total",
    "memcached_slab_items_evicted_nonzero_total", "memcached_slab_items_evicted_unfetched_total",
    "memcached_slab_items_outofmemory_total", "memcached_slab_items_tailrepairs_total",
}
# Compared summed over the `lru` label / over the segments: memcached splits
# its items and hits between HOT, WARM and COLD by its LRU maintainer's
# timing; ithaca has one CLOCK and counts everything cold.
SEGMENTS = ["memcached_slab_hot_items", "memcached_slab_warm_items", "memcached_slab_cold_items"]
# Allocator figures: INTERNALS.md's decision, asserted in check_allocator.
DECIDED = {"memcached_slab_current_pages", "memcached_slab_current_chunks", "memcached_slab_chunks_free",
           "memcached_malloced_bytes"}
# What the exporter shows for memcached 1.6 and ithaca has no figure for
# (README's Metrics section lists them).
ABSENT = {
    "memcached_connections_listener_disabled_total",
    "memcached_lru_crawler_starts_total", "memcached_lru_crawler_items_checked_total",
    "memcached_lru_crawler_reclaimed_total", "memcached_lru_crawler_moves_to_cold_total",
    "memcached_lru_crawler_moves_to_warm_total", "memcached_lru_crawler_moves_within_lru_total",
    "memcached_lru_crawler_enabled", "memcached_lru_crawler_sleep", "memcached_lru_crawler_to_crawl",
    "memcached_lru_crawler_maintainer_thread", "memcached_lru_crawler_hot_percent",
    "memcached_lru_crawler_warm_percent", "memcached_lru_crawler_hot_max_factor",
    "memcached_lru_crawler_warm_max_factor",
}
# ithaca's memcached_* the exporter v0.11.1 lacks (later exporters, 0.14 on, have it).
NEWER = {"memcached_item_no_memory_total"}


def memcached_part(samples):
    return {k: v for k, v in samples.items() if k[0].startswith("memcached_")}


def check_types(want, got, types):
    common = set(want) & set(got)
    wrong = {k[0]: (want[k][0], types.get(k[0])) for k in common if types.get(k[0]) != want[k][0]}
    assert not wrong, f"TYPE differs (exporter, ithaca): {wrong}"
    return common


def check_values(want, got, names):
    diff = {k: (want[k][1], got[k]) for k in set(want) & set(got) if k[0] in names and want[k][1] != got[k]}
    assert not diff, f"values differ (exporter on memcached, ithaca): {sorted(diff.items())}"


def check_same_series(want, got, names):
    """Per family: the same label sets (the same classes, commands...)."""
    for name in names:
        theirs = {k for k in want if k[0] == name}
        ours = {k for k in got if k[0] == name}
        assert theirs == ours, f"{name}: only the exporter {sorted(theirs - ours)}, only ithaca {sorted(ours - theirs)}"


def summed(series, name, by):
    out = {}
    for k, v in series.items():
        if k[0] != name:
            continue
        labels = tuple(kv for kv in k[1] if kv[0] != by)
        out[labels] = out.get(labels, 0) + (v[1] if isinstance(v, tuple) else v)
    return out


def check_allocator(want, got):
    slabs = {dict(k[1])["slab"] for k in got if k[0] == "memcached_slab_chunks_used"}
    assert slabs, "no class on the page"
    for s in slabs:
        used = got[key("memcached_slab_chunks_used", slab=s)]
        per_page = got[key("memcached_slab_chunks_per_page", slab=s)]
        pages = emulated_pages(used, per_page)
        assert got[key("memcached_slab_current_pages", slab=s)] == pages, s
        assert got[key("memcached_slab_current_chunks", slab=s)] == pages * per_page, s
        assert got[key("memcached_slab_chunks_free", slab=s)] == pages * per_page - used, s
    # The class of the three BIG items had 2 pages in memcached and keeps them;
    # its items are gone (deleted, flushed): ithaca shows the one page the rule leaves.
    assert want[key("memcached_slab_current_pages", slab="38")][1] == 2
    assert got[key("memcached_slab_current_pages", slab="38")] == 1
    assert got[key("memcached_slab_chunks_used", slab="38")] == 0
    assert got[key("memcached_malloced_bytes", )] == item_memory(LIVE)
    # memcached's is its pages: one MiB each.
    pages = sum(v[1] for k, v in want.items() if k[0] == "memcached_slab_current_pages")
    assert want[key("memcached_malloced_bytes")][1] == pages * 1024 * 1024


def settled_memcached(server, check, timeout=3.0):
    """memcached frees a replaced or deleted item's chunk once the last reply
    that referenced it is written, a moment after the reply: scrape until
    `check(series)` holds or `timeout` passes (then the last scrape)."""
    deadline = time.monotonic() + timeout
    while True:
        with Conn(HOST, server.port) as c:
            series = exporter_series(*scrape_memcached(c))
        if check(series) or time.monotonic() > deadline:
            return series
        time.sleep(0.05)


def test_cache_role_shows_the_exporters_figures_for_the_same_traffic(ithaca_factory, memcached_factory):
    oracle = memcached_factory()
    ours = start(ithaca_factory)
    got_replies = {}
    for server in (oracle, ours):
        with Conn(HOST, server.port, timeout=20) as c, Conn(HOST, server.port) as probe:
            got_replies[server.name] = traffic(c, probe)
    assert got_replies["ithaca"] == got_replies["memcached"]
    got, types = parse_page(page(ours.metrics_port))
    got = memcached_part(got)
    used = {k: v for k, v in got.items() if k[0] == "memcached_slab_chunks_used"}
    want = settled_memcached(oracle, lambda s: {k: v[1] for k, v in s.items() if k in used} == used)

    common = check_types(want, got, types)
    assert len(common) > 100, sorted(common)
    check_values(want, got, EXACT)
    for name in SEGMENTS:
        check_same_series(want, got, [name])
    assert summed(want, "memcached_slab_lru_hits_total", "lru") == summed(got, "memcached_slab_lru_hits_total", "lru")
    items_by_segment = {}
    for series in (want, got):
        total = {}
        for name in SEGMENTS:
            for labels, v in summed(series, name, "").items():
                total[labels] = total.get(labels, 0) + v
        items_by_segment[id(series)] = total
    assert items_by_segment[id(want)] == items_by_segment[id(got)]
    check_allocator(want, got)
    slab_families = {n for n in families(want) & families(got) if n.startswith("memcached_slab_")}
    check_same_series(want, got, slab_families)
    assert families(want) - families(got) == ABSENT
    assert families(got) - families(want) == NEWER
    # The traffic's own figures, for the reader: 17 stores made an item; 4 of
    # the 5 arithmetic commands that hit changed theirs in place, which makes
    # none (only "9" -> "10" did not fit).
    assert got[key("memcached_items_total")] == want[key("memcached_items_total")][1] == 17
    assert got[key("memcached_current_bytes")] == sum(48 + k + 1 + v + 2 + 8 for k, v in LIVE) + 4


@pytest.mark.parametrize("protocol", ["ascii", "meta"])
def test_router_counts_routed_commands_as_memcached_counts_them(protocol, ithaca_factory, memcached_factory):
    """The router in front of a memcached counts what a memcached that got the
    traffic directly counts. Not what the memcached behind it counts: with
    `protocol: meta` the router sends `touch` and `gat` as `mg ... T`, whose
    miss Debian's memcached 1.6.18 counts as a get miss, where the client's
    `touch` is a touch miss to any memcached it is sent to."""
    oracle = memcached_factory()
    backend = memcached_factory()
    router = start(ithaca_factory, f"""
pools:
  main:
    servers: [{HOST}:{backend.port}]
    protocol: {protocol}
    allow_flush: true
route:
  type: pool
  pool: main
""")
    for server, probe_port in ((oracle, oracle.port), (router, backend.port)):
        with Conn(HOST, server.port, timeout=20) as c, Conn(HOST, probe_port) as probe:
            traffic(c, probe)
    got, types = parse_page(page(router.metrics_port))
    got = memcached_part(got)
    with Conn(HOST, oracle.port) as c:
        want = exporter_series(*scrape_memcached(c))
    check_types(want, got, types)
    check_same_series(want, got, ["memcached_commands_total"])
    check_values(want, got, {"memcached_commands_total"})
    assert got[key("memcached_commands_total", command="get", status="hit")] == 8
