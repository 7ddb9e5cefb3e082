"""A pool with mcrouter's hashes (`distribution: ch3`, its default, and
`mcrouter_crc32`) puts each key where mcrouter would: 600 keys set through
ithaca in front of three real memcacheds are found on the server an
independent Python furc_hash / crc32 names (mcrouter_hash.py), so a pool moved
from mcrouter to ithaca moves no key."""
import pytest

from mcrouter_hash import furc_hash, mcrouter_crc32
from mcwire import Conn
from test_router import addr, router_yaml


def test_python_reference_matches_mcrouters_own_values():
    assert furc_hash(b"sample", 100) == 97
    assert furc_hash(b"", 100) == 72
    assert furc_hash(b"", 1 << 23) == 6173600
    assert furc_hash(b"sample", 1 << 23) == 5167780
    up = bytes((i - 128) & 0xff for i in range(256))
    assert furc_hash(up, 99999) == 31015
    assert furc_hash(up[::-1], 99999) == 67101
    assert mcrouter_crc32(b"sample", 100) == 7
    assert mcrouter_crc32(b"sample", (1 << 30) - 1) == 822834884


@pytest.mark.parametrize("dist,place", [("ch3", furc_hash), ("mcrouter_crc32", mcrouter_crc32)])
def test_keys_land_where_mcrouter_puts_them(ithaca_factory, memcached_factory, dist, place):
    backends = [memcached_factory() for _ in range(3)]
    router = ithaca_factory(config_text=router_yaml([addr(b) for b in backends], distribution=dist))
    keys = [b"user:%d:profile" % i for i in range(300)] + [b"k%d" % i for i in range(300)]
    with Conn(router.host, router.port) as c:
        c.send(b"".join(b"set %s 0 0 1\r\nv\r\n" % k for k in keys))
        assert c.read_replies(len(keys)) == [b"STORED\r\n"] * len(keys)
    wrong = []
    counts = [0, 0, 0]
    for i, b in enumerate(backends):
        with Conn(b.host, b.port) as c:
            for k in keys:
                if c.call(b"get %s\r\n" % k) != b"END\r\n":
                    counts[i] += 1
                    if place(k, 3) != i:
                        wrong.append((k, i, place(k, 3)))
    assert sum(counts) == len(keys)
    assert not wrong, f"{len(wrong)} keys on another server than mcrouter's: {wrong[:5]}"
    assert min(counts) > 120, counts
