"""Misbehaving memcached backends for the router tests: a TCP server on a
free loopback port that accepts connections and, by mode,
  hang     reads requests and never answers;
  garbage  answers every read with a line no memcached sends;
  reset    reads a request, then resets the connection (RST);
  forward  relays to a real server, each reply `delay` seconds late;
  huge     answers a read with `VALUE k 0 1073741824` (far above any
           item_size_max) and streams zeros after it until the peer closes;
  drip     answers a read with a VALUE header (1,000,000 bytes) and then its
           data 100 bytes every `delay` seconds (bytes keep coming, the reply
           takes 10,000 delays to complete);
  lag      relays to a real server, each request `delay` seconds after it
           arrived, pipelined (a server that answers everything in `delay`
           seconds, however much is in flight); with `hold` set (bytes), a
           read that contains them, and everything read after it, waits
           until release() (a request whose reply comes when the test says,
           in order with the rest); `seen` is everything read so far;
  slow     answers every `get`/`gets` line with END (a miss) and any other
           line with ERROR, `delay` seconds after it arrived, in order, but
           without waiting for one answer before reading the next request;
  server_error  answers every request with `SERVER_ERROR fake error` (the
           data block of a storage command read first), as mcrouter's
           CustomErrorServer does: a server that is up and refuses.
The mode can change while it runs (e.g. a hung server that recovers)."""

import socket
import struct
import threading
import time


class FakeBackend:
    def __init__(self, mode, target=None, delay=0.0):
        self.mode = mode
        self.target = target  # (host, port) for forward
        self.delay = delay
        self.accepted = 0
        self.hold = None  # lag: bytes whose read is held until release()
        self.seen = b""  # lag: everything read from the router so far
        self._released = threading.Event()
        self.lines = []  # server_error: the command lines it answered, in order
        self.times = []  # ... and when each arrived (time.monotonic_ns())
        self._stop = threading.Event()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._threads = []
        self._conns = []
        self._slow = {}  # slow mode: per connection, the answers not yet due
        self._slow_lock = threading.Lock()
        self._accept_thread = threading.Thread(target=self._accept_loop, daemon=True)
        self._accept_thread.start()

    def release(self):
        """lag with `hold`: what was held goes to the server now (in order)."""
        self._released.set()

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def close(self):
        self._stop.set()
        self._accept_thread.join(5)
        self._listener.close()
        for c in list(self._conns):
            try:
                c.close()
            except OSError:
                pass

    def _accept_loop(self):
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.accepted += 1
            self._conns.append(conn)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, conn):
        conn.settimeout(0.2)
        upstream = None
        pending = b""  # server_error: what is not a whole request yet
        try:
            while not self._stop.is_set():
                try:
                    data = conn.recv(65536)
                except socket.timeout:
                    continue
                if not data:
                    return
                mode = self.mode
                if mode == "hang":
                    continue
                if mode == "huge":
                    self._stream_huge(conn)
                    return
                if mode == "drip":
                    self._drip(conn)
                    return
                if mode == "lag":
                    self._lag(conn, data)
                    return
                if mode == "slow":
                    self._answer_slowly(conn, data)
                    continue
                if mode == "server_error":
                    pending = self._answer_errors(conn, pending + data)
                    continue
                if mode == "garbage":
                    conn.sendall(b"HELLO THIS IS NOT MEMCACHED\r\n")
                elif mode == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    conn.close()
                    return
                elif mode == "forward":
                    if upstream is None:
                        upstream = socket.create_connection(self.target, timeout=5)
                    upstream.sendall(data)
                    time.sleep(self.delay)
                    upstream.settimeout(0.05)
                    got = b""
                    try:
                        while True:
                            chunk = upstream.recv(65536)
                            if not chunk:
                                break
                            got += chunk
                    except socket.timeout:
                        pass
                    if got:
                        conn.sendall(got)
        except OSError:
            return
        finally:
            if upstream is not None:
                upstream.close()

    def _lag(self, conn, first):
        # One thread reads the client and queues what it sent with the time it
        # is due; this one forwards each piece when due; a third relays the
        # server's replies back as they come.
        upstream = socket.create_connection(self.target, timeout=5)
        upstream.settimeout(None)
        conn.settimeout(2.0)  # the relay's sends may wait for a busy router
        due = []
        cond = threading.Condition()
        closed = threading.Event()

        def relay_back():
            try:
                while True:
                    chunk = upstream.recv(1 << 20)
                    if not chunk:
                        break
                    conn.sendall(chunk)
            except OSError:
                pass
            closed.set()

        def read_client():
            try:
                while not self._stop.is_set() and not closed.is_set():
                    try:
                        data = conn.recv(1 << 20)
                    except socket.timeout:
                        continue
                    if not data:
                        break
                    with cond:
                        self.seen += data
                        due.append((time.monotonic() + self.delay, data))
                        cond.notify()
            except OSError:
                pass
            closed.set()
            with cond:
                cond.notify()

        with cond:
            self.seen += first
            due.append((time.monotonic() + self.delay, first))
        threading.Thread(target=relay_back, daemon=True).start()
        threading.Thread(target=read_client, daemon=True).start()
        try:
            while not self._stop.is_set() and not closed.is_set():
                with cond:
                    if not due:
                        cond.wait(0.1)
                        continue
                    when, data = due[0]
                    if self.hold is not None and self.hold in data and not self._released.is_set():
                        # Held, and everything behind it (replies stay in order).
                        cond.wait(0.01)
                        continue
                    wait = when - time.monotonic()
                    if wait > 0:
                        cond.wait(min(wait, 0.1))
                        continue
                    due.pop(0)
                upstream.sendall(data)
        except OSError:
            pass
        finally:
            try:
                upstream.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            upstream.close()

    STORAGE = (b"set", b"add", b"replace", b"append", b"prepend", b"cas", b"lease-set")

    def _answer_errors(self, conn, buf):
        # Whole requests only: a storage line waits for its data block.
        while True:
            end = buf.find(b"\r\n")
            if end < 0:
                return buf
            words = buf[:end].split()
            need = end + 2
            if words and words[0] in self.STORAGE and len(words) >= 5:
                need += int(words[4]) + 2
            elif words and words[0] == b"ms" and len(words) >= 3:
                need += int(words[2]) + 2
            if len(buf) < need:
                return buf
            self.times.append(time.monotonic_ns())
            self.lines.append(buf[:end])
            buf = buf[need:]
            conn.sendall(b"SERVER_ERROR fake error\r\n")

    def _stream_huge(self, conn):
        conn.settimeout(2)
        conn.sendall(b"VALUE k 0 1073741824\r\n")
        chunk = bytes(65536)
        while not self._stop.is_set():
            conn.sendall(chunk)  # raises once the peer closed (or stops reading for 2 s)

    def _drip(self, conn):
        conn.sendall(b"VALUE k 0 1000000\r\n")
        while not self._stop.is_set():
            time.sleep(self.delay)
            conn.sendall(b"x" * 100)  # raises once the peer closed

    def _answer_slowly(self, conn, data):
        # One sender thread per connection sends each answer when it is due.
        state = self._slow.setdefault(conn, {"pending": b"", "thread": None, "due": []})
        buf = state["pending"] + data
        lines = buf.split(b"\r\n")
        state["pending"] = lines.pop()
        due = time.monotonic() + self.delay
        for line in lines:
            word = line.split(b" ", 1)[0]
            answer = b"END\r\n" if word in (b"get", b"gets") else b"ERROR\r\n"
            with self._slow_lock:
                state["due"].append((due, answer))
        if state["thread"] is None:
            state["thread"] = threading.Thread(target=self._slow_sender, args=(conn, state), daemon=True)
            state["thread"].start()

    def _slow_sender(self, conn, state):
        try:
            while not self._stop.is_set():
                with self._slow_lock:
                    head = state["due"][0] if state["due"] else None
                if head is None:
                    time.sleep(0.005)
                    continue
                wait = head[0] - time.monotonic()
                if wait > 0:
                    time.sleep(min(wait, 0.05))
                    continue
                conn.sendall(head[1])
                with self._slow_lock:
                    state["due"].pop(0)
        except OSError:
            return
