"""The kernel-floor reference of scripts/bench/run (scripts/bench/canned_server.c): a
memcached-ascii server that stores nothing and answers canned replies. The floor table is
only true if it speaks enough of the protocol for the loadgen to count every request as
answered (gets as hits of the row's value size, sets as STORED), in order, across partial
reads and writes. The binary is the one meson built beside $ITHACA_BIN
(build/scripts/canned_server), or $CANNED_SERVER_BIN."""
import json
import subprocess

import pytest

import mcwire
from conftest import HOST, LISTEN_RE, SANITIZER_MARKERS, Server
from test_bench_loadgen import bench_tool, loadgen_binary


def canned_binary():
    return bench_tool("canned_server", "CANNED_SERVER_BIN")


@pytest.fixture
def canned():
    """start(value_size): a canned server on an ephemeral port, started with the flags
    scripts/bench/run's Server passes (memcached's, which it must skip)."""
    started = []

    def start(value_size=100):
        argv = [canned_binary(), "-l", HOST, "-U", "0", "-t", "1", "-m", "1024", "-c", "20000",
                "-V", str(value_size), "-p", "0"]
        s = Server("canned_server", argv)
        started.append(s)
        m = s.wait_for_log(LISTEN_RE, 10)
        assert m, s.describe()
        s.port = int(m.group(1))
        assert s.port != 0
        return s

    yield start
    for s in started:
        alive = s.proc.poll() is None
        s.stop()
        assert alive, f"canned_server died during the test:\n{s.describe()}"
        assert not any(m in s.log for m in SANITIZER_MARKERS), s.describe()


def value(key, size, cas=b""):
    return b"VALUE " + key + b" 0 " + str(size).encode() + cas + b"\r\n" + b"x" * size + b"\r\n"


def test_get_of_one_and_of_three_keys(canned):
    s = canned(100)
    with mcwire.Conn(HOST, s.port) as c:
        assert c.call(b"get k1\r\n") == value(b"k1", 100) + b"END\r\n"
        assert c.call(b"get a bb  ccc\r\n") == \
            value(b"a", 100) + value(b"bb", 100) + value(b"ccc", 100) + b"END\r\n"
        assert c.call(b"gets k\r\n") == value(b"k", 100, b" 1") + b"END\r\n"


def test_value_size_comes_from_the_command_line(canned):
    s = canned(4096)
    with mcwire.Conn(HOST, s.port) as c:
        assert c.call(b"get big\r\n") == value(b"big", 4096) + b"END\r\n"


def test_set_whose_data_block_spans_reads_is_stored_once(canned):
    s = canned()
    with mcwire.Conn(HOST, s.port) as c:
        # The get's reply proves the server read the first part (and holds the set
        # half-way through its data block) before the rest is sent.
        c.send(b"get g\r\nset k 0 0 10\r\nabcd")
        assert c.read_reply() == value(b"g", 100) + b"END\r\n"
        c.send(b"efghij\r\n")
        assert c.read_reply() == b"STORED\r\n"
        # Split between the data and its \r\n, and a block far larger than a read.
        c.send(b"get g\r\nset k 0 0 100000\r\n" + b"v" * 100000)
        assert c.read_reply() == value(b"g", 100) + b"END\r\n"
        c.send(b"\r\n")
        assert c.read_reply() == b"STORED\r\n"
        # Exactly one STORED each: the next reply is the get's.
        assert c.call(b"get after\r\n") == value(b"after", 100) + b"END\r\n"


def test_pipelined_batch_answers_in_order(canned):
    s = canned(5)
    with mcwire.Conn(HOST, s.port) as c:
        c.send(b"get a\r\nset b 1 2 3\r\nxyz\r\ncas c 0 0 1 77\r\nq\r\nappend d 0 0 0\r\n\r\nget e f\r\n")
        assert c.read_replies(5) == [value(b"a", 5) + b"END\r\n", b"STORED\r\n", b"STORED\r\n",
                                     b"STORED\r\n", value(b"e", 5) + value(b"f", 5) + b"END\r\n"]


def test_unknown_and_malformed_commands_get_error(canned):
    s = canned()
    with mcwire.Conn(HOST, s.port) as c:
        assert c.call(b"flush_all\r\n") == b"ERROR\r\n"
        assert c.call(b"get\r\n") == b"ERROR\r\n"           # no key
        assert c.call(b"set k 0 0\r\n") == b"ERROR\r\n"     # no byte count
        assert c.call(b"set k 0 0 x\r\n") == b"CLIENT_ERROR bad command line format\r\n"
        assert c.call(b"\r\n") == b"ERROR\r\n"
        assert c.call(b"get k\r\n") == value(b"k", 100) + b"END\r\n"  # still in step


def test_noreply_answers_nothing(canned):
    s = canned()
    with mcwire.Conn(HOST, s.port) as c:
        c.send(b"set a 0 0 3 noreply\r\nabc\r\ncas b 0 0 1 9 noreply\r\nz\r\nget s\r\n")
        # The get's reply is the first thing that comes back.
        assert c.read_reply() == value(b"s", 100) + b"END\r\n"


def test_replies_larger_than_the_socket_buffers_arrive_whole(canned):
    # 24 pipelined gets of 1 MiB each: the server must stop at a full socket, keep what
    # it has not written, and go on (EPOLLOUT) while the client is slow to read.
    size = 1 << 20
    s = canned(size)
    with mcwire.Conn(HOST, s.port) as c:
        c.send(b"".join(b"get k%d\r\n" % i for i in range(24)))
        for i in range(24):
            assert c.read_reply() == value(b"k%d" % i, size) + b"END\r\n"


def test_a_line_that_never_ends_closes_the_connection(canned):
    s = canned()
    with mcwire.Conn(HOST, s.port) as c:
        c.send(b"get " + b"k" * 40000)
        assert c.is_closed()
    with mcwire.Conn(HOST, s.port) as c:  # the server goes on
        assert c.call(b"get k\r\n") == value(b"k", 100) + b"END\r\n"


@pytest.mark.parametrize("depth,multiget", [(1, 1), (16, 1), (4, 10)])
def test_loadgen_against_the_canned_server(canned, depth, multiget):
    s = canned(100)
    keys = 1000
    p = subprocess.run([loadgen_binary(), "--host", HOST, "--port", str(s.port), "--timeout-ms", "2000",
                        "--duration", "1" if depth == 1 else "0.3", "--conns", "4",
                        "--depth", str(depth), "--multiget", str(multiget), "--keys", str(keys),
                        "--value-size", "100", "--get-ratio", "0.9", "--prefill",
                        "--cpu-pid", str(s.proc.pid)],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, p.stderr
    r = next(json.loads(line) for line in p.stdout.splitlines() if line.startswith("{"))
    assert r["prefill_sets"] == keys and r["prefill_errors"] == 0, r
    assert r["requests"] > 0 and r["gets"] > 0 and r["sets"] > 0, r
    assert r["errors"] == 0 and r["reconnects"] == 0, r
    # Every key is a hit of the right size (the loadgen reads each VALUE's byte count).
    assert r["misses"] == 0 and r["hits"] == r["gets"] * multiget, r
    assert r["server_cpu_s"] >= 0, r
