"""Zero-copy gets over the wire: a get hands the item's own memory to the
socket write, pinned until the write has passed it (INTERNALS.md, "The life
of a get"). Slow readers (a small receive buffer, not read for a while) keep
writes of 4 KiB and 256 KiB values in flight while other connections
overwrite, delete and evict those items under a small -m; every value must
arrive whole, byte for byte the version some set stored, in ascii (get,
gets, gat), meta (mg) and binary (GetK) replies, and the server's memory
stays bounded. Under the sanitize build a write from a freed item is an ASan
error, which fails the test at teardown.
"""

import os
import socket
import struct
import threading
import time

from mcwire import (HEADER, OP_GETK, ReplyTimeout, parse_stats, pack_request, unpack_header,
                    vm_rss_bytes)

MIB = 1 << 20
SMALL, BIG = 4096, 256 << 10
KEYS = [b"s%d" % i for i in range(24)] + [b"b%d" % i for i in range(40)]  # 10 MiB of big values


def size_of(key):
    return BIG if key.startswith(b"b") else SMALL


def value(key, version):
    """Self-describing: "<key>#<version>#" repeated to the key's size."""
    head = b"%s#%d#" % (key, version)
    return (head * (size_of(key) // len(head) + 1))[:size_of(key)]


def intact(key, data):
    if len(data) != size_of(key) or not data.startswith(key + b"#"):
        return False
    end = data.index(b"#", len(key) + 1)
    return data == value(key, int(data[len(key) + 1:end]))


class Raw:
    """A connection whose receive buffer is small, so the server's writes to
    it stay in flight while it does not read."""

    def __init__(self, address, rcvbuf=None, timeout=20.0):
        self.sock = socket.socket()
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(address)
        self.buf = bytearray()
        self.timeout = timeout

    def send(self, data):
        self.sock.sendall(data)

    def need(self, n):
        deadline = time.monotonic() + self.timeout
        while len(self.buf) < n:
            if time.monotonic() > deadline:
                raise ReplyTimeout(f"wanted {n} bytes, have {len(self.buf)}")
            chunk = self.sock.recv(1 << 20)
            assert chunk, "connection closed by the server"
            self.buf += chunk

    def take(self, n):
        self.need(n)
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def line(self):
        deadline = time.monotonic() + self.timeout
        while b"\r\n" not in self.buf:
            if time.monotonic() > deadline:
                raise ReplyTimeout(f"no line; have {bytes(self.buf[:100])!r}")
            chunk = self.sock.recv(1 << 20)
            assert chunk, "connection closed by the server"
            self.buf += chunk
        i = self.buf.index(b"\r\n")
        return self.take(i + 2)[:-2]

    def close(self):
        self.sock.close()


def read_ascii_values(c, commands):
    """Reads `commands` text get replies: [(key, data)]."""
    got = []
    for _ in range(commands):
        while True:
            line = c.line()
            if line == b"END":
                break
            parts = line.split()
            assert parts[0] == b"VALUE", line
            data = c.take(int(parts[3]) + 2)
            assert data.endswith(b"\r\n")
            got.append((parts[1], data[:-2]))
    return got


def read_meta_values(c, n):
    got = []
    for _ in range(n):
        line = c.line()
        if line.split()[0] == b"EN":
            continue
        parts = line.split()
        assert parts[0] == b"VA", line
        data = c.take(int(parts[1]) + 2)
        key = next(p[1:] for p in parts[2:] if p.startswith(b"k"))
        got.append((key, data[:-2]))
    return got


def read_binary_values(c, n):
    got = []
    for _ in range(n):
        h = unpack_header(c.take(HEADER.size))
        body = c.take(h["bodylen"])
        if h["status"] != 0:
            continue
        e, k = h["extlen"], h["keylen"]
        got.append((body[e:e + k], body[e + k:]))
    return got


def stats_of(address, group=b""):
    with socket.create_connection(address, timeout=10) as s:
        s.sendall(b"stats" + (b" " + group if group else b"") + b"\r\n")
        buf = b""
        while not buf.endswith(b"END\r\n"):
            chunk = s.recv(65536)
            assert chunk
            buf += chunk
    return parse_stats(buf)


def test_slow_readers_race_overwrites_deletes_and_evictions(ithaca_factory):
    server = ithaca_factory(["-m", "8"], memory_flag=False)
    address = server.address
    stop = threading.Event()
    writes = [0]
    lock = threading.Lock()
    errors = []

    def writer(seed):
        try:
            w = Raw(address)
            version = seed << 32
            i = seed
            while not stop.is_set():
                i = (i * 1103515245 + 12345) & 0x7FFFFFFF
                key = KEYS[i % len(KEYS)]
                if i % 8 == 0:
                    w.send(b"delete %s\r\n" % key)
                    assert w.line() in (b"DELETED", b"NOT_FOUND")
                else:
                    version += 1
                    w.send(b"set %s 0 0 %d\r\n%s\r\n" % (key, size_of(key), value(key, version)))
                    reply = w.line()
                    # Pinned items still count against -m: a set may find no room.
                    assert reply in (b"STORED", b"SERVER_ERROR out of memory storing object"), reply
                with lock:
                    writes[0] += 1
            w.close()
        except Exception as e:  # reported by the main thread
            errors.append(repr(e))

    # Fill once, so readers hit from the start.
    w = Raw(address)
    for key in KEYS:
        w.send(b"set %s 0 0 %d\r\n%s\r\n" % (key, size_of(key), value(key, 1)))
        assert w.line() in (b"STORED", b"SERVER_ERROR out of memory storing object")
    w.close()
    rss_at_start = vm_rss_bytes(server.proc.pid)

    writers = [threading.Thread(target=writer, args=(n + 1,)) for n in range(2)]
    for t in writers:
        t.start()
    readers = [Raw(address, rcvbuf=16384) for _ in range(3)]
    seen = {"ascii": 0, "meta": 0, "binary": 0}
    torn = []
    try:
        for rnd in range(4):
            # Each reader asks for every key a few times over and reads nothing...
            for proto, c in zip(("ascii", "meta", "binary"), readers):
                keys = KEYS[rnd % 3::2] * 2
                if proto == "ascii":
                    c.send(b"get " + b" ".join(keys) + b"\r\n"
                           + b"gets " + b" ".join(keys[:10]) + b"\r\n"
                           + b"gat 0 " + b" ".join(keys[10:20]) + b"\r\n")
                elif proto == "meta":
                    c.send(b"".join(b"mg %s v k\r\n" % k for k in keys))
                else:
                    c.send(b"".join(pack_request(OP_GETK, key=k) for k in keys))
            # ...while the writers overwrite, delete and evict what is being sent.
            with lock:
                target = writes[0] + 60
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not errors:
                with lock:
                    if writes[0] >= target:
                        break
                time.sleep(0.01)
            assert not errors, errors
            assert writes[0] >= target, "writers stalled"
            for proto, c in zip(("ascii", "meta", "binary"), readers):
                keys = KEYS[rnd % 3::2] * 2
                if proto == "ascii":
                    got = read_ascii_values(c, 3)
                elif proto == "meta":
                    got = read_meta_values(c, len(keys))
                else:
                    got = read_binary_values(c, len(keys))
                seen[proto] += len(got)
                torn += [(proto, k, d[:40]) for k, d in got if not intact(k, d)]
    finally:
        stop.set()
        for t in writers:
            t.join(30)
        for c in readers:
            c.close()
    assert not errors, errors
    assert torn == [], torn[:5]
    assert all(n > 20 for n in seen.values()), seen
    s = stats_of(address)
    assert int(s["evictions"]) > 0, s
    # The memory the limit bounds (`bytes` is memcached's item bytes, not memory).
    assert int(stats_of(address, b"slabs")["total_malloced"]) <= 8 * MIB, s
    rss = vm_rss_bytes(server.proc.pid)
    growth = rss - rss_at_start
    if os.environ.get("ITHACA_SANITIZED"):
        # ASan's 16 MiB quarantine and redzones on top of the items.
        assert growth < 48 * MIB, f"VmRSS grew by {growth / MIB:.1f} MiB under load with -m 8"
    else:
        assert growth < 24 * MIB, f"VmRSS grew by {growth / MIB:.1f} MiB under load with -m 8"
