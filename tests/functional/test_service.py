"""Running under systemd: Type=notify readiness (READY=1 on $NOTIFY_SOCKET,
sent once every listener is bound, never by a server that failed to bind)."""

import os
import socket
import time

import pytest

from conftest import HOST, Server, ithaca_binary


@pytest.fixture
def notify_socket(tmp_path, monkeypatch):
    path = str(tmp_path / "notify")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(5)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    yield s
    s.close()


def test_ready_is_sent_once_the_listeners_are_bound(ithaca_factory, notify_socket):
    server = ithaca_factory(["--metrics-listen", f"{HOST}:0"])
    message = notify_socket.recv(4096)
    assert b"READY=1" in message.split(b"\n")
    # Ready means accepting: clients and the metrics page alike.
    with socket.create_connection(server.address, timeout=5) as c:
        c.sendall(b"version\r\n")
        assert c.recv(100).startswith(b"VERSION ")


def test_no_ready_when_a_listener_cannot_bind(notify_socket):
    taken = socket.socket()
    taken.bind((HOST, 0))
    taken.listen()
    port = taken.getsockname()[1]
    path, _ = ithaca_binary()
    server = Server("ithaca", [path, "-l", HOST, "-p", str(port), "-U", "0", "-t", "1"])
    try:
        assert server.proc.wait(10) == 1, server.describe()
        notify_socket.settimeout(0.2)
        with pytest.raises(socket.timeout):
            notify_socket.recv(4096)
    finally:
        server.stop()
        taken.close()


def test_ready_reaches_an_abstract_notify_socket(ithaca_factory, monkeypatch):
    # systemd may name an abstract socket: NOTIFY_SOCKET=@name.
    name = f"ithaca-notify-{os.getpid()}-{time.monotonic_ns()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.bind("\0" + name)
        s.settimeout(5)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        ithaca_factory([])
        assert b"READY=1" in s.recv(4096).split(b"\n")
