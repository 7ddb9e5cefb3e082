"""The router's concurrency stress differential, a short bounded run in CI
(router_stress.py says what it does and checks; scripts/router-stress runs it
for as long as a person wants). ITHACA_STRESS_SECONDS, ITHACA_STRESS_CLIENTS
and ITHACA_STRESS_SEED change the run; the seed is printed on failure."""

import os
import random
import re

import pytest

import mcwire
import router_stress
from fake_backend import FakeBackend
from test_router import addr, stats, wait_for


def open_fds(server):
    return len(os.listdir(f"/proc/{server.proc.pid}/fd"))


def rss_mib(server):
    return mcwire.vm_rss_bytes(server.proc.pid) / (1 << 20)


pytestmark = pytest.mark.alone


def test_router_stress_differential(ithaca_factory, memcached_factory, request):
    seed = int(os.environ.get("ITHACA_STRESS_SEED", random.randrange(1 << 30)))
    seconds = float(os.environ.get("ITHACA_STRESS_SECONDS", "15"))
    clients = int(os.environ.get("ITHACA_STRESS_CLIENTS", "100"))
    # -M: a memcached that runs out of memory refuses the set (a loud error
    # here) rather than evicting (a miss the model could not tell from a lost
    # write); a long run keeps every retired private key's last value.
    main = [memcached_factory(args=["-m", "2048", "-M"]) for _ in range(2)]
    flaky = memcached_factory(args=["-m", "256"])
    # The flaky pool: that memcached (stopped and resumed by the chaos), the
    # same behind a relay that answers 0.3 s late, and a server that resets
    # every connection.
    lagging = FakeBackend("lag", target=(flaky.host, flaky.port), delay=0.3)
    resetting = FakeBackend("reset")
    request.addfinalizer(lagging.close)
    request.addfinalizer(resetting.close)
    configs = router_stress.router_configs([addr(m) for m in main],
                                           [addr(flaky), lagging.address, resetting.address])
    router = ithaca_factory(args=["-c", "4096"], config_text=configs[0])
    with mcwire.Conn(router.host, router.port) as c:
        # Every backend connection open before the baseline is taken.
        for k in range(64):
            c.call(b"get warm%d f:warm%d\r\n" % (k, k))
        base_conns = int(stats(c)["curr_connections"])
    base_fds = open_fds(router)
    base_rss = rss_mib(router)
    run = router_stress.Run(router.host, router.port, seed, clients, seconds)
    chaos = router_stress.Chaos(run, router, router.argv[router.argv.index("--config") + 1], configs,
                                flaky.proc.pid)
    try:
        requests = run.go(chaos)
    except router_stress.Failure as e:
        # A stored private key that misses: where is it now? On the server
        # its key maps to (the read is wrong), elsewhere (the write went
        # astray), or nowhere (the write was lost or stored under another key).
        found = re.search(r"private key b'([^']+)' missed", str(e))
        if found:
            key = found.group(1).encode()
            held = {}
            for m in main:
                with mcwire.Conn(m.host, m.port) as c:
                    held[addr(m)] = c.call(b"get %s\r\n" % key)[:80]
            with mcwire.Conn(router.host, router.port) as c:
                held["router"] = c.call(b"get %s\r\n" % key)[:80]
                held["route"] = c.call(b"get __mcrouter__.route(get,%s)\r\n" % key)[:80]
            raise router_stress.Failure(f"{e}; {key!r} now: {held}") from e
        raise
    finally:
        with mcwire.Conn(router.host, router.port) as c:
            failures = {k: v for k, v in stats(c, "servers").items() if ":failures_" in k and v != "0"}
        print(f"seed {seed}: server failures seen by the router: {failures}")
    print(f"seed {seed}: {requests} requests checked from {clients} clients in {seconds:.0f} s, "
          f"{chaos.reloads} reloads, {chaos.stops} stops/resumes of the flaky server")
    assert requests > clients, f"seed {seed}: only {requests} requests were checked"
    # Timeouts on the undisturbed pool: only a busy machine's, a few.
    print(f"main-pool requests that timed out: {run.main_timeouts}")
    assert run.main_timeouts * 100 <= requests, f"seed {seed}: {run.main_timeouts} main-pool timeouts"

    def conns_back():
        with mcwire.Conn(router.host, router.port) as c:
            return int(stats(c)["curr_connections"]) <= base_conns

    wait_for(conns_back, timeout=15, what=f"seed {seed}: client connections back to {base_conns}")
    # Backend connections may have been recycled meanwhile (timeouts on the
    # stopped server): a few more or fewer, never one per client.
    wait_for(lambda: open_fds(router) <= base_fds + 8, timeout=15,
             what=f"seed {seed}: descriptors back near {base_fds} (now {open_fds(router)})")
    # The freed heap goes back once the clients are gone (server/memory_trim.h:
    # a trim when the connections fall to half, another once the sessions
    # that served them have ended). ASan's allocator keeps its own pools.
    limit = 400 if os.environ.get("ITHACA_SANITIZED") else 48
    after = rss_mib(router)
    try:
        wait_for(lambda: rss_mib(router) - base_rss < limit, timeout=20,
                 what=f"seed {seed}: the router's memory given back")
    finally:
        print(f"router RSS {base_rss:.0f} MiB before, {after:.0f} MiB as the clients left, "
              f"{rss_mib(router):.0f} MiB later")
