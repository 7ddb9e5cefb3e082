"""Listeners with route trees of their own (route/route_tree.h), over the wire:

- a twemproxy nutcracker.yml read as it is: two pools, each over two real
  memcacheds on a listener of its own, place every key where a real
  nutcracker reading the same file places it, on both listeners;
- ithaca's own YAML `listeners:`: a listener served by a pool while `listen:`
  serves the local store; `stats` counts both;
- SIGHUP swaps a listener's tree, keeping the listener and its connections; a
  reload that adds a listener is refused, saying it needs a restart;
- the refusals (redis, unknown keys) as file:line from --check-config;
- client_connections and preconnect."""

import os
import re
import shutil
import signal
import subprocess

import pytest

import conftest
import mcwire
from test_placement import holder_of, make_keys, set_through
from test_router import addr, stats, wait_for

OWN_LISTENER_RE = re.compile(r"listening on tcp 127\.0\.0\.1:(\d+) \(its own route: listeners\[(\d+)\]\)")
START_TIMEOUT = 10.0


def listener_ports(server, count):
    """The ports of the listeners with trees of their own, by index."""
    def found():
        ports = {int(m.group(2)): int(m.group(1)) for m in OWN_LISTENER_RE.finditer(server.log)}
        return ports if len(ports) == count else None
    ports = wait_for(found, what=f"{count} listeners of their own in the log")
    return [ports[i] for i in range(count)]


def nutcracker_yml(pools, ports):
    """pools: [(name, extra yaml lines, [server entries])]; ports: listen port per pool."""
    out = []
    for (name, extra, entries), port in zip(pools, ports):
        out.append(f"{name}:\n  listen: 127.0.0.1:{port}\n")
        out += [f"  {line}\n" for line in extra]
        out.append("  servers:\n" + "".join(f"   - {e}\n" for e in entries))
    return "".join(out)


def start_real_nutcracker(tmp_path, pools):
    path = shutil.which("nutcracker") or "/usr/sbin/nutcracker"
    if not os.path.exists(path):
        pytest.fail("nutcracker is not installed (apt-get install nutcracker; scripts/install-deps.sh)",
                    pytrace=False)
    for _attempt in range(5):
        ports = [conftest.free_port() for _ in pools]
        stats_port = conftest.free_port()
        conf = tmp_path / "real-nutcracker.yml"
        conf.write_text(nutcracker_yml(pools, ports))
        server = conftest.Server("nutcracker", [path, "-c", str(conf), "-s", str(stats_port), "-a", "127.0.0.1",
                                                "-o", str(tmp_path / "nutcracker.log")],
                                 stop_signal=signal.SIGKILL)
        ok = True
        for port in ports:
            server.port = port
            ok = ok and server.wait_accepting(START_TIMEOUT)
        if ok:
            return server, ports
        server.stop()
    pytest.fail(f"nutcracker did not start:\n{server.describe()}", pytrace=False)


class At:
    """A (host, port) stand-in for a server object (set_through takes .address)."""

    def __init__(self, port):
        self.host, self.port = "127.0.0.1", port
        self.address = (self.host, port)


def flush(servers):
    for s in servers:
        with mcwire.Conn(s.host, s.port) as c:
            assert c.call(b"flush_all\r\n") == b"OK\r\n"


def test_nutcracker_yml_places_keys_as_nutcracker_on_both_listeners(ithaca_factory, memcached_factory, tmp_path):
    servers = [memcached_factory() for _ in range(4)]
    # alpha: twemproxy's defaults (fnv1a_64, ketama); beta: murmur, a hash tag, weights and names.
    pools = [
        ("alpha", ["auto_eject_hosts: false", "timeout: 5000"],
         [f"{addr(servers[0])}:1", f"{addr(servers[1])}:1"]),
        ("beta", ["hash: murmur", "hash_tag: \"{}\"", "distribution: ketama", "timeout: 5000"],
         [f"{addr(servers[2])}:1 cache-a", f"{addr(servers[3])}:3 cache-b"]),
    ]
    keys = {"alpha": make_keys(11)[:1500], "beta": make_keys(12, tagged=True)[:1500]}
    members = {"alpha": servers[0:2], "beta": servers[2:4]}

    nut, nut_ports = start_real_nutcracker(tmp_path, pools)
    try:
        for (name, _, _), port in zip(pools, nut_ports):
            set_through(At(port), keys[name])
    finally:
        nut.stop()
    expected = {name: holder_of(keys[name], list(enumerate(members[name]))) for name in keys}
    flush(servers)

    ithaca = ithaca_factory(config_text=nutcracker_yml(pools, [0, 0]))
    ports = listener_ports(ithaca, 2)
    for (name, _, _), port in zip(pools, ports):
        set_through(At(port), keys[name])
    for name in keys:
        got = holder_of(keys[name], list(enumerate(members[name])))
        moved = [k for k in keys[name] if got[k] != expected[name][k]]
        assert not moved, (f"pool {name}: {len(moved)} of {len(keys[name])} keys on another server than "
                           f"nutcracker's, e.g. {moved[:3]!r}")
    # Each listener reaches its own pool only: alpha's keys are on alpha's servers.
    with mcwire.Conn(*servers[2].address) as c:
        assert c.call(b"get " + keys["alpha"][0] + b"\r\n") == b"END\r\n"
    with mcwire.Conn("127.0.0.1", ports[0]) as c:
        s = stats(c)
        # Both listeners' sets, in one server's stats (routed requests count there).
        assert int(s["router_requests"]) == 3000, s
        assert s["router_pools"] == "2", s


def test_listeners_in_ithaca_yaml_serve_their_own_tree(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    ithaca = ithaca_factory(config_text=(
        "pools:\n  p:\n    servers: [\"" + addr(backend) + "\"]\n    timeout: 10s\n"
        "listeners:\n  - listen: 127.0.0.1:0\n    route: {type: pool, pool: p}\n"))
    [port] = listener_ports(ithaca, 1)
    with mcwire.Conn("127.0.0.1", port) as routed, mcwire.Conn(ithaca.host, ithaca.port) as local, \
            mcwire.Conn(*backend.address) as direct:
        assert routed.call(b"set routed 0 0 1\r\nr\r\n") == b"STORED\r\n"
        assert local.call(b"set local 0 0 1\r\nl\r\n") == b"STORED\r\n"
        # The listener's tree is the pool; `listen:` serves the local store.
        assert direct.call(b"get routed local\r\n") == b"VALUE routed 0 1\r\nr\r\nEND\r\n"
        assert routed.call(b"get local\r\n") == b"END\r\n"
        assert local.call(b"get routed\r\n") == b"END\r\n"
        assert local.call(b"get local\r\n") == b"VALUE local 0 1\r\nl\r\nEND\r\n"
        # One server's stats count both: the local store's commands and the
        # routed ones (memcached's counters count routed commands too).
        s = stats(routed)
        assert int(s["cmd_set"]) == 2, s
        assert int(s["cmd_get"]) == 3, s
        assert int(s["router_requests"]) == 2, s
        assert int(s["curr_connections"]) >= 2, s


def test_reload_swaps_a_listeners_tree_keeping_it_and_its_connections(ithaca_factory, memcached_factory, tmp_path):
    a, b = memcached_factory(), memcached_factory()

    def config(server):
        return ("logging:\n  level: info\n"
                "pools:\n  p:\n    servers: [\"" + addr(server) + "\"]\n    timeout: 10s\n"
                "listeners:\n  - listen: 127.0.0.1:0\n    route: {type: pool, pool: p}\n")

    ithaca = ithaca_factory(config_text=config(a))
    cfg = sorted(tmp_path.glob("ithaca-*.yaml"))[-1]
    [port] = listener_ports(ithaca, 1)
    with mcwire.Conn("127.0.0.1", port) as c:
        assert c.call(b"set k1 0 0 1\r\na\r\n") == b"STORED\r\n"
        cfg.write_text(config(b))
        ithaca.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: "is valid; applied" in ithaca.log, what="reload applied")
        # The same connection, on the new tree: the listener now reaches b.
        assert c.call(b"set k2 0 0 1\r\nb\r\n") == b"STORED\r\n"
        with mcwire.Conn(*a.address) as da, mcwire.Conn(*b.address) as db:
            assert da.call(b"get k1 k2\r\n") == b"VALUE k1 0 1\r\na\r\nEND\r\n"
            assert db.call(b"get k1 k2\r\n") == b"VALUE k2 0 1\r\nb\r\nEND\r\n"
        # Adding a listener needs a restart: refused as a whole, saying so.
        cfg.write_text(config(a) + "  - listen: 127.0.0.1:0\n    route: {type: local}\n")
        ithaca.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: "reload refused" in ithaca.log, what="reload refused")
        assert re.search(r"listener 127\.0\.0\.1:0 added; adding, removing or reordering a listener needs a "
                         r"restart", ithaca.log), ithaca.log
        # Nothing changed: still b, on the same connection.
        assert c.call(b"set k3 0 0 1\r\nc\r\n") == b"STORED\r\n"
        with mcwire.Conn(*b.address) as db:
            assert db.call(b"get k3\r\n") == b"VALUE k3 0 1\r\nc\r\nEND\r\n"
    assert len(OWN_LISTENER_RE.findall(ithaca.log)) == 1


def check_config(tmp_path, text):
    path, is_memcached = conftest.ithaca_binary()
    if is_memcached:
        pytest.skip("needs ithaca's --check-config")
    conf = tmp_path / "nutcracker.yml"
    conf.write_text(text)
    out = subprocess.run([path, "--config", str(conf), "--check-config"], capture_output=True, timeout=20)
    return out.returncode, (out.stdout + out.stderr).decode(errors="replace"), str(conf)


@pytest.mark.parametrize("extra,line,message", [
    ("  redis: true\n", 3, "redis: redis pools are not supported"),
    ("  redis_auth: secret\n", 3, "redis_auth: redis pools are not supported"),
    ("  colour: red\n", 3, "unknown key 'colour' in section 'alpha'"),
    ("  distribution: jump\n", 3, "distribution: expected one of ketama, modula or random, got 'jump'"),
    ("  server_connections: 0\n", 3, "server_connections: expected"),
])
def test_check_config_refuses_what_nutcracker_yml_ithaca_cannot_run(tmp_path, extra, line, message):
    base = "alpha:\n  listen: 127.0.0.1:22121\n"
    rc, out, conf = check_config(tmp_path, base + extra + "  servers:\n   - 127.0.0.1:11211:1\n")
    assert rc == 1, out
    assert f"{conf}:{line}: {message}" in out, out


def test_check_config_accepts_twemproxys_sample(tmp_path):
    """twemproxy's own sample, without its redis pools (which are refused)."""
    sample = ("gamma:\n  listen: 127.0.0.1:22123\n  hash: fnv1a_64\n  distribution: ketama\n  timeout: 400\n"
              "  backlog: 1024\n  preconnect: true\n  auto_eject_hosts: true\n  server_retry_timeout: 2000\n"
              "  server_failure_limit: 3\n  servers:\n   - 127.0.0.1:11212:1\n   - 127.0.0.1:11213:1\n\n"
              "omega:\n  listen: /tmp/gamma\n  hash: hsieh\n  distribution: ketama\n  auto_eject_hosts: false\n"
              "  servers:\n   - 127.0.0.1:11214:100000\n   - 127.0.0.1:11215:1\n")
    rc, out, _ = check_config(tmp_path, sample)
    assert rc == 0 and "configuration OK" in out, out


def test_client_connections_limits_a_pools_clients(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    ithaca = ithaca_factory(config_text=(
        f"alpha:\n  listen: 127.0.0.1:0\n  client_connections: 1\n  servers:\n   - {addr(backend)}:1\n"))
    [port] = listener_ports(ithaca, 1)
    with mcwire.Conn("127.0.0.1", port) as first:
        assert first.call(b"set a 0 0 1\r\n1\r\n") == b"STORED\r\n"
        with mcwire.Conn("127.0.0.1", port) as second:
            assert second.read_line() == b"ERROR Too many open connections\r\n"
            assert second.is_closed()
    # The first one gone, a new client gets in (its slot was given back).
    def admitted():
        with mcwire.Conn("127.0.0.1", port) as again:
            return again.call(b"get a\r\n") == b"VALUE a 0 1\r\n1\r\nEND\r\n"
    wait_for(admitted, what="a client admitted after the first left")


def test_preconnect_opens_server_connections_before_any_request(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    with mcwire.Conn(*backend.address) as c:
        before = int(stats(c)["total_connections"])
    ithaca_factory(config_text=(
        f"alpha:\n  listen: 127.0.0.1:0\n  preconnect: true\n  servers:\n   - {addr(backend)}:1\n"))

    def connected():
        with mcwire.Conn(*backend.address) as c:
            # This connection, and one per worker (-t 2) from ithaca.
            return int(stats(c)["total_connections"]) - before - 1 >= 2
    wait_for(connected, what="ithaca's workers connected to the backend without a request")


def test_nutcracker_unix_listener_with_its_mode(ithaca_factory, memcached_factory, tmp_path):
    """twemproxy's `listen: /path MODE`: a unix listener with that mode, served by its pool."""
    import socket
    import stat
    backend = memcached_factory()
    path = tmp_path / "pool.sock"
    ithaca = ithaca_factory(config_text=(
        f"alpha:\n  listen: {path} 0660\n  servers:\n   - {addr(backend)}:1\n"))
    wait_for(lambda: f"listening on unix unix:{path} (its own route: listeners[0])" in ithaca.log,
             what="the unix listener")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o660
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(path))
        s.sendall(b"set viaunix 0 0 2\r\nok\r\n")
        assert s.recv(64) == b"STORED\r\n"
    with mcwire.Conn(*backend.address) as c:
        assert c.call(b"get viaunix\r\n") == b"VALUE viaunix 0 2\r\nok\r\nEND\r\n"
