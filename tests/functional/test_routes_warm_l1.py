"""The warm_up and l1l2 routes over the wire, against real memcacheds
(README "Routes"): a cold pool filled from the warm one on its misses (the
fill's TTL, a set not overwritten by a fill), and this ithaca's store as an
L1 in front of a pool (served from L1, invalidated by writes through it, its
TTL cap)."""

import time

import pytest

import mcwire
from test_ascii_diff import SERVER_ARGS
from test_router import addr, stats, wait_for
from test_routes import direct_get, direct_ttl, route_stats


def pools_yaml(pools, route):
    """`pools`: {name: (protocol, [servers])}; `route`: YAML text."""
    lines = ["pools:"]
    for name, (protocol, servers) in pools.items():
        lines.append(f"  {name}:")
        lines.append("    servers: [" + ", ".join(f'"{s}"' for s in servers) + "]")
        lines.append(f"    protocol: {protocol}")
        lines.append("    timeout: 5s")
    lines.append(f"route: {route}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def two(memcached_factory):
    return [memcached_factory(args=SERVER_ARGS) for _ in range(2)]


def direct_set(server, key, value, exptime=0):
    with mcwire.Conn(server.host, server.port) as c:
        assert c.call(b"set %s 0 %d %d\r\n%s\r\n" % (key, exptime, len(value), value)) == b"STORED\r\n"


def node_stat(conn, label, name):
    st = route_stats(conn)
    node = [k for k, v in st.items() if v == label]
    assert node, st
    return int(st.get(node[0] + ":" + name, 0))  # a counter still at 0 is not listed


def server_stat(server, name):
    with mcwire.Conn(server.host, server.port) as c:
        return int(stats(c)[name])


def warm_up(ithaca_factory, cold, warm, exptime, warm_protocol="meta"):
    return ithaca_factory(config_text=pools_yaml(
        {"cold": ("ascii", [addr(cold)]), "warm": (warm_protocol, [addr(warm)])},
        f"{{type: warm_up, name: w, cold: pool:cold, warm: pool:warm, exptime: {exptime}}}"))


@pytest.mark.parametrize("warm_protocol", ["ascii", "meta"])
def test_warm_up_fills_the_cold_pool_to_the_warm_hit_rate(ithaca_factory, two, warm_protocol):
    cold, warm = two
    keys = [b"k%d" % i for i in range(40)]
    for k in keys:
        direct_set(warm, k, b"v-" + k)
    server = warm_up(ithaca_factory, cold, warm, "0", warm_protocol)
    with mcwire.Conn(*server.address) as conn:
        # First pass: every key misses cold, is answered from warm, and filled.
        for k in keys:
            assert conn.call(b"get " + k + b"\r\n") == b"VALUE %s 0 %d\r\nv-%s\r\nEND\r\n" % (k, len(k) + 2, k)
        assert server_stat(cold, "get_misses") == len(keys)
        wait_for(lambda: all(direct_get(cold, k) == b"v-" + k for k in keys), what="the cold pool filled")
        assert node_stat(conn, "warm_up w", "warm_fills") == len(keys)
        # Second pass: every key hits cold (warm is no longer read).
        warm_gets = server_stat(warm, "cmd_get")
        hits = server_stat(cold, "get_hits")
        for k in keys:
            assert conn.call(b"get " + k + b"\r\n").startswith(b"VALUE " + k + b" ")
        assert server_stat(cold, "get_hits") - hits == len(keys)
        assert server_stat(warm, "cmd_get") == warm_gets
        # Writes go to cold only.
        assert conn.call(b"set k1 0 0 1\r\nn\r\n") == b"STORED\r\n"
        assert direct_get(cold, b"k1") == b"n" and direct_get(warm, b"k1") == b"v-k1"


def test_warm_up_multi_key_get_merges_and_fills_each_missing_key(ithaca_factory, two):
    cold, warm = two
    direct_set(cold, b"a", b"cold-a")
    direct_set(warm, b"a", b"warm-a")
    direct_set(warm, b"b", b"warm-b")
    direct_set(warm, b"d", b"warm-d")
    server = warm_up(ithaca_factory, cold, warm, "100s")
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"get a b c d\r\n") == (
            b"VALUE a 0 6\r\ncold-a\r\nVALUE b 0 6\r\nwarm-b\r\nVALUE d 0 6\r\nwarm-d\r\nEND\r\n")
        wait_for(lambda: direct_get(cold, b"b") == b"warm-b" and direct_get(cold, b"d") == b"warm-d",
                 what="b and d filled")
        assert direct_get(cold, b"a") == b"cold-a" and direct_get(cold, b"c") is None
        assert node_stat(conn, "warm_up w", "warm_fills") == 2


def test_warm_up_fill_ttl_is_the_exptime_or_what_warm_has_left(ithaca_factory, two, memcached_factory):
    cold, warm = two
    direct_set(warm, b"long", b"x", exptime=500)
    direct_set(warm, b"forever", b"x")
    far = 40 * 24 * 3600  # past 30 days: an absolute time on the wire
    direct_set(warm, b"far", b"x", exptime=int(time.time()) + far)
    # exptime set: every fill gets it.
    server = warm_up(ithaca_factory, cold, warm, "100s")
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"get long forever\r\n").count(b"VALUE") == 2
    wait_for(lambda: direct_get(cold, b"long") and direct_get(cold, b"forever"), what="fills")
    assert 90 < direct_ttl(cold, b"long") <= 100
    assert 90 < direct_ttl(cold, b"forever") <= 100
    # exptime 0 over a meta warm pool: the TTL the warm item has left.
    cold2 = memcached_factory(args=SERVER_ARGS)
    server = warm_up(ithaca_factory, cold2, warm, "0")
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"get long\r\n") == b"VALUE long 0 1\r\nx\r\nEND\r\n"
        assert conn.call(b"get forever\r\n") == b"VALUE forever 0 1\r\nx\r\nEND\r\n"
        assert conn.call(b"get far\r\n") == b"VALUE far 0 1\r\nx\r\nEND\r\n"
    wait_for(lambda: direct_get(cold2, b"long") and direct_get(cold2, b"forever") and direct_get(cold2, b"far"),
             what="fills")
    assert 490 < direct_ttl(cold2, b"long") <= 500
    # memcached keeps a coarse clock (it ticks once a second, and turns an
    # absolute time into its own relative one), so the TTL it reports for
    # an absolute time may be a second or two past the exact figure.
    assert far - 20 < direct_ttl(cold2, b"far") <= far + 2
    assert direct_ttl(cold2, b"forever") == -1
    # exptime 0 over an ascii warm pool: a get and a metaget (mg KEY t,
    # which memcached 1.6 answers on its ascii port) tell the TTL left.
    cold3 = memcached_factory(args=SERVER_ARGS)
    server = warm_up(ithaca_factory, cold3, warm, "0", warm_protocol="ascii")
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"get long forever nothing\r\n") == (
            b"VALUE long 0 1\r\nx\r\nVALUE forever 0 1\r\nx\r\nEND\r\n")
    wait_for(lambda: direct_get(cold3, b"long") and direct_get(cold3, b"forever"), what="fills")
    assert 480 < direct_ttl(cold3, b"long") <= 500
    assert direct_ttl(cold3, b"forever") == -1
    assert direct_get(cold3, b"nothing") is None


def test_warm_up_fill_without_expiry_where_warm_cannot_tell_the_ttl(ithaca_factory, memcached_factory, tmp_path):
    """A warm server without meta commands (yrmcds answers ERROR to mg): the
    TTL cannot be asked, the fill keeps no expiry (ithaca's fallback), and
    the client still gets warm's value."""
    from conftest import HOST, Server, free_port
    from test_replication import YRMCDS
    d = tmp_path / "yrmcds"
    d.mkdir()
    port = free_port()
    (d / "yrmcds.conf").write_text(f"""virtual_ip = 127.0.0.1
port = {port}
repl_port = {free_port()}
temp_dir = "{d}"
log.file = "{d}/yrmcds.log"
buckets = 10000
memory_limit = 64M
workers = 1
counter.enable = false
""")
    warm = Server("yrmcds", [YRMCDS, "-f", str(d / "yrmcds.conf")])
    warm.port = port
    try:
        assert warm.wait_accepting(10), warm.describe()
        with mcwire.Conn(HOST, port) as c:
            assert c.call(b"set long 0 500 1\r\nx\r\n") == b"STORED\r\n"
            assert c.call(b"mg long t\r\n") == b"ERROR\r\n"  # no meta: the TTL cannot be asked
        cold = memcached_factory(args=SERVER_ARGS)
        server = warm_up(ithaca_factory, cold, warm, "0", warm_protocol="ascii")
        with mcwire.Conn(*server.address) as conn:
            assert conn.call(b"get long\r\n") == b"VALUE long 0 1\r\nx\r\nEND\r\n"
        wait_for(lambda: direct_get(cold, b"long"), what="fill")
        assert direct_ttl(cold, b"long") == -1
    finally:
        warm.stop()


def test_warm_up_fill_does_not_overwrite_a_concurrent_set(ithaca_factory, two):
    cold, warm = two
    direct_set(warm, b"k", b"old")
    server = warm_up(ithaca_factory, cold, warm, "0")
    with mcwire.Conn(*server.address) as conn:
        # The set reaches cold while the get is still reading warm: the
        # fill that follows is an add, refused by cold.
        conn.send(b"get k\r\nset k 0 0 3\r\nnew\r\n")
        assert conn.read_reply() == b"VALUE k 0 3\r\nold\r\nEND\r\n"
        assert conn.read_reply() == b"STORED\r\n"
        wait_for(lambda: node_stat(conn, "warm_up w", "warm_fills") == 1, what="the fill sent")
        wait_for(lambda: server_stat(cold, "cmd_set") == 2, what="the fill reached cold")
        assert direct_get(cold, b"k") == b"new"
        assert conn.call(b"get k\r\n") == b"VALUE k 0 3\r\nnew\r\nEND\r\n"


def l1l2(ithaca_factory, l2, exptime):
    return ithaca_factory(config_text=pools_yaml(
        {"l2": ("ascii", [addr(l2)])}, f"{{type: l1l2, name: l1, l2: pool:l2, exptime: {exptime}}}"))


def test_l1l2_serves_from_l1_until_its_ttl_cap(ithaca_factory, two):
    l2 = two[0]
    direct_set(l2, b"a", b"one")
    direct_set(l2, b"b", b"bee")
    server = l1l2(ithaca_factory, l2, "2s")
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"get a\r\n") == b"VALUE a 0 3\r\none\r\nEND\r\n"
        gets = server_stat(l2, "cmd_get")
        # Changed behind ithaca's back: L1 still answers, L2 is not asked.
        direct_set(l2, b"a", b"two")
        assert conn.call(b"get a\r\n") == b"VALUE a 0 3\r\none\r\nEND\r\n"
        assert server_stat(l2, "cmd_get") == gets
        # A multi-key get: a from L1, b and the miss from L2.
        assert conn.call(b"get a b nope\r\n") == b"VALUE a 0 3\r\none\r\nVALUE b 0 3\r\nbee\r\nEND\r\n"
        assert server_stat(l2, "cmd_get") == gets + 2
        assert node_stat(conn, "l1l2 l1", "l1_hits") == 2
        # Past the cap L1's copy is gone: L2's value.
        wait_for(lambda: conn.call(b"get a\r\n") == b"VALUE a 0 3\r\ntwo\r\nEND\r\n", timeout=5,
                 what="L1's copy expired")


def test_l1l2_writes_and_deletes_through_it_invalidate_l1(ithaca_factory, two):
    l2 = two[0]
    server = l1l2(ithaca_factory, l2, "60s")
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"set k 0 0 1\r\n1\r\n") == b"STORED\r\n"
        assert conn.call(b"get k\r\n") == b"VALUE k 0 1\r\n1\r\nEND\r\n"  # now in L1
        assert conn.call(b"set k 0 0 1\r\n2\r\n") == b"STORED\r\n"
        assert conn.call(b"get k\r\n") == b"VALUE k 0 1\r\n2\r\nEND\r\n"
        assert conn.call(b"incr k 5\r\n") == b"7\r\n"
        assert conn.call(b"get k\r\n") == b"VALUE k 0 1\r\n7\r\nEND\r\n"
        assert conn.call(b"append k 0 0 1\r\nx\r\n") == b"STORED\r\n"
        assert conn.call(b"get k\r\n") == b"VALUE k 0 2\r\n7x\r\nEND\r\n"
        assert conn.call(b"delete k\r\n") == b"DELETED\r\n"
        assert conn.call(b"get k\r\n") == b"END\r\n"
        assert direct_get(l2, b"k") is None
        # A meta write through it too.
        assert conn.call(b"set m 0 0 1\r\na\r\n") == b"STORED\r\n"
        assert conn.call(b"get m\r\n") == b"VALUE m 0 1\r\na\r\nEND\r\n"
        assert conn.call(b"ms m 1\r\nb\r\n") == b"HD\r\n"
        assert conn.call(b"get m\r\n") == b"VALUE m 0 1\r\nb\r\nEND\r\n"
        assert node_stat(conn, "l1l2 l1", "l1_hits") == 0


def test_l1l2_a_get_racing_a_write_keeps_nothing_in_l1(ithaca_factory, two):
    l2 = two[0]
    direct_set(l2, b"k", b"old")
    server = l1l2(ithaca_factory, l2, "60s")
    with mcwire.Conn(*server.address) as conn:
        # The get reads L2 while the set behind it removes k from L1: its
        # reply (the old value) must not be kept in L1 after the set.
        conn.send(b"get k\r\nset k 0 0 3\r\nnew\r\n")
        assert conn.read_reply() == b"VALUE k 0 3\r\nold\r\nEND\r\n"
        assert conn.read_reply() == b"STORED\r\n"
        assert conn.call(b"get k\r\n") == b"VALUE k 0 3\r\nnew\r\nEND\r\n"
        assert conn.call(b"get k\r\n") == b"VALUE k 0 3\r\nnew\r\nEND\r\n"
        assert node_stat(conn, "l1l2 l1", "l1_hits") == 1


def test_l1l2_binary_get_is_served_from_l1(ithaca_factory, two):
    l2 = two[0]
    direct_set(l2, b"bk", b"val")
    server = l1l2(ithaca_factory, l2, "60s")
    with mcwire.Conn(*server.address) as conn:
        for _ in range(2):
            conn.send(mcwire.G(b"bk"))
            hdr = conn.read_exact(24)
            body = conn.read_exact(mcwire.unpack_header(hdr)["bodylen"])
            assert body.endswith(b"val")
    with mcwire.Conn(*server.address) as conn:  # (a connection speaks one protocol)
        assert node_stat(conn, "l1l2 l1", "l1_hits") == 1


@pytest.mark.parametrize("warm_protocol", ["ascii", "meta"])
def test_warm_up_reads_a_meta_clients_mg_from_warm_and_fills(ithaca_factory, two, warm_protocol):
    cold, warm = two
    direct_set(warm, b"m", b"warm!", exptime=300)
    server = warm_up(ithaca_factory, cold, warm, "0", warm_protocol)
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"mg m v\r\n") == b"VA 5\r\nwarm!\r\n"
        assert conn.call(b"mg none v\r\n") == b"EN\r\n"
        wait_for(lambda: direct_get(cold, b"m") == b"warm!", what="the fill")
        # the TTL it had left (an ascii warm pool is asked with a metaget)
        ttl = direct_ttl(cold, b"m")
        assert 290 < ttl <= 300
        hits = server_stat(cold, "get_hits")
        assert conn.call(b"mg m v\r\n") == b"VA 5\r\nwarm!\r\n"
        assert server_stat(cold, "get_hits") == hits + 1
        assert node_stat(conn, "warm_up w", "warm_fills") == 1


def test_multi_key_gets_over_pools_of_several_servers(ithaca_factory, memcached_factory):
    """A child's keys spread over several servers: the routes' key maps stay
    theirs (the pool's per-server grouping is its own)."""
    cold = [memcached_factory(args=SERVER_ARGS) for _ in range(2)]
    warm = [memcached_factory(args=SERVER_ARGS) for _ in range(2)]
    keys = [b"key%d" % i for i in range(12)]
    server = ithaca_factory(config_text=pools_yaml(
        {"cold": ("ascii", [addr(s) for s in cold]), "warm": ("ascii", [addr(s) for s in warm])},
        "{type: warm_up, name: w, cold: {type: l1l2, name: l1, l2: pool:cold, exptime: 60s}, "
        "warm: pool:warm, exptime: 100s}"))
    with mcwire.Conn(*server.address) as conn:
        # Via ithaca's warm pool (a direct set would need the placement).
        warm_only = ithaca_factory(config_text=pools_yaml(
            {"warm": ("ascii", [addr(s) for s in warm])}, "pool:warm"))
        with mcwire.Conn(*warm_only.address) as w:
            for k in keys[::2]:
                assert w.call(b"set %s 0 0 %d\r\nw-%s\r\n" % (k, len(k) + 2, k)) == b"STORED\r\n"
        expect = b"".join(b"VALUE %s 0 %d\r\nw-%s\r\n" % (k, len(k) + 2, k) for k in keys[::2]) + b"END\r\n"
        line = b"get " + b" ".join(keys) + b"\r\n"
        assert conn.call(line) == expect  # from warm
        wait_for(lambda: node_stat(conn, "warm_up w", "warm_fills") == 6, what="fills sent")
        wait_for(lambda: conn.call(line) == expect and node_stat(conn, "l1l2 l1", "l1_hits") >= 6,
                 what="cold (then L1) answering")


@pytest.mark.parametrize("route", [
    "{type: miss_failover, children: [pool:a, pool:b]}",
    '{type: prefix, prefixes: {"p": pool:a}, default: pool:b}',
])
def test_split_multi_key_gets_keep_key_order_over_several_servers(ithaca_factory, memcached_factory, route):
    a = [memcached_factory(args=SERVER_ARGS) for _ in range(2)]
    b = [memcached_factory(args=SERVER_ARGS) for _ in range(2)]
    server = ithaca_factory(config_text=pools_yaml(
        {"a": ("ascii", [addr(s) for s in a]), "b": ("ascii", [addr(s) for s in b])}, route))
    keys = [b"p%d" % i for i in range(8)] + [b"q%d" % i for i in range(8)]
    with mcwire.Conn(*server.address) as conn:
        for k in keys:
            assert conn.call(b"set %s 0 0 %d\r\nv-%s\r\n" % (k, len(k) + 2, k)) == b"STORED\r\n"
        mixed = [k for pair in zip(keys[:8], keys[8:]) for k in pair]
        expect = b"".join(b"VALUE %s 0 %d\r\nv-%s\r\n" % (k, len(k) + 2, k) for k in mixed) + b"END\r\n"
        assert conn.call(b"get " + b" ".join(mixed) + b"\r\n") == expect


@pytest.mark.parametrize("warm_protocol", ["ascii", "meta"])
def test_warm_up_metaget_answers_from_cold_then_warm(ithaca_factory, two, warm_protocol):
    # mcrouter's WarmUpRoute: a metaget is cold's answer, warm's when cold
    # misses (nothing is filled by it).
    cold, warm = two
    router = warm_up(ithaca_factory, cold, warm, 0, warm_protocol)

    def metaget(c, key):
        c.send(b"metaget %s\r\n" % key)
        first = c.read_line()
        return first if first == b"END\r\n" else first + c.read_line()

    with mcwire.Conn(router.host, router.port) as c:
        assert metaget(c, b"mk") == b"END\r\n"
        before = int(time.time())
        direct_set(warm, b"mk", b"w", exptime=100)
        reply = metaget(c, b"mk")
        exptime = int(reply.split(b"exptime: ")[1].split(b";")[0])
        assert before + 99 <= exptime <= int(time.time()) + 101, reply
        assert direct_get(cold, b"mk") is None  # a metaget fills nothing
        direct_set(cold, b"mk", b"c", exptime=0)
        assert metaget(c, b"mk") == (b"META mk age: unknown; exptime: 0; from: unknown; is_transient: 0\r\n"
                                     b"END\r\n")


@pytest.mark.parametrize("warm_protocol", ["ascii", "meta"])
def test_warm_up_lease_get_reads_warm_on_a_miss_and_fills_cold_with_the_token(ithaca_factory, two, warm_protocol):
    """mcrouter's test_warmup_lease_get: a lease-get cold misses (a token)
    reads warm; a hit there is the client's value and fills cold with a
    lease-set under cold's token and warm's TTL; cold's hits and hot misses
    are answered by cold alone, and a key warm lacks gets cold's token."""
    from test_leases import lease_get, lease_set
    cold, warm = two
    server = warm_up(ithaca_factory, cold, warm, "0", warm_protocol)
    with mcwire.Conn(*server.address) as conn:
        kind, token, _, data = lease_get(conn, b"key")
        assert kind == "lease" and token > 1 and data == b""
        assert lease_get(conn, b"key")[:2] == ("lease", 1)  # cold's hot miss
        assert lease_set(conn, b"key", token, b"value") == b"STORED\r\n"
        assert lease_get(conn, b"key") == ("value", 0, b"value")
        assert direct_get(cold, b"key") == b"value" and direct_get(warm, b"key") is None
        direct_set(warm, b"key2", b"value2", exptime=1000)
        assert lease_get(conn, b"key2") == ("value", 0, b"value2")
        wait_for(lambda: direct_get(cold, b"key2") == b"value2", what="the lease-set fill")
        assert 980 < direct_ttl(cold, b"key2") <= 1000
        assert node_stat(conn, "warm_up w", "warm_fills") == 1
        hits = server_stat(warm, "get_hits")
        assert lease_get(conn, b"key2") == ("value", 0, b"value2")  # cold's hit now
        assert server_stat(warm, "get_hits") == hits
    with mcwire.Conn(cold.host, cold.port) as c:
        assert c.call(b"mg key2 v\r\n") == b"VA 6\r\nvalue2\r\n"


def test_warm_up_lease_get_fill_with_a_configured_exptime(ithaca_factory, two):
    from test_leases import lease_get
    cold, warm = two
    direct_set(warm, b"k", b"v", exptime=5000)
    server = warm_up(ithaca_factory, cold, warm, "100s", "ascii")
    with mcwire.Conn(*server.address) as conn:
        assert lease_get(conn, b"k") == ("value", 0, b"v")
    wait_for(lambda: direct_get(cold, b"k") == b"v", what="the lease-set fill")
    assert 90 < direct_ttl(cold, b"k") <= 100
