"""Reload when the config file changes (server.reload_on_change; on by
default for an mcrouter config, as mcrouter watches its file): the change
goes through the reload a SIGHUP makes, after the file has been quiet for a
second (config_watch.h). Each case routes one pool to a real memcached,
changes the file the way a user or a tool does (edited in place, replaced by
a rename, a Kubernetes ConfigMap's `..data` symlink swapped), and checks that
a key set afterwards lands on the new backend, while a client writing through
the router all along gets every reply."""

import os
import re
import shutil
import signal
import threading
import time

import pytest

from conftest import ithaca_binary
from mcwire import Conn

# The watcher reloads 1 s after the last event; a loaded machine may add a
# few seconds before the reload's log line shows.
RELOAD_TIMEOUT = 15
APPLIED = re.compile(r"config change: \S+ is valid; applied: ")
REFUSED = re.compile(r"config change: reload refused, keeping the running configuration: (.*)")


@pytest.fixture(autouse=True)
def needs_ithaca():
    if ithaca_binary()[1]:
        pytest.skip("an ithaca config file")


def yaml_config(backend, reload_on_change="true", note="", io_backend=None):
    lines = ["logging:", "  level: info", "server:"]
    if reload_on_change is not None:
        lines += [f"  reload_on_change: {reload_on_change}"]
    if io_backend is not None:
        lines += [f"  io_backend: {io_backend}"]
    lines += ["pools:", "  main:", f'    servers: ["{backend.host}:{backend.port}"]', "    timeout: 10s",
              "route:", "  type: pool", "  pool: main"]
    return f"# {note}\n" + "\n".join(lines) + "\n"


def mcrouter_config(backend):
    return ('{\n  "pools": {"A": {"servers": ["%s:%d"]}},\n  "route": "PoolRoute|A"\n}\n'
            % (backend.host, backend.port))


def watching(router):
    """Waits until the watches are in place (the line is logged once they
    are): a change from then on must be seen."""
    line = re.compile(r"config watch: reloading when any of these changes: ")
    assert router.wait_for_log(line, RELOAD_TIMEOUT), router.describe()
    return router


def write_in_place(path, text):
    with open(path, "w") as f:
        f.write(text)


def replace_by_rename(path, text):
    tmp = f"{path}.new"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def count(regex, server):
    return len(regex.findall(server.log))


def wait_count(regex, server, at_least, timeout=RELOAD_TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if count(regex, server) >= at_least:
            return
        time.sleep(0.05)
    pytest.fail(f"{regex.pattern!r} seen {count(regex, server)} times, not {at_least}, "
                f"within {timeout} s:\n{server.describe()}", pytrace=False)


def holds(backend, key):
    with Conn(backend.host, backend.port) as c:
        return c.call(b"get %s\r\n" % key) != b"END\r\n"


def lands_on(router, key, backend, others):
    """Sets `key` through the router; asserts only `backend` of all got it."""
    with Conn(router.host, router.port) as c:
        assert c.call(b"set %s 0 0 1\r\nv\r\n" % key) == b"STORED\r\n"
    assert holds(backend, key), f"{key} is not on {backend.port}"
    for other in others:
        assert not holds(other, key), f"{key} is on {other.port} too"


class Writer:
    """A client writing through the router on one connection all along: every
    set must be answered STORED (a reload never drops a request)."""

    def __init__(self, router):
        self.conn = Conn(router.host, router.port, timeout=15)
        self.sent = 0
        self.bad = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        # Its first batch is answered before the change is made.
        self.wait_sent(1)

    def wait_sent(self, at_least):
        deadline = time.monotonic() + 10
        while self.sent < at_least and not self.bad and time.monotonic() < deadline:
            time.sleep(0.01)

    def run(self):
        try:
            while not self.stop.is_set():
                # A pipelined batch of sets: some may be in flight across the swap.
                batch = [b"w%d" % (self.sent + i) for i in range(8)]
                self.conn.send(b"".join(b"set %s 0 0 2\r\nok\r\n" % k for k in batch))
                replies = self.conn.read_replies(len(batch))
                self.sent += len(batch)
                self.bad += [r for r in replies if r != b"STORED\r\n"]
                time.sleep(0.005)
        except Exception as e:  # noqa: BLE001 - reported by finish()
            self.bad.append(repr(e))

    def finish(self, *backends):
        # Two more batches, on the tree the change made.
        self.wait_sent(self.sent + 16)
        self.stop.set()
        self.thread.join(20)
        self.conn.close()
        assert not self.thread.is_alive(), "the writer hung"
        assert not self.bad, f"{len(self.bad)} of {self.sent} writes went wrong: {self.bad[:5]}"
        assert self.sent > 0
        # Its keys reached both sides of the change.
        for b in backends:
            with Conn(b.host, b.port) as c:
                got = c.call(b"get w0 w%d\r\n" % (self.sent - 1))
            assert got != b"END\r\n", f"none of the writer's first and last keys on {b.port}"


def test_an_mcrouter_config_edited_in_place_reloads_by_default(ithaca_factory, memcached_factory, tmp_path):
    old, new = memcached_factory(), memcached_factory()
    path = tmp_path / "mcrouter.json"
    path.write_text(mcrouter_config(old))
    router = watching(ithaca_factory(args=["-v", "--config", str(path)]))  # -v: the reload's line (info)
    lands_on(router, b"before", old, [new])
    writer = Writer(router)
    write_in_place(path, mcrouter_config(new))
    wait_count(APPLIED, router, 1)
    lands_on(router, b"after", new, [old])
    writer.finish(old, new)
    assert "config watch: " + str(path) + " was modified; reloading" in router.log, router.log
    # The SIGHUP path is the same one: a second edit is seen as well.
    write_in_place(path, mcrouter_config(old))
    wait_count(APPLIED, router, 2)
    lands_on(router, b"again", old, [new])


def test_a_change_between_the_start_read_and_the_watch_reloads(ithaca_factory, memcached_factory, tmp_path):
    """A file modified after the start read it and before the first watches
    were in place is reloaded (config_watch::set: its mtime is later than the
    read). Made deterministic here by an mtime in the future, which is what
    such a file's mtime is as far as the read is concerned; it reloads once,
    not in a loop, and a real edit after it reloads as usual."""
    old, new = memcached_factory(), memcached_factory()
    path = tmp_path / "mcrouter.json"
    path.write_text(mcrouter_config(old))
    later = time.time() + 3600
    os.utime(path, (later, later))
    router = watching(ithaca_factory(args=["-v", "--config", str(path)]))
    wait_count(APPLIED, router, 1)
    assert "config watch: " + str(path) + " was modified after it was read; reloading" in router.log, router.log
    lands_on(router, b"before", old, [new])
    write_in_place(path, mcrouter_config(new))
    wait_count(APPLIED, router, 2)
    lands_on(router, b"after", new, [old])
    assert count(APPLIED, router) == 2, router.log


def test_an_imported_file_edited_reloads(ithaca_factory, memcached_factory, tmp_path):
    """An mcrouter config's @import file is watched with it (config::sources)."""
    old, new = memcached_factory(), memcached_factory()
    pools = tmp_path / "pools.json"
    pools.write_text('{"A": {"servers": ["%s:%d"]}}\n' % (old.host, old.port))
    path = tmp_path / "mcrouter.json"
    path.write_text('{"pools": "@import(pools.json)", "route": "PoolRoute|A"}\n')
    router = watching(ithaca_factory(args=["-v", "--config", str(path)]))
    assert str(pools) in router.log, router.log  # named among the watched files
    lands_on(router, b"before", old, [new])
    writer = Writer(router)
    replace_by_rename(pools, '{"A": {"servers": ["%s:%d"]}}\n' % (new.host, new.port))
    wait_count(APPLIED, router, 1)
    lands_on(router, b"after", new, [old])
    writer.finish(old, new)


@pytest.mark.parametrize("io_backend", ["auto", "epoll"])
def test_a_file_replaced_by_a_rename_reloads_each_time(ithaca_factory, memcached_factory, io_backend):
    """Also on epoll: the pooler waits on the inotify descriptor through
    either kernel backend."""
    a, b = memcached_factory(), memcached_factory()
    router = watching(ithaca_factory(config_text=yaml_config(a, io_backend=io_backend)))
    path = router.argv[router.argv.index("--config") + 1]
    writer = Writer(router)
    replace_by_rename(path, yaml_config(b, io_backend=io_backend))
    wait_count(APPLIED, router, 1)
    lands_on(router, b"after1", b, [a])
    writer.finish(a, b)
    # The watch moved to the new inode: the next rename is seen too.
    replace_by_rename(path, yaml_config(a, note="back", io_backend=io_backend))
    wait_count(APPLIED, router, 2)
    lands_on(router, b"after2", a, [b])
    assert "was replaced (inode" in router.log, router.log


def configmap_swap(directory, name, text, generation):
    """What the kubelet's atomic writer does: the new files in a fresh
    timestamped directory, a new `..data` symlink to it renamed over the old
    one, the old directory removed."""
    fresh = f"..2026_12_02_17_00_00.{generation}"
    os.mkdir(directory / fresh)
    (directory / fresh / name).write_text(text)
    old = os.readlink(directory / "..data") if os.path.islink(directory / "..data") else None
    os.symlink(fresh, directory / "..data_tmp")
    os.rename(directory / "..data_tmp", directory / "..data")
    if old is not None:
        shutil.rmtree(directory / old)


def test_a_configmap_symlink_swap_reloads(ithaca_factory, memcached_factory, tmp_path):
    a, b = memcached_factory(), memcached_factory()
    volume = tmp_path / "config"
    volume.mkdir()
    configmap_swap(volume, "mcrouter.json", mcrouter_config(a), 1)
    os.symlink("..data/mcrouter.json", volume / "mcrouter.json")
    router = watching(ithaca_factory(args=["-v", "--config", str(volume / "mcrouter.json")]))
    lands_on(router, b"before", a, [b])
    writer = Writer(router)
    configmap_swap(volume, "mcrouter.json", mcrouter_config(b), 2)
    wait_count(APPLIED, router, 1)
    lands_on(router, b"after1", b, [a])
    writer.finish(a, b)
    assert "now leads to " + str(volume / "..2026_12_02_17_00_00.2" / "mcrouter.json") in router.log, router.log
    # Re-armed on the new target's directory: the next swap is seen too.
    configmap_swap(volume, "mcrouter.json", mcrouter_config(a), 3)
    wait_count(APPLIED, router, 2)
    lands_on(router, b"after2", a, [b])


def test_a_burst_of_writes_is_one_reload(ithaca_factory, memcached_factory):
    a, b = memcached_factory(), memcached_factory()
    router = watching(ithaca_factory(config_text=yaml_config(a)))
    path = router.argv[router.argv.index("--config") + 1]
    writer = Writer(router)
    start = time.monotonic()
    for i in range(20):
        # Paced a few ms apart (a sleep on a loaded machine overshoots).
        time.sleep(max(0.0, start + i * 0.002 - time.monotonic()))
        write_in_place(path, yaml_config(b, note=f"write {i}"))
    took = time.monotonic() - start
    assert took < 0.1, f"the 20 writes took {took:.3f} s, not under 100 ms: no burst to test"
    wait_count(APPLIED, router, 1)
    lands_on(router, b"after", b, [a])
    writer.finish(a, b)
    # Twice the quiet second more: no second reload follows.
    time.sleep(2.5)
    assert count(APPLIED, router) == 1, router.log
    assert router.log.count("; reloading") == 1, router.log


def test_a_broken_file_keeps_the_old_config_until_fixed(ithaca_factory, memcached_factory):
    a, b = memcached_factory(), memcached_factory()
    router = watching(ithaca_factory(config_text=yaml_config(a)))
    path = router.argv[router.argv.index("--config") + 1]
    writer = Writer(router)
    broken = yaml_config(b).replace("  type: pool\n", "  type: pooll\n")
    write_in_place(path, broken)
    wait_count(REFUSED, router, 1)
    why = REFUSED.findall(router.log)[0]
    assert f"{path}:" in why and "pooll" in why, why
    lands_on(router, b"still", a, [b])
    write_in_place(path, yaml_config(b))
    wait_count(APPLIED, router, 1)
    lands_on(router, b"fixed", b, [a])
    writer.finish(a, b)


def test_off_by_default_for_ithaca_yaml_and_by_mcrouters_flag(ithaca_factory, memcached_factory, tmp_path):
    """ithaca's YAML without the key, and an mcrouter config with mcrouter's
    --disable-reload-configs, reload on SIGHUP only."""
    a, b = memcached_factory(), memcached_factory()
    plain = ithaca_factory(config_text=yaml_config(a, reload_on_change=None))
    json_path = tmp_path / "mcrouter.json"
    json_path.write_text(mcrouter_config(a))
    flagged = ithaca_factory(args=["-v", "--disable-reload-configs", "--config", str(json_path)])
    write_in_place(plain.argv[plain.argv.index("--config") + 1], yaml_config(b, reload_on_change=None))
    write_in_place(json_path, mcrouter_config(b))
    time.sleep(3)  # three quiet periods
    for router in (plain, flagged):
        assert count(APPLIED, router) == 0, router.log
        lands_on(router, b"unchanged%d" % router.port, a, [b])


def test_a_sighup_turns_watching_on_and_a_change_off(ithaca_factory, memcached_factory):
    """reload_on_change is live: a SIGHUP'd file that turns it on starts the
    watching; a watched change that turns it off stops it."""
    a, b = memcached_factory(), memcached_factory()
    router = ithaca_factory(config_text=yaml_config(a, reload_on_change="false"))
    path = router.argv[router.argv.index("--config") + 1]
    sighup_applied = re.compile(r"SIGHUP: \S+ is valid; applied: ")
    write_in_place(path, yaml_config(a, reload_on_change="true"))
    router.proc.send_signal(signal.SIGHUP)
    wait_count(sighup_applied, router, 1)
    watching(router)
    write_in_place(path, yaml_config(b, reload_on_change="false"))
    wait_count(APPLIED, router, 1)
    lands_on(router, b"on", b, [a])
    assert router.wait_for_log(re.compile(r"config watch: off"), RELOAD_TIMEOUT), router.describe()
    write_in_place(path, yaml_config(a, reload_on_change="false", note="not watched"))
    time.sleep(3)  # three quiet periods
    assert count(APPLIED, router) == 1, router.log
    lands_on(router, b"off", b, [a])
