"""Key placement equal to the real thing: for the same pool, ithaca's
distributions must put every key on the server a real nutcracker (twemproxy
0.5.0) puts it on, and, for libmemcached's weighted ketama, where pylibmc
(libmemcached) puts it.

Five real memcacheds run for the whole module. Each case flushes them, stores
KEYS keys through the peer (a nutcracker started on a free port with the case's
pool, or a pylibmc client), asks every memcached directly which keys it holds,
and compares that with what tests/tools/ithaca_place prints for the same
server list. One key anywhere else fails the case.

The tool's path: $ITHACA_PLACE, else <build dir of $ITHACA_BIN>/tests/tools/ithaca_place.
Until the router exists this drives the tool; later the same cases can go
through ithaca's router instead of nutcracker.
"""

import os
import pathlib
import random
import shutil
import signal
import subprocess
import zlib

import pytest

import conftest
import mcwire

KEYS = 2000
SERVERS = 5
START_TIMEOUT = 10.0
BATCH = 100  # keys per get line when asking a memcached what it holds


def place_tool():
    path = os.environ.get("ITHACA_PLACE")
    if not path:
        ithaca = os.environ.get("ITHACA_BIN")
        if not ithaca or ithaca == "memcached":
            pytest.fail("set ITHACA_PLACE to tests/tools/ithaca_place in a build dir, or ITHACA_BIN to "
                        "<build dir>/sources/server/ithaca", pytrace=False)
        path = str(pathlib.Path(ithaca).resolve().parents[2] / "tests" / "tools" / "ithaca_place")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail(f"ithaca_place not found at {path!r} (ninja -C <build dir> tests/tools/ithaca_place)",
                    pytrace=False)
    return path


def make_keys(seed, tagged=False):
    """KEYS distinct keys: counters, random printable keys of every length up
    to 250, keys with bytes >= 0x80 (twemproxy sign-extends them in several
    hashes), and, with tagged=True, keys with hash tags ("{...}": empty, no
    closer, several tags, whole-key tags) so that many share a tag."""
    rng = random.Random(seed)
    printable = bytes(range(0x21, 0x7f))
    high = "é中ÿ€".encode()
    keys = set()
    while len(keys) < KEYS:
        kind = rng.randrange(5 if tagged else 4)
        if kind == 0:
            k = b"key:%d" % rng.randrange(10**6)
        elif kind == 1:
            k = bytes(rng.choice(printable) for _ in range(rng.randint(1, 250)))
        elif kind == 2:
            k = bytes(rng.choice(printable + high) for _ in range(rng.randint(1, 40)))
        elif kind == 3:
            k = b"user:%d:%s" % (rng.randrange(1000), rng.choice([b"name", b"mail", b"\xc3\xa9t\xc3\xa9"]))
        else:
            tag = b"user%d" % rng.randrange(20)
            k = rng.choice([
                b"{%s}:profile:%d" % (tag, rng.randrange(10**6)),
                b"x%d{%s}y" % (rng.randrange(10**6), tag),
                b"{}%s:%d" % (tag, rng.randrange(10**6)),          # empty tag: the whole key
                b"{%s:%d" % (tag, rng.randrange(10**6)),            # no closer: the whole key
                b"a%d}{%s}" % (rng.randrange(10**6), tag),          # a closer before the opener
                b"{%s}{%d}" % (tag, rng.randrange(10**6)),          # the first tag counts
            ])
        if b" " not in k and b"\n" not in k and b"\r" not in k:
            keys.add(k)
    return sorted(keys)


class Backends:
    def __init__(self):
        self.servers = []

    def flush(self):
        for s in self.servers:
            with mcwire.Conn(*s.address) as c:
                assert c.call(b"flush_all\r\n") == b"OK\r\n"

    def holder_of(self, keys, used):
        """{key: index} over the first `used` servers; fails on a key stored
        on two servers or on none."""
        return holder_of(keys, list(enumerate(self.servers[:used])))


def holder_of(keys, indexed_servers):
    """{key: pool index} from asking each (pool index, memcached) which keys
    it holds; fails on a key stored on two servers or on none."""
    holder = {}
    request = b"".join(b"get " + b" ".join(keys[j:j + BATCH]) + b"\r\n"
                       for j in range(0, len(keys), BATCH)) + b"version\r\n"
    for i, s in indexed_servers:
        with mcwire.Conn(*s.address) as c:
            for unit in c.exchange_until_sentinel(request):
                for key, _flags, _data, _cas in mcwire.parse_values(unit):
                    assert key not in holder, f"{key!r} is on servers {holder[key]} and {i}"
                    holder[key] = i
    missing = [k for k in keys if k not in holder]
    assert not missing, f"{len(missing)} keys on no server, e.g. {missing[:3]!r}"
    return holder


@pytest.fixture(scope="module")
def backends():
    owned = conftest._Servers()
    b = Backends()
    try:
        for _ in range(SERVERS):
            b.servers.append(owned.add(conftest.start_memcached_like(
                "memcached", conftest.memcached_binary(), [])))
        yield b
    finally:
        owned.stop_all()


def start_nutcracker(tmp_path, pool_yaml):
    path = shutil.which("nutcracker") or "/usr/sbin/nutcracker"
    if not os.path.exists(path):
        pytest.fail("nutcracker is not installed (apt-get install nutcracker; scripts/install-deps.sh)",
                    pytrace=False)
    last = None
    for _attempt in range(5):
        port, stats_port = conftest.free_port(), conftest.free_port()
        conf = tmp_path / "nutcracker.yml"
        conf.write_text(f"pool:\n  listen: 127.0.0.1:{port}\n" + pool_yaml)
        server = conftest.Server("nutcracker", [path, "-c", str(conf), "-s", str(stats_port), "-a", "127.0.0.1",
                                                "-o", str(tmp_path / "nutcracker.log"), "-v", "4"],
                                  stop_signal=signal.SIGKILL)
        server.port = port
        if server.wait_accepting(START_TIMEOUT):
            return server
        server.stop()
        last = server
        log_file = tmp_path / "nutcracker.log"
        log = log_file.read_text(errors="replace") if log_file.exists() else ""
        if "Address already in use" not in log + server.log:
            break
    pytest.fail(f"nutcracker did not start:\n{last.describe()}\n{conf.read_text()}", pytrace=False)


def set_through(server, keys):
    """Stores every key through `server` (pipelined), expecting STORED for each."""
    data = b"".join(b"set %s 0 0 1\r\nx\r\n" % k for k in keys)
    expected = b"STORED\r\n" * len(keys)

    def done(buf):
        if len(buf) >= len(expected) or not expected.startswith(bytes(buf)):
            return len(buf)
        return None

    with mcwire.Conn(*server.address, timeout=20) as c:
        got = c.exchange(data, done)
    assert got == expected, f"not every set was STORED: {got[:200]!r}"


def placed_by_tool(keys, args):
    out = subprocess.run([place_tool(), *args], input=b"".join(k + b"\n" for k in keys),
                         capture_output=True, timeout=30)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    picks = [int(x) for x in out.stdout.split()]
    assert len(picks) == len(keys)
    return dict(zip(keys, picks))


def assert_same_placement(keys, expected, tool_args, what):
    ours = placed_by_tool(keys, tool_args)
    wrong = [(k, expected[k], ours[k]) for k in keys if expected[k] != ours[k]]
    counts = [sum(1 for k in keys if expected[k] == i) for i in range(max(expected.values()) + 1)]
    assert not wrong, (f"{what}: {len(wrong)} of {len(keys)} keys placed elsewhere "
                       f"(key, peer, ithaca) e.g. {wrong[:5]!r}; peer's counts {counts}")


# (servers as (weight, name or None)), hash, distribution, hash_tag
CASES = [
    ("one server", [(1, None)], "md5", "ketama", None),
    *[(f"ketama {h}", [(1, None)] * 3, h, "ketama", None) for h in (
        "md5", "crc16", "crc32", "crc32a", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32",
        "hsieh", "murmur", "jenkins", "one_at_a_time")],
    ("ketama weights", [(1, None), (2, None), (3, None), (5, None), (10, None)], "md5", "ketama", None),
    ("ketama weights fnv1a_64", [(3, None), (1, None), (1, None), (7, None), (2, None)], "fnv1a_64", "ketama",
     None),
    ("ketama names", [(1, "alpha"), (1, "beta"), (2, "gamma"), (1, "delta"), (4, "epsilon")], "md5", "ketama", None),
    ("ketama names murmur", [(1, "cache-a"), (3, "cache-b"), (1, "cache-c")], "murmur", "ketama", None),
    ("ketama hash_tag", [(1, None)] * 5, "md5", "ketama", "{}"),
    ("modula fnv1a_64", [(1, None)] * 3, "fnv1a_64", "modula", None),
    ("modula weights crc32", [(1, None), (2, None), (3, None), (1, None), (4, None)], "crc32", "modula", None),
    ("modula weights md5", [(2, "a"), (1, "b"), (5, "c")], "md5", "modula", None),
    # nutcracker numbers servers sorted by name, shorter names first
    ("modula names out of order", [(1, "zz"), (2, "b"), (1, "aaa"), (3, "ab")], "murmur", "modula", None),
    ("modula hsieh", [(1, None)] * 5, "hsieh", "modula", None),
    ("modula jenkins hash_tag", [(1, None)] * 5, "jenkins", "modula", "{}"),
]


@pytest.mark.parametrize("what,pool,hash_name,dist,tag", CASES, ids=[c[0] for c in CASES])
def test_same_server_as_nutcracker(backends, tmp_path, what, pool, hash_name, dist, tag):
    keys = make_keys(zlib.crc32(what.encode()), tagged=tag is not None)
    lines = []
    items = []
    for i, (weight, name) in enumerate(pool):
        s = backends.servers[i]
        item = f"127.0.0.1:{s.port}:{weight}" + (f" {name}" if name else "")
        lines.append(f"    - {item}\n")
        items.append(item)
    yaml = (f"  hash: {hash_name}\n  distribution: {dist}\n  timeout: 5000\n  auto_eject_hosts: false\n"
            + (f"  hash_tag: \"{tag}\"\n" if tag else "") + "  servers:\n" + "".join(lines))
    backends.flush()
    nut = start_nutcracker(tmp_path, yaml)
    try:
        set_through(nut, keys)
    finally:
        nut.stop()
    expected = backends.holder_of(keys, len(pool))
    args = ["--distribution", dist, "--hash", hash_name, *(["--hash-tag", tag] if tag else []), *items]
    assert_same_placement(keys, expected, args, f"nutcracker {what}")


LIBMEMCACHED_CASES = [
    ("one server", [1]),
    ("three equal", [1, 1, 1]),
    ("three weighted", [1, 2, 3]),
    ("five weighted", [5, 1, 2, 1, 3]),
]


@pytest.mark.parametrize("what,weights", LIBMEMCACHED_CASES, ids=[c[0] for c in LIBMEMCACHED_CASES])
def test_same_server_as_libmemcached_weighted_ketama(backends, what, weights):
    try:
        import pylibmc
    except ImportError:
        pytest.fail("pylibmc is missing: apt-get install python3-pylibmc (scripts/install-deps.sh), and run "
                    "pytest with the system python3", pytrace=False)
    keys = make_keys(100 + len(weights) * 7 + sum(weights))
    items = [f"127.0.0.1:{backends.servers[i].port}:{w}" for i, w in enumerate(weights)]
    backends.flush()
    client = pylibmc.Client(items, behaviors={"ketama_weighted": True, "hash": "md5"})
    try:
        for k in keys:
            assert client.set(k, b"x"), k
    finally:
        client.disconnect_all()
    expected = backends.holder_of(keys, len(weights))
    assert_same_placement(keys, expected, ["--distribution", "libmemcached_ketama", "--hash", "md5", *items],
                          f"libmemcached {what}")


EJECTION_CASES = [
    ("ketama", "md5", [1, 1, 1, 1], 2),
    ("ketama", "fnv1a_64", [1, 3, 2, 1, 2], 0),
    ("modula", "crc32a", [2, 1, 1, 3], 3),
]


@pytest.mark.parametrize("dist,hash_name,weights,dead", EJECTION_CASES,
                         ids=[f"{c[0]} {c[1]} dead {c[3]}" for c in EJECTION_CASES])
def test_same_server_as_nutcracker_after_ejection(backends, tmp_path, dist, hash_name, weights, dead):
    """auto_eject_hosts: a server that refuses connections is ejected and
    nutcracker rebuilds its distribution over the others; ithaca's
    make_live_distribution (ithaca_place --down) must place keys as the
    rebuilt one does."""
    keys = make_keys(zlib.crc32(f"eject {dist} {hash_name} {dead}".encode()))
    dead_port = conftest.free_port()  # nothing listens there: connects are refused
    live = list(backends.servers)
    ports, indexed = [], []
    for i in range(len(weights)):
        if i == dead:
            ports.append(dead_port)
        else:
            s = live.pop(0)
            ports.append(s.port)
            indexed.append((i, s))
    items = [f"127.0.0.1:{p}:{w}" for p, w in zip(ports, weights)]
    yaml = (f"  hash: {hash_name}\n  distribution: {dist}\n  timeout: 2000\n  auto_eject_hosts: true\n"
            "  server_failure_limit: 1\n  server_retry_timeout: 600000\n  servers:\n"
            + "".join(f"    - {item}\n" for item in items))
    full = placed_by_tool(keys, ["--distribution", dist, "--hash", hash_name, *items])
    on_dead = [k for k in keys if full[k] == dead]
    assert on_dead, "no key maps to the dead server: pick another key set"
    backends.flush()
    nut = start_nutcracker(tmp_path, yaml)
    try:
        # A request for the dead server fails (refused connect) and ejects it;
        # from then on its keys are stored on the live servers.
        for _attempt in range(20):
            try:
                with mcwire.Conn(*nut.address, timeout=5) as c:
                    if c.call(b"set %s 0 0 1\r\nx\r\n" % on_dead[0]) == b"STORED\r\n":
                        break
            except (mcwire.ConnectionClosed, mcwire.ReplyTimeout, OSError):
                pass
        else:
            pytest.fail(f"nutcracker never ejected the dead server:\n{nut.describe()}")
        backends.flush()
        set_through(nut, keys)
    finally:
        nut.stop()
    expected = holder_of(keys, indexed)
    args = ["--distribution", dist, "--hash", hash_name, "--down", str(dead), *items]
    assert_same_placement(keys, expected, args, f"nutcracker {dist} {hash_name} with server {dead} ejected")
