"""The Prometheus page (--metrics-listen): the figures it shows after a known
workload, what a real Prometheus scrapes from it, promtool's verdict, and the
HTTP listener's bounds against hostile clients."""

import json
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from conftest import HOST, Server, free_port, memcached_binary, start_memcached_like
from mcwire import Conn

METRICS_RE = re.compile(r"metrics: serving http://127\.0\.0\.1:(\d+)/metrics")
READ_TIMEOUT = 3.0  # metrics_listener_settings::read_timeout
MAX_CONNECTIONS = 16  # metrics_listener_settings::max_connections


def start(factory, config_text=None):
    server = factory(["--metrics-listen", f"{HOST}:0"], config_text=config_text)
    m = server.wait_for_log(METRICS_RE, 5)
    assert m, server.log
    server.metrics_port = int(m.group(1))
    return server


def http(port, raw, timeout=5.0):
    """Sends raw bytes, returns everything the server sent until it closed."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(raw)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out
            out += chunk


def status(reply):
    return int(reply.split(b" ", 2)[1])


def page(port):
    reply = http(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status(reply) == 200, reply[:200]
    head, body = reply.split(b"\r\n\r\n", 1)
    assert b"Content-Type: text/plain; version=0.0.4" in head
    assert int(re.search(rb"Content-Length: (\d+)", head).group(1)) == len(body)
    return body.decode()


def sample(text, name_and_labels):
    """The value of one sample line, e.g. 'memcached_up' or 'x{a="b"}'."""
    for line in text.splitlines():
        if line.startswith(name_and_labels + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name_and_labels} not on the page")


def workload(server):
    """3 sets, 2 get hits, 4 get misses, 1 delete hit, 1 delete miss."""
    with Conn(*server.address) as c:
        for k in (b"a", b"b", b"c"):
            c.send(b"set " + k + b" 0 0 1\r\nx\r\n")
            assert c.read_until() == b"STORED\r\n"
        c.send(b"get a b x y\r\n")
        c.read_until(b"END\r\n")
        c.send(b"get z w\r\n")
        assert c.read_until(b"END\r\n") == b"END\r\n"
        c.send(b"delete c\r\ndelete nope\r\n")
        assert c.read_until() == b"DELETED\r\n"
        assert c.read_until() == b"NOT_FOUND\r\n"


def test_page_shows_memcached_exporter_figures_after_a_known_workload(ithaca_factory):
    server = start(ithaca_factory)
    workload(server)
    text = page(server.metrics_port)
    assert sample(text, "memcached_up") == 1
    assert sample(text, 'memcached_commands_total{command="get",status="hit"}') == 2
    assert sample(text, 'memcached_commands_total{command="get",status="miss"}') == 4
    assert sample(text, 'memcached_commands_total{command="set",status="hit"}') == 3
    assert sample(text, 'memcached_commands_total{command="delete",status="hit"}') == 1
    assert sample(text, 'memcached_commands_total{command="delete",status="miss"}') == 1
    assert sample(text, "memcached_current_items") == 2
    assert sample(text, "memcached_items_total") == 3
    assert sample(text, "memcached_limit_bytes") == 64 * 1024 * 1024
    assert sample(text, "memcached_max_connections") == 1024
    assert sample(text, 'memcached_slab_current_items{slab="1"}') == 2
    # Per memcached size class: 1-byte values with 1-byte keys are 61 bytes to
    # memcached, class 1 (96-byte chunks).
    assert sample(text, 'memcached_slab_chunk_size_bytes{slab="1"}') == 96
    assert sample(text, 'memcached_slab_chunks_per_page{slab="1"}') == 10922
    assert sample(text, 'memcached_slab_current_pages{slab="1"}') == 1
    assert sample(text, 'memcached_slab_chunks_used{slab="1"}') == 2
    assert sample(text, 'memcached_slab_chunks_free{slab="1"}') == 10920
    assert sample(text, 'memcached_slab_mem_requested_bytes{slab="1"}') == 2 * 61
    assert sample(text, 'memcached_slab_commands_total{slab="1",command="get",status="hit"}') == 2
    assert sample(text, 'memcached_slab_commands_total{slab="1",command="set",status="hit"}') == 3
    assert sample(text, 'memcached_slab_commands_total{slab="1",command="delete",status="hit"}') == 1
    assert sample(text, 'memcached_slab_lru_hits_total{slab="1",lru="cold"}') == 2
    assert sample(text, 'memcached_slab_cold_items{slab="1"}') == 2
    assert sample(text, 'memcached_slab_hot_items{slab="1"}') == 0
    assert "# TYPE memcached_slab_chunks_used gauge" in text
    assert "# TYPE memcached_slab_commands_total counter" in text
    assert "# TYPE memcached_commands_total counter" in text
    assert "# TYPE memcached_current_connections gauge" in text
    # Two workers (conftest's -t 2), each with its runtime figures.
    assert sample(text, 'ithaca_worker_coroutines{worker="0"}') >= 1
    assert sample(text, 'ithaca_worker_coroutines{worker="1"}') >= 1


def test_promtool_accepts_the_page(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    server = start(ithaca_factory, f"""
pools:
  main:
    servers: [{HOST}:{backend.port}]
route:
  type: pool
  pool: main
""")
    with Conn(*server.address) as c:
        c.send(b"set k 0 0 1\r\nv\r\nget k\r\n")
        assert c.read_until(b"END\r\n") == b"STORED\r\nVALUE k 0 1\r\nv\r\nEND\r\n"
    text = page(server.metrics_port)
    assert "# TYPE ithaca_server_latency_seconds histogram" in text
    assert sample(text, f'ithaca_server_latency_seconds_count{{pool="main",server="{HOST}:{backend.port}"}}') == 2
    promtool_accepts(text)


def promtool_accepts(text):
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing (apt-get install prometheus; scripts/install-deps.sh)"
    r = subprocess.run([promtool, "check", "metrics"], input=text.encode(), capture_output=True, timeout=20)
    problems = (r.stdout + r.stderr).decode().strip().splitlines()
    # Exit 1 is a parse error; 3 is lint advice. The one piece of advice is on
    # memcached_exporter's own name, kept for its dashboards.
    assert r.returncode in (0, 3), problems
    assert all(p.startswith("memcached_uptime_seconds ") for p in problems), problems


def test_wrong_path_method_and_malformed_requests(ithaca_factory):
    server = start(ithaca_factory)
    port = server.metrics_port
    assert status(http(port, b"GET / HTTP/1.1\r\n\r\n")) == 404
    assert status(http(port, b"GET /metricsx HTTP/1.1\r\n\r\n")) == 404
    reply = http(port, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
    assert status(reply) == 405 and b"Allow: GET, HEAD" in reply
    assert status(http(port, b"garbage\r\n\r\n")) == 400
    assert status(http(port, b"GET /metrics HTTP/1.1\r\nbad header\r\n\r\n")) == 400
    head = http(port, b"HEAD /metrics HTTP/1.1\r\n\r\n")
    assert status(head) == 200 and head.endswith(b"\r\n\r\n")
    assert status(http(port, b"GET /metrics?x=1 HTTP/1.0\r\n\r\n")) == 200


def test_huge_header_is_refused(ithaca_factory):
    server = start(ithaca_factory)
    reply = http(server.metrics_port, b"GET /metrics HTTP/1.1\r\nX-Pad: " + b"a" * 100000 + b"\r\n\r\n")
    assert status(reply) == 431


def test_slowloris_is_cut_off_and_the_limit_refuses_the_rest(ithaca_factory):
    server = start(ithaca_factory)
    port = server.metrics_port
    slow = []
    try:
        for _ in range(MAX_CONNECTIONS):
            s = socket.create_connection((HOST, port), timeout=5)
            s.sendall(b"GET /metrics HTTP/1.1\r\n")  # and never the rest
            slow.append(s)
        # Every slot taken: the next client is refused at once (503, or a
        # reset when its request came after the refusal read the socket).
        answered = 0
        for _ in range(5):
            try:
                reply = http(port, b"GET /metrics HTTP/1.1\r\n\r\n")
            except ConnectionResetError:
                continue
            assert status(reply) == 503
            answered += 1
        assert answered > 0
        # The workers are not concerned: the cache still answers.
        with Conn(*server.address) as c:
            c.send(b"version\r\n")
            assert c.read_until().startswith(b"VERSION ")
        # Each slow client is answered 408 and closed within the read timeout.
        started = time.monotonic()
        for s in slow:
            s.settimeout(READ_TIMEOUT + 3)
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            assert status(data) == 408
        assert time.monotonic() - started < READ_TIMEOUT + 2
    finally:
        for s in slow:
            s.close()
    # The slots are free again.
    deadline = time.monotonic() + 2
    while status(http(port, b"GET /metrics HTTP/1.1\r\n\r\n")) != 200:
        assert time.monotonic() < deadline
        time.sleep(0.05)


# ---------------------------------------------------------------- a real Prometheus

def prometheus_query(port, query):
    url = f"http://{HOST}:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(url, timeout=2) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return [(s["metric"], float(s["value"][1])) for s in body["data"]["result"]]


def wait_for_query(port, query, expected, timeout):
    """Polls until `query` has exactly one result equal to `expected`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = prometheus_query(port, query)
            if len(last) == 1 and last[0][1] == expected:
                return
        except OSError as e:  # Prometheus still starting
            last = e
        time.sleep(0.2)
    raise AssertionError(f"{query}: wanted {expected}, last answer {last}")


@pytest.fixture
def prometheus(tmp_path):
    binary = shutil.which("prometheus")
    assert binary, "prometheus is missing (apt-get install prometheus; scripts/install-deps.sh)"
    started = []

    def make(targets):
        jobs = "\n".join(f"""  - job_name: {name}
    static_configs:
      - targets: ['{HOST}:{port}']""" for name, port in targets.items())
        config = tmp_path / "prometheus.yml"
        config.write_text(f"global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n{jobs}\n")
        port = free_port()
        server = Server("prometheus", [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                                       f"--web.listen-address={HOST}:{port}"])
        server.port = port
        started.append(server)
        assert server.wait_accepting(10), server.describe()
        return server

    yield make
    for server in started:
        server.stop()


def test_prometheus_scrapes_ithaca(ithaca_factory, memcached_factory, prometheus):
    cache = start(ithaca_factory)
    up = memcached_factory()
    # Killed on purpose below, so not the factory's (it fails a test whose
    # memcached died by a signal).
    doomed = start_memcached_like("memcached", memcached_binary(), [])
    try:
        run_prometheus_test(ithaca_factory, prometheus, cache, up, doomed)
    finally:
        doomed.stop()


def run_prometheus_test(ithaca_factory, prometheus, cache, up, doomed):
    router = start(ithaca_factory, f"""
pools:
  main:
    servers: [{HOST}:{up.port}, {HOST}:{doomed.port}]
    retry_interval: 10s
route:
  type: pool
  pool: main
""")
    workload(cache)
    prom = prometheus({"cache": cache.metrics_port, "router": router.metrics_port})
    wait_for_query(prom.port, 'memcached_up{job="cache"}', 1, 10)
    wait_for_query(prom.port, 'memcached_commands_total{job="cache",command="get",status="hit"}', 2, 5)
    wait_for_query(prom.port, 'memcached_commands_total{job="cache",command="get",status="miss"}', 4, 5)
    doomed_label = f'{{job="router",server="{HOST}:{doomed.port}"}}'
    wait_for_query(prom.port, "ithaca_server_up" + doomed_label, 1, 5)
    # Kill one backend; requests for its keys fail (a refused connect marks
    # it down at once) and the next scrapes show it.
    doomed.stop()
    with Conn(*router.address) as c:
        for i in range(40):
            c.send(f"get key{i}\r\n".encode())
            c.read_until(b"\r\n")  # END, or SERVER_ERROR for the dead server's keys
    wait_for_query(prom.port, "ithaca_server_up" + doomed_label, 0, 5)
    wait_for_query(prom.port, f'ithaca_server_up{{job="router",server="{HOST}:{up.port}"}}', 1, 5)
    # The histogram answers a quantile query.
    result = prometheus_query(prom.port, 'histogram_quantile(0.5, ithaca_pool_latency_seconds_bucket{job="router"})')
    assert len(result) == 1


def test_a_taken_metrics_port_fails_the_start():
    from conftest import ithaca_binary
    taken = socket.socket()
    taken.bind((HOST, 0))
    taken.listen()
    try:
        path, _ = ithaca_binary()
        server = Server("ithaca", [path, "-l", HOST, "-p", "0", "-U", "0", "-t", "1",
                                   "--metrics-listen", f"{HOST}:{taken.getsockname()[1]}"])
        try:
            assert server.proc.wait(10) == 1, server.describe()
            assert "metrics listen" in server.log and "listening on tcp" not in server.log, server.log
        finally:
            server.stop()
    finally:
        taken.close()


def test_stats_latency_over_the_wire_matches_the_page(ithaca_factory, memcached_factory):
    backend = memcached_factory()
    server = start(ithaca_factory, f"""
pools:
  main:
    servers: [{HOST}:{backend.port}]
route:
  type: pool
  pool: main
""")
    with Conn(*server.address) as c:
        for i in range(5):
            c.send(f"get k{i}\r\n".encode())
            assert c.read_until() == b"END\r\n"
        c.send(b"stats latency\r\n")
        lines = c.read_until(b"END\r\n").decode().splitlines()
    stats = dict(line.split(" ", 2)[1:] for line in lines if line.startswith("STAT "))
    prefix = f"main/{HOST}:{backend.port}:"
    assert stats[prefix + "latency_count"] == "5"
    assert int(stats[prefix + "latency_le_5242880"]) == 5
    assert int(stats[prefix + "latency_sum_us"]) > 0
    text = page(server.metrics_port)
    labels = f'pool="main",server="{HOST}:{backend.port}"'
    assert sample(text, f"ithaca_server_latency_seconds_count{{{labels}}}") == 5
    assert sample(text, f"ithaca_server_latency_seconds_sum{{{labels}}}") == int(stats[prefix + "latency_sum_us"]) / 1e6
    assert sample(text, f'ithaca_server_latency_seconds_bucket{{{labels},le="0.000256"}}') == \
        int(stats[prefix + "latency_le_256"])


# ---------------------------------------------------------------- route nodes

ROUTE_SAMPLE_RE = re.compile(r'^(ithaca_route_\w+)\{([^}]*)\} (\S+)$')


def route_samples(text):
    """{(family, node): (labels, value)} of every ithaca_route_* sample."""
    out = {}
    for line in text.splitlines():
        m = ROUTE_SAMPLE_RE.match(line)
        if m:
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
            out[(m.group(1), labels["node"])] = (labels, float(m.group(3)))
    return out


def stats_routes(server):
    with Conn(*server.address) as c:
        c.send(b"stats routes\r\n")
        lines = c.read_until(b"END\r\n").decode().splitlines()
    return dict(line.split(" ", 2)[1:] for line in lines if line.startswith("STAT "))


def node_of(routes, kind_and_name):
    [node] = [k.split(":")[1] for k, v in routes.items() if v == kind_and_name and k.count(":") == 1]
    return node


def gets(server, keys):
    with Conn(*server.address) as c:
        for key in keys:
            c.send(b"get " + key + b"\r\n")
            assert c.read_until(b"\r\n") == b"END\r\n", key


def test_route_nodes_show_their_counts_to_promtool_and_prometheus(ithaca_factory, memcached_factory, prometheus):
    a, backup = memcached_factory(), memcached_factory()
    # Killed on purpose below, so not the factory's.
    primary = start_memcached_like("memcached", memcached_binary(), [])
    try:
        pools = "".join(f'  {name}: {{servers: ["{HOST}:{m.port}"], timeout: 5s}}\n'
                        for name, m in (("a", a), ("primary", primary), ("backup", backup)))
        router = start(ithaca_factory, f"""pools:
{pools}route:
  type: prefix
  name: top
  prefixes:
    "a:": pool:a
    "f:": {{type: failover, name: fo, children: [pool:primary, pool:backup]}}
""")
        # 7 gets to prefix a:, 5 to the failover's primary, then the primary
        # dies and 4 more fail over to the backup (a miss there: END).
        gets(router, [b"a:%d" % i for i in range(7)])
        gets(router, [b"f:%d" % i for i in range(5)])
        primary.stop()
        gets(router, [b"f:after%d" % i for i in range(4)])
    finally:
        primary.stop()
    routes = stats_routes(router)
    text = page(router.metrics_port)
    samples = route_samples(text)
    expected = {
        ("prefix top", "requests"): 16,
        ("pool pool:a", "requests"): 7,
        ("failover fo", "requests"): 9,
        ("failover fo", "failovers"): 4,
        ("pool pool:primary", "requests"): 9,
        ("pool pool:backup", "requests"): 4,
        ("error no_prefix", "requests"): 0,
    }
    for (kind_and_name, field), count in expected.items():
        node = node_of(routes, kind_and_name)
        assert int(routes[f"route:{node}:{field}"]) == count, (kind_and_name, field, routes)
        labels, value = samples[(f"ithaca_route_{field}_total", node)]
        kind, name = kind_and_name.split(" ")
        # An unnamed node has an empty name; one listener: no listener label.
        assert labels == {"node": node, "kind": kind, "name": name}, labels
        assert value == count, (kind_and_name, field)
    # Every node of `stats routes` is on the page, and nothing else.
    nodes = {k.split(":")[1] for k in routes if k.startswith("route:")}
    assert {node for (family, node) in samples if family == "ithaca_route_requests_total"} == nodes
    assert "# TYPE ithaca_route_failovers_total counter" in text
    assert "# TYPE ithaca_async_in_flight gauge" in text
    promtool_accepts(text)
    prom = prometheus({"router": router.metrics_port})
    wait_for_query(prom.port, 'ithaca_route_failovers_total{job="router",kind="failover",name="fo"}', 4, 10)
    wait_for_query(prom.port, 'sum(ithaca_route_requests_total{job="router",kind="pool"})', 20, 5)


def test_route_nodes_carry_the_listener_that_reaches_them(ithaca_factory, memcached_factory, tmp_path):
    p, q = memcached_factory(), memcached_factory()
    router = start(ithaca_factory, f"""logging:
  level: info
pools:
  p: {{servers: ["{HOST}:{p.port}"], timeout: 5s}}
  q: {{servers: ["{HOST}:{q.port}"], timeout: 5s}}
routes:
  shared: {{type: pool, pool: p}}
route: shared
listeners:
  - listen: {HOST}:0
    route: {{type: failover, name: other, children: [shared, pool:q]}}
""")
    m = wait_for_log_match(router, re.compile(r"listening on tcp 127\.0\.0\.1:(\d+) \(its own route: listeners\[0\]\)"))
    gets(router, [b"main%d" % i for i in range(2)])
    with Conn(HOST, int(m.group(1))) as c:
        for i in range(3):
            c.send(b"get other%d\r\n" % i)
            assert c.read_until(b"\r\n") == b"END\r\n"
    routes = stats_routes(router)
    samples = route_samples(page(router.metrics_port))
    # The named route both trees use is the first listener's (`listen:`, 0).
    shared = node_of(routes, "pool shared")
    assert routes[f"route:{shared}:listener"] == "0"
    assert samples[("ithaca_route_requests_total", shared)] == (
        {"node": shared, "kind": "pool", "name": "shared", "listener": "0"}, 5)
    other = node_of(routes, "failover other")
    assert samples[("ithaca_route_requests_total", other)] == (
        {"node": other, "kind": "failover", "name": "other", "listener": "1"}, 3)
    q_node = node_of(routes, "pool pool:q")
    assert samples[("ithaca_route_requests_total", q_node)][0]["listener"] == "1"
    # A reload of the same file builds the same nodes under the same labels;
    # they are new nodes, so their counters start again (a counter reset).
    router.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5
    while "is valid; applied" not in router.log:
        assert time.monotonic() < deadline, router.log
        time.sleep(0.05)
    after = route_samples(page(router.metrics_port))
    assert set(after) == set(samples)
    assert after[("ithaca_route_requests_total", other)] == (samples[("ithaca_route_requests_total", other)][0], 0)


def wait_for_log_match(server, regex):
    m = server.wait_for_log(regex, 5)
    assert m, server.log
    return m


# ---------------------------------------------------------------- replies by result

RESULT_NAMES = ("found", "notfound", "stored", "notstored", "exists", "deleted", "touched", "ok", "number",
                "error", "client_error", "remote_error")


def result_workload(server):
    """A workload whose backend answers are known: see EXPECTED_RESULTS."""
    with Conn(*server.address) as c:
        def ask(request, reply_end=b"\r\n"):
            c.send(request)
            return c.read_until(reply_end)
        for k in (b"a", b"b", b"c"):
            assert ask(b"set " + k + b" 0 0 1\r\nx\r\n") == b"STORED\r\n"
        assert ask(b"add a 0 0 1\r\ny\r\n") == b"NOT_STORED\r\n"
        assert ask(b"get a b x y\r\n", b"END\r\n").count(b"VALUE ") == 2
        assert ask(b"get z\r\n") == b"END\r\n"
        assert ask(b"delete c\r\n") == b"DELETED\r\n"
        assert ask(b"delete nope\r\n") == b"NOT_FOUND\r\n"
        assert ask(b"incr a 1\r\n").startswith(b"CLIENT_ERROR ")
        assert ask(b"set n 0 0 1\r\n5\r\n") == b"STORED\r\n"
        assert ask(b"incr n 2\r\n") == b"7\r\n"
        assert ask(b"touch n 100\r\n") == b"TOUCHED\r\n"
        assert ask(b"cas a 0 0 1 999999\r\nz\r\n") == b"EXISTS\r\n"
        assert ask(b"mg a v\r\n", b"x\r\n") == b"VA 1\r\nx\r\n"
        assert ask(b"mg nope v\r\n") == b"EN\r\n"
        assert ask(b"ms m 1\r\nz\r\n") == b"HD\r\n"
        assert ask(b"mg nope2 v q\r\nmn\r\n") == b"MN\r\n"


EXPECTED_RESULTS = {"found": 3, "notfound": 6, "stored": 5, "notstored": 1, "exists": 1, "deleted": 1,
                    "touched": 1, "ok": 0, "number": 1, "error": 0,
                    "client_error": 1,  # the non-numeric incr: memcached's CLIENT_ERROR (mcrouter's client_error)
                    "remote_error": 0}


@pytest.mark.parametrize("protocol", ["ascii", "meta"])
def test_replies_by_result_per_server_and_pool(ithaca_factory, protocol):
    """Each backend answer is counted by what it said (mcrouter's result
    names), a retrieval once per key, the same whichever protocol the router
    speaks to the server; `stats servers`, `stats pools` and the page agree."""
    # Stopped on purpose below, so not the factory's (it fails a test whose
    # memcached died by a signal).
    backend = start_memcached_like("memcached", memcached_binary(), [])
    try:
        run_results_test(ithaca_factory, backend, protocol)
    finally:
        backend.stop()


def run_results_test(ithaca_factory, backend, protocol):
    server = start(ithaca_factory, f"""
pools:
  main:
    servers: [{HOST}:{backend.port}]
    protocol: {protocol}
route:
  type: pool
  pool: main
""")
    result_workload(server)
    with Conn(*server.address) as c:
        c.send(b"stats servers\r\n")
        servers = c.read_until(b"END\r\n").decode().splitlines()
        c.send(b"stats pools\r\n")
        pools = c.read_until(b"END\r\n").decode().splitlines()
    servers = dict(line.split(" ", 2)[1:] for line in servers if line.startswith("STAT "))
    pools = dict(line.split(" ", 2)[1:] for line in pools if line.startswith("STAT "))
    prefix = f"main/{HOST}:{backend.port}:"
    got = {r: int(servers[prefix + "replies_" + r]) for r in RESULT_NAMES}
    assert got == EXPECTED_RESULTS
    assert {r: int(pools["main:replies_" + r]) for r in RESULT_NAMES} == EXPECTED_RESULTS
    text = page(server.metrics_port)
    labels = f'pool="main",server="{HOST}:{backend.port}"'
    for r, n in EXPECTED_RESULTS.items():
        assert sample(text, f'ithaca_server_reply_results_total{{{labels},result="{r}"}}') == n, r
        assert sample(text, f'ithaca_pool_reply_results_total{{pool="main",result="{r}"}}') == n, r

    # A server that does not answer adds failures, never results.
    backend.stop()
    with Conn(*server.address) as c:
        c.send(b"get a\r\n")
        assert c.read_until(b"\r\n").startswith(b"SERVER_ERROR")
        c.send(b"stats servers\r\n")
        after = c.read_until(b"END\r\n").decode().splitlines()
    after = dict(line.split(" ", 2)[1:] for line in after if line.startswith("STAT "))
    assert {r: int(after[prefix + "replies_" + r]) for r in RESULT_NAMES} == EXPECTED_RESULTS
    assert sum(int(v) for k, v in after.items() if k.startswith(prefix + "failures_")) >= 1
