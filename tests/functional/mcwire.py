"""A small memcached wire client for tests: raw bytes in, raw bytes out.

It knows just enough of the reply grammar to tell where one reply ends:

  ascii   VALUE <key> <flags> <bytes> [<cas>]\\r\\n<data>\\r\\n ... END\\r\\n
          STAT ... / ITEM ... lines ... END\\r\\n
          any other single line (STORED, NOT_FOUND, 42, ERROR, CLIENT_ERROR ..., VERSION ...)
  meta    VA <bytes> <flags>*\\r\\n<data>\\r\\n, and single lines (HD, NF, NS, EX, EN, MN, ME ...)
  binary  24-byte header + body (see pack_request / read_binary_response)

Every read has a timeout (Conn.timeout, default 10 s): a test never hangs on a
server that stays silent; it gets a ReplyTimeout naming what was received.
"""

import selectors
import socket
import struct
import time

CRLF = b"\r\n"


class ReplyTimeout(AssertionError):
    pass


class ConnectionClosed(AssertionError):
    pass


class Conn:
    """One TCP connection with a receive buffer."""

    def __init__(self, host, port, timeout=10.0):
        self.timeout = timeout
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- raw I/O ---------------------------------------------------------

    def send(self, data):
        """Sends everything. For large requests whose replies may be large
        too, use exchange() instead, which reads while it writes."""
        self.sock.settimeout(self.timeout)
        self.sock.sendall(data)

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise ReplyTimeout(f"no complete reply in {self.timeout}s; buffered: {bytes(self.buf[:300])!r}")
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(1 << 20)
        except socket.timeout:
            raise ReplyTimeout(f"no complete reply in {self.timeout}s; buffered: {bytes(self.buf[:300])!r}")
        if not chunk:
            raise ConnectionClosed(f"connection closed by server; buffered: {bytes(self.buf[:300])!r}")
        self.buf += chunk

    def read_exact(self, n):
        deadline = time.monotonic() + self.timeout
        while len(self.buf) < n:
            self._fill(deadline)
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def read_until(self, terminator=CRLF):
        """Returns everything up to and including terminator."""
        deadline = time.monotonic() + self.timeout
        start = 0
        while True:
            i = self.buf.find(terminator, start)
            if i >= 0:
                return self.read_exact(i + len(terminator))
            start = max(0, len(self.buf) - len(terminator) + 1)
            self._fill(deadline)

    def read_line(self):
        return self.read_until(CRLF)

    def is_closed(self, wait=2.0):
        """True if the server closed the connection (EOF) within `wait` s."""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return False
            except ConnectionResetError:
                return True
            if not chunk:
                return True
            self.buf += chunk
        return False

    # -- framing -----------------------------------------------------------

    def read_reply(self):
        """Reads one complete ascii or meta reply (see module docstring)."""
        deadline = time.monotonic() + self.timeout
        while True:
            n = reply_length(self.buf)
            if n is not None:
                return self.read_exact(n)
            self._fill(deadline)

    def read_replies(self, count):
        return [self.read_reply() for _ in range(count)]

    def call(self, request):
        """Sends one ascii/meta request and returns its one reply."""
        self.send(request)
        return self.read_reply()

    def exchange(self, data, done):
        """Sends `data` while reading, so that a large pipelined batch cannot
        deadlock against a server that stops reading when its replies are not
        drained. `done(buf)` returns the number of bytes that make up the
        complete answer, or None. Returns those bytes."""
        deadline = time.monotonic() + self.timeout + len(data) / 50e6
        view = memoryview(data)
        sent = 0
        self.sock.setblocking(False)
        sel = selectors.DefaultSelector()
        try:
            sel.register(self.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if data else 0))
            while True:
                n = done(self.buf)
                if n is not None and sent == len(data):
                    out = bytes(self.buf[:n])
                    del self.buf[:n]
                    return out
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ReplyTimeout(f"exchange: sent {sent}/{len(data)} bytes, no complete answer; "
                                       f"buffered tail: {bytes(self.buf[-300:])!r}")
                for _key, ev in sel.select(min(left, 0.5)):
                    if ev & selectors.EVENT_READ:
                        try:
                            chunk = self.sock.recv(1 << 20)
                        except (BlockingIOError, InterruptedError):
                            chunk = None
                        if chunk == b"":
                            raise ConnectionClosed(f"exchange: closed by server after {sent}/{len(data)} bytes sent; "
                                                   f"buffered tail: {bytes(self.buf[-300:])!r}")
                        if chunk:
                            self.buf += chunk
                    if ev & selectors.EVENT_WRITE and sent < len(data):
                        try:
                            sent += self.sock.send(view[sent:sent + (1 << 18)])
                        except (BlockingIOError, InterruptedError):
                            pass
                        if sent == len(data):
                            sel.modify(self.sock, selectors.EVENT_READ)
        finally:
            sel.close()
            self.sock.setblocking(True)

    def exchange_until_sentinel(self, data, sentinel_prefix=b"VERSION "):
        """Sends data (which must end with a request whose reply starts with
        sentinel_prefix, e.g. b"version\\r\\n") and returns the list of reply
        units before the sentinel reply, parsed by the reply grammar. The
        sentinel reply itself is dropped."""
        def done(buf):
            pos = 0
            while True:
                n = reply_length(buf, pos)
                if n is None:
                    return None
                if bytes(buf[pos:pos + len(sentinel_prefix)]) == sentinel_prefix:
                    return n
                pos = n
        raw = self.exchange(data, done)
        units = split_replies(raw)
        assert units and units[-1].startswith(sentinel_prefix), units[-3:]
        return units[:-1]

    # -- binary --------------------------------------------------------------

    def read_binary_response(self):
        hdr = self.read_exact(24)
        r = unpack_header(hdr)
        body = self.read_exact(r["bodylen"])
        r.update(split_body(r, body))
        return r

    def binary_batch(self, packets):
        """Sends packets followed by a Noop and returns every response up to
        and including the Noop's (quiet commands answer only on error/hit)."""
        opaque = 0xFEEDF00D
        data = b"".join(packets) + pack_request(OP_NOOP, opaque=opaque)
        self.send(data)
        out = []
        while True:
            r = self.read_binary_response()
            out.append(r)
            if r["opcode"] == OP_NOOP and r["opaque"] == opaque:
                return out


# --- ascii/meta reply grammar ------------------------------------------------

_MULTI_LINE_PREFIXES = (b"VALUE ", b"STAT ", b"ITEM ", b"CONFIG ")


def _line_end(buf, pos):
    i = buf.find(b"\r\n", pos)
    return -1 if i < 0 else i + 2


def reply_length(buf, pos=0):
    """If buf[pos:] starts with a complete reply, returns the offset just past
    it; else None. Multi-part replies (VALUE/STAT/ITEM lines) run to END; an
    error line in their middle ends them too (memcached stops a multi-get at a
    bad key)."""
    first = True
    while True:
        end = _line_end(buf, pos)
        if end < 0:
            return None
        line = bytes(buf[pos:end - 2])
        if line.startswith(b"VALUE "):
            parts = line.split()
            try:
                n = int(parts[3])
            except (IndexError, ValueError):
                return end  # malformed header: let the caller see it
            if len(buf) < end + n + 2:
                return None
            pos = end + n + 2
            first = False
            continue
        if line.startswith(b"VA "):
            parts = line.split()
            try:
                n = int(parts[1])
            except (IndexError, ValueError):
                return end
            if len(buf) < end + n + 2:
                return None
            return end + n + 2
        if line.startswith(_MULTI_LINE_PREFIXES):
            pos = end
            first = False
            continue
        if first or line == b"END" or line.startswith((b"CLIENT_ERROR", b"SERVER_ERROR", b"ERROR")):
            return end
        # Anything else after VALUE/STAT lines is not valid grammar: end here
        # so the caller sees the unexpected bytes in the next unit.
        return pos


def split_replies(raw):
    """Splits a byte string made of complete replies into reply units."""
    units = []
    pos = 0
    while pos < len(raw):
        n = reply_length(raw, pos)
        if n is None or n == pos:
            units.append(bytes(raw[pos:]))  # truncated or unparsable tail
            break
        units.append(bytes(raw[pos:n]))
        pos = n
    return units


def parse_values(reply):
    """Parses a get-style reply into [(key, flags, data, cas_or_None)]."""
    out = []
    pos = 0
    while True:
        end = reply.index(b"\r\n", pos)
        line = reply[pos:end]
        if not line.startswith(b"VALUE "):
            return out
        parts = line.split()
        n = int(parts[3])
        data = reply[end + 2:end + 2 + n]
        cas = int(parts[4]) if len(parts) > 4 else None
        out.append((parts[1], int(parts[2]), data, cas))
        pos = end + 2 + n + 2


def parse_stats(reply):
    stats = {}
    for line in reply.split(b"\r\n"):
        if line.startswith(b"STAT "):
            parts = line.split(b" ", 2)
            stats[parts[1].decode()] = parts[2].decode() if len(parts) > 2 else ""
    return stats


# --- binary protocol -------------------------------------------------------------

REQ_MAGIC = 0x80
RES_MAGIC = 0x81
HEADER = struct.Struct(">BBHBBHIIQ")

OP_GET, OP_SET, OP_ADD, OP_REPLACE, OP_DELETE = 0x00, 0x01, 0x02, 0x03, 0x04
OP_INCREMENT, OP_DECREMENT, OP_QUIT, OP_FLUSH, OP_GETQ = 0x05, 0x06, 0x07, 0x08, 0x09
OP_NOOP, OP_VERSION, OP_GETK, OP_GETKQ, OP_APPEND, OP_PREPEND = 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f
OP_STAT, OP_SETQ, OP_ADDQ, OP_REPLACEQ, OP_DELETEQ = 0x10, 0x11, 0x12, 0x13, 0x14
OP_INCREMENTQ, OP_DECREMENTQ, OP_QUITQ, OP_FLUSHQ = 0x15, 0x16, 0x17, 0x18
OP_APPENDQ, OP_PREPENDQ, OP_TOUCH, OP_GAT, OP_GATQ = 0x19, 0x1a, 0x1c, 0x1d, 0x1e
OP_GATK, OP_GATKQ = 0x23, 0x24

ST_OK, ST_KEY_ENOENT, ST_KEY_EEXISTS, ST_E2BIG, ST_EINVAL = 0x00, 0x01, 0x02, 0x03, 0x04
ST_NOT_STORED, ST_DELTA_BADVAL, ST_UNKNOWN_COMMAND, ST_ENOMEM = 0x05, 0x06, 0x81, 0x82


def pack_request(opcode, key=b"", extras=b"", value=b"", opaque=0, cas=0, vbucket=0):
    body = extras + key + value
    return HEADER.pack(REQ_MAGIC, opcode, len(key), len(extras), 0, vbucket,
                       len(body), opaque, cas) + body


def set_extras(flags=0, exptime=0):
    return struct.pack(">II", flags, exptime)


def delta_extras(delta, initial=0, exptime=0xFFFFFFFF):
    return struct.pack(">QQI", delta, initial, exptime)


EXP = struct.Struct(">I")     # a binary exptime extra
NO_VIVIFY = 0xFFFFFFFF        # incr/decr expiration: do not create a missing item


# Short binary request builders for tests: set-like, get-like, touch-like and
# incr/decr packets (opcode variants through `op`).
def S(key, value, flags=0, exptime=0, op=OP_SET, cas=0, opaque=0):
    return pack_request(op, key=key, extras=set_extras(flags, exptime), value=value, cas=cas, opaque=opaque)


def G(key, op=OP_GET, opaque=0):
    return pack_request(op, key=key, opaque=opaque)


def T(key, exptime, op=OP_TOUCH, opaque=0):
    return pack_request(op, key=key, extras=EXP.pack(exptime), opaque=opaque)


def A(key, delta, initial=0, exptime=NO_VIVIFY, op=OP_INCREMENT, cas=0, opaque=0):
    return pack_request(op, key=key, extras=delta_extras(delta, initial, exptime), cas=cas, opaque=opaque)


def unpack_header(hdr):
    magic, opcode, keylen, extlen, datatype, status, bodylen, opaque, cas = HEADER.unpack(hdr)
    return dict(magic=magic, opcode=opcode, keylen=keylen, extlen=extlen, datatype=datatype,
                status=status, bodylen=bodylen, opaque=opaque, cas=cas)


def split_body(r, body):
    e, k = r["extlen"], r["keylen"]
    return dict(extras=body[:e], key=body[e:e + k], value=body[e + k:])


def vm_rss_bytes(pid):
    """Resident memory of process `pid`, in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS in /proc/{pid}/status")


def server_version(address):
    """The (major, minor, patch) a server's `version` reports."""
    with Conn(*address) as c:
        text = c.call(b"version\r\n").split()[1].decode()
    return tuple(int(x) for x in text.split("-")[0].split(".")[:3])
