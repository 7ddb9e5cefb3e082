"""Misbehaving memcached backends for the router tests: a TCP server on a
free loopback port that accepts connections and, by mode,
  hang     reads requests and never answers;
  garbage  answers every read with a line no memcached sends;
  reset    reads a request, then resets the connection (RST);
  forward  relays to a real server, each reply `delay` seconds late.
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
        self._stop = threading.Event()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)
        self._listener.settimeout(0.2)
        self.port = self._listener.getsockname()[1]
        self._threads = []
        self._conns = []
        self._accept_thread = threading.Thread(target=self._accept_loop, daemon=True)
        self._accept_thread.start()

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
