"""Unix-domain sockets (`-s PATH`, `listen.unix`): the socket's mode is 0700
whatever the umask, as memcached's, or what `-a MODE` / `listen.unix_mode`
say; an existing path is replaced only when it is a stale socket (nobody
accepting on it): a regular file, a directory or a live server's socket is
left alone and the server refuses to start, with memcached's bind() words
and the path."""

import contextlib
import os
import re
import socket
import stat
import subprocess

import pytest

from conftest import HOST, START_TIMEOUT, Server, ithaca_binary

UNIX_RE = re.compile(r"listening on unix (\S+)")


@contextlib.contextmanager
def umask(mask):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def unix_ithaca():
    """unix_ithaca(args, mask=0o000) -> Server listening on a unix socket, started under `mask`."""
    owned = []

    def make(args, mask=0o000):
        path, _ = ithaca_binary()
        with umask(mask):
            server = Server("ithaca", [path, "-t", "2", "-m", "64", *args])
        owned.append(server)
        if not server.wait_for_log(UNIX_RE, START_TIMEOUT):
            server.stop()
            pytest.fail(f"ithaca did not listen on its unix socket:\n{server.describe()}", pytrace=False)
        return server

    yield make
    for server in owned:
        rc, killed = server.stop()
        assert not killed and rc == 0, server.describe()


def ask_version(path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(path)
        s.sendall(b"version\r\n")
        return s.recv(100)


def mode_of(path):
    st = os.lstat(path)
    assert stat.S_ISSOCK(st.st_mode), oct(st.st_mode)
    return stat.S_IMODE(st.st_mode)


def run_to_end(args, timeout=10):
    path, _ = ithaca_binary()
    out = subprocess.run([path, "-t", "2", "-m", "64", *args], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return out.returncode, out.stdout.decode(errors="replace")


# --- the socket's mode --------------------------------------------------------------------------


def test_socket_is_0700_under_umask_000(unix_ithaca, tmp_path):
    sock = str(tmp_path / "mc.sock")
    unix_ithaca(["-s", sock], mask=0o000)
    assert mode_of(sock) == 0o700
    assert ask_version(sock).startswith(b"VERSION ")


@pytest.mark.parametrize("flag,mask,expected", [
    (["-a", "600"], 0o000, 0o600),
    (["--unix-mask=0660"], 0o000, 0o660),
    (["-a", "755"], 0o077, 0o755),  # exactly the mode asked, also where the umask is stricter
    (["-a", "0"], 0o022, 0o000),
])
def test_unix_mask_flag_sets_the_mode(unix_ithaca, tmp_path, flag, mask, expected):
    sock = str(tmp_path / "mc.sock")
    server = unix_ithaca(["-s", sock, *flag], mask=mask)
    assert mode_of(sock) == expected
    if expected & 0o200 and expected & 0o400:
        assert ask_version(sock).startswith(b"VERSION ")
    assert server.proc.poll() is None


def test_config_key_sets_the_mode_and_the_flag_beats_it(unix_ithaca, tmp_path):
    a, b = str(tmp_path / "a.sock"), str(tmp_path / "b.sock")
    conf = tmp_path / "ithaca.yaml"
    conf.write_text(f"listen:\n  tcp: []\n  unix: [{a}, {b}]\n  unix_mode: 0770\n")
    both = re.compile(f"listening on unix unix:{re.escape(b)}")
    first = unix_ithaca(["--config", str(conf)], mask=0o000)
    assert first.wait_for_log(both, 5), first.describe()
    assert mode_of(a) == 0o770 and mode_of(b) == 0o770
    first.stop()
    for p in (a, b):
        os.unlink(p)
    second = unix_ithaca(["--config", str(conf), "-a", "600"], mask=0o000)
    assert second.wait_for_log(both, 5), second.describe()
    assert mode_of(a) == 0o600 and mode_of(b) == 0o600


@pytest.mark.parametrize("value", ["800", "1777", "rwx", "", "07777"])
def test_a_bad_unix_mask_is_refused(tmp_path, value):
    rc, out = run_to_end(["-s", str(tmp_path / "mc.sock"), "-a", value])
    assert rc == 64, out  # EX_USAGE
    assert "-a: expected an octal mode from 0 to 777" in out, out
    conf = tmp_path / "ithaca.yaml"
    conf.write_text(f"listen:\n  unix: [{tmp_path / 'mc.sock'}]\n  unix_mode: '{value}'\n")
    rc, out = run_to_end(["--config", str(conf), "--check-config"])
    assert rc == 1, out
    assert f"{conf}:3: unix_mode: expected an octal mode from 0 to 777" in out, out


def test_stats_settings_shows_the_mode_as_memcached_does(unix_ithaca, tmp_path):
    sock = str(tmp_path / "mc.sock")
    unix_ithaca(["-s", sock, "-a", "640"])
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(sock)
        s.sendall(b"stats settings\r\n")
        data = b""
        while not data.endswith(b"END\r\n"):
            chunk = s.recv(65536)
            assert chunk, data
            data += chunk
    assert b"STAT umask 640\r\n" in data
    assert b"STAT domain_socket %s\r\n" % sock.encode() in data


# --- what is at the path already ----------------------------------------------------------------


def test_a_regular_file_at_the_path_survives_and_the_start_fails(tmp_path):
    sock = tmp_path / "precious.txt"
    sock.write_text("do not delete me\n")
    rc, out = run_to_end(["-s", str(sock)])
    assert rc != 0, out
    assert sock.read_text() == "do not delete me\n"
    assert str(sock) in out and "Address already in use" in out and "regular file" in out, out


def test_a_directory_at_the_path_is_left_alone(tmp_path):
    d = tmp_path / "dir"
    d.mkdir()
    (d / "inside").write_text("x")
    rc, out = run_to_end(["-s", str(d)])
    assert rc != 0, out
    assert (d / "inside").read_text() == "x"
    assert str(d) in out and "directory" in out, out


def test_a_stale_socket_is_replaced(unix_ithaca, tmp_path):
    sock = str(tmp_path / "mc.sock")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(sock)
    stale.close()  # the path stays, nobody accepts on it: what a killed server leaves
    assert stat.S_ISSOCK(os.lstat(sock).st_mode)
    unix_ithaca(["-s", sock])
    assert ask_version(sock).startswith(b"VERSION ")
    assert mode_of(sock) == 0o700


def test_a_live_servers_socket_is_not_stolen(unix_ithaca, tmp_path):
    sock = str(tmp_path / "mc.sock")
    first = unix_ithaca(["-s", sock])
    rc, out = run_to_end(["-s", sock])
    assert rc != 0, out
    assert sock in out and "Address already in use" in out and "accepting" in out, out
    # The first server still owns the path and answers on it.
    assert ask_version(sock).startswith(b"VERSION ")
    assert first.proc.poll() is None


def test_a_symlink_at_the_path_is_not_followed_or_removed(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("keep\n")
    link = tmp_path / "mc.sock"
    link.symlink_to(target)
    rc, out = run_to_end(["-s", str(link)])
    assert rc != 0, out
    assert os.path.islink(link) and target.read_text() == "keep\n"
    assert str(link) in out and "symbolic link" in out, out


def test_unix_and_tcp_from_the_config_together(unix_ithaca, tmp_path):
    """listen.unix beside a tcp listener: both serve, the socket is 0700."""
    sock = str(tmp_path / "mc.sock")
    conf = tmp_path / "ithaca.yaml"
    conf.write_text(f"listen:\n  unix: [{sock}]\n")
    server = unix_ithaca(["--config", str(conf), "-l", HOST, "-p", "0"])
    assert mode_of(sock) == 0o700
    assert ask_version(sock).startswith(b"VERSION ")
    assert server.wait_for_log(re.compile(r"listening on tcp 127\.0\.0\.1:\d+"), 5)
