"""memcached_exporter's series, computed from a memcached's stats the way the
exporter computes them, and a Prometheus text page read back into the same
form, so a test can compare ithaca's /metrics page with what the real
exporter would show for a real memcached (test_exporter_parity.py).

Written from reading (not copying) two sources:

- prometheus/memcached_exporter v0.11.1, pkg/exporter/exporter.go:
  Exporter.Collect, Exporter.parseStats and Exporter.parseStatsSettings give
  every family's name, its value type (prometheus.CounterValue or
  GaugeValue, passed to MustNewConstMetric at each call) and its labels.
  client_golang types a family by its first metric, so a family emitted from
  two places takes the type of whichever place emits: memcached 1.6 prints
  `mem_requested` in `stats items` (items.c item_stats) and no longer in
  `stats slabs`, so memcached_slab_mem_requested_bytes is emitted only from
  the items loop, as a COUNTER (the slabs loop's GaugeValue is dead code
  against memcached 1.6).
- grobie/gomemcache memcache/memcache.go, Client.statsFromAddr: the exporter
  sends `stats`, `stats slabs`, `stats items` on one connection and splits
  each "STAT name value" line (exactly three space-separated words) by the
  colons in its name: no colon -> the global map (so `stats slabs`'s
  active_slabs and total_malloced land beside `stats`'s), "N:field" -> Slabs[N],
  "items:N:field" -> Items[N]; statsSettingsFromAddr keeps the whole rest of
  the line as the value.
"""

import re

COUNTER = "counter"
GAUGE = "gauge"


# --- what the exporter reads ------------------------------------------------------

def stat_lines(conn, group=b""):
    """The raw STAT lines of `stats [group]` over an mcwire Conn."""
    conn.send(b"stats" + (b" " + group if group else b"") + b"\r\n")
    raw = conn.read_until(b"END\r\n")
    return [line for line in raw.decode().split("\r\n") if line.startswith("STAT ")]


def gomemcache_stats(stats, slabs, items):
    """statsFromAddr's three maps from the raw lines of the three groups."""
    glob, by_slab, by_item = {}, {}, {}
    for line in stats + slabs + items:
        words = line.split(" ")
        if len(words) != 3:
            continue  # gomemcache skips a line that is not exactly three words
        parts = words[1].split(":")
        if len(parts) == 1:
            glob[words[1]] = words[2].strip()
        elif len(parts) == 2:
            by_slab.setdefault(int(parts[0]), {})[parts[1]] = words[2].strip()
        elif len(parts) == 3:
            by_item.setdefault(int(parts[1]), {})[parts[2]] = words[2].strip()
    return glob, by_slab, by_item


def gomemcache_settings(settings):
    out = {}
    for line in settings:
        words = line.split(" ", 2)
        out[words[1]] = words[2].strip()
    return out


def scrape_memcached(conn):
    """What one exporter scrape reads from the server behind `conn`."""
    glob, slabs, items = gomemcache_stats(stat_lines(conn), stat_lines(conn, b"slabs"), stat_lines(conn, b"items"))
    return glob, slabs, items, gomemcache_settings(stat_lines(conn, b"settings"))


# --- the exporter's mapping ---------------------------------------------------------

# parseStats: one stat of the global map -> one family, no labels.
GLOBAL = [
    ("uptime", "memcached_uptime_seconds", COUNTER),
    ("time", "memcached_time_seconds", GAUGE),
    ("bytes", "memcached_current_bytes", GAUGE),
    ("limit_maxbytes", "memcached_limit_bytes", GAUGE),
    ("curr_items", "memcached_current_items", GAUGE),
    ("total_items", "memcached_items_total", COUNTER),
    ("bytes_read", "memcached_read_bytes_total", COUNTER),
    ("bytes_written", "memcached_written_bytes_total", COUNTER),
    ("curr_connections", "memcached_current_connections", GAUGE),
    ("total_connections", "memcached_connections_total", COUNTER),
    ("rejected_connections", "memcached_connections_rejected_total", COUNTER),
    ("conn_yields", "memcached_connections_yielded_total", COUNTER),
    ("listen_disabled_num", "memcached_connections_listener_disabled_total", COUNTER),
    ("evictions", "memcached_items_evicted_total", COUNTER),
    ("reclaimed", "memcached_items_reclaimed_total", COUNTER),
    ("lru_crawler_starts", "memcached_lru_crawler_starts_total", COUNTER),
    ("crawler_items_checked", "memcached_lru_crawler_items_checked_total", COUNTER),
    ("crawler_reclaimed", "memcached_lru_crawler_reclaimed_total", COUNTER),
    ("moves_to_cold", "memcached_lru_crawler_moves_to_cold_total", COUNTER),
    ("moves_to_warm", "memcached_lru_crawler_moves_to_warm_total", COUNTER),
    ("moves_within_lru", "memcached_lru_crawler_moves_within_lru_total", COUNTER),
    ("total_malloced", "memcached_malloced_bytes", GAUGE),
    ("accepting_conns", "memcached_accepting_connections", GAUGE),
]
TIMEVAL = [
    ("rusage_user", "memcached_process_user_cpu_seconds_total"),
    ("rusage_system", "memcached_process_system_cpu_seconds_total"),
]
OPS = ["get", "delete", "incr", "decr", "cas", "touch"]

# The items loop: itemsNumber, itemsAge, itemsLruHits, itemsCounterMetrics, itemsGaugeMetrics.
ITEMS = [
    ("number", "memcached_slab_current_items", GAUGE),
    ("age", "memcached_slab_items_age_seconds", GAUGE),
    ("crawler_reclaimed", "memcached_slab_items_crawler_reclaimed_total", COUNTER),
    ("evicted", "memcached_slab_items_evicted_total", COUNTER),
    ("evicted_nonzero", "memcached_slab_items_evicted_nonzero_total", COUNTER),
    ("evicted_time", "memcached_slab_items_evicted_time_seconds", COUNTER),
    ("evicted_unfetched", "memcached_slab_items_evicted_unfetched_total", COUNTER),
    ("expired_unfetched", "memcached_slab_items_expired_unfetched_total", COUNTER),
    ("outofmemory", "memcached_slab_items_outofmemory_total", COUNTER),
    ("reclaimed", "memcached_slab_items_reclaimed_total", COUNTER),
    ("tailrepairs", "memcached_slab_items_tailrepairs_total", COUNTER),
    ("mem_requested", "memcached_slab_mem_requested_bytes", COUNTER),
    ("moves_to_cold", "memcached_slab_items_moves_to_cold", COUNTER),
    ("moves_to_warm", "memcached_slab_items_moves_to_warm", COUNTER),
    ("moves_within_lru", "memcached_slab_items_moves_within_lru", COUNTER),
    ("number_hot", "memcached_slab_hot_items", GAUGE),
    ("number_warm", "memcached_slab_warm_items", GAUGE),
    ("number_cold", "memcached_slab_cold_items", GAUGE),
    ("number_temp", "memcached_slab_temporary_items", GAUGE),
    ("age_hot", "memcached_slab_hot_age_seconds", GAUGE),
    ("age_warm", "memcached_slab_warm_age_seconds", GAUGE),
]
LRU_HITS = [("hits_to_hot", "hot"), ("hits_to_warm", "warm"), ("hits_to_cold", "cold"), ("hits_to_temp", "temporary")]

# The slabs loop (its mem_requested line last: dead against memcached 1.6, see above).
SLABS = [
    ("chunk_size", "memcached_slab_chunk_size_bytes", GAUGE),
    ("chunks_per_page", "memcached_slab_chunks_per_page", GAUGE),
    ("total_pages", "memcached_slab_current_pages", GAUGE),
    ("total_chunks", "memcached_slab_current_chunks", GAUGE),
    ("used_chunks", "memcached_slab_chunks_used", GAUGE),
    ("free_chunks", "memcached_slab_chunks_free", GAUGE),
    ("free_chunks_end", "memcached_slab_chunks_free_end", GAUGE),
    ("mem_requested", "memcached_slab_mem_requested_bytes", GAUGE),
]

# parseStatsSettings: maxconns always; the rest only with lru_crawler "yes".
SETTINGS_CRAWLER = [
    ("lru_crawler", "memcached_lru_crawler_enabled", "bool"),
    ("lru_crawler_sleep", "memcached_lru_crawler_sleep", "num"),
    ("lru_crawler_tocrawl", "memcached_lru_crawler_to_crawl", "num"),
    ("lru_maintainer_thread", "memcached_lru_crawler_maintainer_thread", "bool"),
    ("hot_lru_pct", "memcached_lru_crawler_hot_percent", "num"),
    ("warm_lru_pct", "memcached_lru_crawler_warm_percent", "num"),
    ("hot_max_factor", "memcached_lru_crawler_hot_max_factor", "num"),
    ("warm_max_factor", "memcached_lru_crawler_warm_max_factor", "num"),
]


def key(name, /, **labels):
    return (name, tuple(sorted(labels.items())))


def exporter_series(glob, slabs, items, settings):
    """{(name, labels): (type, value)}: every sample one scrape of the exporter
    shows for these maps. A family emitted twice (only
    memcached_slab_mem_requested_bytes could be) keeps its first type."""
    out = {}

    def emit(name, typ, value, **labels):
        k = key(name, **labels)
        assert k not in out, f"the exporter would fail this scrape: {k} twice"
        out[k] = (typ, value)

    def parse(m, stat, name, typ, **labels):
        if stat in m:
            emit(name, typ, float(m[stat]), **labels)

    emit("memcached_version", GAUGE, 1.0, version=glob.get("version", ""))
    for op in OPS:
        parse(glob, op + "_hits", "memcached_commands_total", COUNTER, command=op, status="hit")
        parse(glob, op + "_misses", "memcached_commands_total", COUNTER, command=op, status="miss")
    parse(glob, "cas_badval", "memcached_commands_total", COUNTER, command="cas", status="badval")
    parse(glob, "cmd_flush", "memcached_commands_total", COUNTER, command="flush", status="hit")
    if "cmd_set" in glob and all(s in glob for s in ("cas_misses", "cas_hits", "cas_badval")):
        cas = sum(float(glob[s]) for s in ("cas_misses", "cas_hits", "cas_badval"))
        emit("memcached_commands_total", COUNTER, float(glob["cmd_set"]) - cas, command="set", status="hit")
    for stat, name in TIMEVAL:
        if stat in glob:
            sec, usec = glob[stat].split(".")
            emit(name, COUNTER, float(sec) + float(usec) / 1e6)
    for stat, name, typ in GLOBAL:
        parse(glob, stat, name, typ)
    for slab, u in items.items():
        s = str(slab)
        for stat, name, typ in ITEMS:
            parse(u, stat, name, typ, slab=s)
        for stat, lru in LRU_HITS:
            parse(u, stat, "memcached_slab_lru_hits_total", COUNTER, slab=s, lru=lru)
    for slab, v in slabs.items():
        s = str(slab)
        for op in OPS:
            parse(v, op + "_hits", "memcached_slab_commands_total", COUNTER, slab=s, command=op, status="hit")
        parse(v, "cas_badval", "memcached_slab_commands_total", COUNTER, slab=s, command="cas", status="badval")
        if "cmd_set" in v and "cas_hits" in v and "cas_badval" in v:
            emit("memcached_slab_commands_total", COUNTER,
                 float(v["cmd_set"]) - float(v["cas_hits"]) - float(v["cas_badval"]), slab=s, command="set",
                 status="hit")
        for stat, name, typ in SLABS:
            if stat == "mem_requested" and key(name, slab=s) in out:
                continue
            parse(v, stat, name, typ, slab=s)
    parse(settings, "maxconns", "memcached_max_connections", GAUGE)
    if settings.get("lru_crawler") == "yes":
        for stat, name, how in SETTINGS_CRAWLER:
            if stat in settings:
                v = settings[stat]
                emit(name, GAUGE, (1.0 if v == "yes" else 0.0) if how == "bool" else float(v))
    emit("memcached_up", GAUGE, 1.0)
    return out


# --- a Prometheus text page read back -------------------------------------------------

SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_page(text):
    """({(name, labels): value}, {family: type}) of a text-format page."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            types[name] = typ
            continue
        if not line or line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        assert m, line
        labels = dict(LABEL_RE.findall(m.group(2) or ""))
        samples[key(m.group(1), **labels)] = float(m.group(3))
    return samples, types


def families(series):
    return {name for name, _ in series}
