"""The counter groups' tables (sources/stats/general_stats.h,
sources/stats/repl_stats_table.h, sources/config/settings_table.h,
sources/stats/item_stats_table.h, sources/stats/slab_stats_table.h,
sources/stats/router_stats_table.h) against the running server: every row is
a line of its `stats` group (where its condition holds; per size class for
`stats items` and `stats slabs`, per pool and server for `stats pools` and
`stats servers`), every row with a family is on the Prometheus page under
that family (with the class's, pool's or server's labels first), and the
counters move when their event happens, driven over the wire.

The rows are read from the headers themselves, so a row added there is
checked here without a change to this file. Counters this test cannot drive
(NOT_DRIVEN) say why.
"""

import os
import re

import pytest

from mcwire import Conn, parse_stats
from replica import master_config
from conftest import HOST, free_port
from test_metrics import page, start

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIELD = r'\s*("(?:[^"\\]|\\.)*"|\w+)\s*'
# the seventh column (`when`) is an expression: up to its comma
ROW = re.compile(r"\bX\(" + ",".join([FIELD] * 6) + r",\s*([^,]+?)\s*,")
DEFINE = re.compile(r'#define (ITHACA_\w+_HELP)\s+("(?:[^"\\]|\\.)*")')


def source(path):
    """A header's text: lines joined, comments out, adjacent literals as one."""
    text = open(os.path.join(ROOT, path)).read()
    text = re.sub(r"/\*.*?\*/", "", re.sub(r"\\\n", " ", text), flags=re.S)
    return re.sub(r'"\s+"', "", text)


def table(path, macro=None):
    """The rows of an X-macro table (the header's only one, or `macro`'s):
    name, type, family, help, page read, labels, when."""
    text = source(path)
    # the help lines the tables name by macro: the header's own and stat_row.h's
    for k, v in DEFINE.findall(text + source("sources/stats/stat_row.h")):
        text = re.sub(r"\b" + k + r"\b(?!\s+\")", lambda _, v=v: v, text)
    if macro:
        text = text[text.index(f"#define {macro}(X)"):]
        text = text[:text.find("#define", 1) % (len(text) + 1)]
    rows = []
    for m in ROW.finditer(text):
        f = [x[1:-1] if x.startswith('"') else x for x in m.groups()]
        rows.append(dict(name=f[0], type=f[1], family=f[2], help=f[3], read=f[4], labels=f[5], when=f[6]))
    assert rows, path
    return rows


GENERAL = table("sources/stats/general_stats.h")
REPL = table("sources/stats/repl_stats_table.h")
SETTINGS = table("sources/config/settings_table.h")
ITEMS = table("sources/stats/item_stats_table.h")
SLAB_CLASSES = table("sources/stats/slab_stats_table.h", "ITHACA_SLAB_CLASS_STATS")
SLAB_TOTALS = table("sources/stats/slab_stats_table.h", "ITHACA_SLAB_TOTAL_STATS")
ROUTER_SUMMARY = table("sources/stats/router_stats_table.h", "ITHACA_ROUTER_SUMMARY_STATS")
MCROUTER = table("sources/stats/router_stats_table.h", "ITHACA_MCROUTER_STATS")
POOLS = table("sources/stats/router_stats_table.h", "ITHACA_POOL_STATS")
SERVERS = table("sources/stats/router_stats_table.h", "ITHACA_SERVER_STATS")

# Rows printed only under a condition this server does not meet.
CONDITIONAL = {"idle_kicks", "ssl_new_sessions", "ssl_handshake_errors", "ssl_proto_errors",
               "time_since_server_cert_refresh", "ssl_handshakes", "ssl_kernel_tls_connections",
               "last_error"}

# Counters of the general table this test does not drive, and why.
NOT_DRIVEN = {
    "rejected_connections": "needs the -c limit reached (test_connections.py does it)",
    "auth_cmds": "needs -Y or -S (test_auth.py counts them)",
    "auth_errors": "needs -Y or -S (test_auth.py counts them)",
    "idle_kicks": "printed only with an idle timeout (test_idle_connections.py)",
    "expired_unfetched": "an expired item reclaimed by the GC sweep: timing",
    "evicted_unfetched": "counted, but which item an eviction picks is the CLOCK's",
    "reclaimed": "an expired item's memory reused: timing of the sweep",
    "log_worker_written": "needs a watcher connection (test_watch.py)",
    "log_watcher_skipped": "needs a watcher whose queue is full (test_watch.py)",
    "log_watcher_sent": "needs a watcher connection (test_watch.py)",
    "gc_runs": "the cron sweep's period, not an event a client makes",
    "large_value_gc_evictions": "needs the large values' disk above its high watermark",
    "large_value_inline_evictions": "needs the large values' disk budget full",
    "udp_requests": "needs -U (test_udp.py)",
    "udp_dropped": "needs -U and a bad datagram (test_udp.py)",
    "udp_kernel_drops": "the kernel's own drops",
    "moves_to_cold": "needs the small queue's ring full (test_eviction_policy.py)",
    "moves_to_warm": "needs memory full of one-hit wonders (test_eviction_policy.py)",
    "moves_within_lru": "needs main's hand to pass an item read since (s3fifo_test.cc)",
    "ghost_hits": "needs a key evicted from the small queue (test_eviction_policy.py)",
    "repl_*": "replication's events need a slave (test_replication*.py); here only their presence",
}


def stats(c, group=b""):
    return parse_stats(c.call(b"stats" + (b" " + group if group else b"") + b"\r\n"))


def families(text):
    """{family: [sample lines]} and {family: (type, help)} of a page."""
    samples, meta = {}, {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, help_text = line[7:].split(" ", 1)
            meta.setdefault(name, [None, None])[1] = help_text
        elif line.startswith("# TYPE "):
            name, kind = line[7:].split(" ", 1)
            meta.setdefault(name, [None, None])[0] = kind
        elif line and not line.startswith("#"):
            samples.setdefault(re.split(r"[{ ]", line, 1)[0], []).append(line)
    return samples, meta


def value_on_page(text, row, stat_value, first=()):
    """The row's sample on the page (with the labels `first` before the
    row's), checked against its `stats` value."""
    lines = families(text)[0].get(row["family"], [])
    if row["read"] == "Label":
        want = f'{row["family"]}{{{row["labels"]}="{stat_value}"}} 1'
        assert want in lines, (row["name"], lines)
        return None
    pairs = list(first) + [p.split("=") for p in row["labels"].split(",") if p]
    labels = ",".join(f'{k}="{v}"' for k, v in pairs)
    prefix = row["family"] + (f"{{{labels}}}" if labels else "") + " "
    found = [line for line in lines if line.startswith(prefix)]
    assert len(found) == 1, (row["name"], prefix, lines)
    return float(found[0].rsplit(" ", 1)[1])


# Counters that move between reading the page and the `stats` after it.
MOVING = {"uptime", "rusage_user", "rusage_system", "bytes_read", "bytes_written"}


def per_name(rows, st):
    """The rows with a PerName row replaced by one row per line it stands for
    (replies_found, ...), the name after the row's as the value of its label."""
    out = []
    for r in rows:
        if r["read"] != "PerName":
            out.append(r)
            continue
        names = [k for k in st if k.startswith(r["name"]) and k != r["name"]]
        assert names, r["name"]
        out += [dict(r, name=k, read="Number", labels=f'{r["labels"]}={k[len(r["name"]):]}') for k in names]
    return out


def check_table(rows, st, text, first=()):
    """Every row's line is in `stats`, in the table's order, and every row with
    a family is on the page with the table's type and help (and the labels
    `first` before the row's: a size class's `slab`, a pool's `pool`)."""
    rows = per_name(rows, st)
    present = [r["name"] for r in rows if r["name"] in st]
    missing = [r["name"] for r in rows if r["name"] not in st and r["name"] not in CONDITIONAL]
    assert not missing, missing
    order = [k for k in st if k in present]
    assert order == present
    _, meta = families(text)
    for r in rows:
        if r["type"] == "None" or r["name"] not in st:
            continue
        assert meta.get(r["family"]) == [r["type"].lower(), r["help"]], (r["name"], meta.get(r["family"]))
        v = value_on_page(text, r, st[r["name"]], first)
        if v is None:
            continue
        if r["read"] == "Up":
            assert v == (1 if st[r["name"]] == "up" else 0), (r["name"], v)
            continue
        want = float(st[r["name"]])
        if r["read"] == "Millis":
            want /= 1000
        elif r["read"] == "Micros":
            want /= 1e6
        elif r["read"] == "SetsLessCas":
            want = max(0.0, want - sum(float(st[k]) for k in ("cas_hits", "cas_misses", "cas_badval")))
        elif r["read"] == "ClassSetsLessCas":
            want -= float(st["cas_hits"]) + float(st["cas_badval"])
        if r["type"] == "Gauge":
            continue  # may move between the two reads: checked by presence
        if r["name"] in MOVING:
            assert v <= want, (r["name"], v, want)  # the page was read first
        else:
            assert v == want, (r["name"], v, want)


def events(c):
    """Drives one of each event a client can make; returns nothing."""
    def call(req):
        return c.call(req)

    assert call(b"set a 0 0 1\r\n1\r\n") == b"STORED\r\n"
    c.send(b"get a nope\r\n")
    c.read_until(b"END\r\n")
    assert call(b"touch a 0\r\n") == b"TOUCHED\r\n"
    assert call(b"touch nope 0\r\n") == b"NOT_FOUND\r\n"
    assert call(b"incr a 1\r\n") == b"2\r\n"
    assert call(b"incr nope 1\r\n") == b"NOT_FOUND\r\n"
    assert call(b"decr a 1\r\n") == b"1\r\n"
    assert call(b"decr nope 1\r\n") == b"NOT_FOUND\r\n"
    c.send(b"gets a\r\n")
    cas = c.read_until(b"END\r\n").split(b"\r\n")[0].split()[4]
    assert call(b"cas a 0 0 1 " + cas + b"\r\n3\r\n") == b"STORED\r\n"
    assert call(b"cas a 0 0 1 " + cas + b"\r\n4\r\n") == b"EXISTS\r\n"
    assert call(b"cas nope 0 0 1 1\r\n5\r\n") == b"NOT_FOUND\r\n"
    assert call(b"mn\r\n") == b"MN\r\n"
    assert call(b"delete a\r\n") == b"DELETED\r\n"
    assert call(b"delete a\r\n") == b"NOT_FOUND\r\n"
    assert call(b"bogus\r\n") == b"ERROR\r\n"
    # An expired item found by a get (touch to a past time expires it at once).
    assert call(b"set e 0 0 1\r\nx\r\n") == b"STORED\r\n"
    assert call(b"touch e -1\r\n") == b"TOUCHED\r\n"
    assert c.call(b"get e\r\n") == b"END\r\n"
    # An item invalidated by flush_all, found by a get.
    assert call(b"set f 0 0 1\r\nx\r\n") == b"STORED\r\n"
    assert call(b"flush_all\r\n") == b"OK\r\n"
    assert c.call(b"get f\r\n") == b"END\r\n"
    # Leases: a token on a miss, a wait for the next reader, a set refused for a wrong token.
    c.send(b"lease-get hot\r\n")
    assert c.read_until(b"END\r\n").startswith(b"LVALUE hot ")
    c.send(b"lease-get hot\r\n")
    assert c.read_until(b"END\r\n").startswith(b"LVALUE hot 1 ")
    assert call(b"lease-set hot 12345 0 0 1\r\nx\r\n") != b"STORED\r\n"
    # More than reqs_per_event (20) requests in one read: the connection yields.
    c.send(b"mn\r\n" * 50)
    for _ in range(50):
        assert c.read_until() == b"MN\r\n"


# Counters each event above moves (at least by one).
MOVED = ["cmd_get", "cmd_set", "cmd_flush", "cmd_touch", "cmd_meta", "get_hits", "get_misses", "get_expired",
         "get_flushed", "delete_misses", "delete_hits", "incr_misses", "incr_hits", "decr_misses", "decr_hits",
         "cas_misses", "cas_hits", "cas_badval", "touch_hits", "touch_misses", "bytes_read", "bytes_written",
         "conn_yields", "total_items", "total_connections", "lease_tokens_issued", "lease_waits",
         "lease_sets_refused", "protocol_errors"]


def test_general_table_on_stats_and_page_and_counters_move(ithaca_factory):
    server = start(ithaca_factory)
    with Conn(*server.address) as c:
        before = stats(c)
        with Conn(*server.address) as d:
            events(d)
        after = stats(c)
        text = page(server.metrics_port)
        last = stats(c)
    for name in MOVED:
        assert int(after[name]) > int(before[name]), (name, before[name], after[name])
    check_table(GENERAL, last, text)
    driven = set(MOVED)
    counters = {r["name"] for r in GENERAL if r["type"] == "Counter"}
    # every counter of the table is driven here or named with its reason
    assert counters - driven - set(NOT_DRIVEN) <= {"uptime", "rusage_user", "rusage_system", "evictions", "store_no_memory"}


def test_evictions_with_a_small_memory_limit(ithaca_factory):
    """-m 2 and 6 MB of 10 KB values: evictions; a store that finds no item to
    evict in time answers memcached's out of memory, counted in store_no_memory."""
    server = start_small(ithaca_factory)
    oom = b"SERVER_ERROR out of memory storing object\r\n"
    replies = []
    with Conn(*server.address) as c:
        before = stats(c)
        value = b"v" * 10000
        for i in range(600):
            replies.append(c.call(b"set k%d 0 0 %d\r\n%s\r\n" % (i, len(value), value)))
        st = stats(c)
        items = stats(c, b"items")
    assert set(replies) <= {b"STORED\r\n", oom}
    assert int(st["evictions"]) > int(before["evictions"])
    assert int(st["store_no_memory"]) - int(before["store_no_memory"]) == replies.count(oom)
    assert families(page(server.metrics_port))[0]["memcached_items_evicted_total"]
    # and in the size class's lines (item_stats_table.h)
    assert class_sums(items, "items:")["evicted"] > 0


def start_small(factory):
    server = factory(["-m", "2", "--metrics-listen", "127.0.0.1:0"], memory_flag=False)
    from test_metrics import METRICS_RE
    m = server.wait_for_log(METRICS_RE, 5)
    server.metrics_port = int(m.group(1))
    return server


def test_replication_table_on_stats_and_page(ithaca_factory):
    server = start(ithaca_factory, config_text=master_config(0))
    with Conn(*server.address) as c:
        assert c.call(b"set r 0 0 1\r\nx\r\n") == b"STORED\r\n"
        text = page(server.metrics_port)
        st = stats(c)
    assert st["repl_role"] == "master"
    check_table(REPL, st, text)
    # the replication lines come after the general ones, in the table's order
    names = list(st)
    assert names.index(REPL[0]["name"]) > names.index(GENERAL[-1]["name"])


def test_settings_table_on_stats_settings_and_page(ithaca_factory):
    server = start(ithaca_factory)
    with Conn(*server.address) as c:
        before = stats(c, b"settings")
        # Settings a client changes at run time move their lines.
        assert c.call(b"stats detail on\r\n") == b"OK\r\n"
        assert c.call(b"lru_crawler disable\r\n") == b"OK\r\n"
        text = page(server.metrics_port)
        st = stats(c, b"settings")
    assert list(st) == [r["name"] for r in SETTINGS]  # every row, in the table's order, nothing else
    check_table(SETTINGS, st, text)
    assert (before["detail_enabled"], st["detail_enabled"]) == ("no", "yes")
    assert (before["lru_crawler"], st["lru_crawler"]) == ("yes", "no")
    assert st["tcpport"] == str(server.address[1])  # the port bound, not the configured 0


def classes(st, prefix):
    """{class: {field: value}} of `stats items` (prefix "items:") or `stats slabs` ("")."""
    out = {}
    for k, v in st.items():
        m = re.fullmatch(prefix + r"(\d+):(\w+)", k)
        if m:
            out.setdefault(int(m.group(1)), {})[m.group(2)] = v
    return out


def class_sums(st, prefix):
    """Each field of a group's classes, summed over the classes."""
    sums = {}
    for fields in classes(st, prefix).values():
        for k, v in fields.items():
            sums[k] = sums.get(k, 0) + int(v)
    return sums


def class_events(c):
    """Items in three size classes and each per-class command on them."""
    for i, size in enumerate((10, 1000, 10000)):
        assert c.call(b"set s%d 0 0 %d\r\n%s\r\n" % (i, size, b"v" * size)) == b"STORED\r\n"
    c.send(b"get s0 s1 s2\r\n")
    c.read_until(b"END\r\n")
    assert c.call(b"set n 0 0 1\r\n5\r\n") == b"STORED\r\n"
    assert c.call(b"incr n 1\r\n") == b"6\r\n"
    assert c.call(b"decr n 1\r\n") == b"5\r\n"
    assert c.call(b"touch n 0\r\n") == b"TOUCHED\r\n"
    c.send(b"gets n\r\n")
    cas = c.read_until(b"END\r\n").split(b"\r\n")[0].split()[4]
    assert c.call(b"cas n 0 0 1 " + cas + b"\r\n3\r\n") == b"STORED\r\n"
    assert c.call(b"cas n 0 0 1 " + cas + b"\r\n4\r\n") == b"EXISTS\r\n"
    assert c.call(b"set d 0 0 1\r\nx\r\n") == b"STORED\r\n"
    assert c.call(b"delete d\r\n") == b"DELETED\r\n"


# Per-class counters the events above move (summed over the classes).
ITEM_MOVED = ["number", "number_cold", "mem_requested", "hits_to_cold"]
SLAB_MOVED = ["used_chunks", "get_hits", "cmd_set", "delete_hits", "incr_hits", "decr_hits", "cas_hits",
              "cas_badval", "touch_hits"]
# Per-class counters not driven here, and why.
CLASS_NOT_DRIVEN = {
    "evicted": "test_evictions_with_a_small_memory_limit",
    "evicted_nonzero": "an eviction of an item with an expiry time: which item the CLOCK picks",
    "evicted_time": "as evicted_nonzero",
    "outofmemory": "a store that finds nothing to evict: timing (test_evictions_with_a_small_memory_limit)",
    "reclaimed": "an expired item's memory reused: timing of the sweep",
    "expired_unfetched": "an expired item reclaimed by the GC sweep: timing",
    "evicted_unfetched": "which item an eviction picks is the CLOCK's",
    "crawler_reclaimed": "the GC sweep's period",
    "tailrepairs": "always 0: no segmented LRU",
    "moves_to_cold": "always 0: no segmented LRU",
    "moves_to_warm": "always 0: no segmented LRU",
    "moves_within_lru": "always 0: no segmented LRU",
    "hits_to_hot": "always 0: no segmented LRU",
    "hits_to_warm": "always 0: no segmented LRU",
    "hits_to_temp": "always 0: no segmented LRU",
}


def test_item_and_slab_tables_on_stats_and_page_and_counters_move(ithaca_factory):
    server = start(ithaca_factory)
    with Conn(*server.address) as c:
        before_items, before_slabs = stats(c, b"items"), stats(c, b"slabs")
        class_events(c)
        text = page(server.metrics_port)
        items, slabs = stats(c, b"items"), stats(c, b"slabs")
    by_item_class, by_slab_class = classes(items, "items:"), classes(slabs, "")
    assert len(by_item_class) >= 3 and set(by_slab_class) >= set(by_item_class)
    for n, fields in by_item_class.items():
        assert list(fields) == [r["name"] for r in ITEMS]  # every row, in order, nothing else
        check_table(ITEMS, fields, text, [("slab", str(n))])
    for n, fields in by_slab_class.items():
        assert list(fields) == [r["name"] for r in SLAB_CLASSES]
        check_table(SLAB_CLASSES, fields, text, [("slab", str(n))])
    totals = {k: v for k, v in slabs.items() if ":" not in k}
    assert list(totals) == [r["name"] for r in SLAB_TOTALS]
    check_table(SLAB_TOTALS, totals, text)
    assert int(totals["active_slabs"]) == len(by_slab_class)
    for before, after, prefix, moved in ((before_items, items, "items:", ITEM_MOVED),
                                         (before_slabs, slabs, "", SLAB_MOVED)):
        was, now = class_sums(before, prefix), class_sums(after, prefix)
        for name in moved:
            assert now[name] > was.get(name, 0), (name, was.get(name), now[name])
    counters = {r["name"] for r in ITEMS + SLAB_CLASSES if r["type"] == "Counter"}
    # every per-class counter is driven here or named with its reason
    assert counters - set(ITEM_MOVED) - set(SLAB_MOVED) - set(CLASS_NOT_DRIVEN) == set()


def lines_of(st, prefix):
    """{field: value} of the lines PREFIXfield (a field holds no ':')."""
    return {k[len(prefix):]: v for k, v in st.items() if k.startswith(prefix) and ":" not in k[len(prefix):]}


# What the events of the router test move: in `stats`, per pool, per server.
SUMMARY_MOVED = ["router_requests", "router_failures", "router_servers_down"]
POOL_MOVED = {"main": ["requests", "replies", "replies_stored", "replies_found", "replies_notfound",
                       "replies_deleted"],
              "dead": ["requests", "failures"]}
SERVER_MOVED = {"main": ["requests", "replies", "replies_stored", "replies_found", "replies_notfound",
                         "replies_deleted", "connects"],
                "dead": ["requests", "transitions", "failures_connect"]}

MCROUTER_MOVED = ["cmd_add_count", "cmd_append_count", "cmd_cas_count", "cmd_decr_count", "cmd_delete_count",
                  "cmd_flushall_count", "cmd_gat_count", "cmd_gats_count", "cmd_get_count", "cmd_gets_count",
                  "cmd_incr_count", "cmd_prepend_count", "cmd_replace_count", "cmd_set_count", "cmd_touch_count",
                  "result_error_count", "result_connect_error_count", "result_tko_count",
                  "result_client_error_count"]
# mcrouter's counters not driven here, and why.
MCROUTER_NOT_DRIVEN = {
    "cmd_lease_get_count": "mcrouter's leases need a backend that speaks them (test_leases.py)",
    "cmd_lease_set_count": "mcrouter's leases need a backend that speaks them (test_leases.py)",
    "result_data_timeout_count": "a server that does not answer in time (test_router_slow_server.py)",
    "result_local_error_count": "a reply that does not parse (fake_backend.py's garbage)",
    "result_remote_error_count": "a SERVER_ERROR from memcached (test_mcrouter_service_info.py)",
    "failover_num_collisions": "needs a failover route (test_mcrouter_failover_stats.py)",
    "failover_num_failed_domain_collisions": "needs failure domains (test_mcrouter_failover_stats.py)",
    "failover_policy_result_error": "needs a failover route (test_mcrouter_failover_stats.py)",
    "failover_all_failed_count": "needs a failover route (test_mcrouter_failover_stats.py)",
    "failover_policy_tko_error": "needs a failover route (test_mcrouter_failover_stats.py)",
}

# Router counters not driven here, and why (a PerName row counts as driven
# when one of its lines is: failures_connect for failures_).
ROUTER_NOT_DRIVEN = {
    "joined_gets": "gets of one key joining one in flight: timing (test_router.py)",
    "idle_closes": "a server closing an idle connection (test_router.py)",
    "late_replies": "a reply that comes after its request timed out (test_backend_late_reply.py)",
    "late_closes": "a server that leaves timed-out requests unanswered (test_backend_late_reply.py)",
}


def test_router_tables_on_stats_and_page_and_counters_move(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    dead = f"{HOST}:{free_port()}"  # nothing listens: connects are refused
    server = start(ithaca_factory, f"""
pools:
  main:
    servers: [{HOST}:{backend.port}]
  dead:
    servers: [{dead}]
route:
  type: prefix
  prefixes:
    "d:": {{type: pool, pool: dead}}
  default: {{type: pool, pool: main}}
""")
    addresses = {"main": f"{HOST}:{backend.port}", "dead": dead}
    with Conn(*server.address) as c:
        before = [stats(c, g) for g in (b"", b"pools", b"servers")]
        assert c.call(b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"
        c.send(b"get k nope\r\n")
        c.read_until(b"END\r\n")
        assert c.call(b"delete k\r\n") == b"DELETED\r\n"
        assert c.call(b"get d:x\r\n").startswith(b"SERVER_ERROR")
        assert c.call(b"get d:x\r\n").startswith(b"SERVER_ERROR")  # marked down now: mcrouter's tko
        # one request of each of mcrouter's types (cmd_TYPE_count), and a CLIENT_ERROR
        for req, reply in ((b"add m 0 0 1\r\n1\r\n", b"STORED"), (b"replace m 0 0 1\r\n2\r\n", b"STORED"),
                           (b"append m 0 0 1\r\n3\r\n", b"STORED"), (b"prepend m 0 0 1\r\n4\r\n", b"STORED"),
                           (b"incr m 1\r\n", b"424"), (b"decr m 1\r\n", b"423"), (b"touch m 0\r\n", b"TOUCHED"),
                           (b"cas m 0 0 1 1\r\nx\r\n", b"EXISTS"), (b"flush_all\r\n", b"SERVER_ERROR"),
                           (b"set n 0 0 1\r\nv\r\n", b"STORED"), (b"incr n 1\r\n", b"CLIENT_ERROR")):
            assert c.call(req).startswith(reply), req
        for req in (b"gets m\r\n", b"gat 0 m\r\n", b"gats 0 m\r\n"):
            c.send(req)
            c.read_until(b"END\r\n")
        text = page(server.metrics_port)
        after = [stats(c, g) for g in (b"", b"pools", b"servers")]
    st, pools, servers = after
    check_table(ROUTER_SUMMARY, st, text)
    names = list(st)
    assert names.index(ROUTER_SUMMARY[0]["name"]) > names.index(GENERAL[-1]["name"])
    for name in SUMMARY_MOVED:
        assert int(st[name]) > int(before[0][name]), name
    check_table(MCROUTER, st, text)
    assert names.index(MCROUTER[0]["name"]) > names.index(ROUTER_SUMMARY[-1]["name"])
    for name in MCROUTER_MOVED:
        assert int(st[name]) > int(before[0][name]), name
    # two workers, two servers: each server once per worker, in one state each
    assert int(st["num_servers"]) == 4
    assert int(st["num_servers"]) == sum(int(st["num_servers_" + k]) for k in ("new", "up", "down", "closed"))
    assert int(st["num_servers_down"]) == 2 and int(st["num_suspect_servers"]) == 1
    for r in MCROUTER:
        if r["type"] == "Counter":
            # every mcrouter counter is driven here or named with its reason
            assert (r["name"] in MCROUTER_MOVED) != (r["name"] in MCROUTER_NOT_DRIVEN), r["name"]
    for pool, address in addresses.items():
        for table_rows, group, was, prefix, moved in (
                (POOLS, pools, before[1], f"{pool}:", POOL_MOVED[pool]),
                (SERVERS, servers, before[2], f"{pool}/{address}:", SERVER_MOVED[pool])):
            fields = lines_of(group, prefix)
            assert list(fields) == [r["name"] for r in per_name(table_rows, fields) if r["name"] in fields]
            assert set(fields) == {r["name"] for r in per_name(table_rows, fields)} - ({"last_error"} - set(fields))
            labels = [("pool", pool)] + ([("server", address)] if table_rows is SERVERS else [])
            check_table(table_rows, fields, text, labels)
            earlier = lines_of(was, prefix)
            for name in moved:
                assert int(fields[name]) > int(earlier[name]), (prefix, name, earlier[name], fields[name])
    assert lines_of(servers, f"dead/{dead}:")["state"] == "down"
    assert "last_error" in lines_of(servers, f"dead/{dead}:")
    moved = {m for lists in list(POOL_MOVED.values()) + list(SERVER_MOVED.values()) for m in lists}
    for r in POOLS + SERVERS:
        if r["type"] != "Counter" or r["name"] in ROUTER_NOT_DRIVEN:
            continue
        # every router counter is driven here or named with its reason
        assert any(m == r["name"] or (r["read"] == "PerName" and m.startswith(r["name"])) for m in moved), r["name"]
