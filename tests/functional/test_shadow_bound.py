"""A shadow's outstanding copies per server are bounded (the pool's
`max_shadow_requests`, mcrouter's --target-max-shadow-requests): past the
bound a copy is dropped, not sent, and counted (`stats servers`:
failures_shadow_full). Real memcacheds; the shadow one behind a relay that
answers each request 1.5 s late, so the copies stay outstanding."""

import time

import mcwire
from fake_backend import FakeBackend
from test_router import addr, stats
from test_ascii_diff import SERVER_ARGS


def shadow_config(main, shadow, bound):
    lines = ["pools:",
             "  main:", f'    servers: ["{main}"]', "    protocol: ascii",
             "  shadow:", f'    servers: ["{shadow}"]', "    protocol: ascii", "    timeout: 10s"]
    if bound is not None:
        lines.append(f"    max_shadow_requests: {bound}")
    lines += ["route: {type: shadow, normal: pool:main, shadows: [{route: pool:shadow}]}"]
    return "\n".join(lines) + "\n"


def run(ithaca_factory, memcached_factory, bound):
    """Ten sets through the router; returns (the keys the shadow memcached
    got, the shadow server's stats servers lines)."""
    main = memcached_factory(args=SERVER_ARGS)
    shadow = memcached_factory(args=SERVER_ARGS)
    relay = FakeBackend("lag", target=(shadow.host, shadow.port), delay=1.5)
    try:
        router = ithaca_factory(args=["-t", "1"], config_text=shadow_config(addr(main), relay.address, bound))
        keys = [b"k%d" % i for i in range(10)]
        with mcwire.Conn(router.host, router.port) as c:
            t0 = time.monotonic()
            for k in keys:
                assert c.call(b"set %s 0 0 1\r\nv\r\n" % k) == b"STORED\r\n"
            # The normal route answers at once: the shadow's lag is not the client's.
            assert time.monotonic() - t0 < 1.0
            prefix = f"shadow/{relay.address}:"
            time.sleep(2.0)  # every copy sent has been answered by now (1.5 s late)
            s = stats(c, "servers")
            assert s[prefix + "inflight"] == "0", s
        with mcwire.Conn(shadow.host, shadow.port) as d:
            got = [k for k in keys if d.call(b"get %s\r\n" % k) != b"END\r\n"]
        return got, {k[len(prefix):]: v for k, v in s.items() if k.startswith(prefix)}
    finally:
        relay.close()


def test_shadow_copies_past_the_bound_are_dropped(ithaca_factory, memcached_factory):
    got, s = run(ithaca_factory, memcached_factory, 2)
    assert got == [b"k0", b"k1"], got  # the first two were outstanding for 1.5 s
    assert s["failures_shadow_full"] == "8" and s["requests"] == "10" and s["replies"] == "2", s
    assert s["state"] == "up", s  # a dropped copy is no failure of the server's


def test_without_a_bound_every_copy_is_sent(ithaca_factory, memcached_factory):
    got, s = run(ithaca_factory, memcached_factory, None)
    assert len(got) == 10, got
    assert s["failures_shadow_full"] == "0" and s["replies"] == "10", s
