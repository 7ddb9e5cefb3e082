"""Network namespaces for the replication tests, made and removed by the test.

They give each node its own addresses and let a test move a virtual IP, as
keepalived would. Making them needs root (CI runs the tests as root); without
it a test FAILS, never skips.

in_netns(ns, fn)   runs fn() on a thread inside namespace ns (its sockets live there)
netns fixture      one namespace with lo up
lan fixture        a LAN: nodes "a" and "b" and a "net" namespace holding the
                   bridge and the test's clients; lan.move_vip() moves the address
"""
import ctypes
import os
import shutil
import subprocess
import threading

import pytest

CLONE_NEWNET = 0x40000000


def require_root():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.fail("needs root and iproute2 (ip) for network namespaces: run the tests as root",
                    pytrace=False)


def ip(*args, ns=None, check=True):
    argv = ["ip", *(["-n", ns] if ns else []), *args]
    r = subprocess.run(argv, capture_output=True, text=True)
    if check and r.returncode != 0:
        pytest.fail(f"{' '.join(argv)}: {r.stderr.strip()}", pytrace=False)
    return r


def in_netns(ns, fn, timeout=300):
    """Runs fn() on a thread moved into network namespace ns and returns its
    result or raises its exception."""
    out = {}

    def body():
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns")
            finally:
                os.close(fd)
            out["value"] = fn()
        except BaseException as e:  # handed to the caller
            out["error"] = e

    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        raise TimeoutError(f"in_netns({ns}) did not finish within {timeout}s")
    if "error" in out:
        raise out["error"]
    return out.get("value")


class Namespaces:
    """Named namespaces (unique per test process), deleted by close() even
    when the test failed half-way."""

    def __init__(self, prefix):
        self.prefix = f"{prefix}-{os.getpid()}"
        self.made = []

    def make(self, short):
        require_root()
        name = f"{self.prefix}-{short}"
        subprocess.run(["ip", "netns", "del", name], capture_output=True)  # a leftover of a killed run
        r = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.fail(f"cannot make a network namespace: {r.stderr.strip()}", pytrace=False)
        self.made.append(name)
        ip("link", "set", "lo", "up", ns=name)
        return name

    def close(self):
        for name in reversed(self.made):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        self.made = []


@pytest.fixture
def netns():
    spaces = Namespaces("ithaca-repl")
    try:
        yield spaces.make("ns")
    finally:
        spaces.close()


class Lan:
    """Two nodes on one Ethernet segment: a bridge in namespace `net` (where
    the test's clients run), a veth from it to each node. Node i has
    SUBNET.i; the virtual IP is SUBNET.100, on whichever node holds it."""

    SUBNET = "10.231.0"

    def __init__(self, spaces):
        self.spaces = spaces
        self.net = spaces.make("net")
        self.vip = f"{self.SUBNET}.100"
        self.ns, self.addr = {}, {}
        ip("link", "add", "br0", "type", "bridge", ns=self.net)
        ip("addr", "add", f"{self.SUBNET}.254/24", "dev", "br0", ns=self.net)
        ip("link", "set", "br0", "up", ns=self.net)
        for i, node in enumerate(("a", "b"), start=1):
            ns = spaces.make(node)
            port = f"to-{node}"
            # Made inside the namespaces, so the names never meet the host's.
            ip("link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns, ns=self.net)
            ip("link", "set", port, "master", "br0", "up", ns=self.net)
            ip("addr", "add", f"{self.SUBNET}.{i}/24", "dev", "eth0", ns=ns)
            ip("link", "set", "eth0", "up", ns=ns)
            self.ns[node], self.addr[node] = ns, f"{self.SUBNET}.{i}"

    def add_vip(self, node):
        """node: "a", "b", or "net" (the clients' side, where no node runs)."""
        dev, ns = self._port_of(node)
        ip("addr", "add", f"{self.vip}/32", "dev", dev, ns=ns)
        self.forget_neighbours()

    def drop_vip(self, node):
        dev, ns = self._port_of(node)
        ip("addr", "del", f"{self.vip}/32", "dev", dev, ns=ns)
        self.forget_neighbours()

    def _port_of(self, node):
        return ("br0", self.net) if node == "net" else ("eth0", self.ns[node])

    def move_vip(self, src, dst):
        self.drop_vip(src)
        self.add_vip(dst)

    def forget_neighbours(self):
        """keepalived announces a moved address with gratuitous ARP; flushing
        the neighbour caches has the same effect here."""
        for ns in (self.net, *self.ns.values()):
            ip("neigh", "flush", "all", ns=ns, check=False)

    def run(self, fn, timeout=300):
        """fn() on a client thread in the `net` namespace."""
        return in_netns(self.net, fn, timeout)


@pytest.fixture
def lan():
    spaces = Namespaces("ithaca-lan")
    try:
        yield Lan(spaces)
    finally:
        spaces.close()
