"""The sample router config a new user tries first (config/router.yaml, the
README's example) spreads ordinary keys over its servers: 200 keys k0..k199
over two real memcacheds split no worse than 70/130. With fnv1a_64 ketama
(twemproxy's default) they all land on one server, as nutcracker puts them;
the sample and ithaca's default when `hash:` is omitted are md5 (libmemcached's
and most clients' placement)."""
import pathlib
import re

import pytest

from conftest import ithaca_binary
from mcwire import Conn
from test_config_file import run_bounded
from test_placement import holder_of, set_through

ROOT = pathlib.Path(__file__).resolve().parents[2]
KEYS = [b"k%d" % i for i in range(200)]


def sample_with(servers, drop_hash=False):
    """config/router.yaml with its two servers replaced by `servers`. Each
    keeps the sample's address as its ketama name (twemproxy's "host:port:weight
    name"; without a name the address is what ketama hashes), so the keys land
    exactly where they do for a user who runs the sample on its own ports,
    while the test's memcacheds use free ports."""
    text = (ROOT / "config" / "router.yaml").read_text()
    ports = re.findall(r"^\s+- 127\.0\.0\.1:(\d+):1$", text, re.M)
    assert len(ports) == 2, "config/router.yaml no longer lists two 127.0.0.1 servers"
    for port, s in zip(ports, servers):
        text = text.replace(f"127.0.0.1:{port}:1", f"127.0.0.1:{s.port}:1 127.0.0.1:{port}")
    if drop_hash:
        text, n = re.subn(r"^\s+hash: .*\n", "", text, flags=re.M)
        assert n == 1
    return text


def split_of(servers, router):
    set_through(router, KEYS)
    holder = holder_of(KEYS, list(enumerate(servers)))
    return [sum(1 for k in KEYS if holder[k] == i) for i in range(len(servers))], holder


def flush(servers):
    for s in servers:
        with Conn(*s.address) as c:
            assert c.call(b"flush_all\r\n") == b"OK\r\n"


def test_the_sample_router_config_spreads_k0_to_k199(ithaca_factory, memcached_factory):
    servers = [memcached_factory() for _ in range(2)]
    router = ithaca_factory(config_text=sample_with(servers))
    counts, _ = split_of(servers, router)
    assert min(counts) >= 70, f"k0..k199 split {counts} over the sample's two servers"
    flush(servers)
    users = [b"user:%d:profile" % i for i in range(5000)]
    set_through(router, users)
    holder = holder_of(users, list(enumerate(servers)))
    counts = [sum(1 for k in users if holder[k] == i) for i in range(2)]
    assert min(counts) >= 2000, f"user:N:profile split {counts}"


def test_omitted_hash_is_md5(ithaca_factory, memcached_factory, tmp_path):
    """Without `hash:` the pool hashes with md5: every key lands where the
    sample (hash: md5) puts it, and the split is as even."""
    servers = [memcached_factory() for _ in range(2)]
    text = sample_with(servers)
    assert re.search(r"^\s+hash: md5\b", text, re.M), "the sample should say hash: md5"
    first = ithaca_factory(config_text=text)
    _, by_sample = split_of(servers, first)
    flush(servers)
    second = ithaca_factory(config_text=sample_with(servers, drop_hash=True))
    counts, by_default = split_of(servers, second)
    assert by_default == by_sample
    assert min(counts) >= 70, counts


def test_the_sample_route_tree_passes_check_config():
    """config/routes.yaml (every route kind, README's "Routes") is what
    `ithaca --check-config` accepts as it is; a typo in its tree is refused at
    its line."""
    binary, is_memcached = ithaca_binary()
    if is_memcached:
        pytest.skip("an ithaca option (--check-config)")
    sample = ROOT / "config" / "routes.yaml"
    rc, out, why = run_bounded([binary, "--check-config", "--config", str(sample)])
    assert why is None and (rc, out.strip()) == (0, "configuration OK"), out


def test_a_mistake_in_the_sample_route_tree_is_refused_at_its_line(tmp_path):
    binary, is_memcached = ithaca_binary()
    if is_memcached:
        pytest.skip("an ithaca option (--check-config)")
    lines = (ROOT / "config" / "routes.yaml").read_text().split("\n")
    at = next(i for i, l in enumerate(lines) if l.strip() == "type: all_sync")
    lines[at] = lines[at].replace("all_sync", "all_synk")
    broken = tmp_path / "routes.yaml"
    broken.write_text("\n".join(lines))
    rc, out, why = run_bounded([binary, "--check-config", "--config", str(broken)])
    assert why is None and rc == 1, out
    assert f"{broken}:{at + 1}: unknown route type 'all_synk' (did you mean 'all_sync'?)" in out, out
