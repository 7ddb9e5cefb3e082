"""A config path that names something hostile: a FIFO nobody writes to, a
symlink to /dev/zero, a file far larger than any config. At SIGHUP the
server keeps accepting and still stops promptly on SIGTERM, refuses the path
with a log line that names it and says what it is, and does not grow; at
start-up the same refusal ends the process with status 1.

A server that regressed could grow without bound reading /dev/zero, so every
wait here also watches its resident memory and kills it past RSS_CAP."""

import os
import re
import signal
import subprocess
import time

import pytest

from conftest import HOST, ithaca_binary
from mcwire import Conn, vm_rss_bytes
from test_operations import alive

RSS_CAP = 256 * 1024 * 1024  # growth past this is the bug, stop before it hurts the machine
REFUSED = re.compile(r"SIGHUP: reload refused, keeping the running configuration: (.*)")
CONF = "logging:\n  level: info\nserver:\n  max_connections: 77\n"


def config_path_of(server):
    return server.argv[server.argv.index("--config") + 1]


def wait_bounded(server, predicate, timeout, rss_start):
    """Polls predicate for up to `timeout` s; kills the server (and fails) if
    its RSS grows more than RSS_CAP over rss_start meanwhile."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        if server.proc.poll() is None and vm_rss_bytes(server.proc.pid) - rss_start > RSS_CAP:
            server.proc.kill()
            pytest.fail(f"ithaca grew past {RSS_CAP >> 20} MiB reading the config path:\n{server.describe()}")
        time.sleep(0.02)
    return False


def refusal_after_sighup(server):
    """Sends SIGHUP and returns the refusal line, the server's RSS bounded meanwhile."""
    before = len(REFUSED.findall(server.log))
    rss = vm_rss_bytes(server.proc.pid)
    server.proc.send_signal(signal.SIGHUP)
    assert wait_bounded(server, lambda: len(REFUSED.findall(server.log)) > before, 5, rss), \
        f"no refusal logged within 5 s of SIGHUP:\n{server.describe()}"
    return REFUSED.findall(server.log)[before], rss


def assert_serves_new_connections(server):
    """A connection opened now is accepted and answered (the pooler is not stuck)."""
    with Conn(*server.address, timeout=3) as c:
        assert alive(c)
        c.send(b"stats\r\n")
        assert b"STAT max_connections 77\r\n" in c.read_until(b"END\r\n")


def assert_stops_promptly(server):
    start = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    try:
        rc = server.proc.wait(3)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        pytest.fail(f"ithaca ignored SIGTERM for 3 s after the hostile reload:\n{server.describe()}")
    assert rc == 0, server.describe()
    assert time.monotonic() - start < 3


def test_sighup_with_the_path_now_a_fifo_refuses_it_and_keeps_serving(ithaca_factory):
    server = ithaca_factory(config_text=CONF)
    path = config_path_of(server)
    os.unlink(path)
    os.mkfifo(path)  # no writer, ever: an open without O_NONBLOCK waits for one
    line, _ = refusal_after_sighup(server)
    assert path in line and "FIFO" in line and "not a regular file" in line, line
    assert_serves_new_connections(server)
    # A second SIGHUP is refused the same way (nothing was left stuck).
    line, _ = refusal_after_sighup(server)
    assert "FIFO" in line, line
    assert_serves_new_connections(server)
    assert_stops_promptly(server)


def test_sighup_with_the_path_a_symlink_to_dev_zero_refuses_it_without_growing(ithaca_factory):
    server = ithaca_factory(config_text=CONF)
    path = config_path_of(server)
    os.unlink(path)
    os.symlink("/dev/zero", path)
    line, rss = refusal_after_sighup(server)
    assert path in line and "character device" in line and "not a regular file" in line, line
    assert_serves_new_connections(server)
    assert vm_rss_bytes(server.proc.pid) - rss < 16 * 1024 * 1024
    assert_stops_promptly(server)


def test_sighup_with_a_file_over_the_size_cap_is_refused(ithaca_factory):
    """A regular file over 1 MiB (the documented cap) is not read."""
    server = ithaca_factory(config_text=CONF)
    path = config_path_of(server)
    with open(path, "w") as f:
        f.write(CONF.replace("77", "78"))
        f.write(("# padding\n" * 110000))  # 1.1 MB of comments: valid YAML, too big
    line, _ = refusal_after_sighup(server)
    assert path in line and "1 MiB" in line, line
    assert_serves_new_connections(server)  # still 77
    # Just under the cap is read.
    with open(path, "w") as f:
        f.write(CONF.replace("77", "79"))
        f.write("# padding\n" * 100000)
    server.proc.send_signal(signal.SIGHUP)
    assert wait_bounded(server, lambda: "server.max_connections 77 -> 79" in server.log, 5,
                        vm_rss_bytes(server.proc.pid)), server.describe()


def run_bounded(argv, timeout=10):
    """Runs argv to its end (stdout and stderr merged), killing it past
    `timeout` s or RSS_CAP. Returns (returncode, output, why_killed)."""
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    why = None
    while proc.poll() is None:
        if time.monotonic() > deadline:
            why = f"still running after {timeout} s"
        else:
            try:
                if vm_rss_bytes(proc.pid) > RSS_CAP:
                    why = f"grew past {RSS_CAP >> 20} MiB"
            except (OSError, AssertionError):
                pass  # exiting
        if why:
            proc.kill()
            break
        time.sleep(0.02)
    out = proc.communicate()[0].decode(errors="replace")
    return proc.returncode, out, why


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "directory", "too_large"])
def test_start_up_with_a_hostile_config_path_exits_1(tmp_path, kind):
    path, _ = ithaca_binary()
    conf = tmp_path / "ithaca.yaml"
    expected = {"fifo": "a FIFO", "dev_zero": "a character device", "directory": "a directory",
                "too_large": "1 MiB"}[kind]
    if kind == "fifo":
        os.mkfifo(conf)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", conf)
    elif kind == "directory":
        conf.mkdir()
    else:
        conf.write_text("# padding\n" * 110000)
    for extra in ([], ["--check-config"]):
        rc, out, why = run_bounded([path, "-l", HOST, "-p", "0", "-U", "0", "--config", str(conf), *extra])
        assert why is None, f"ithaca {why} with --config naming a {kind}:\n{out}"
        assert rc == 1, out
        assert str(conf) in out and expected in out, out
