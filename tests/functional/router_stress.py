"""A seeded concurrency stress differential for the router role (issue 28).

Many clients (threads) talk to one ithaca router at once, each doing random
pipelines of text, meta or binary requests, multigets of up to 100 keys,
values up to 300,000 bytes, `noreply`, `quit`, resets (RST) mid-pipeline,
half-closes (FIN) and slow reads, while a chaos thread reloads the config
(SIGHUP) and stops and resumes (SIGSTOP/SIGCONT) the server of a second pool.
Every reply is checked against what its own request may get:

- its shape and its key (a reply meant for another client, another request or
  another protocol fails the check at once: this is what caught replies
  reaching the wrong connection and one client's `quit` closing another);
- a value is one some client wrote for that very key (values name their key,
  writer and sequence number, and every written value is registered before
  it is sent);
- keys of the `main` pool (real memcacheds that are never disturbed): a key
  private to a client has exactly the value of its last acknowledged write
  (or, after a reset left writes unacknowledged, one of the values it may
  have); a shared key misses only if it was never stored or a delete of it
  was sent; no error at all;
- keys of the `flaky` pool (prefix `f:`; its memcached is stopped and
  resumed, and it also has a server that answers late and one that resets
  every connection):
  any well-formed reply, errors and misses included, but values still only
  ones written for that key.

At the end the router's client connections and descriptors are back to their
baseline and its memory is given back. The seed is printed on failure; a run
is bounded by its duration. Used by tests/functional/test_router_stress.py
(a short run in CI) and scripts/router-stress (a long run by hand)."""

import os
import random
import signal
import socket
import struct
import threading
import time
import zlib

import mcwire

BIG_VALUE = 300_000
SHARED_KEYS = 40
PRIVATE_KEYS = 12
FLAKY_KEYS = 20


class Failure(AssertionError):
    pass


class Registry:
    """Every value ever written, per key (as length + crc32), and what was done
    to each shared key. Registered before the request is sent."""

    def __init__(self):
        self.lock = threading.Lock()
        self.values = {}
        self.stored = set()   # keys some write of which was acknowledged
        self.deleted = set()  # keys a delete was sent for

    @staticmethod
    def digest(value):
        return (len(value), zlib.crc32(value))

    def wrote(self, key, value):
        with self.lock:
            self.values.setdefault(key, set()).add(self.digest(value))

    def acked(self, key):
        with self.lock:
            self.stored.add(key)

    def deleting(self, key):
        with self.lock:
            self.deleted.add(key)

    def known(self, key, value):
        with self.lock:
            return self.digest(value) in self.values.get(key, ())

    def stored_now(self, keys):
        """The keys among `keys` an acknowledged write has stored: a get sent
        after this may miss them only if a delete was sent meanwhile."""
        with self.lock:
            return {k for k in keys if k in self.stored}

    def was_deleted(self, key):
        with self.lock:
            return key in self.deleted


def make_value(key, client, seq, size):
    head = b"%s|%d|%d|" % (key, client, seq)
    if size <= len(head):
        return head
    return head + bytes([97 + (seq % 26)]) * (size - len(head))


# ---------------------------------------------------------------- requests

class Req:
    """One request of a pipeline and how to check its reply.
    kind: get (text multi-get), mg, bget (binary GETK), set, ms, bset, delete,
    md, bdel, version, noop (binary), quit, bquit."""

    def __init__(self, kind, keys=(), value=None, noreply=False):
        self.kind = kind
        self.keys = list(keys)
        self.value = value
        self.noreply = noreply
        self.opaque = 0
        self.stored = set()  # [retrievals] keys already stored when it was sent

    def wire(self):
        k = self.keys[0] if self.keys else b""
        nr = b" noreply" if self.noreply else b""
        if self.kind == "get":
            return b"get " + b" ".join(self.keys) + b"\r\n"
        if self.kind == "mg":
            return b"mg " + k + b" v k\r\n"
        if self.kind == "set":
            return b"set %s 0 0 %d%s\r\n%s\r\n" % (k, len(self.value), nr, self.value)
        if self.kind == "ms":
            return b"ms %s %d%s\r\n%s\r\n" % (k, len(self.value), b" q" if self.noreply else b"", self.value)
        if self.kind == "delete":
            return b"delete %s%s\r\n" % (k, nr)
        if self.kind == "md":
            return b"md %s%s\r\n" % (k, b" q" if self.noreply else b"")
        if self.kind == "version":
            return b"version\r\n"
        if self.kind == "mn":
            return b"mn\r\n"
        if self.kind == "quit":
            return b"quit\r\n"
        if self.kind == "bget":
            return mcwire.G(k, op=0x0C, opaque=self.opaque)  # GETK
        if self.kind == "bset":
            return mcwire.S(k, self.value, op=0x11 if self.noreply else 0x01, opaque=self.opaque)
        if self.kind == "bdel":
            return mcwire.pack_request(0x14 if self.noreply else 0x04, key=k, opaque=self.opaque)
        if self.kind == "noop":
            return mcwire.pack_request(0x0A, opaque=self.opaque)
        if self.kind == "bquit":
            return mcwire.pack_request(0x07, opaque=self.opaque)
        raise ValueError(self.kind)

    def answered(self):
        """Whether the server sends a reply at all."""
        return not self.noreply


# ---------------------------------------------------------------- a client

class Client(threading.Thread):
    def __init__(self, run, cid):
        super().__init__(daemon=True, name=f"client-{cid}")
        self.run_ = run
        self.cid = cid
        self.rng = random.Random(run.seed * 1_000_003 + cid)
        self.binary = self.rng.random() < 0.25
        self.seq = 0
        self.private = [b"p%d_%d" % (cid, i) for i in range(PRIVATE_KEYS)]
        # What each private key may hold now: a set of values (None: a miss).
        self.state = {k: {None} for k in self.private}
        self.generation = 0  # fresh private keys made so far (uncertain())
        self.conn = None
        self.requests = 0
        self.error = None
        self.history = []  # (what, key, value head, how): the private keys' events
        self.last_replies = []  # the last text replies read (for a failure's message)
        self.last_sent_kinds = ""

    # -- helpers
    def history_of(self, key):
        return [h for h in self.history if h[1] == key][-8:]

    def fail(self, what):
        raise Failure(f"client {self.cid} ({'binary' if self.binary else 'text'}): {what}; "
                      f"last replies {self.last_replies}")

    def pick_key(self):
        r = self.rng.random()
        if r < 0.45:
            return self.rng.choice(self.private)
        if r < 0.85:
            return b"s%d" % self.rng.randrange(SHARED_KEYS)
        return b"f:%d" % self.rng.randrange(FLAKY_KEYS)

    def new_value(self, key):
        self.seq += 1
        r = self.rng.random()
        size = BIG_VALUE if r < 0.03 else self.rng.randrange(1000, 60_000) if r < 0.15 else self.rng.randrange(1, 200)
        v = make_value(key, self.cid, self.seq, size)
        self.run_.registry.wrote(key, v)
        return v

    def connect(self):
        self.conn = mcwire.Conn(self.run_.host, self.run_.port, timeout=self.run_.reply_timeout)

    # -- a pipeline
    def make_pipeline(self):
        n = self.rng.choice([1, 1, 2, 3, 5, 8, 16, 30])
        reqs = []
        for _ in range(n):
            r = self.rng.random()
            if self.binary:
                if r < 0.45:
                    reqs.append(Req("bget", [self.pick_key()]))
                elif r < 0.8:
                    k = self.pick_key()
                    reqs.append(Req("bset", [k], self.new_value(k), noreply=self.rng.random() < 0.2))
                elif r < 0.93:
                    k = self.pick_key()
                    reqs.append(Req("bdel", [k], noreply=self.rng.random() < 0.2))
                else:
                    reqs.append(Req("noop"))
                continue
            if r < 0.35:
                nkeys = self.rng.choice([1, 1, 2, 4, 10, 100])
                reqs.append(Req("get", [self.pick_key() for _ in range(nkeys)]))
            elif r < 0.45:
                reqs.append(Req("mg", [self.pick_key()]))
            elif r < 0.7:
                k = self.pick_key()
                reqs.append(Req("set", [k], self.new_value(k), noreply=self.rng.random() < 0.2))
            elif r < 0.78:
                # `q` hides only HD: an error would still be answered, so only
                # the main pool (which never fails) gets quiet meta sets, and
                # md is never quiet (its NF is answered).
                k = self.pick_key()
                quiet = not k.startswith(b"f:") and self.rng.random() < 0.2
                reqs.append(Req("ms", [k], self.new_value(k), noreply=quiet))
                if quiet:
                    # Its error, if any, comes before the mn's MN: told apart
                    # from the next request's error.
                    reqs.append(Req("mn"))
            elif r < 0.9:
                k = self.pick_key()
                reqs.append(Req("delete", [k], noreply=self.rng.random() < 0.2))
            elif r < 0.95:
                k = self.pick_key()
                reqs.append(Req("md", [k]))
            else:
                reqs.append(Req("version"))
        for i, q in enumerate(reqs):
            q.opaque = (self.cid << 16) | (i + 1)
            if q.kind in ("delete", "md", "bdel"):
                self.run_.registry.deleting(q.keys[0])
        return reqs

    # -- reading and checking replies
    def read_text_reply(self):
        reply = self.conn.read_reply()
        self.last_replies = (self.last_replies + [(self.last_sent_kinds, reply[:60])])[-6:]
        return reply

    def check_value(self, key, data, where):
        if not data.startswith(key + b"|") or not self.run_.registry.known(key, data):
            self.fail(f"{where}: key {key!r} got a value never written for it: {data[:60]!r}")
        if key in self.state and data not in self.state[key]:
            self.fail(f"history {self.history_of(key)}; "
                      f"{where}: private key {key!r} holds {data[:40]!r}, not one of its possible values "
                      f"{sorted(repr(v[:40]) if v else 'miss' for v in self.state[key])}")

    def check_miss(self, req, key, where):
        if key in self.state:
            if None not in self.state[key]:
                self.fail(f"{where}: private key {key!r} missed but was stored; history {self.history_of(key)}")
        elif key.startswith(b"s") and key in req.stored and not self.run_.registry.was_deleted(key):
            self.fail(f"{where}: shared key {key!r} missed though it was stored before the request and "
                      "never deleted")

    def flaky(self, req):
        return any(k.startswith(b"f:") for k in req.keys)

    def check_error(self, req, line):
        """An error is a flaky-pool key's right. On the main pool only a
        timeout is allowed (a busy 2-core machine can hold a reply past the
        pool's timeout): counted, and a write that timed out leaves its key's
        value unknown (retired). Anything else there is a failure."""
        if self.flaky(req):
            return
        text = line if isinstance(line, bytes) else bytes(line.get("value", b""))
        if b"timeout" not in text:
            self.fail(f"{req.kind} {req.keys[:3]!r} failed on the main pool: {line!r}")
        self.run_.main_timeouts += 1
        if req.kind in ("set", "ms", "bset", "delete", "md", "bdel"):
            self.retire(req.keys[0])

    def check_text(self, req, reply):
        where = f"{req.kind} {req.keys[:3]!r}"
        if reply.startswith((b"SERVER_ERROR", b"CLIENT_ERROR", b"ERROR")):
            return self.check_error(req, reply)
        if req.kind == "get":
            values = mcwire.parse_values(reply)
            if not reply.endswith(b"END\r\n"):
                self.fail(f"{where}: reply is not a get's: {reply[:80]!r}")
            # VALUEs come in key order, misses left out.
            try:
                i = 0
                for key, _flags, data, _cas in values:
                    while i < len(req.keys) and req.keys[i] != key:
                        self.check_miss(req, req.keys[i], where)
                        i += 1
                    if i == len(req.keys):
                        self.fail(f"{where}: VALUE for {key!r}, which was not asked for (or out of order)")
                    self.check_value(key, data, where)
                    i += 1
                for k in req.keys[i:]:
                    self.check_miss(req, k, where)
            except Failure as e:
                # The whole exchange: a miss may be a VALUE out of its place.
                raise Failure(f"{e}; keys asked {[k.decode() for k in req.keys]}; "
                              f"VALUEs in the reply {[k.decode() for k, _, _, _ in values]}") from e
            return
        if req.kind == "mg":
            if reply.startswith(b"EN"):  # memcached echoes the k flag on a miss too
                if reply not in (b"EN\r\n", b"EN k" + req.keys[0] + b"\r\n"):
                    self.fail(f"{where}: a miss for another key: {reply!r}")
                return self.check_miss(req, req.keys[0], where)
            if not reply.startswith(b"VA "):
                self.fail(f"{where}: not an mg reply: {reply[:80]!r}")
            head, _, rest = reply.partition(b"\r\n")
            if b"k" + req.keys[0] not in head.split()[2:]:
                self.fail(f"{where}: mg reply for another key: {head!r}")
            return self.check_value(req.keys[0], rest[:-2], where)
        expected = {
            "set": (b"STORED\r\n",), "ms": (b"HD\r\n",), "delete": (b"DELETED\r\n", b"NOT_FOUND\r\n"),
            "md": (b"HD\r\n", b"NF\r\n"),
        }.get(req.kind)
        if req.kind == "mn":
            if reply != b"MN\r\n":
                self.fail(f"{where}: {reply[:80]!r} where the pipeline's closing mn was due")
            return
        if req.kind == "version":
            if not reply.startswith(b"VERSION "):
                self.fail(f"{where}: {reply[:80]!r}")
            return
        if reply not in expected:
            self.fail(f"{where}: {reply[:80]!r}")
        self.apply(req, reply in (b"DELETED\r\n", b"NOT_FOUND\r\n", b"HD\r\n", b"NF\r\n") and req.kind in ("delete", "md"))

    def check_binary(self, req, r):
        where = f"{req.kind} {req.keys[:1]!r}"
        if r["opaque"] != req.opaque:
            self.fail(f"{where}: reply with opaque {r['opaque']:#x} (opcode {r['opcode']:#x}) for request "
                      f"{req.opaque:#x}")
        st = r["status"]
        if req.kind == "noop":
            return
        if st not in (0, 1, 2, 5):
            return self.check_error(req, r)
        if req.kind == "bget":
            if st == 1:
                return self.check_miss(req, req.keys[0], where)
            if r["key"] != req.keys[0]:
                self.fail(f"{where}: GETK reply for key {r['key']!r}")
            return self.check_value(req.keys[0], r["value"], where)
        if req.kind == "bset":
            if st != 0:
                self.fail(f"{where}: status {st:#x}")
            return self.apply(req, False)
        if req.kind == "bdel":
            if st not in (0, 1):
                self.fail(f"{where}: status {st:#x}")
            return self.apply(req, True)

    def apply(self, req, is_delete):
        key = req.keys[0]
        if is_delete:
            if key in self.state:
                self.state[key] = {None}
            return
        self.run_.registry.acked(key)
        if key in self.state:
            self.state[key] = {req.value}

    def apply_unanswered(self, req):
        """A quiet write: memcached applies one connection's requests in order
        and the router keeps a client's order per server."""
        if req.kind in ("set", "ms", "bset"):
            # (Not `acked` for the others: it may not have reached its server
            # when another client's get does.)
            if req.keys[0] in self.state:
                self.state[req.keys[0]] = {req.value}
        elif req.kind in ("delete", "md", "bdel") and req.keys[0] in self.state:
            self.state[req.keys[0]] = {None}

    def uncertain(self, reqs):
        """Writes sent on a connection that was reset may or may not be
        applied, and may be applied late: the router orphans them, and the
        next connection may land on another worker, whose own connection to
        the server can overtake them (as a new memcached connection can
        overtake what a reset one had sent). So the keys they touched are
        retired (still checked as any key: only values written for them) and
        fresh private keys take their place."""
        for q in reqs:
            k = q.keys[0] if q.keys else None
            if q.kind in ("set", "ms", "bset", "delete", "md", "bdel"):
                self.retire(k)

    def retire(self, k):
        """A private key whose value is no longer known: checked from now on
        as any key (only values written for it), a fresh one in its place."""
        if k not in self.state:
            return
        del self.state[k]
        self.generation += 1
        fresh = b"p%d_g%d" % (self.cid, self.generation)
        self.private[self.private.index(k)] = fresh
        self.state[fresh] = {None}

    def read_all(self, reqs):
        if self.binary:
            return self.read_all_binary(reqs)
        ahead = None  # a reply read to see whether a quiet ms before it failed
        for q in reqs:
            self.requests += 1
            if not q.answered():
                if q.kind == "ms":
                    # `ms ... q` answers only an error; an `mn` follows every
                    # quiet ms, so the next reply tells which.
                    ahead = self.read_text_reply()
                    if ahead.startswith((b"SERVER_ERROR", b"CLIENT_ERROR")):
                        self.check_error(q, ahead)
                        self.retire(q.keys[0])
                        ahead = None
                        continue
                self.apply_unanswered(q)
                continue
            reply, ahead = (ahead, None) if ahead is not None else (self.read_text_reply(), None)
            self.check_text(q, reply)

    def read_all_binary(self, reqs):
        """Quiet binary commands answer only on error, so responses are matched
        to requests by opaque; the noop that ends every pipeline tells that
        the quiet ones before it are done."""
        i = 0
        while i < len(reqs):
            r = self.conn.read_binary_response()
            j = next((j for j in range(i, len(reqs)) if reqs[j].opaque == r["opaque"]), None)
            if j is None:
                self.fail(f"a response with opaque {r['opaque']:#x} (opcode {r['opcode']:#x}, status "
                          f"{r['status']:#x}) matches no request still due")
            for q in reqs[i:j]:
                if q.answered():
                    self.fail(f"{q.kind} {q.keys[:1]!r} got no response before a later request's")
                self.apply_unanswered(q)
            q = reqs[j]
            if q.answered():
                self.check_binary(q, r)
            elif q.kind == "bdel" and r["status"] == 1:
                self.apply_unanswered(q)  # DELETEQ answers "Not found" (only success is quiet)
            else:
                self.check_error(q, r)  # a quiet set's only response is an error
            self.requests += j + 1 - i
            i = j + 1

    def send(self, reqs, tail=b"", how="normal"):
        for q in reqs:
            for k in q.keys:
                if k in self.state:
                    self.history.append((q.kind, k, (q.value or b"")[:16], how, q.noreply))
        self.history = self.history[-400:]
        for q in reqs:
            if q.kind in ("get", "mg", "bget"):
                q.stored = self.run_.registry.stored_now(q.keys)
        self.last_sent_kinds = " ".join(f"{q.kind}{'q' if q.noreply else ''}({len(q.keys)}:{q.keys[0][:6].decode() if q.keys else ''})" for q in reqs)
        data = b"".join(q.wire() for q in reqs) + tail
        self.conn.send(data)

    # -- one round
    def round(self):
        if self.conn is None:
            self.connect()
        reqs = self.make_pipeline()
        if self.binary:
            # A noop closes every pipeline, so a quiet write's error (which
            # would come before it) cannot be missed.
            noop = Req("noop")
            noop.opaque = (self.cid << 16) | 0xFFFF
            reqs.append(noop)
        else:
            reqs.append(Req("mn"))  # the same for a quiet ms's error
        what = self.rng.random()
        if what < 0.05:
            # Reset at once: none of it may reach another client.
            sock = self.conn.sock
            try:
                self.send(reqs, how="reset")
            except OSError:
                pass
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
            self.conn = None
            self.uncertain(reqs)
            return
        if what < 0.10:
            # quit after the pipeline: every reply, then the close.
            quit_req = Req("bquit" if self.binary else "quit")
            quit_req.opaque = (self.cid << 16) | 0xFFFE
            self.send(reqs, quit_req.wire(), how="quit")
            self.read_all(reqs)
            if self.binary:
                r = self.conn.read_binary_response()
                if r["opcode"] != 0x07 or r["opaque"] != quit_req.opaque:
                    self.fail(f"quit: got {r}")
            if not self.conn.is_closed(wait=5):
                self.fail("quit did not close the connection")
            self.conn.close()
            self.conn = None
            return
        if what < 0.14:
            # Half-close after sending: the replies still come, then EOF.
            self.send(reqs, how="fin")
            self.conn.sock.shutdown(socket.SHUT_WR)
            self.read_all(reqs)
            if not self.conn.is_closed(wait=5):
                self.fail("no EOF after a half-close")
            self.conn.close()
            self.conn = None
            return
        self.send(reqs)
        if what < 0.20:
            time.sleep(self.rng.uniform(0.1, 1.0))  # a slow reader
        self.read_all(reqs)

    def run(self):
        try:
            while not self.run_.stop.is_set():
                self.round()
        except Exception as e:  # noqa: BLE001 (reported with the seed)
            self.error = e
            self.run_.stop.set()
        finally:
            if self.conn is not None:
                self.conn.close()


# ---------------------------------------------------------------- chaos

class Chaos(threading.Thread):
    """Reloads the router's config (alternating two equivalent files) and
    stops/resumes the flaky pool's server."""

    def __init__(self, run, router, config_path, configs, flaky_pid):
        super().__init__(daemon=True, name="chaos")
        self.run_ = run
        self.router = router
        self.config_path = config_path
        self.configs = configs
        self.flaky_pid = flaky_pid
        self.rng = random.Random(run.seed ^ 0xC4A05)
        self.reloads = 0
        self.stops = 0

    def run(self):
        i = 0
        stopped = False
        try:
            while not self.run_.stop.wait(self.rng.uniform(0.3, 1.2)):
                i += 1
                if self.rng.random() < 0.5:
                    with open(self.config_path, "w") as f:
                        f.write(self.configs[i % len(self.configs)])
                    self.router.proc.send_signal(signal.SIGHUP)
                    self.reloads += 1
                elif self.flaky_pid:
                    os.kill(self.flaky_pid, signal.SIGCONT if stopped else signal.SIGSTOP)
                    stopped = not stopped
                    self.stops += 1
        finally:
            if stopped:
                os.kill(self.flaky_pid, signal.SIGCONT)


# ---------------------------------------------------------------- the run

def router_configs(main_servers, flaky_servers):
    """Two route trees with the same meaning (keys `f:` to the flaky pool,
    the rest to main), differing in timeouts, so each reload swaps the tree."""
    out = []
    for timeout in ("5s", "4s"):
        lines = ["logging:", "  level: warn", "pools:", "  main:",
                 "    servers: [" + ", ".join(f'"{s}"' for s in main_servers) + "]",
                 f"    timeout: {timeout}", "  flaky:",
                 "    servers: [" + ", ".join(f'"{s}"' for s in flaky_servers) + "]",
                 "    timeout: 500ms", "    connect_timeout: 500ms", "    failure_limit: 2",
                 "    retry_interval: 200ms", "route:", "  type: prefix", "  prefixes:",
                 "    \"f:\": {type: pool, pool: flaky}", "  default: {type: pool, pool: main}"]
        out.append("\n".join(lines) + "\n")
    return out


class Run:
    def __init__(self, host, port, seed, clients, duration, reply_timeout=30.0):
        self.host = host
        self.port = port
        self.seed = seed
        self.clients = clients
        self.duration = duration
        self.reply_timeout = reply_timeout
        self.registry = Registry()
        self.stop = threading.Event()
        self.main_timeouts = 0  # main-pool requests that timed out (check_error)

    def go(self, chaos=None):
        """Runs the clients for `duration` seconds; returns the request count.
        Raises Failure (with the seed) on the first wrong reply."""
        threads = [Client(self, i) for i in range(self.clients)]
        for t in threads:
            t.start()
        if chaos is not None:
            chaos.start()
        self.stop.wait(self.duration)
        self.stop.set()
        for t in threads:
            t.join(self.reply_timeout + 10)
        if chaos is not None:
            chaos.join(5)
        errors = [t for t in threads if t.error is not None]
        if errors:
            first = errors[0].error
            raise Failure(f"seed {self.seed}: {len(errors)} client(s) failed; first: {first!r}") from first
        hung = [t.name for t in threads if t.is_alive()]
        if hung:
            raise Failure(f"seed {self.seed}: clients still waiting for replies: {hung[:5]}")
        return sum(t.requests for t in threads)
