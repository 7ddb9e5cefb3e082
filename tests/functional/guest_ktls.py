"""Runs INSIDE a User-mode Linux guest whose kernel has the `tls` module
(uml_guest.py; test_ktls.py boots it). Variants, each with its own ports:
  kernel, kernel_epoll  ithaca -Z with kernel TLS (its default) on io_uring
                        and on epoll, answering a TLS client in Python
                        (OpenSSL in user space, so every record ithaca's
                        kernel made is checked by another implementation);
  user                  the same with `tls.kernel_tls: false`;
  router                ithaca routing a plaintext client over a `tls:` pool
                        to a TLS server (ithaca -Z with user-space TLS):
                        the router's backend connections' sends;
  replication           an ithaca master and slave over `replication.tls`
                        (mutual certificates): the sync and stream sends.
Prints one JSON object on its last line: per variant, each check's result
("ok" or what went wrong), ithaca's TLS stats where it has them, and the
kernel's /proc/net/tls_stat counters (before, with the connections open,
after).

usage: guest_ktls.py ITHACA_BIN CERT_DIR WORKDIR [VARIANT...]
CERT_DIR: test_tls.py's certificates (ca, server for localhost, client).
"""

import json
import os
import random
import socket
import ssl
import struct
import subprocess
import sys
import time

ITHACA, CERTS, WORK = sys.argv[1:4]
CA, CERT, KEY = (os.path.join(CERTS, n) for n in ("ca.pem", "server.pem", "server.key"))
CLIENT_CERT, CLIENT_KEY = os.path.join(CERTS, "client.pem"), os.path.join(CERTS, "client.key")
# The guest's own network: nothing else listens here. One port per variant:
# a stopped server's io_uring may keep its listening socket a moment longer.
PORTS = {"kernel": 11211, "user": 11212, "kernel_epoll": 11213, "router": 11214, "replication": 11215}
BACKEND_PORT, MASTER_REPL_PORT, SLAVE_PORT = 11221, 11222, 11223


def tls_stat():
    out = {}
    with open("/proc/net/tls_stat") as f:
        for line in f:
            name, value = line.split()
            out[name] = int(value)
    return out


def wait_port(port, proc, name):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"{name} exited: see its log in {WORK}")
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"{name} did not listen on {port}")


def start_ithaca(name, config, port):
    conf = os.path.join(WORK, f"{name}.yaml")
    with open(conf, "w") as f:
        f.write(config)
    log = open(os.path.join(WORK, f"{name}.log"), "w")
    proc = subprocess.Popen([ITHACA, "--config", conf, "-vv"], stdout=log, stderr=subprocess.STDOUT)
    wait_port(port, proc, name)
    return proc


def cache_config(port, kernel_tls=True, io_backend="auto"):
    return f"""listen:
  tcp: ["127.0.0.1:{port}"]
server:
  workers: 1
  io_backend: {io_backend}
cache:
  memory_limit: 256m
  item_size_max: 2m
tls:
  enabled: true
  chain_cert: {CERT}
  key: {KEY}
  kernel_tls: {"true" if kernel_tls else "false"}
"""


def connect(port, tls=True):
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    if not tls:
        return sock
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(CA)
    ctx.check_hostname = False
    return ctx.wrap_socket(sock)


class Reader:
    """Reads replies off one TLS socket, buffered."""

    def __init__(self, s):
        self.s, self.buf = s, b""

    def fill(self):
        chunk = self.s.recv(1 << 20)
        if not chunk:
            raise AssertionError("connection closed")
        self.buf += chunk

    def line(self):
        while b"\r\n" not in self.buf:
            self.fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        while len(self.buf) < n:
            self.fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def value(self, key, data):
        """One `VALUE key flags n` block whose data must be `data`."""
        head = self.line().split()
        if head[:2] != [b"VALUE", key] or int(head[3]) != len(data):
            raise AssertionError(f"expected VALUE {key!r} of {len(data)} bytes, got {head!r}")
        got = self.exact(len(data) + 2)
        if got[:-2] != data or got[-2:] != b"\r\n":
            raise AssertionError(f"value of {key!r} differs ({len(data)} bytes)")

    def expect(self, line):
        got = self.line()
        if got != line:
            raise AssertionError(f"expected {line!r}, got {got!r}")


def payload(n, seed):
    return random.Random(seed).randbytes(n)


def check_sizes(s, r):
    """One value of each size stored and read back: small pieces gathered
    into one send, and values whose iovecs point into the item."""
    for i, n in enumerate((1, 100, 4096, 16384, 65536, 262144, 1048576)):
        key, data = f"size{n}".encode(), payload(n, i)
        s.sendall(b"set %s 0 0 %d\r\n%s\r\nget %s\r\n" % (key, n, data, key))
        r.expect(b"STORED")
        r.value(key, data)
        r.expect(b"END")


def check_multiget(s, r):
    keys = [f"mg{i}".encode() for i in range(40)]
    for i, k in enumerate(keys):
        s.sendall(b"set %s 0 0 4096 noreply\r\n%s\r\n" % (k, payload(4096, 100 + i)))
    s.sendall(b"get " + b" ".join(keys) + b"\r\n")
    for i, k in enumerate(keys):
        r.value(k, payload(4096, 100 + i))
    r.expect(b"END")


def check_pipeline(s, r):
    """200 requests in one send, mixed stores and gets, answered in order."""
    batch, expect = [], []
    for i in range(200):
        key, data = f"p{i % 20}".encode(), payload(50 + i * 37, 1000 + i)
        if i % 3 == 0:
            batch.append(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(data), data))
            expect.append(("stored", key, data))
        else:
            batch.append(b"get %s\r\n" % key)
            expect.append(("get", key, None))
    current = {}
    s.sendall(b"".join(batch))
    for kind, key, data in expect:
        if kind == "stored":
            r.expect(b"STORED")
            current[key] = data
        else:
            if key in current:
                r.value(key, current[key])
            r.expect(b"END")


def check_meta(s, r):
    data = payload(5000, 7)
    s.sendall(b"ms metakey %d T0\r\n%s\r\nmg metakey v k\r\n" % (len(data), data))
    r.expect(b"HD")
    head = r.line().split()
    if head[:2] != [b"VA", b"5000"] or b"kmetakey" not in head:
        raise AssertionError(f"meta reply {head!r}")
    if r.exact(5002)[:-2] != data:
        raise AssertionError("meta value differs")


def check_binary(s, r):
    """A binary set and get (a connection speaks one protocol, from its
    first byte, as in memcached)."""
    key, data = b"binkey", payload(20000, 8)
    extras = struct.pack(">II", 0, 0)
    s.sendall(struct.pack(">BBHBBHIIQ", 0x80, 0x01, len(key), 8, 0, 0, 8 + len(key) + len(data), 0, 0)
              + extras + key + data
              + struct.pack(">BBHBBHIIQ", 0x80, 0x00, len(key), 0, 0, 0, len(key), 0, 0) + key)
    for op in (0x01, 0x00):
        hdr = r.exact(24)
        magic, got_op, _kl, el, _dt, status, body = struct.unpack(">BBHBBHI", hdr[:12])
        if magic != 0x81 or got_op != op or status != 0:
            raise AssertionError(f"binary reply header {hdr!r}")
        got = r.exact(body)
        if op == 0x00 and got[el:] != data:
            raise AssertionError("binary value differs")


def check_slow_reader(s, r):
    """16 gets of a 256 KiB value sent at once while the client reads
    nothing: the server's sends stop on a full socket and go on from the
    same byte, as the kernel makes records of what it is given."""
    data = payload(262144, 99)
    s.sendall(b"set slow 0 0 %d\r\n%s\r\n" % (len(data), data))
    r.expect(b"STORED")
    s.sendall(b"get slow\r\n" * 16)
    time.sleep(0.5)
    for _ in range(16):
        r.value(b"slow", data)
        r.expect(b"END")


def stats(s, r):
    s.sendall(b"stats\r\n")
    out = {}
    while True:
        line = r.line()
        if line == b"END":
            return out
        _stat, name, value = line.decode().split(" ", 2)
        if name.startswith("ssl_"):
            out[name] = int(value)


CHECKS = [check_sizes, check_multiget, check_pipeline, check_meta, check_binary, check_slow_reader]
ROUTED_CHECKS = [check_sizes, check_multiget, check_pipeline, check_slow_reader]


def run_checks(checks, port, tls, result):
    """Each check on its own connection; the connections stay open until
    the caller closes them (returned)."""
    conns = [connect(port, tls) for _ in checks]
    for check, s in zip(checks, conns):
        try:
            check(s, Reader(s))
            result["checks"][check.__name__] = "ok"
        except Exception as e:  # the host test prints which check and why
            result["checks"][check.__name__] = f"{type(e).__name__}: {e}"
    return conns


def run_cache(variant, result):
    config = cache_config(PORTS[variant], kernel_tls=variant != "user",
                          io_backend="epoll" if variant.endswith("epoll") else "auto")
    procs = [start_ithaca(variant, config, PORTS[variant])]
    port = PORTS[variant]
    conns = run_checks(CHECKS, port, True, result)
    result["version"] = conns[0].version()
    s = connect(port)
    result["stats"] = stats(s, Reader(s))
    result["connections"] = len(CHECKS) + 1
    return procs, conns + [s]


def run_router(variant, result):
    # The TLS server is ithaca with kernel TLS off, so every kernel-encrypted
    # connection is one of the router's to it. (Debian's memcached 1.6.18
    # -Z stalls in this guest on any reply over 16 KB, the size of its
    # record buffer, even to a Python client; on this machine's own kernel
    # it does not, and test_backend_tls.py routes to it there.)
    backend = start_ithaca("backend", cache_config(BACKEND_PORT, kernel_tls=False), BACKEND_PORT)
    procs = [backend]
    port = PORTS[variant]
    procs.append(start_ithaca(variant, f"""listen:
  tcp: ["127.0.0.1:{port}"]
server:
  workers: 1
cache:
  item_size_max: 2m
pools:
  main:
    servers: ["127.0.0.1:{BACKEND_PORT}"]
    # This is about bytes, not time: the guest is slow on a busy host (a
    # 1 MiB set timed out at the 1 s default while a build ran beside it).
    timeout: 10s
    connect_timeout: 5s
    tls:
      ca_cert: {CA}
      server_name: localhost
route: {{type: pool, pool: main}}
""", port))
    return procs, run_checks(ROUTED_CHECKS, port, False, result)


def check_replicated(master_port):
    """Items stored on the master, before and after the slave came, read
    back from the slave (the sync, then the stream)."""
    def check(s, r):
        sizes = (100, 4096, 65536, 262144, 1048576)
        with connect(master_port, False) as m:
            mr = Reader(m)
            for i, n in enumerate(sizes):
                m.sendall(b"set after%d 0 0 %d\r\n%s\r\n" % (i, n, payload(n, 500 + i)))
                mr.expect(b"STORED")
        for name, seeds in (("before", range(20)), ("after", range(len(sizes)))):
            for i in seeds:
                n = 4096 if name == "before" else sizes[i]
                data = payload(n, (300 if name == "before" else 500) + i)
                key = b"%s%d" % (name.encode(), i)
                deadline = time.monotonic() + 20
                while True:
                    s.sendall(b"get %s\r\n" % key)
                    head = r.line()
                    if head != b"END":
                        r.buf = head + b"\r\n" + r.buf
                        r.value(key, data)
                        r.expect(b"END")
                        break
                    if time.monotonic() > deadline:
                        raise AssertionError(f"{key!r} never reached the slave")
                    time.sleep(0.05)
    check.__name__ = "check_replicated"
    return check


def run_replication(variant, result):
    master_port = PORTS[variant]
    def tls(cert, key, extra=""):
        return f"""  tls:
    chain_cert: {cert}
    key: {key}
    ca_cert: {CA}
{extra}"""
    master = start_ithaca("master", f"""listen:
  tcp: ["127.0.0.1:{master_port}"]
server:
  workers: 1
cache:
  item_size_max: 2m
replication:
  role: master
  listen: 127.0.0.1
  port: {MASTER_REPL_PORT}
{tls(CERT, KEY)}""", master_port)
    with connect(master_port, False) as m:
        mr = Reader(m)
        for i in range(20):
            m.sendall(b"set before%d 0 0 4096\r\n%s\r\n" % (i, payload(4096, 300 + i)))
            mr.expect(b"STORED")
    slave = start_ithaca("slave", f"""listen:
  tcp: ["127.0.0.1:{SLAVE_PORT}"]
server:
  workers: 1
cache:
  item_size_max: 2m
replication:
  role: slave
  master: 127.0.0.1
  port: {MASTER_REPL_PORT}
  serve_reads: true
{tls(CLIENT_CERT, CLIENT_KEY, "    server_name: localhost")}
""", SLAVE_PORT)
    conns = run_checks([check_replicated(master_port)], SLAVE_PORT, False, result)
    with open(os.path.join(WORK, "master.log")) as f:
        result["master_log_kernel_tls"] = "kernel TLS sends" in f.read()
    return [slave, master], conns


RUNS = {"kernel": run_cache, "kernel_epoll": run_cache, "user": run_cache, "router": run_router,
        "replication": run_replication}


def run_variant(variant):
    before = tls_stat()
    result = {"checks": {}}
    procs, conns = [], []
    try:
        procs, conns = RUNS[variant](variant, result)
        # Read after the checks: each connection has had replies by now, so
        # the server's side of every handshake is over (the client's ends
        # first).
        result["tls_stat_open"] = tls_stat()
    finally:
        for c in conns:
            c.close()
        for p in procs:
            p.terminate()
            p.wait(timeout=20)
    result["tls_stat_before"], result["tls_stat_after"] = before, tls_stat()
    return result


def main():
    with open("/proc/sys/net/ipv4/tcp_available_ulp") as f:
        ulp = f.read().split()
    out = {"ulp": ulp}
    for variant in sys.argv[4:] or list(PORTS):
        out[variant] = run_variant(variant)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
