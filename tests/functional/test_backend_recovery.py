"""A backend killed and restarted on the same port under load is used again
within retry_interval, every time, however long it was away (issue 20 item
7: once in 12 runs a restarted memcached got no request 4.4 s after it was
back, with retry_interval 500 ms: the prober's interval had doubled while it
was away. A refused connect now keeps the interval at retry_interval)."""

import threading
import time

import mcwire
from conftest import free_port
from test_router import addr, router_yaml, start_memcached_on

RETRY_S = 0.1
RETRY_MAX_S = 5.0
# Past the prober's wait (+20% jitter): a probe, and the first requests
# reaching a loaded machine's memcached.
SLACK_S = 1.5
# How long each kill leaves the server down before the restart: before the
# first probe, around it, and long enough for a doubling interval to have
# grown past a second (0.1, 0.2, 0.4, 0.8, 1.6, 3.2 s).
DOWN_TIMES = [0.0, 0.05, 0.15, 0.3, 0.6, 0.9, 1.3, 1.7, 4.0, 0.45, 2.2, 0.02]


def memcached_stats(server):
    try:
        with mcwire.Conn(server.host, server.port, timeout=2.0) as c:
            c.send(b"stats\r\n")
            s = mcwire.parse_stats(c.read_reply())
        return int(s["cmd_get"]), int(s["get_hits"])
    except (OSError, AssertionError):
        return 0, 0


def load(router, stop, errors):
    """One client: set then get keys over both servers until stopped; a
    failed request is expected while a server is down."""
    keys = [b"key:%d" % i for i in range(64)]
    i = 0
    conn = None
    while not stop.is_set():
        try:
            if conn is None:
                conn = mcwire.Conn(router.host, router.port, timeout=5.0)
            k = keys[i % len(keys)]
            conn.call(b"set %s 0 0 1\r\nx\r\n" % k)
            conn.call(b"get %s\r\n" % k)
        except (OSError, AssertionError) as e:
            errors.append(repr(e))
            if conn is not None:
                conn.close()
            conn = None
        i += 1
        time.sleep(0.001)  # a steady load, not a busy loop on 2 shared cores
    if conn is not None:
        conn.close()


def test_restarted_backend_is_used_again_every_time(ithaca_factory):
    ports = [free_port(), free_port()]
    servers = [start_memcached_on(p) for p in ports]
    router = ithaca_factory(config_text=router_yaml(
        [addr(s) for s in servers], workers=2, hash="md5", timeout="1s", connect_timeout="300ms",
        retry_interval=f"{int(RETRY_S * 1000)}ms", retry_interval_max=f"{int(RETRY_MAX_S * 1000)}ms"))
    stop = threading.Event()
    errors = []
    clients = [threading.Thread(target=load, args=(router, stop, errors), daemon=True) for _ in range(4)]
    for t in clients:
        t.start()
    took = []
    try:
        # Both servers serve before the first kill.
        for s in servers:
            deadline = time.monotonic() + 5
            while memcached_stats(s)[0] < 20:
                assert time.monotonic() < deadline, f"{addr(s)} never got requests"
                time.sleep(0.02)
        for round_, down in enumerate(DOWN_TIMES):
            victim = round_ % 2
            servers[victim].stop()  # SIGKILL
            time.sleep(down)  # the scenario: how long the server stays away
            servers[victim] = start_memcached_on(ports[victim])
            t0 = time.monotonic()
            deadline = t0 + RETRY_S * 1.2 + SLACK_S
            while True:
                gets, hits = memcached_stats(servers[victim])
                if gets >= 20 and hits >= 1:
                    took.append(round(time.monotonic() - t0, 2))
                    break
                assert time.monotonic() < deadline, (
                    f"round {round_} (down {down}s): the restarted {addr(servers[victim])} got {gets} gets, "
                    f"{hits} hits in {RETRY_S * 1.2 + SLACK_S:.2f}s; earlier rounds took {took}\n"
                    f"router log:\n{router.log[-3000:]}")
                time.sleep(0.02)
        print("recovery after each restart (s):", took)
    finally:
        stop.set()
        for t in clients:
            t.join(10)
        for s in servers:
            s.stop()
