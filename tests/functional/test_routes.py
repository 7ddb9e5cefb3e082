"""The route tree's kinds over the wire, each against real memcacheds
(README "Routes"): selectors (prefix, operation, hash, random), failover and
the gutter, miss_failover, the all_* family, shadow, modify_exptime,
rate_limit, error and null, named routes, and `stats routes`.

A "dead" pool is a port nothing listens on: its server fails fast (connect
refused), as a killed memcached does."""

import time
import zlib

import pytest

import mcwire
from conftest import free_port
from test_ascii_diff import SERVER_ARGS
from test_router import addr, stats, wait_for


def routes_yaml(pools, route, named=None):
    """A config with `pools` ({name: [servers]}) and `route` (YAML text)."""
    lines = ["pools:"]
    for name, servers in pools.items():
        lines.append(f"  {name}:")
        lines.append("    servers: [" + ", ".join(f'"{s}"' for s in servers) + "]")
        lines.append("    protocol: ascii")
        lines.append("    timeout: 5s")
    if named:
        lines.append("routes:")
        for name, text in named.items():
            lines.append(f"  {name}: {text}")
    lines.append(f"route: {route}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def three(memcached_factory):
    return [memcached_factory(args=SERVER_ARGS) for _ in range(3)]


def dead_address():
    return f"127.0.0.1:{free_port()}"


def direct_get(server, key):
    with mcwire.Conn(server.host, server.port) as c:
        values = mcwire.parse_values(c.call(b"get " + key + b"\r\n"))
    return values[0][2] if values else None


def direct_ttl(server, key):
    with mcwire.Conn(server.host, server.port) as c:
        line = c.call(b"mg " + key + b" t\r\n")
    assert line.startswith(b"HD"), line
    return int(line.split(b" t")[1].split()[0])


def route_stats(conn):
    return stats(conn, "routes")


def test_prefix_picks_the_longest_prefix_and_splits_a_multiget(ithaca_factory, three):
    a, b, c = three
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(a)], "b": [addr(b)], "c": [addr(c)]},
        '{type: prefix, prefixes: {"u:": pool:a, "u:vip:": pool:b}, default: pool:c}'))
    with mcwire.Conn(*server.address) as conn:
        for key in (b"u:1", b"u:vip:1", b"other"):
            assert conn.call(b"set " + key + b" 0 0 1\r\nx\r\n") == b"STORED\r\n"
        assert direct_get(a, b"u:1") == b"x" and direct_get(a, b"u:vip:1") is None
        assert direct_get(b, b"u:vip:1") == b"x" and direct_get(b, b"u:1") is None
        assert direct_get(c, b"other") == b"x"
        # One get line whose keys live in three pools: one reply, in key order.
        assert conn.call(b"get other u:vip:1 missing u:1\r\n") == (
            b"VALUE other 0 1\r\nx\r\nVALUE u:vip:1 0 1\r\nx\r\nVALUE u:1 0 1\r\nx\r\nEND\r\n")
        assert conn.call(b"gets u:1\r\n").startswith(b"VALUE u:1 0 1 ")


def test_prefix_without_default_refuses_other_keys(ithaca_factory, three):
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(three[0])]}, '{type: prefix, prefixes: {"u:": pool:a}}'))
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"set u:1 0 0 1\r\nx\r\n") == b"STORED\r\n"
        assert conn.call(b"get zz\r\n").startswith(b"SERVER_ERROR no route for this key")
        assert conn.call(b"version\r\n").startswith(b"VERSION ")


def test_operation_sends_each_class_to_its_child(ithaca_factory, three):
    a, b, _ = three
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(a)], "b": [addr(b)]},
        "{type: operation, get: pool:a, set: pool:b, default: pool:a}"))
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"
        assert direct_get(b, b"k") == b"v" and direct_get(a, b"k") is None
        assert conn.call(b"get k\r\n") == b"END\r\n"  # gets read pool a
        with mcwire.Conn(a.host, a.port) as ca:
            assert ca.call(b"set k 0 0 2\r\naa\r\n") == b"STORED\r\n"
        assert conn.call(b"get k\r\n") == b"VALUE k 0 2\r\naa\r\nEND\r\n"
        assert conn.call(b"delete k\r\n") == b"DELETED\r\n"  # the default: pool a
        assert direct_get(a, b"k") is None and direct_get(b, b"k") == b"v"


def test_failover_moves_on_from_a_dead_pool_and_counts_it(ithaca_factory, three):
    a = three[0]
    server = ithaca_factory(config_text=routes_yaml(
        {"dead": [dead_address()], "a": [addr(a)]},
        "{type: failover, name: fo, children: [pool:dead, pool:a]}"))
    with mcwire.Conn(*server.address) as conn:
        for i in range(20):
            assert conn.call(b"set k%d 0 0 1\r\nv\r\n" % i) == b"STORED\r\n"
        assert conn.call(b"get k1 k2 k19\r\n").count(b"VALUE") == 3
        st = route_stats(conn)
        fo = [k for k, v in st.items() if v == "failover fo"]
        assert fo, st
        assert int(st[fo[0] + ":requests"]) == 21
        assert int(st[fo[0] + ":failovers"]) == 21


def test_failover_errors_not_listed_do_not_fail_over(ithaca_factory, three):
    server = ithaca_factory(config_text=routes_yaml(
        {"dead": [dead_address()], "a": [addr(three[0])]},
        "{type: failover, children: [pool:dead, pool:a], failover_errors: [timeout]}"))
    with mcwire.Conn(*server.address) as conn:
        # Connection refused is connect_error (then tko), not a timeout.
        assert conn.call(b"set k 0 0 1\r\nv\r\n").startswith(b"SERVER_ERROR")
        assert direct_get(three[0], b"k") is None


def test_failover_limit_caps_the_share_that_fails_over(ithaca_factory, three):
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(three[0])]},
        "{type: failover, children: [{type: error, result: mc_res_busy}, pool:a], "
        "failover_limit: {rate: 0.5, burst: 4}}"))
    with mcwire.Conn(*server.address) as conn:
        replies = [conn.call(b"set k%d 0 0 1\r\nv\r\n" % i) for i in range(40)]
    stored = sum(r == b"STORED\r\n" for r in replies)
    # 4 in the bucket, then one token per two requests: about 4 + 40/2.
    assert 20 <= stored <= 26, stored
    # Refused failovers answer the error that triggered them.
    assert all(r in (b"STORED\r\n", b"SERVER_ERROR 307 busy\r\n") for r in replies), replies


def test_failover_limit_takes_no_token_past_a_server_marked_down(ithaca_factory, three):
    """mcrouter's rule: a failover from a server marked down (TKO) is not
    counted against failover_limit, so a dead pool in the middle does not
    halve what the limit lets through."""
    server = ithaca_factory(config_text=routes_yaml(
        {"dead": [dead_address()], "a": [addr(three[0])]},
        "{type: failover, children: [{type: error, result: mc_res_busy}, pool:dead, pool:a], "
        "failover_limit: {rate: 0.5, burst: 4}}"))
    with mcwire.Conn(*server.address) as conn:
        replies = [conn.call(b"set k%d 0 0 1\r\nv\r\n" % i) for i in range(40)]
    stored = sum(r == b"STORED\r\n" for r in replies)
    # Two tokens a request until the dead server is marked down (about
    # 12 of 40 stored if it were never), then one, as with no dead pool.
    assert 18 <= stored <= 26, stored


def test_gutter_caps_the_ttl_of_a_lease_set(ithaca_factory, three):
    """mcrouter's FailoverWithExptimeRoute caps every write that carries an
    exptime, lease-sets included (test_mcrouter_serialized's
    TestLeaseGetFailover): the lease filled in the gutter expires soon."""
    from test_leases import lease_get
    gutter = three[0]
    server = ithaca_factory(config_text=routes_yaml(
        {"main": [dead_address()], "gutter": [addr(gutter)]},
        "{type: failover_exptime, normal: pool:main, failover: [pool:gutter], exptime: 3s}"))
    with mcwire.Conn(*server.address) as conn:
        kind, token, _flags, _data = lease_get(conn, b"lk")
        assert kind == "lease" and token > 1
        assert conn.call(b"lease-set lk %d 0 0 1\r\nv\r\n" % token) == b"STORED\r\n"
    assert direct_get(gutter, b"lk") == b"v"
    assert 0 < direct_ttl(gutter, b"lk") <= 3


def test_gutter_caps_the_ttl_of_writes_and_takes_no_deletes(ithaca_factory, three):
    gutter = three[0]
    server = ithaca_factory(config_text=routes_yaml(
        {"main": [dead_address()], "gutter": [addr(gutter)]},
        "{type: failover_exptime, name: g, normal: pool:main, failover: [pool:gutter], exptime: 7s}"))
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"set forever 0 0 1\r\nv\r\n") == b"STORED\r\n"
        assert conn.call(b"set long 0 3600 1\r\nv\r\n") == b"STORED\r\n"
        assert conn.call(b"set short 0 3 1\r\nv\r\n") == b"STORED\r\n"
        assert 0 < direct_ttl(gutter, b"forever") <= 7
        assert 0 < direct_ttl(gutter, b"long") <= 7
        assert 0 < direct_ttl(gutter, b"short") <= 3
        assert conn.call(b"get forever\r\n") == b"VALUE forever 0 1\r\nv\r\nEND\r\n"
        # A delete is not sent to the gutter: its value expires instead.
        assert conn.call(b"delete forever\r\n").startswith(b"SERVER_ERROR")
        assert direct_get(gutter, b"forever") == b"v"
        st = route_stats(conn)
        g = [k for k, v in st.items() if v == "failover_exptime g"][0]
        assert int(st[g + ":gutter_writes"]) == 3


def test_miss_failover_reads_on_and_merges_missing_keys(ithaca_factory, three):
    a, b, _ = three
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(a)], "b": [addr(b)]}, "{type: miss_failover, children: [pool:a, pool:b]}"))
    with mcwire.Conn(a.host, a.port) as ca, mcwire.Conn(b.host, b.port) as cb:
        assert ca.call(b"set both 0 0 1\r\nA\r\n") == b"STORED\r\n"
        assert cb.call(b"set both 0 0 1\r\nB\r\n") == b"STORED\r\n"
        assert cb.call(b"set onb 0 0 1\r\nB\r\n") == b"STORED\r\n"
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"get onb\r\n") == b"VALUE onb 0 1\r\nB\r\nEND\r\n"
        assert conn.call(b"get both\r\n") == b"VALUE both 0 1\r\nA\r\nEND\r\n"
        assert conn.call(b"get nowhere onb both\r\n") == (
            b"VALUE onb 0 1\r\nB\r\nVALUE both 0 1\r\nA\r\nEND\r\n")
        assert conn.call(b"mg onb v\r\n") == b"VA 1\r\nB\r\n"
        # A write goes to the first child only.
        assert conn.call(b"set w 0 0 1\r\nW\r\n") == b"STORED\r\n"
    assert direct_get(a, b"w") == b"W" and direct_get(b, b"w") is None


def test_all_sync_writes_everywhere_and_answers_the_worst(ithaca_factory, three):
    a, b, c = three
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(a)], "b": [addr(b)], "c": [addr(c)]},
        "{type: all_sync, children: [pool:a, pool:b, pool:c]}"))
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"
        assert [direct_get(s, b"k") for s in three] == [b"v"] * 3
        with mcwire.Conn(b.host, b.port) as cb:
            assert cb.call(b"set taken 0 0 1\r\nb\r\n") == b"STORED\r\n"
        # add: STORED on a and c, NOT_STORED on b: the worst.
        assert conn.call(b"add taken 0 0 1\r\nn\r\n") == b"NOT_STORED\r\n"
        assert direct_get(a, b"taken") == b"n" and direct_get(b, b"taken") == b"b"
        assert conn.call(b"delete k\r\n") == b"DELETED\r\n"
        assert [direct_get(s, b"k") for s in three] == [None] * 3


def test_all_async_answers_at_once_and_still_writes_everywhere(ithaca_factory, three):
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(three[0])], "b": [addr(three[1])]}, "{type: all_async, children: [pool:a, pool:b]}"))
    with mcwire.Conn(*server.address) as conn:
        # mcrouter's AllAsyncRoute answers as the null route does.
        assert conn.call(b"set k 0 0 1\r\nv\r\n") == b"NOT_STORED\r\n"
        assert conn.call(b"get k\r\n") == b"END\r\n"
        wait_for(lambda: direct_get(three[0], b"k") == b"v" and direct_get(three[1], b"k") == b"v",
                 what="the async writes")
        st = route_stats(conn)
        assert int(st["async_sent"]) >= 3 and int(st["async_dropped"]) == 0


def test_all_initial_answers_the_first_and_copies_to_the_rest(ithaca_factory, three):
    a, b, _ = three
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(a)], "b": [addr(b)]}, "{type: all_initial, children: [pool:a, pool:b]}"))
    with mcwire.Conn(b.host, b.port) as cb:
        assert cb.call(b"set onb 0 0 1\r\nB\r\n") == b"STORED\r\n"
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"get onb\r\n") == b"END\r\n"  # the first child's reply
        assert conn.call(b"set k 0 0 1\r\nv\r\n") == b"STORED\r\n"
        assert direct_get(a, b"k") == b"v"
        wait_for(lambda: direct_get(b, b"k") == b"v", what="the copy to the second child")


def test_all_majority_and_all_fastest_with_a_dead_child(ithaca_factory, three):
    a, b, _ = three
    dead = dead_address()
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(a)], "b": [addr(b)], "dead": [dead], "dead2": [dead_address()]},
        '{type: prefix, prefixes: {"m:": {type: all_majority, children: [pool:a, pool:b, pool:dead]},'
        ' "w:": {type: all_majority, children: [pool:a, pool:dead, pool:dead2]},'
        ' "f:": {type: all_fastest, children: [pool:dead, pool:a, pool:b]}}}'))
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"set m:1 0 0 1\r\nv\r\n") == b"STORED\r\n"
        assert direct_get(a, b"m:1") == b"v"
        wait_for(lambda: direct_get(b, b"m:1") == b"v", what="the straggler's write")
        # Two of three children fail: the majority's reply is the failure.
        assert conn.call(b"set w:1 0 0 1\r\nv\r\n").startswith(b"SERVER_ERROR")
        assert conn.call(b"set f:1 0 0 1\r\nv\r\n") == b"STORED\r\n"
        wait_for(lambda: direct_get(a, b"f:1") == b"v" and direct_get(b, b"f:1") == b"v",
                 what="every live child's write")


def test_shadow_copies_the_keys_of_its_fraction(ithaca_factory, three):
    main, shadow, _ = three
    server = ithaca_factory(config_text=routes_yaml(
        {"main": [addr(main)], "shadow": [addr(shadow)]},
        "{type: shadow, normal: pool:main, shadows: [{route: pool:shadow, key_fraction: [0, 0.25]}]}"))
    keys = [b"s%d" % i for i in range(400)]
    with mcwire.Conn(*server.address) as conn:
        conn.send(b"".join(b"set %s 0 0 1\r\nv\r\n" % k for k in keys))
        assert conn.read_replies(len(keys)) == [b"STORED\r\n"] * len(keys)
    # The shadowed keys are exactly those whose CRC32 falls in the first quarter.
    expected = {k for k in keys if zlib.crc32(k) / 2**32 < 0.25}
    assert 60 < len(expected) < 140
    wait_for(lambda: all(direct_get(shadow, k) == b"v" for k in expected), what="the shadow copies")
    assert all(direct_get(shadow, k) is None for k in keys if k not in expected)
    assert all(direct_get(main, k) == b"v" for k in keys[:20])


def test_shadow_request_fraction_is_within_two_percent(ithaca_factory, three):
    main, shadow, _ = three
    server = ithaca_factory(config_text=routes_yaml(
        {"main": [addr(main)], "shadow": [addr(shadow)]},
        "{type: shadow, name: sh, normal: pool:main, shadows: [{route: pool:shadow, request_fraction: 0.3}]}"))
    n = 6000
    with mcwire.Conn(*server.address) as conn:
        conn.send(b"".join(b"get g%d\r\n" % i for i in range(n)))
        assert conn.read_replies(n) == [b"END\r\n"] * n
        st = route_stats(conn)
    sh = [k for k, v in st.items() if v == "shadow sh"][0]
    sent = int(st[sh + ":shadow_sent"])
    assert abs(sent / n - 0.3) < 0.02, sent


def test_hash_and_random_spread_over_their_children(ithaca_factory, three):
    a, b, _ = three
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(a)], "b": [addr(b)]},
        '{type: prefix, prefixes: {"h:": {type: hash, children: [pool:a, pool:b]},'
        ' "r:": {type: random, children: [pool:a, pool:b]}}}'))
    keys = [b"h:%d" % i for i in range(200)]
    with mcwire.Conn(*server.address) as conn:
        conn.send(b"".join(b"set %s 0 0 1\r\nv\r\n" % k for k in keys))
        assert conn.read_replies(len(keys)) == [b"STORED\r\n"] * len(keys)
        on_a = sum(direct_get(a, k) is not None for k in keys)
        on_b = sum(direct_get(b, k) is not None for k in keys)
        assert on_a + on_b == len(keys) and 50 < on_a < 150
        # A multiget over both children is split and merged in key order.
        reply = conn.call(b"get " + b" ".join(keys[:30]) + b"\r\n")
        assert reply.count(b"VALUE") == 30
        assert reply.index(b"VALUE h:0 ") < reply.index(b"VALUE h:29 ")
        for i in range(60):
            assert conn.call(b"set r:%d 0 0 1\r\nv\r\n" % i) == b"STORED\r\n"
    on_a = sum(direct_get(a, b"r:%d" % i) is not None for i in range(60))
    assert 5 < on_a < 55


def test_modify_exptime_sets_or_caps(ithaca_factory, three):
    a = three[0]
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(a)]},
        '{type: prefix, prefixes: {"min:": {type: modify_exptime, target: pool:a, action: min, exptime: 100s},'
        ' "set:": {type: modify_exptime, target: pool:a, action: set, exptime: 50s}}}'))
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"set min:never 0 0 1\r\nv\r\n") == b"STORED\r\n"
        assert conn.call(b"set min:short 0 20 1\r\nv\r\n") == b"STORED\r\n"
        assert conn.call(b"set set:long 0 1000 1\r\nv\r\n") == b"STORED\r\n"
        assert conn.call(b"ms min:meta 1\r\nv\r\n") == b"HD\r\n"
    assert 90 < direct_ttl(a, b"min:never") <= 100
    assert 10 < direct_ttl(a, b"min:short") <= 20
    assert 40 < direct_ttl(a, b"set:long") <= 50
    assert 90 < direct_ttl(a, b"min:meta") <= 100


def test_rate_limit_refuses_or_falls_back_over_the_rate(ithaca_factory, three):
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(three[0])]},
        '{type: prefix, prefixes: {"l:": {type: rate_limit, name: rl, target: pool:a, rates: {get: 2}, burst: {get: 5}},'
        ' "f:": {type: rate_limit, target: pool:a, fallback: {type: null}, rates: {set: 1}, burst: {set: 2}}}}'))
    with mcwire.Conn(*server.address) as conn:
        replies = [conn.call(b"get l:%d\r\n" % i) for i in range(20)]
        limited = sum(r == b"SERVER_ERROR rate limited\r\n" for r in replies)
        assert replies.count(b"END\r\n") + limited == 20
        assert 12 <= limited <= 15, replies
        # Other classes are not limited there.
        assert conn.call(b"set l:x 0 0 1\r\nv\r\n") == b"STORED\r\n"
        sets = [conn.call(b"set f:%d 0 0 1\r\nv\r\n" % i) for i in range(10)]
        assert sets.count(b"NOT_STORED\r\n") >= 6  # the null fallback's answer
        st = route_stats(conn)
        rl = [k for k, v in st.items() if v == "rate_limit rl"][0]
        assert int(st[rl + ":rate_limited"]) == limited


def test_error_null_and_named_routes(ithaca_factory, three):
    a = three[0]
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(a)]},
        '{type: prefix, prefixes: {"e:": {type: error, message: "down for maintenance"},'
        ' "n:": {type: null}, "x:": shared, "y:": shared}}',
        named={"shared": "{type: failover, children: [pool:a, {type: null}]}"}))
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"get e:1\r\n") == b"SERVER_ERROR down for maintenance\r\n"
        assert conn.call(b"set n:1 0 0 1\r\nv\r\n") == b"NOT_STORED\r\n"
        assert conn.call(b"get n:1\r\n") == b"END\r\n"
        assert conn.call(b"delete n:1\r\n") == b"NOT_FOUND\r\n"
        assert conn.call(b"set x:1 0 0 1\r\nv\r\n") == b"STORED\r\n"
        assert conn.call(b"get y:1 x:1\r\n") == b"VALUE x:1 0 1\r\nv\r\nEND\r\n"
        st = route_stats(conn)
        # A named route used twice is one node.
        assert list(st.values()).count("failover shared") == 1


def test_routes_answer_binary_and_meta_clients(ithaca_factory, three):
    a, b, _ = three
    server = ithaca_factory(config_text=routes_yaml(
        {"a": [addr(a)], "b": [addr(b)], "dead": [dead_address()]},
        "{type: failover, children: [pool:dead, {type: all_sync, children: [pool:a, pool:b]}]}"))
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"ms mk 2 T0\r\nhi\r\n") == b"HD\r\n"
        assert conn.call(b"mg mk v\r\n") == b"VA 2\r\nhi\r\n"
    with mcwire.Conn(*server.address) as conn:  # a connection speaks one protocol
        replies = conn.binary_batch([mcwire.S(b"bk", b"bin")])
        assert replies[0]["status"] == 0, replies
    assert direct_get(a, b"mk") == b"hi" and direct_get(b, b"mk") == b"hi"
    assert direct_get(a, b"bk") == b"bin" and direct_get(b, b"bk") == b"bin"
