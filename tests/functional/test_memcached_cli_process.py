"""memcached's process-level flags and listeners (issue 30), over the real
processes, beside a real memcached started the same way where it has the flag:

- -d with -P: the parent exits 0 only once the port answers; the pid file
  holds the daemon's pid; SIGTERM removes it. A port in use: the parent exits
  non-zero with the child's error (memcached's parent exits 0 and its child
  dies unseen: ithaca waits for the bind).
- -u: the server runs as that user (every thread), serves, and binds before
  it switches (a port below 1024 works; memcached switches first and cannot).
- the memcached entry point (a link named memcached, or --memcached): root
  without -u is refused with memcached's exit code; Debian's
  /etc/memcached.conf, as shipped, starts it through a copy of Debian's
  systemd-memcached-wrapper and daemonized through the link: as memcache,
  pid file written.
- -r, -k, -L accepted and effective (/proc/PID/limits, VmLck, smaps' hg).
- without -l: IPv4 and IPv6 (a client over 127.0.0.1 and over ::1), as
  memcached; `-l proto[ascii]:tag[x]:...` forms as memcached serves them.

Every daemon a test starts is killed at teardown (by its pid file) even when
the test fails. These tests need root (as CI runs them): without it they fail.
"""

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

import conftest
import mcwire
from conftest import HOST, Server, free_port
from test_router import wait_for

START_TIMEOUT = 10.0
SMALL = ["-U", "0", "-t", "2", "-m", "64"]
WRAPPER = "/usr/share/memcached/scripts/systemd-memcached-wrapper"
DEBIAN_CONF = "/etc/memcached.conf"
VERSION_RE = re.compile(rb"VERSION [^\r]*")


# --- helpers -----------------------------------------------------------------

def need_root():
    if os.geteuid() != 0:
        pytest.fail("this test switches users and compares root's refusal: run it as root (CI does)",
                    pytrace=False)


def ithaca_path():
    path, is_memcached = conftest.ithaca_binary()
    if is_memcached:
        pytest.fail("this test runs ithaca's own entry points: it cannot run with ITHACA_BIN=memcached",
                    pytrace=False)
    return os.path.abspath(path)


def memcached_link(tmp_path):
    """A link named memcached to ithaca: the compatibility entry point."""
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    link = d / "memcached"
    if not link.exists():
        link.symlink_to(ithaca_path())
    return str(link)


def memcache_user():
    try:
        return pwd.getpwnam("memcache")
    except KeyError:
        pytest.fail("user memcache is missing (apt-get install memcached creates it)", pytrace=False)


@pytest.fixture
def run_dir():
    """A directory like Debian's /run/memcached: owned by memcache, so a
    server switched to it can write and remove its pid file there (pytest's
    tmp_path is root's, 0700)."""
    pw = memcache_user()
    d = tempfile.mkdtemp(prefix="ithaca-run-", dir="/tmp")
    os.chmod(d, 0o755)
    os.chown(d, pw.pw_uid, pw.pw_gid)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def alive(pid):
    """Running, not a zombie waiting for a reaper."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def read_pid(path):
    with open(path) as f:
        return int(f.read().strip())


class Daemons:
    """The daemons a test started, by pid file (or pid): whatever is still
    running at teardown is killed, so a failing test leaves none behind."""

    def __init__(self):
        self.pid_files = []
        self.pids = []

    def pid_file(self, path):
        self.pid_files.append(str(path))
        return str(path)

    def kill_all(self):
        pids = list(self.pids)
        for p in self.pid_files:
            try:
                pids.append(read_pid(p))
            except (OSError, ValueError):
                pass
        for pid in pids:
            if alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


@pytest.fixture
def daemons():
    d = Daemons()
    yield d
    d.kill_all()


def run(argv, timeout=30):
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)


def version_reply(port, host=HOST):
    with mcwire.Conn(host, port, timeout=5) as c:
        return c.call(b"version\r\n")


def answers(port, host=HOST):
    try:
        return version_reply(port, host).startswith(b"VERSION ")
    except OSError:
        return False


def stop_and_wait_gone(pid, timeout=10.0):
    os.kill(pid, signal.SIGTERM)
    wait_for(lambda: not alive(pid), timeout, f"process {pid} to exit after SIGTERM")


def status_field(pid, name, task=None):
    path = f"/proc/{pid}/task/{task}/status" if task else f"/proc/{pid}/status"
    with open(path) as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.split(":", 1)[1].split()
    raise AssertionError(f"no {name} in {path}")


def ids_of_every_thread(pid):
    """{(uid, gid)} over the process's threads (real, effective, saved, fs all alike).
    The kernel's io_uring workers (iou-wrk-*, iou-sqp-*) are left out: they are
    not the program's threads (setuid does not reach them) and they run each
    request with the credentials of the thread that submitted it."""
    out = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                if f.read().startswith("iou-"):
                    continue
            uids = status_field(pid, "Uid", task)
            gids = status_field(pid, "Gid", task)
        except FileNotFoundError:
            continue  # a thread that ended meanwhile
        assert len(set(uids)) == 1 and len(set(gids)) == 1, (task, uids, gids)
        out.add((int(uids[0]), int(gids[0])))
    return out


def start_server(name, argv, port=None):
    """A foreground server (conftest.Server) on a known port, waited for."""
    server = Server(name, argv)
    server.port = port
    if port is not None and not server.wait_accepting(START_TIMEOUT):
        server.stop()
        pytest.fail(f"{name} did not start:\n{server.describe()}", pytrace=False)
    return server


def start_ithaca_fg(args, owned):
    """ithaca in the foreground on port 0 (its log says which), as conftest starts it."""
    server = owned.add(Server("ithaca", [ithaca_path(), *args]))
    m = server.wait_for_log(conftest.LISTEN_RE, START_TIMEOUT)
    if not m:
        server.stop()
        pytest.fail(f"ithaca did not start:\n{server.describe()}", pytrace=False)
    server.port = int(m.group(1))
    return server


@pytest.fixture
def owned():
    o = conftest._Servers()
    yield o
    o.stop_all()


def memcached_args():
    return [conftest.memcached_binary(), "-u", "root", *SMALL]


# --- -d and -P ---------------------------------------------------------------

def test_daemon_parent_exits_once_the_port_answers_and_the_pid_file_names_the_daemon(tmp_path, daemons):
    port = free_port()
    pid_file = daemons.pid_file(tmp_path / "ithaca.pid")
    r = run([ithaca_path(), "-d", "-P", pid_file, "-l", HOST, "-p", str(port), *SMALL])
    assert r.returncode == 0, r.stderr
    # No retry: the parent exited only after the child bound its listener.
    assert version_reply(port).startswith(b"VERSION "), "the port did not answer when -d's parent exited"
    pid = read_pid(pid_file)
    assert alive(pid)
    assert os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(ithaca_path())
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    assert int(fields[3]) == pid, "the daemon is not a session leader (setsid)"
    for fd in (0, 1, 2):
        assert os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/null", fd
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    # The pid file's contents, as memcached writes them.
    assert open(pid_file).read() == f"{pid}\n"
    stop_and_wait_gone(pid)
    assert not os.path.exists(pid_file), "the pid file outlived a SIGTERM"


def test_memcached_daemon_keeps_the_same_pid_file_contract(tmp_path, daemons):
    # The oracle: memcached -d -P writes its daemon's pid and removes the file at SIGTERM.
    port = free_port()
    pid_file = daemons.pid_file(tmp_path / "memcached.pid")
    r = run([*memcached_args(), "-d", "-P", pid_file, "-l", HOST, "-p", str(port)])
    assert r.returncode == 0, r.stderr
    wait_for(lambda: answers(port), START_TIMEOUT, "memcached -d to answer")
    wait_for(lambda: os.path.exists(pid_file), START_TIMEOUT, "memcached's pid file")
    pid = read_pid(pid_file)
    assert open(pid_file).read() == f"{pid}\n"
    stop_and_wait_gone(pid)
    assert not os.path.exists(pid_file)


def test_daemon_with_its_port_in_use_exits_non_zero_with_the_childs_error(tmp_path, daemons):
    holder = socket.socket()
    holder.bind((HOST, 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        pid_file = daemons.pid_file(tmp_path / "ithaca.pid")
        r = run([ithaca_path(), "-d", "-P", pid_file, "-l", HOST, "-p", str(port), *SMALL])
        assert r.returncode != 0, r.stderr
        assert "Address already in use" in r.stderr, r.stderr
        assert not os.path.exists(pid_file)
        # memcached's parent exits 0 before its child even binds (daemon.c
        # forks first): the failure is seen by no one. ithaca's differs.
        mc_pid_file = daemons.pid_file(tmp_path / "memcached.pid")
        m = run([*memcached_args(), "-d", "-P", mc_pid_file, "-l", HOST, "-p", str(port)])
        assert m.returncode == 0, m.stderr
    finally:
        holder.close()


def test_the_pid_file_is_also_written_and_removed_in_the_foreground(tmp_path, owned):
    pid_file = tmp_path / "fg.pid"
    server = start_ithaca_fg(["-l", HOST, "-p", "0", *SMALL, "-P", str(pid_file)], owned)
    wait_for(lambda: pid_file.exists(), 5, "the pid file")
    assert read_pid(pid_file) == server.proc.pid
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(10) == 0
    assert not pid_file.exists()


# --- -u ------------------------------------------------------------------------

def test_u_runs_every_thread_as_the_user_and_serves(owned):
    need_root()
    pw = memcache_user()
    server = start_ithaca_fg(["-l", HOST, "-p", "0", *SMALL, "-u", "memcache"], owned)
    want = {(pw.pw_uid, pw.pw_gid)}
    wait_for(lambda: ids_of_every_thread(server.proc.pid) == want, 5, "every thread to run as memcache")
    groups = {int(g) for g in status_field(server.proc.pid, "Groups")}
    assert groups == set(os.getgrouplist("memcache", pw.pw_gid)), groups
    with mcwire.Conn(HOST, server.port) as c:
        assert c.call(b"set k 0 0 2\r\nhi\r\n") == b"STORED\r\n"
        assert c.call(b"get k\r\n") == b"VALUE k 0 2\r\nhi\r\nEND\r\n"
    # The oracle, started the same way, runs as memcache too.
    port = free_port()
    real = owned.add(start_server("memcached", [conftest.memcached_binary(), "-u", "memcache", *SMALL,
                                                "-l", HOST, "-p", str(port)], port))
    assert ids_of_every_thread(real.proc.pid) == want


def test_u_binds_first_so_a_port_below_1024_works(owned):
    need_root()
    pw = memcache_user()
    with open("/proc/sys/net/ipv4/ip_unprivileged_port_start") as f:
        unprivileged = int(f.read())
    assert unprivileged > 1000, f"ports from {unprivileged} need no privilege here: nothing to show"
    port = next((p for p in range(1000, 1024) if port_free(p)), None)
    assert port is not None, "no free port in 1000-1023"
    server = owned.add(start_server("ithaca", [ithaca_path(), "-u", "memcache", "-l", HOST, "-p", str(port),
                                               *SMALL], port))
    wait_for(lambda: ids_of_every_thread(server.proc.pid) == {(pw.pw_uid, pw.pw_gid)}, 5, "the switch")
    assert version_reply(port).startswith(b"VERSION ")
    # memcached switches before it binds: the same flags fail (exit 71, EX_OSERR).
    other = next((p for p in range(1000, 1024) if p != port and port_free(p)), None)
    r = run([conftest.memcached_binary(), "-u", "memcache", "-l", HOST, "-p", str(other), *SMALL], timeout=10)
    assert r.returncode == 71, r.stderr
    assert "bind(): Permission denied" in r.stderr, r.stderr


def port_free(port):
    with socket.socket() as s:
        try:
            s.bind((HOST, port))
            return True
        except OSError:
            return False


def test_an_unknown_user_is_refused_as_memcached_refuses_it(tmp_path):
    need_root()
    mine = run([ithaca_path(), "-u", "nosuchuser", "-l", HOST, "-p", "0", *SMALL])
    real = run([conftest.memcached_binary(), "-u", "nosuchuser", "-l", HOST, "-p", str(free_port()), *SMALL])
    assert real.returncode == 67, real.stderr  # EX_NOUSER
    assert mine.returncode == real.returncode, mine.stderr
    assert real.stderr.strip() == "can't find the user nosuchuser to switch to"
    assert mine.stderr.strip().endswith("can't find the user nosuchuser to switch to"), mine.stderr
    # --check-config says it before a start would.
    check = run([ithaca_path(), "--check-config", "-u", "nosuchuser"])
    assert check.returncode == 1, check.stdout + check.stderr
    assert "process.user (-u): can't find the user nosuchuser to switch to" in check.stderr, check.stderr


# --- the memcached entry point ---------------------------------------------------

def test_root_without_u_is_refused_in_memcached_mode_only(tmp_path, owned):
    need_root()
    port = free_port()
    args = ["-l", HOST, "-p", str(port), *SMALL]
    real = run([conftest.memcached_binary(), *args])
    via_link = run([memcached_link(tmp_path), *args])
    via_flag = run([ithaca_path(), "--memcached", *args])
    # memcached 1.6.18 says "can't run as root without the -u switch"; 1.6.45
    # (commit d5bff0314) "must add '-u root' to start as root". Both exit 64.
    assert real.returncode == 64, real.stderr
    assert "root" in real.stderr and "-u" in real.stderr, real.stderr
    for r in (via_link, via_flag):
        assert r.returncode == real.returncode, r.stderr
        assert r.stderr == "must add '-u root' to start as root\n", r.stderr
    # ithaca's own command line runs as root, with a warning.
    server = start_ithaca_fg(args[:2] + ["-p", "0", *SMALL], owned)
    assert server.logged("running as root: -u USER (process.user) would switch")
    assert ids_of_every_thread(server.proc.pid) == {(0, 0)}


def test_memcached_mode_takes_only_memcacheds_flags(tmp_path):
    r = run([memcached_link(tmp_path), "-u", "root", "--config", "/dev/null"])
    assert r.returncode != 0
    assert "unknown option '--config'" in r.stderr, r.stderr
    # With -u root it runs as memcached would, in the cache role.
    port = free_port()
    server = Server("ithaca", [memcached_link(tmp_path), "-u", "root", "-l", HOST, "-p", str(port), *SMALL])
    server.port = port
    try:
        assert server.wait_accepting(START_TIMEOUT), server.describe()
        with mcwire.Conn(HOST, port) as c:
            assert c.call(b"set k 0 0 1\r\nx\r\n") == b"STORED\r\n"
    finally:
        server.stop()


def debian_conf(tmp_path, port, pid_file):
    """/etc/memcached.conf as Debian ships it, its port and pid file changed."""
    text = open(DEBIAN_CONF).read()
    assert re.search(r"^-p 11211$", text, re.M) and re.search(r"^-P /var/run/memcached/memcached.pid$", text, re.M), \
        "Debian's /etc/memcached.conf is not as shipped"
    text = re.sub(r"^-p 11211$", f"-p {port}", text, flags=re.M)
    text = re.sub(r"^-P /var/run/memcached/memcached.pid$", f"-P {pid_file}", text, flags=re.M)
    path = tmp_path / "memcached.conf"
    path.write_text(text)
    return path


def wrapper_for(tmp_path, binary):
    """Debian's systemd-memcached-wrapper with only its memcached path changed."""
    text = open(WRAPPER).read()
    assert 'my $memcached = "/usr/bin/memcached";' in text
    path = tmp_path / f"wrapper-{os.path.basename(os.path.dirname(binary))}"
    path.write_text(text.replace('my $memcached = "/usr/bin/memcached";', f'my $memcached = "{binary}";'))
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("which", ["ithaca", "memcached"])
def test_debian_conf_through_debians_systemd_wrapper(tmp_path, run_dir, owned, which):
    need_root()
    pw = memcache_user()
    binary = memcached_link(tmp_path) if which == "ithaca" else conftest.memcached_binary()
    port = free_port()
    pid_file = os.path.join(run_dir, "memcached.pid")
    conf = debian_conf(tmp_path, port, pid_file)
    # systemd runs the wrapper as root with the unit's CapabilityBoundingSet and
    # NoNewPrivileges (setpriv does the same here); the wrapper execs the server
    # in the foreground (it drops -d).
    unit = ["setpriv", "--bounding-set", "-all,+setgid,+setuid,+sys_resource", "--no-new-privs", "--"]
    server = owned.add(start_server(which, [*unit, str(wrapper_for(tmp_path, binary)), str(conf)], port))
    server.stop_signal = signal.SIGTERM
    wait_for(lambda: os.path.exists(pid_file), 5, "the pid file")
    assert read_pid(pid_file) == server.proc.pid  # the wrapper exec'd the server
    # Both write it as memcache, once switched.
    assert os.stat(pid_file).st_uid == pw.pw_uid
    assert ids_of_every_thread(server.proc.pid) == {(pw.pw_uid, pw.pw_gid)}
    with mcwire.Conn(HOST, port) as c:
        assert c.call(b"set k 0 0 2\r\nok\r\n") == b"STORED\r\n"
        settings = mcwire.parse_stats(c.call(b"stats settings\r\n"))
    assert settings["maxbytes"] == str(64 << 20)
    assert settings["inter"] == "127.0.0.1"
    assert settings["tcpport"] == str(port)


@pytest.mark.parametrize("which", ["ithaca", "memcached"])
def test_debian_conf_daemonized_through_the_memcached_entry_point(tmp_path, run_dir, daemons, which):
    need_root()
    pw = memcache_user()
    binary = memcached_link(tmp_path) if which == "ithaca" else conftest.memcached_binary()
    port = free_port()
    pid_file = daemons.pid_file(os.path.join(run_dir, "memcached.pid"))
    conf = debian_conf(tmp_path, port, pid_file)
    # Its option lines as they are, -d included (what Debian's old init did, minus its own fork).
    args = [word for line in conf.read_text().splitlines()
            if line.startswith("-") for word in line.split(None, 1)]
    assert "-d" in args and "-u" in args
    r = run([binary, *args])
    assert r.returncode == 0, r.stderr
    wait_for(lambda: answers(port), START_TIMEOUT, f"{which} -d to answer")
    wait_for(lambda: os.path.exists(pid_file), 5, "the pid file")
    pid = read_pid(pid_file)
    assert ids_of_every_thread(pid) == {(pw.pw_uid, pw.pw_gid)}
    stop_and_wait_gone(pid)
    assert not os.path.exists(pid_file), "the pid file outlived the daemon"


# --- -r -k -L ---------------------------------------------------------------------

def limits_row(pid, name):
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith(name):
                return line[len(name):].split()[:2]
    raise AssertionError(name)


def vm_kb(pid, field):
    return int(status_field(pid, field)[0])


def hg_mappings(pid):
    """Mappings advised MADV_HUGEPAGE ('hg' in VmFlags)."""
    with open(f"/proc/{pid}/smaps") as f:
        return sum(1 for line in f if line.startswith("VmFlags:") and " hg" in line)


def with_no_core(argv):
    # Started with a soft core limit of 0, so that raising it shows.
    return ["prlimit", "--core=0:unlimited", "--", *argv]


@pytest.mark.parametrize("which", ["ithaca", "memcached"])
def test_r_raises_the_core_limit(owned, which):
    port = free_port()
    base = [ithaca_path(), *SMALL] if which == "ithaca" else memcached_args()
    plain = owned.add(start_server(which, with_no_core([*base, "-l", HOST, "-p", str(port)]), port))
    assert limits_row(plain.proc.pid, "Max core file size") == ["0", "unlimited"]
    port = free_port()
    raised = owned.add(start_server(which, with_no_core([*base, "-r", "-l", HOST, "-p", str(port)]), port))
    assert limits_row(raised.proc.pid, "Max core file size") == ["unlimited", "unlimited"]


@pytest.mark.parametrize("which", ["ithaca", "memcached"])
def test_k_locks_the_memory(owned, which):
    need_root()
    port = free_port()
    base = [ithaca_path(), *SMALL] if which == "ithaca" else memcached_args()
    plain = owned.add(start_server(which, [*base, "-l", HOST, "-p", str(port)], port))
    assert vm_kb(plain.proc.pid, "VmLck") == 0
    port = free_port()
    locked = owned.add(start_server(which, [*base, "-k", "-l", HOST, "-p", str(port)], port))
    if which == "ithaca" and os.environ.get("ITHACA_SANITIZED"):
        # AddressSanitizer intercepts mlockall and ignores it (its shadow
        # memory could not be locked): a sanitized ithaca locks nothing and
        # says nothing. The release run checks the locking; here, that -k
        # starts and serves.
        with socket.create_connection((HOST, port), timeout=10) as s:
            s.sendall(b"version\r\n")
            assert s.recv(100).startswith(b"VERSION ")
        return
    # Every page mapped then, and those mapped since (MCL_FUTURE).
    assert vm_kb(locked.proc.pid, "VmLck") > 0
    assert vm_kb(locked.proc.pid, "VmLck") >= vm_kb(locked.proc.pid, "VmRSS") * 9 // 10
    assert "mlockall() failed" not in locked.log


def thp_mode():
    try:
        text = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        return "missing"
    return re.search(r"\[(\w+)\]", text).group(1)


@pytest.mark.parametrize("which", ["ithaca", "memcached"])
def test_L_asks_for_transparent_huge_pages(owned, which):
    port = free_port()
    base = [ithaca_path(), *SMALL] if which == "ithaca" else memcached_args()
    if which == "ithaca":
        base.append("-v")  # the report is an info line
    mode = thp_mode()
    if mode in ("never", "missing") and which == "memcached":
        # memcached refuses to start without THP (exit 1); ithaca starts and says why not (below).
        r = run([*base, "-L", "-l", HOST, "-p", str(free_port())], timeout=10)
        assert r.returncode == 1 and "Cannot enable large pages" in r.stderr, r.stderr
        return
    plain = owned.add(start_server(which, [*base, "-l", HOST, "-p", str(port)], port))
    port = free_port()
    large = owned.add(start_server(which, [*base, "-L", "-l", HOST, "-p", str(port)], port))
    if mode in ("never", "missing"):
        assert large.logged("-L: transparent huge pages are"), large.log
        return
    assert hg_mappings(plain.proc.pid) == 0
    assert hg_mappings(large.proc.pid) > 0
    if which == "ithaca":
        # One line says what -L got: the hash table and the item region (advised).
        said = ("-L: transparent huge pages asked for the hash table and the item region (MADV_HUGEPAGE)"
                if mode == "madvise" else "-L: transparent huge pages are on for all memory here")
        assert large.logged(said), large.log


# --- listeners ----------------------------------------------------------------------

def port_free_on_both():
    """A port free on 0.0.0.0 and [::] alike."""
    for _ in range(50):
        port = free_port()
        with socket.socket(socket.AF_INET6) as s6:
            s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                s6.bind(("::", port))
                return port
            except OSError:
                continue
    pytest.fail("no port free on both IPv4 and IPv6")


def ipv6_loopback():
    """::1 must be there: this test fails rather than skips without it."""
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError as e:
        pytest.fail(f"this host has no IPv6 loopback (::1): {e}", pytrace=False)


@pytest.mark.parametrize("which", ["ithaca", "memcached"])
def test_without_l_both_ipv4_and_ipv6_are_served(owned, which):
    ipv6_loopback()
    port = port_free_on_both()
    base = [ithaca_path(), *SMALL] if which == "ithaca" else memcached_args()
    server = owned.add(start_server(which, [*base, "-p", str(port)], port))
    assert version_reply(port, "127.0.0.1").startswith(b"VERSION ")
    assert version_reply(port, "::1").startswith(b"VERSION ")
    with mcwire.Conn("::1", port) as c:
        settings = mcwire.parse_stats(c.call(b"stats settings\r\n"))
    assert settings["inter"] == "NULL"
    if which == "ithaca":
        assert server.logged(f"listening on tcp 0.0.0.0:{port}")
        assert server.logged(f"listening on tcp [::]:{port}")


def test_without_l_on_port_0_ipv6_takes_the_ipv4_port(owned):
    ipv6_loopback()
    server = owned.add(Server("ithaca", [ithaca_path(), "-p", "0", *SMALL]))
    m = server.wait_for_log(re.compile(r"listening on tcp 0\.0\.0\.0:(\d+)"), START_TIMEOUT)
    assert m, server.describe()
    port = int(m.group(1))
    assert server.logged(f"listening on tcp [::]:{port}"), server.log
    assert version_reply(port, "::1").startswith(b"VERSION ")


def normalized(reply):
    return VERSION_RE.sub(b"VERSION x", reply)


def binary_version_reply(port):
    with mcwire.Conn(HOST, port, timeout=5) as c:
        c.send(mcwire.pack_request(mcwire.OP_VERSION))
        r = c.read_binary_response()
        return r["magic"], r["opcode"], r["status"]


def listener_exchanges(port_binary, port_ascii):
    out = {}
    with mcwire.Conn(HOST, port_ascii, timeout=5) as c:
        # A binary packet on an ascii listener is text: a bad command.
        c.send(mcwire.pack_request(mcwire.OP_VERSION) + b"\r\nversion\r\n")
        out["ascii: binary packet"] = normalized(c.read_reply())
        out["ascii: version"] = normalized(c.read_reply())
        out["ascii: meta"] = c.call(b"mn\r\n")
    with mcwire.Conn(HOST, port_binary, timeout=5) as c:
        # Text on a binary listener: once a header's 24 bytes are in, a bad
        # magic: closed, no reply (fewer: both wait for more).
        c.send(b"version\r\n" * 3)
        out["binary: text closed"] = c.is_closed(3.0)
        out["binary: buffered"] = bytes(c.buf)
    out["binary: version"] = binary_version_reply(port_binary)
    return out


def test_l_proto_and_tag_forms_serve_as_memcached_serves_them(owned):
    results = {}
    inter = {}
    for which in ("ithaca", "memcached"):
        pb, pa = free_port(), free_port()
        spec = f"proto[binary]:tag[x]:{HOST}:{pb},proto[ascii]:{HOST}:{pa}"
        base = [ithaca_path(), *SMALL] if which == "ithaca" else memcached_args()
        server = owned.add(start_server(which, [*base, "-l", spec], pa))
        results[which] = listener_exchanges(pb, pa)
        with mcwire.Conn(HOST, pa) as c:
            got = mcwire.parse_stats(c.call(b"stats settings\r\n"))["inter"]
        inter[which] = got.replace(str(pb), "PB").replace(str(pa), "PA")
        if which == "ithaca":
            assert server.logged(f"listening on tcp {HOST}:{pb} (binary only)")
            assert server.logged(f"listening on tcp {HOST}:{pa} (ascii only)")
    assert results["ithaca"] == results["memcached"]
    assert results["ithaca"]["ascii: binary packet"] == b"ERROR\r\n"
    assert results["ithaca"]["binary: text closed"] is True
    assert inter["ithaca"] == inter["memcached"] == f"proto[binary]:tag[x]:{HOST}:PB,proto[ascii]:{HOST}:PA"


def test_l_forms_memcached_refuses_or_ignores(tmp_path):
    r = run([ithaca_path(), "-l", f"tag[toolongname]:{HOST}:1", *SMALL])
    assert r.returncode != 0
    assert 'Listener tags must be between 1 and 8 characters: "toolongname"' in r.stderr, r.stderr


def test_k_under_a_finite_lock_limit_warns_and_serves(owned):
    """-u's user under an 8 MiB RLIMIT_MEMLOCK that root cannot raise (no
    CAP_SYS_RESOURCE): locking every future mapping would fail them all past
    8 MiB (a server that accepts nothing). ithaca locks nothing and says so;
    memcached tries, fails with its warning, and serves too."""
    need_root()
    limited = ["setpriv", "--bounding-set", "-sys_resource", "--",
               "prlimit", "--memlock=8388608:8388608", "--"]
    for which in ("ithaca", "memcached"):
        port = free_port()
        binary = ithaca_path() if which == "ithaca" else conftest.memcached_binary()
        server = owned.add(start_server(which, [*limited, binary, "-k", "-u", "memcache", *SMALL, "-l", HOST,
                                                "-p", str(port)], port))
        assert server.logged("warning: -k invalid, mlockall() "), server.log
        # Many connections and items: every one gets its stack and its memory.
        conns = [mcwire.Conn(HOST, port) for _ in range(200)]
        try:
            value = b"v" * 50_000
            for i, c in enumerate(conns):
                assert c.call(b"set k%d 0 0 %d\r\n%s\r\n" % (i, len(value), value)) == b"STORED\r\n", which
        finally:
            for c in conns:
                c.close()
