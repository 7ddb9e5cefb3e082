"""Introspection keys (README "Introspection"): `get __mcrouter__.route(OP,KEY)`,
`route_handles(OP,KEY)`, `config_file`, `config_age`, `version` (the rest of
mcrouter's keys: test_mcrouter_service_info.py), and the same
under `__ithaca__.`, answered by ithaca itself in every protocol a get comes
in, against real memcacheds: the server `route` names is the one a set
through ithaca lands on."""

import mcwire
from test_reload import config_path_of, reload_with
from test_router import addr, wait_for
from test_routes import dead_address, direct_get, routes_yaml, three  # noqa: F401 (fixture)


def ask(conn, key):
    """The value of one introspection get (ascii), or None on a miss."""
    values = mcwire.parse_values(conn.call(b"get " + key.encode() + b"\r\n"))
    assert len(values) <= 1, values
    return values[0][2].decode() if values else None


def host_line(pool, address, index=0):
    """mcrouter's DestinationRoute name of a server (routes_yaml's 5 s timeout)."""
    return (f"host|pool={pool}|id={index}|ap={address}:ascii:plain:notcompressed|timeout=5000ms"
            "|keep_routing_prefix=false|msb=0")


def test_route_names_the_server_a_set_lands_on(ithaca_factory, three):
    server = ithaca_factory(config_text=routes_yaml({"main": [addr(s) for s in three]}, "pool:main"))
    by_address = {addr(s): s for s in three}
    used = set()
    with mcwire.Conn(*server.address) as conn:
        for i in range(30):
            key = f"user:{i}"
            where = ask(conn, f"__mcrouter__.route(set,{key})")
            assert where in by_address, where
            assert ask(conn, f"__mcrouter__.route(get,{key})") == where
            assert ask(conn, f"__ithaca__.route(delete,{key})") == where
            assert conn.call(f"set {key} 0 0 1\r\nv\r\n".encode()) == b"STORED\r\n"
            for a, s in by_address.items():
                assert (direct_get(s, key.encode()) == b"v") == (a == where), (key, where, a)
            used.add(where)
    assert len(used) == 3  # 30 keys over three servers reach each of them


def test_route_through_prefix_failover_and_all_sync(ithaca_factory, three):
    a, b, c = three
    dead = dead_address()
    server = ithaca_factory(config_text=routes_yaml(
        {"dead": [dead], "a": [addr(a)], "b": [addr(b)], "c": [addr(c)]},
        '{type: prefix, prefixes: {"f:": {type: failover, name: fo, children: [pool:dead, pool:b]},'
        ' "s:": {type: all_sync, children: [pool:a, pool:b]}}, default: pool:c}'))
    with mcwire.Conn(*server.address) as conn:
        assert ask(conn, "__mcrouter__.route(get,other)") == addr(c)
        # No request has found the dead server down yet: it is where a get goes.
        assert ask(conn, "__mcrouter__.route(get,f:1)") == dead
        assert conn.call(b"set f:1 0 0 1\r\nx\r\n") == b"STORED\r\n"
        assert direct_get(b, b"f:1") == b"x"
        # Marked down now (a refused connect): the failover's next child.
        assert ask(conn, "__mcrouter__.route(get,f:1)") == addr(b)
        assert ask(conn, "__mcrouter__.route(set,s:1)") == addr(a) + "\r\n" + addr(b)
        assert conn.call(b"set s:1 0 0 1\r\ny\r\n") == b"STORED\r\n"
        assert direct_get(a, b"s:1") == b"y" and direct_get(b, b"s:1") == b"y"
        assert direct_get(c, b"s:1") is None

        # mcrouter's form: its root; the prefix selector shows no line (mcrouter's
        # RootRoute picks the target itself); a pool of one server without
        # reliable deletes is that server's DestinationRoute line, down or up.
        tree = ask(conn, "__mcrouter__.route_handles(get,f:1)").split("\n")
        assert tree == ["root", " failover:fo", "  " + host_line("dead", dead), "  " + host_line("b", addr(b))], tree
        # The selector shows the branch the key takes, not every branch.
        tree = ask(conn, "__ithaca__.route_handles(set,s:9)").split("\n")
        assert tree == ["root", " all-sync", "  " + host_line("a", addr(a)), "  " + host_line("b", addr(b))], tree
        assert ask(conn, "__mcrouter__.route_handles(get,zz)").split("\n") == ["root", " " + host_line("c", addr(c))]


def test_route_handles_picks_the_pool_server_of_the_key(ithaca_factory, three):
    server = ithaca_factory(config_text=routes_yaml({"main": [addr(s) for s in three]}, "pool:main"))
    with mcwire.Conn(*server.address) as conn:
        for key in ("k1", "k2", "k3", "k4"):
            where = ask(conn, f"__mcrouter__.route(get,{key})")
            tree = ask(conn, f"__mcrouter__.route_handles(get,{key})").split("\n")
            index = [addr(s) for s in three].index(where)
            # the pool's hash selection (ithaca's ketama here), then the server
            assert tree == ["root", " selection|hash|ketama", "  " + host_line("main", where, index)], tree


def test_every_protocol_gets_the_answer(ithaca_factory, three):
    a = three[0]
    server = ithaca_factory(config_text=routes_yaml({"a": [addr(a)]}, "pool:a"))
    key = b"__mcrouter__.route(get,k)"
    want = addr(a).encode()
    with mcwire.Conn(*server.address) as conn:
        assert conn.call(b"get " + key + b"\r\n") == (
            b"VALUE " + key + b" 0 %d\r\n" % len(want) + want + b"\r\nEND\r\n")
        assert conn.call(b"gets " + key + b"\r\n").startswith(b"VALUE " + key + b" 0 %d " % len(want))
        assert conn.call(b"mg " + key + b" v\r\n") == b"VA %d\r\n" % len(want) + want + b"\r\n"
        assert conn.call(b"mg " + key + b" k v\r\n") == b"VA %d k" % len(want) + key + b"\r\n" + want + b"\r\n"
        # Two introspection keys on one line: both answered.
        values = mcwire.parse_values(conn.call(b"get " + key + b" __ithaca__.version\r\n"))
        assert [v[0] for v in values] == [key, b"__ithaca__.version"], values
        assert values[0][2] == want and values[1][2].endswith(b" ithaca")
        # Mixed with an ordinary key, the line goes to the route as it is: the
        # backend has no such key.
        assert conn.call(b"set plain 0 0 1\r\np\r\n") == b"STORED\r\n"
        assert conn.call(b"get plain " + key + b"\r\n") == b"VALUE plain 0 1\r\np\r\nEND\r\n"
    with mcwire.Conn(*server.address) as conn:
        replies = conn.binary_batch([mcwire.G(key), mcwire.G(key, op=mcwire.OP_GETK)])
        assert replies[0]["status"] == 0 and replies[0]["value"] == want, replies
        assert replies[1]["status"] == 0 and replies[1]["key"] == key and replies[1]["value"] == want, replies
    with mcwire.Conn(a.host, a.port) as direct:
        assert direct.call(b"get " + key + b"\r\n") == b"END\r\n"  # never sent to the backend


def test_unknown_commands_and_requests_answer_as_mcrouter(ithaca_factory, three):
    server = ithaca_factory(config_text=routes_yaml({"a": [addr(three[0])]}, "pool:a"))
    with mcwire.Conn(*server.address) as conn:
        assert ask(conn, "__mcrouter__.nope") == "ERROR: unknown command: nope"
        assert ask(conn, "__mcrouter__.nope(1,2)") == "ERROR: unknown command: nope"
        assert ask(conn, "__mcrouter__.route(fetch,k)") == "ERROR: route: unknown request fetch"
        assert ask(conn, "__mcrouter__.route(get)") == "ERROR: route: 2 args expected"
        assert ask(conn, "__mcrouter__.route") == "ERROR: route: 2 args expected"
        assert ask(conn, "__mcrouter__.route_handles(get)") == "ERROR: route_handles: 2 args expected"
        # The meta names are ithaca's own: mcrouter has no `mg` request.
        assert ask(conn, "__mcrouter__.route(mg,k)") == "ERROR: route: unknown request mg"
        assert ask(conn, "__ithaca__.route(mg,k)") == addr(three[0])
        # A key holding commas: OP ends at the first one.
        assert ask(conn, "__mcrouter__.route(get,a,b,c)") == addr(three[0])


def test_config_file_age_and_version(ithaca_factory, three):
    text = routes_yaml({"a": [addr(three[0])]}, "pool:a") + "logging:\n  level: info\n"
    server = ithaca_factory(config_text=text)
    path = config_path_of(server)
    with mcwire.Conn(*server.address) as conn:
        assert ask(conn, "__mcrouter__.config_file") == path
        assert ask(conn, "__ithaca__.config_file") == path
        # mcrouter's form, the version first: "1.6.45-ithaca ithaca"
        assert ask(conn, "__mcrouter__.version").startswith("1.6.45")
        assert ask(conn, "__mcrouter__.version").endswith(" ithaca")
        assert 0 <= int(ask(conn, "__mcrouter__.config_age")) <= 5
        # The age grows, and a reload that applies the file starts it again.
        wait_for(lambda: int(ask(conn, "__mcrouter__.config_age")) >= 2, timeout=5, what="config_age >= 2")
        reload_with(server, text)
        assert int(ask(conn, "__ithaca__.config_age")) <= 1


def test_cache_role_answers_too(ithaca):
    with mcwire.Conn(*ithaca.address) as conn:
        assert ask(conn, "__mcrouter__.config_file") == "ERROR: no config file found!"
        assert ask(conn, "__mcrouter__.route(get,k)") == ""  # the local store: no server
        assert ask(conn, "__mcrouter__.route_handles(get,k)") == "root\n local"
        # Nothing was stored under the key, and a set of it is a plain set.
        assert conn.call(b"set __mcrouter__.x 0 0 1\r\nz\r\n") == b"STORED\r\n"
        assert ask(conn, "__mcrouter__.x") == "ERROR: unknown command: x"
        assert conn.call(b"get other __mcrouter__.x\r\n") == b"VALUE __mcrouter__.x 0 1\r\nz\r\nEND\r\n"
