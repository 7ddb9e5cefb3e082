"""The client-library workload (see test_client_libraries.py) for Python's
pylibmc (libmemcached; text or binary protocol) and pymemcache (text).

    python_driver.py pylibmc-text|pylibmc-binary|pymemcache PREFIX HOST:PORT...

Runs each step against every HOST:PORT in turn (so the TTL sleep is shared)
and prints one JSON line per step and target: {"t": i, "op": name, "r": result}.
"""

import hashlib
import json
import sys
import threading
import time

TTL = 2           # seconds; memcached expires it 1 to 2 s later
TTL_SLEEP = 3.2   # past TTL plus one tick of the servers' second clock


def make_value(n):
    """The first n characters of "0.1.2.3...", the same in every driver."""
    parts, size, i = [], 0, 0
    while size < n:
        s = f"{i}."
        parts.append(s)
        size += len(s)
        i += 1
    return "".join(parts)[:n]


# Every byte value, then reply lines a careless proxy might parse as its own.
NASTY = bytes(range(256)) + b"\r\nEND\r\nVALUE x 0 1\r\nx\r\nEND\r\n"


def show(v):
    """A value as the drivers print it: as is when short, else its length and md5."""
    if v is None:
        return None
    if isinstance(v, str):
        v = v.encode()
    if len(v) > 64:
        return f"<{len(v)} bytes md5 {hashlib.md5(v).hexdigest()}>"
    return v.decode("latin-1")


def error(e):
    return {"error": type(e).__name__}


class Pylibmc:
    def __init__(self, addr, binary, noreply=False):
        import pylibmc
        self.c = pylibmc.Client([addr], binary=binary,
                                behaviors={"cas": True, "connect_timeout": 5000, "receive_timeout": 10_000_000,
                                           "send_timeout": 10_000_000, "_noreply": noreply})

    def set(self, k, v, ttl=0, flags=None): return self.c.set(k, v, ttl)
    def get(self, k): return self.c.get(k)
    def get_multi(self, ks): return self.c.get_multi(ks)
    def add(self, k, v): return self.c.add(k, v)
    def replace(self, k, v): return self.c.replace(k, v)
    def append(self, k, v): return self.c.append(k, v)
    def prepend(self, k, v): return self.c.prepend(k, v)
    def incr(self, k, d): return self.c.incr(k, d)
    def decr(self, k, d): return self.c.decr(k, d)
    def delete(self, k): return self.c.delete(k)
    def touch(self, k, ttl): return self.c.touch(k, ttl)
    def gets(self, k): return self.c.gets(k)
    def cas(self, k, v, token): return self.c.cas(k, v, token)


class Flagged:
    """pymemcache serde that hands the raw flags back: get -> (value, flags)."""

    @staticmethod
    def serialize(key, value):
        return value, 0

    @staticmethod
    def deserialize(key, value, flags):
        return value, flags


class Pymemcache:
    def __init__(self, addr, serde=None, noreply=False):
        from pymemcache.client.base import Client
        host, port = addr.rsplit(":", 1)
        # default_noreply=False: every call waits for its reply (the library's
        # default, True, is exercised by the noreply_ops step).
        self.c = Client((host, int(port)), connect_timeout=5, timeout=10, default_noreply=noreply,
                        serde=serde)

    def set(self, k, v, ttl=0, flags=None): return self.c.set(k, v, ttl, flags=flags)
    def get(self, k): return self.c.get(k)
    def get_multi(self, ks): return self.c.get_many(ks)
    def add(self, k, v): return self.c.add(k, v)
    def replace(self, k, v): return self.c.replace(k, v)
    def append(self, k, v): return self.c.append(k, v)
    def prepend(self, k, v): return self.c.prepend(k, v)
    def incr(self, k, d): return self.c.incr(k, d, noreply=self.c.default_noreply)
    def decr(self, k, d): return self.c.decr(k, d, noreply=self.c.default_noreply)
    def delete(self, k): return self.c.delete(k)
    def touch(self, k, ttl): return self.c.touch(k, ttl)
    def gets(self, k): return self.c.gets(k)
    def cas(self, k, v, token): return self.c.cas(k, v, token)


def steps(lib, P):
    """[(name, fn(client, state) -> result)]. `state` is per target (a CAS token)."""
    big100, big900 = make_value(100_000), make_value(900_000)
    maxkey = P + "maxkey" + "k" * (250 - len(P) - len("maxkey"))
    multi = [f"{P}m{i}" for i in range(50)]
    seq = [f"{P}seq{i}" for i in range(500)]

    def multi_result(found):
        return {k[len(P):]: show(v) for k, v in sorted(found.items())}

    def set_some(c, s):
        return [bool(c.set(k, f"mv{i}")) for i, k in enumerate(multi) if i % 5 != 0]

    def gets(c, s):
        value, s["token"] = c.gets(P + "cas")
        return [show(value), s["token"] is not None]

    def noreply_ops(c, s):
        # Requests that get no reply (pylibmc: text "noreply", binary quiet
        # opcodes), then a get on the same connection that must see them all.
        n = s["noreply"]
        n.set(P + "nr1", "a")
        n.set(P + "nr2", "b")
        n.delete(P + "nr2")
        n.set(P + "nr3", "10")
        n.incr(P + "nr3", 5)
        n.append(P + "nr1", "z")
        return multi_result(n.get_multi([P + "nr1", P + "nr2", P + "nr3"]))

    def sequential(c, s):
        good = 0
        for i, k in enumerate(seq):
            good += bool(c.set(k, f"s{i}")) and show(c.get(k)) == f"s{i}"
        return good

    def concurrent(c, s):
        good = [0] * 4

        def worker(w):
            wc = s["new_client"]()
            for i in range(100):
                k = f"{P}conc{w}-{i}"
                v = make_value(1000 + 97 * i)
                good[w] += bool(wc.set(k, v)) and show(wc.get(k)) == show(v)

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return good

    out = [
        ("set_small", lambda c, s: c.set(P + "small", "hello world")),
        ("get_small", lambda c, s: show(c.get(P + "small"))),
        ("get_missing", lambda c, s: show(c.get(P + "missing"))),
        ("set_100k", lambda c, s: c.set(P + "v100k", big100)),
        ("get_100k", lambda c, s: show(c.get(P + "v100k"))),
        ("set_900k", lambda c, s: c.set(P + "v900k", big900)),
        ("get_900k", lambda c, s: show(c.get(P + "v900k"))),
        ("set_empty", lambda c, s: c.set(P + "empty", "")),
        ("get_empty", lambda c, s: show(c.get(P + "empty"))),
        ("set_binary", lambda c, s: c.set(P + "binary", NASTY)),
        ("get_binary", lambda c, s: show(c.get(P + "binary"))),
        ("get_multi_big", lambda c, s: multi_result(c.get_multi(
            [P + "small", P + "v100k", P + "v900k", P + "missing"]))),
        ("set_multi_keys", set_some),
        ("get_multi_50", lambda c, s: multi_result(c.get_multi(multi))),
        ("add_existing", lambda c, s: c.add(P + "small", "other")),
        ("add_new", lambda c, s: c.add(P + "add_new", "fresh")),
        ("get_add_new", lambda c, s: show(c.get(P + "add_new"))),
        ("replace_existing", lambda c, s: c.replace(P + "small", "replaced")),
        ("replace_missing", lambda c, s: c.replace(P + "replace_missing", "x")),
        ("get_replaced", lambda c, s: show(c.get(P + "small"))),
        ("set_append", lambda c, s: c.set(P + "append", "mid")),
        ("append", lambda c, s: c.append(P + "append", "_end")),
        ("prepend", lambda c, s: c.prepend(P + "append", "start_")),
        ("get_append", lambda c, s: show(c.get(P + "append"))),
        ("append_missing", lambda c, s: c.append(P + "append_missing", "x")),
        ("prepend_missing", lambda c, s: c.prepend(P + "append_missing", "x")),
        ("set_counter", lambda c, s: c.set(P + "counter", "10")),
        ("incr", lambda c, s: c.incr(P + "counter", 5)),
        ("decr", lambda c, s: c.decr(P + "counter", 3)),
        ("decr_below_zero", lambda c, s: c.decr(P + "counter", 100)),
        ("get_counter", lambda c, s: show(c.get(P + "counter"))),
        ("incr_missing", lambda c, s: c.incr(P + "counter_missing", 1)),
        ("decr_missing", lambda c, s: c.decr(P + "counter_missing", 1)),
        # Below 2^63: see test_client_libraries.py on memcached's incr of larger values.
        ("set_counter_large", lambda c, s: c.set(P + "counter", "9223372036854775806")),
        ("incr_large", lambda c, s: c.incr(P + "counter", 1)),
        ("delete_existing", lambda c, s: c.delete(P + "small")),
        ("get_deleted", lambda c, s: show(c.get(P + "small"))),
        ("delete_missing", lambda c, s: c.delete(P + "small")),
        ("set_touch", lambda c, s: c.set(P + "touch", "t")),
        ("touch", lambda c, s: c.touch(P + "touch", TTL)),
        ("touch_missing", lambda c, s: c.touch(P + "touch_missing", TTL)),
        ("get_touched", lambda c, s: show(c.get(P + "touch"))),
        ("set_cas", lambda c, s: c.set(P + "cas", "c0")),
        ("gets", gets),
        ("cas_ok", lambda c, s: c.cas(P + "cas", "c1", s["token"])),
        ("cas_conflict", lambda c, s: c.cas(P + "cas", "c2", s["token"])),
        ("get_cas", lambda c, s: show(c.get(P + "cas"))),
        ("delete_cas", lambda c, s: c.delete(P + "cas")),
        ("cas_missing", lambda c, s: c.cas(P + "cas", "c3", s["token"])),
        ("set_maxkey", lambda c, s: c.set(maxkey, "longest key")),
        ("get_maxkey", lambda c, s: show(c.get(maxkey))),
        ("get_multi_maxkey", lambda c, s: multi_result(c.get_multi([maxkey, P + "v100k"]))),
        ("set_ttl", lambda c, s: c.set(P + "ttl", "short", TTL)),
        ("get_ttl_before", lambda c, s: show(c.get(P + "ttl"))),
        ("sleep", None),
        ("get_ttl_after", lambda c, s: show(c.get(P + "ttl"))),
        ("get_touched_after", lambda c, s: show(c.get(P + "touch"))),
        ("noreply_ops", noreply_ops),
        ("sequential_500", sequential),
        ("concurrent_4x100", concurrent),
    ]
    if lib == "pymemcache":
        # pymemcache passes flags through; a second client reads them raw.
        def flags_get(c, s):
            value, flags = s["flagged"].get(P + "flags")
            return [show(value), flags]

        i = [n for n, _ in out].index("set_maxkey")
        out[i:i] = [
            ("set_flags", lambda c, s: c.set(P + "flags", "flagged", flags=0xBEEF)),
            ("get_flags", flags_get),
        ]
    return out


def main():
    lib, prefix, addrs = sys.argv[1], sys.argv[2], sys.argv[3:]

    def factory(addr, noreply=False):
        if lib == "pymemcache":
            return lambda: Pymemcache(addr, noreply=noreply)
        return lambda: Pylibmc(addr, binary=(lib == "pylibmc-binary"), noreply=noreply)

    clients, states = [], []
    for addr in addrs:
        new = factory(addr)
        clients.append(new())
        state = {"new_client": new, "noreply": factory(addr, noreply=True)()}
        if lib == "pymemcache":
            state["flagged"] = Pymemcache(addr, serde=Flagged)
        states.append(state)

    for name, fn in steps(lib, prefix):
        if fn is None:
            time.sleep(TTL_SLEEP)
            continue
        for t, (c, s) in enumerate(zip(clients, states)):
            try:
                r = fn(c, s)
            except Exception as e:    # the library's exception is the result
                r = error(e)
            if isinstance(r, bytes):
                r = show(r)
            print(json.dumps({"t": t, "op": name, "r": r}), flush=True)


if __name__ == "__main__":
    main()
