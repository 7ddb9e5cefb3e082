"""mcrouter's own tests of its service info and stats, ported: ithaca runs on
the same mcrouter configs (their ports replaced by real memcacheds', in the
order of the hosts in the file, as mcrouter's test harness does) and must
answer `__mcrouter__.*` and `stats` as those tests assert, and in mcrouter's
formats (mcrouter/ServiceInfo-inl.h, stats.cpp, stat_list.h).

  mcrouter/test/test_service_info.py  route format, hostid, route_handles
  mcrouter/test/test_mcrouter_states.py  num_servers* and their invariant
  mcrouter/test/test_stats.py  result_*_count after a CLIENT_ERROR and a
      SERVER_ERROR (from a real memcached: a non-numeric incr, a value over
      its -I); `stats servers`' per-destination form is
      test_mcrouter_pool_routes.py's (ithaca's own POOL/ADDRESS:FIELD lines,
      `stats ithaca_servers` with an mcrouter config, test_counter_tables.py)
  mcrouter/test/test_poolstats.py  cmd_get_count (its pool stats files are
      mcrouter's stats_root, which ithaca does not write)

and the keys no mcrouter test reads, each in ServiceInfo's format."""

import hashlib
import json
import re
import signal

from conftest import HOST, free_port
from mcwire import Conn, parse_stats
from test_reload import reload_with
from test_router import start_memcached_on, wait_for

# mcrouter/test/test_service_info.json (facebook/mcrouter, MIT licence)
SERVICE_INFO_JSON = """{
  "pools": {
    "A": {
      "servers": [ "127.0.0.1:11610" ]
    },
    "B": {
      "servers": [ "127.0.0.1:11611" ]
    }
  },
  "route": {
    "type": "AllSyncRoute",
    "children": [
      "PoolRoute|A",
      "PoolRoute|B"
    ]
  }
}
"""

# mcrouter/test/mcrouter_test_basic_1_1_1.json (facebook/mcrouter, MIT licence)
BASIC_1_1_1_JSON = """{
  "pools": {
    "foo": {
      "servers": [ "localhost:12345" ]
    }
  },
  "route": "PoolRoute|foo"
}
"""

# mcrouter/test/mcrouter_test_basic_2_1_1.json (facebook/mcrouter, MIT licence)
BASIC_2_1_1_JSON = """{
  "pools": {
    "A.wildcard": {
      "servers": [ "localhost:12345" ]
    },
    "B.wildcard": {
      "servers": [ "localhost:12346" ]
    }
  },
  "routes": [
    {
      "aliases": [ "/a/a/" ],
      "route": "PoolRoute|A.wildcard"
    },
    {
      "aliases": [ "/b/b/" ],
      "route": "PoolRoute|B.wildcard"
    }
  ]
}
"""


def with_ports(text, backends):
    """The config with its hosts replaced by the backends', in file order
    (mcrouter's test harness does the same)."""
    hosts = re.findall(r'"(?:127\.0\.0\.1|localhost):\d+"', text)
    for host, b in zip(dict.fromkeys(hosts), backends):
        text = text.replace(host, f'"{HOST}:{b.port}"')
    return text


def start_on(tmp_path, ithaca_factory, text, name="mcrouter.json", args=()):
    path = tmp_path / name
    path.write_text(text)
    return ithaca_factory(args=["--config", str(path), *args]), path


def ask(conn, key):
    """The value of a `get KEY` (mcrouter's client get): None on a miss."""
    reply = conn.call(b"get " + key.encode() + b"\r\n")
    if reply == b"END\r\n":
        return None
    header, rest = reply.split(b"\r\n", 1)
    size = int(header.split()[3])
    assert rest[size:] == b"\r\nEND\r\n", reply
    return rest[:size].decode()


def stats(conn, group=b""):
    return parse_stats(conn.call(b"stats" + (b" " + group if group else b"") + b"\r\n"))


def destination(pool, index, backend):
    return (f"host|pool={pool}|id={index}|ap={HOST}:{backend.port}:ascii:plain:notcompressed"
            f"|timeout=1000ms|keep_routing_prefix=false|msb=0")


# ---- test_service_info.py


def service_info_router(tmp_path, ithaca_factory, memcached_factory):
    mc1, mc2 = memcached_factory(), memcached_factory()
    text = with_ports(SERVICE_INFO_JSON, [mc1, mc2])
    router, path = start_on(tmp_path, ithaca_factory, text, args=["-v"])  # -v: a reload's log line
    return router, path, text, mc1, mc2


def test_route_format(tmp_path, ithaca_factory, memcached_factory):
    router, _, _, mc1, mc2 = service_info_router(tmp_path, ithaca_factory, memcached_factory)
    with Conn(router.host, router.port) as c:
        # a key 'abc,def' with a comma
        parts = ask(c, "__mcrouter__.route(set,abc,def)").split("\r\n")
        assert len(parts) == 2
        for part, mc in zip(parts, (mc1, mc2)):
            host, port = part.split(":")
            assert host == HOST
            assert port == str(mc.port)


def test_hostid(tmp_path, ithaca_factory, memcached_factory):
    router, _, _, _, _ = service_info_router(tmp_path, ithaca_factory, memcached_factory)
    with Conn(router.host, router.port) as c:
        hostid = ask(c, "__mcrouter__.hostid")
        assert str(int(hostid)) == hostid
        assert hostid == ask(c, "__mcrouter__.hostid")
        # the preprocessor's parameter is the same number
        assert json.loads(ask(c, "__mcrouter__.global_params"))["hostid"] == int(hostid)


def test_route_handles(tmp_path, ithaca_factory, memcached_factory):
    router, _, _, mc1, mc2 = service_info_router(tmp_path, ithaca_factory, memcached_factory)
    with Conn(router.host, router.port) as c:
        for op in ("get", "set", "delete"):
            # a key 'abc,def' with a comma
            rh = ask(c, f"__mcrouter__.route_handles({op},abc,def)")
            assert "root" in rh
            assert HOST in rh
            assert str(mc1.port) in rh
            assert str(mc2.port) in rh
            # mcrouter's own lines: its RootRoute, the AllSyncRoute, each
            # PoolRoute's asynclog over its one server's DestinationRoute.
            assert rh.split("\n") == [
                "root",
                " all-sync",
                "  asynclog:A",
                "   " + destination("A", 0, mc1),
                "  asynclog:B",
                "   " + destination("B", 0, mc2),
            ], rh


# ---- the other ServiceInfo keys, in its formats


def test_config_keys(tmp_path, ithaca_factory, memcached_factory):
    router, path, text, mc1, mc2 = service_info_router(tmp_path, ithaca_factory, memcached_factory)
    md5 = hashlib.md5(text.encode()).hexdigest()
    with Conn(router.host, router.port) as c:
        assert ask(c, "__mcrouter__.config_file") == str(path)
        assert 0 <= int(ask(c, "__mcrouter__.config_age")) <= 5
        assert ask(c, "__mcrouter__.config_md5_digest") == md5
        info = ask(c, "__mcrouter__.config_sources_info")
        assert json.loads(info) == {"config_file": str(path), "mcrouter_config": md5}
        # folly's pretty, key-sorted JSON: two spaces, "key": value
        assert info == json.dumps(json.loads(info), indent=2, sort_keys=True)
        # the config as loaded (no JSONM in it: the file itself)
        assert json.loads(ask(c, "__mcrouter__.preprocessed_config")) == json.loads(text)
        pools = ask(c, "__mcrouter__.pools")
        assert json.loads(pools) == {"A": [destination("A", 0, mc1)], "B": [destination("B", 0, mc2)]}
        assert pools == json.dumps(json.loads(pools), indent=2, sort_keys=True)
        domains = ask(c, "__mcrouter__.failure_domains(B)")
        assert json.loads(domains) == {f"{HOST}:{mc2.port}": "0()"}
        assert ask(c, "__mcrouter__.failure_domains(nope)") == "{}"
        assert ask(c, "__mcrouter__.failure_domains") == "ERROR: failure_domains: 1 arg expected"
        assert ask(c, "__mcrouter__.get_bucket(k)") == ""
        assert ask(c, "__mcrouter__.get_bucket") == "ERROR: get_bucket: 1 arg (key) expected"
        # a SIGHUP that applies another file: its digest, text and pools
        swapped = with_ports(SERVICE_INFO_JSON, [mc2, mc1])
        reload_with(router, swapped)
        assert ask(c, "__mcrouter__.config_md5_digest") == hashlib.md5(swapped.encode()).hexdigest()
        assert json.loads(ask(c, "__mcrouter__.preprocessed_config")) == json.loads(swapped)
        assert json.loads(ask(c, "__mcrouter__.pools")) == {"A": [destination("A", 0, mc2)],
                                                            "B": [destination("B", 0, mc1)]}


def test_options_version_verbosity_and_global_params(tmp_path, ithaca_factory, memcached_factory):
    router, path, _, _, _ = service_info_router(tmp_path, ithaca_factory, memcached_factory)
    with Conn(router.host, router.port) as c:
        version = ask(c, "__mcrouter__.version")
        # mcrouter's form: the version first ("44.0.0 mcrouter"), for libmemcached
        assert re.fullmatch(r"\S+ ithaca", version), version
        assert ask(c, "__ithaca__.version") == version
        options = dict(line.split(" ", 1) for line in ask(c, "__mcrouter__.options").split("\n"))
        assert options["num_proxies"] == "2"  # the tests' -t 2
        assert options["config"] == f"file:{path}"
        assert options["config_file"] == str(path)
        assert options["ports"] == "0"  # the tests' -p 0 (the kernel's pick)
        assert options["asynclog_disable"] == "0"
        assert ask(c, "__mcrouter__.options(num_proxies)") == "2"
        assert ask(c, "__mcrouter__.options(version)") == version
        assert ask(c, "__mcrouter__.options(nope)") == "ERROR: options: option nope not found"
        assert ask(c, "__mcrouter__.options(a,b)") == "ERROR: options: 0 or 1 args expected"
        params = json.loads(ask(c, "__mcrouter__.global_params"))
        assert params["num-proxies"] == 2
        assert params["router-info-name"] == "Memcache"
        assert params["mcrouter-option-num_proxies"] == "2"
        # verbosity: the level `verbosity N` set, and mcrouter's "OLD -> NEW"
        assert ask(c, "__mcrouter__.verbosity") == "0"
        assert ask(c, "__mcrouter__.verbosity(3)") == "0 -> 3"
        assert ask(c, "__mcrouter__.verbosity") == "3"
        assert c.call(b"verbosity 1\r\n") == b"OK\r\n"
        assert ask(c, "__mcrouter__.verbosity") == "1"
        assert ask(c, "__mcrouter__.verbosity(1,2)") == "ERROR: expected at most 1 argument, got 2"
        assert ask(c, "__mcrouter__.nope(1)") == "ERROR: unknown command: nope"


def test_route_handles_of_a_gutter_and_a_hashed_pool(tmp_path, ithaca_factory, memcached_factory):
    """mcrouter's FailoverWithExptimeRoute is its FailoverRoute over the
    normal route and the failover under a ModifyExptimeRoute (min); a pool
    of several servers is a HashRoute (selection|hash|Ch3) over them."""
    a1, a2, gutter = memcached_factory(), memcached_factory(), memcached_factory()
    text = json.dumps({
        "pools": {"main": {"servers": [f"{HOST}:{a1.port}", f"{HOST}:{a2.port}"]},
                  "gutter": {"servers": [f"{HOST}:{gutter.port}"]}},
        "route": {"type": "FailoverWithExptimeRoute", "normal": "PoolRoute|main",
                  "failover": "PoolRoute|gutter", "failover_exptime": 10}}, indent=2)
    router, _ = start_on(tmp_path, ithaca_factory, text)
    with Conn(router.host, router.port) as c:
        for key in ("k1", "k2", "k3", "k4", "k5"):
            where = ask(c, f"__mcrouter__.route(set,{key})")
            index = [f"{HOST}:{a1.port}", f"{HOST}:{a2.port}"].index(where)
            assert ask(c, f"__mcrouter__.route_handles(set,{key})").split("\n") == [
                "root",
                " failover",
                "  asynclog:main",
                "   selection|hash|Ch3",
                "    " + destination("main", index, (a1, a2)[index]),
                "  modify-exptime|min|exptime=10",
                "   asynclog:gutter",
                "    " + destination("gutter", 0, gutter),
            ]
            assert c.call(f"set {key} 0 0 1\r\nv\r\n".encode()) == b"STORED\r\n"
            with Conn((a1, a2)[index].host, (a1, a2)[index].port) as direct:
                assert direct.call(f"get {key}\r\n".encode()) == f"VALUE {key} 0 1\r\nv\r\nEND\r\n".encode()


# ---- test_mcrouter_states.py


def test_mcrouter_states(tmp_path, ithaca_factory):
    mc = start_memcached_on(free_port())  # this test kills it: not the fixture's
    try:
        mcrouter_states(tmp_path, ithaca_factory, mc)
    finally:
        mc.stop()  # again after the test's own stop: harmless


def mcrouter_states(tmp_path, ithaca_factory, mc):
    # 2 proxies (the tests' -t 2: two workers), as mcrouter's --num-proxies 2
    router, path = start_on(tmp_path, ithaca_factory, with_ports(BASIC_1_1_1_JSON, [mc]), args=["-v"])
    with Conn(router.host, router.port) as mcr, Conn(router.host, router.port) as c2:  # another client

        def check_all_up():
            for client in (mcr, c2):
                assert client.call(b"set key 0 0 5\r\nvalue\r\n") == b"STORED\r\n"
            for client in (mcr, c2):
                assert ask(client, "key") == "value"
            stat = stats(mcr)
            assert stat["num_servers"] == "2"
            assert stat["num_servers_up"] == "2"
            assert stat["num_servers_down"] == "0"

        def check_invariant():
            stat = stats(mcr)
            assert int(stat["num_servers"]) == (int(stat["num_servers_new"]) + int(stat["num_servers_up"]) +
                                                int(stat["num_servers_down"]) + int(stat["num_servers_closed"]))

        check_invariant()
        check_all_up()

        # down aka hard tko
        mc.stop()
        assert mcr.call(b"get key\r\n").startswith(b"SERVER_ERROR")
        assert c2.call(b"get key\r\n").startswith(b"SERVER_ERROR")
        stat = stats(mcr)
        assert stat["num_servers_up"] == "0"
        assert stat["num_servers_down"] == "2"
        check_invariant()
        # the one server is suspect: marked down (mcrouter's "tko")
        assert stat["num_suspect_servers"] == "1"
        suspect = stats(mcr, b"suspect_servers")
        assert list(suspect) == [f"{HOST}:{mc.port}"]
        assert re.fullmatch(r"status:tko num_failures:\d+", suspect[f"{HOST}:{mc.port}"])

        # change config: mcrouter's second file picks a pool by routing
        # prefix; applied or refused, the counts stay consistent
        marker = re.compile(r"SIGHUP: (\S+ is valid; applied|reload refused)")
        before = len(marker.findall(router.log))
        path.write_text(with_ports(BASIC_2_1_1_JSON, [mc, mc]))
        router.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: len(marker.findall(router.log)) > before, timeout=5, what="the reload's log line")
        check_invariant()
        # make sure we dont crash
        assert router.proc.poll() is None


# ---- test_stats.py (TestErrorStatsRequests) and test_poolstats.py


def test_error_stats_and_request_counts(tmp_path, ithaca_factory, memcached_factory):
    mc = memcached_factory(["-I", "1k", "-o", "slab_chunk_max=512"])  # a value over 1 KiB: its SERVER_ERROR
    router, _ = start_on(tmp_path, ithaca_factory, with_ports(BASIC_1_1_1_JSON, [mc]))
    with Conn(router.host, router.port) as c:
        base = stats(c, b"all")
        for name in ("result_client_error_count", "result_remote_error_count", "result_error_count",
                     "cmd_get_count", "cmd_set_count", "cmd_incr_count"):
            assert base[name] == "0", name

        # test_client_error: the server's CLIENT_ERROR
        assert c.call(b"set test_key 0 0 3\r\nabc\r\n") == b"STORED\r\n"
        assert c.call(b"incr test_key 1\r\n").startswith(b"CLIENT_ERROR")
        st = stats(c, b"all")
        assert int(st["result_client_error_count"]) == 1
        assert int(st["result_error_count"]) == 1

        # test_remote_error: the server's SERVER_ERROR
        big = b"x" * 2000
        assert c.call(b"set big 0 0 %d\r\n%s\r\n" % (len(big), big)).startswith(b"SERVER_ERROR")
        st = stats(c, b"all")
        assert int(st["result_remote_error_count"]) == 1
        assert int(st["result_error_count"]) == 2
        assert st["result_remote_error_all_count"] == st["result_remote_error_count"]

        # test_poolstats: gets counted (each key of a multi-key get, as
        # mcrouter splits them), and the other types by theirs
        c.send(b"get a b c\r\n")
        c.read_until(b"END\r\n")
        assert c.call(b"delete test_key\r\n") == b"DELETED\r\n"
        st = stats(c)
        assert int(st["cmd_get_count"]) == 3
        assert int(st["cmd_set_count"]) == 2
        assert int(st["cmd_incr_count"]) == 1
        assert int(st["cmd_delete_count"]) == 1
        # introspection and server commands are not requests to route
        ask(c, "__mcrouter__.version")
        assert int(stats(c)["cmd_get_count"]) == 3
        # `stats all` holds every line of `stats`
        assert set(stats(c)) <= set(stats(c, b"all"))
        assert stats(c, b"suspect_servers") == {}
