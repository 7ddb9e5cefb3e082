"""Client authentication, as memcached does it (issue 30): -Y FILE (ascii
tokens) and -S (SASL PLAIN on the binary protocol), in the cache role and in
the router role (the client authenticates to ithaca; the pool's memcached has
no authentication), each compared with a real memcached started with the same
flags and files, reply by reply where the wire is the same.

The oracle is Debian's memcached 1.6.18. Its -S goes through Cyrus SASL and
is not built with --enable-sasl-pwdb, so it reads a sasldb made with
saslpasswd2 (sasl2-bin) under a memcached.conf that allows PLAIN only
(SASL_CONF_PATH); ithaca reads the same user and password from a pwdb file
(MEMCACHED_SASL_PWDB), as memcached built with --enable-sasl-pwdb does.
Where 1.6.45 answers otherwise than 1.6.18 (-Y: a line under 6 bytes closes,
a token over 16384 bytes is refused), the expectation is fixed from 1.6.45's
proto_text.c. MEMCACHED_BIN may name another memcached for a hand check.
"""

import os
import shutil
import signal
import socket
import subprocess

import pytest

import mcwire
from conftest import BASE_ARGS, free_port, ithaca_binary, memcached_binary, root_args
from mcwire import OP_GETQ, OP_NOOP, OP_VERSION, G, S, pack_request as P
from test_binary import normalize
from test_router import router_yaml, wait_for

OP_SASL_LIST, OP_SASL_AUTH, OP_SASL_STEP = 0x20, 0x21, 0x22
ST_AUTH_ERROR, ST_AUTH_CONTINUE = 0x20, 0x21
USER, PASSWORD = "alice", "s3cret"
TOKEN = f"{USER} {PASSWORD}".encode()


def token_set(token=TOKEN, key=b"auth"):
    return b"set %s 0 0 %d\r\n%s\r\n" % (key, len(token), token)


def plain(user=USER, password=PASSWORD, authzid=""):
    return f"{authzid}\0{user}\0{password}".encode()


def read_quiet(s, wait):
    """What comes back on socket `s` until `wait` s of quiet, and whether the
    server closed."""
    s.settimeout(wait)
    out = b""
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return out, False
        except ConnectionResetError:
            return out, True
        if not chunk:
            return out, True
        out += chunk


def exchange(server, data, wait=0.5):
    """Sends `data` on a fresh connection; returns (what came back within
    `wait` s of quiet, whether the server closed)."""
    with socket.create_connection(server.address, timeout=5) as s:
        s.sendall(data)
        return read_quiet(s, wait)


def steps(server, pieces, wait=0.5):
    """Sends each piece on one fresh connection after the reply to the one
    before (memcached answers only the last of the unauthenticated requests
    one read brings: see test_ascii_pipelined_requests_each_get_a_reply);
    returns [(reply, closed)] per piece, up to a close."""
    out = []
    with socket.create_connection(server.address, timeout=5) as s:
        for piece in pieces:
            s.sendall(piece)
            out.append(read_quiet(s, wait))
            if out[-1][1]:
                break
    return out


def responses(raw):
    """The binary responses in `raw`, CAS and version normalized."""
    rs = []
    while len(raw) >= 24:
        r = mcwire.unpack_header(raw[:24])
        r.update(mcwire.split_body(r, raw[24:24 + r["bodylen"]]))
        raw = raw[24 + r["bodylen"]:]
        rs.append(r)
    assert raw == b"", f"a partial response: {raw!r}"
    return normalize(rs, {})


def binary_stats(c, group=b""):
    """`stats [group]` over binary, as {name: value}."""
    out = {}
    for r in c.binary_batch([P(0x10, key=group)]):
        if r["opcode"] == 0x10 and r["key"]:
            out[r["key"].decode()] = r["value"].decode()
    return out


# --- -Y: ascii authentication -------------------------------------------------------


@pytest.fixture
def auth_file(tmp_path):
    path = tmp_path / "auth"
    path.write_text(f"{USER}:{PASSWORD}\nbob:other\n")
    return path


@pytest.fixture
def ascii_pair(ithaca_factory, memcached_factory, auth_file):
    """(ithaca, memcached), both started with -Y on the same file."""
    args = ["-Y", str(auth_file)]
    return ithaca_factory(args=args), memcached_factory(args=args)


# Requests on a fresh connection, each sent once the one before is answered,
# whose replies 1.6.18 and 1.6.45 agree on (a line of 6 bytes or more).
ASCII_UNAUTHENTICATED = {
    "get": [b"get foo\r\n"],
    "gets_multi": [b"gets a b c\r\n"],
    "set_short": [b"set k 0 0\r\n"],
    "set_bad_size": [b"set k 0 0 x\r\n", b"abcdef\r\n"],
    "meta_get": [b"mg foo v\r\n"],
    "meta_set": [b"ms foo 6\r\n", b"hello!\r\n"],
    "meta_noop_long": [b"mn    \r\n"],
    "stats": [b"stats\r\n", b"stats settings\r\n"],
    "version": [b"version\r\n"],
    "flush_all": [b"flush_all\r\n"],
    "delete": [b"delete foo\r\n"],
    "wrong_password": [token_set(b"alice wrong"), b"get auth\r\n"],
    "unknown_user": [token_set(b"mallory " + PASSWORD.encode())],
    "no_space": [token_set(b"alicesecret")],
    "bad_termination": [b"set k 0 0 3\r\nabcXY"],
    "token_in_pieces": [b"set k 0 0 12\r\n", b"alice ", b"wrong!\r\n"],
    "binary_packet": [G(b"foo")],  # an ascii-only port: no newline, no reply yet
}


@pytest.mark.parametrize("name", sorted(ASCII_UNAUTHENTICATED))
def test_ascii_unauthenticated_like_memcached(name, ascii_pair):
    ithaca, memcached = ascii_pair
    pieces = ASCII_UNAUTHENTICATED[name]
    got = steps(ithaca, pieces)
    assert got == steps(memcached, pieces)
    if name != "binary_packet":
        assert got[-1][0].startswith(b"CLIENT_ERROR "), got


def test_ascii_pipelined_requests_each_get_a_reply(ithaca_factory, auth_file):
    """memcached (1.6.18 and 1.6.45 alike) answers only the last of the
    unauthenticated requests that one read brings (it reuses one reply
    object, each answer overwriting the one before), so a client that
    pipelines them waits for replies that never come. ithaca answers each,
    in order: a deliberate difference."""
    ithaca = ithaca_factory(args=["-Y", str(auth_file)])
    got, closed = exchange(ithaca, b"get a\r\n" + token_set(b"alice wrong") + b"stats\r\n" + token_set() +
                           b"get a\r\n")
    assert not closed
    assert got == (b"CLIENT_ERROR unauthenticated\r\nCLIENT_ERROR authentication failure\r\n"
                   b"CLIENT_ERROR unauthenticated\r\nSTORED\r\nEND\r\n")


def test_ascii_right_password_then_data_and_a_second_connection_is_still_out(ascii_pair):
    ithaca, memcached = ascii_pair
    keys = [b"k%d" % i for i in range(100)]
    # Once in, the client pipelines (its login and what follows in one write).
    session = (token_set() +
               b"".join(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(k) + 2, b"v-" + k) for k in keys) +
               b"get " + b" ".join(keys) + b"\r\n" + b"mg k7 v\r\ndelete k1\r\nget k1 k2\r\n" +
               G(b"k3") + b"\r\n")  # the ascii-only port: a binary packet is a bad text command
    replies = {}
    for server in ascii_pair:
        with mcwire.Conn(*server.address) as c:
            got = [c.call(b"get k0\r\n"), c.call(token_set(b"alice nope"))]
            c.send(session)
            got += c.read_replies(1 + len(keys) + 5)
            replies[server.name] = got
            # Another client of the same server has not logged in.
            with mcwire.Conn(*server.address) as other:
                assert other.call(b"get k0\r\n") == b"CLIENT_ERROR unauthenticated\r\n"
    assert replies["ithaca"] == replies["memcached"]
    got = replies["ithaca"]
    assert got[:3] == [b"CLIENT_ERROR unauthenticated\r\n", b"CLIENT_ERROR authentication failure\r\n",
                       b"STORED\r\n"]
    multiget = mcwire.parse_values(got[3 + len(keys)])
    assert [(k, data) for k, _, data, _ in multiget] == [(k, b"v-" + k) for k in keys]


def test_ascii_auth_counters_and_settings_like_memcached(ascii_pair, auth_file):
    counts = {}
    for server in ascii_pair:
        steps(server, [token_set(b"alice bad"), token_set(b"bob bad")])
        steps(server, [b"get x\r\n", token_set()])
        with mcwire.Conn(*server.address) as c:
            c.call(token_set())
            general = mcwire.parse_stats(c.call(b"stats\r\n"))
            settings = mcwire.parse_stats(c.call(b"stats settings\r\n"))
        counts[server.name] = ({k: general[k] for k in ("auth_cmds", "auth_errors")},
                               {k: settings[k] for k in ("auth_enabled_ascii", "auth_enabled_sasl",
                                                         "binding_protocol")})
    assert counts["ithaca"] == counts["memcached"]
    assert counts["ithaca"][0] == {"auth_cmds": "4", "auth_errors": "2"}
    assert counts["ithaca"][1]["auth_enabled_ascii"] == str(auth_file)


def test_ascii_auth_1_6_45_refusals(ithaca_factory, auth_file):
    """Fixed expectations from memcached 1.6.45's try_read_command_asciiauth
    (1.6.18 answered these two otherwise): a line shorter than 6 bytes closes
    the connection; a token over 16384 bytes is refused on its line alone."""
    ithaca = ithaca_factory(args=["-Y", str(auth_file)])
    assert exchange(ithaca, b"mn\r\n") == (b"", True)
    assert exchange(ithaca, b"quit\r\n") == (b"", True)
    got, closed = exchange(ithaca, b"set k 0 0 16385\r\nget a\r\n")
    assert got == b"CLIENT_ERROR auth token too long\r\nCLIENT_ERROR unauthenticated\r\n" and not closed
    assert exchange(ithaca, b"x" * 2049) == (b"", True)  # no newline after 2048 bytes


def test_ascii_auth_file_reloaded_on_sighup_like_memcached(ascii_pair, auth_file):
    """memcached re-reads the -Y file on SIGHUP (its clock handler, within a
    second); ithaca too, with or without --config."""
    auth_file.write_text("carol:newpass\n")
    for server in ascii_pair:
        assert exchange(server, token_set(b"carol newpass"))[0] == b"CLIENT_ERROR authentication failure\r\n"
        server.proc.send_signal(signal.SIGHUP)
    for server in ascii_pair:
        wait_for(lambda: exchange(server, token_set(b"carol newpass"))[0] == b"STORED\r\n", 10,
                 f"{server.name} to take the new file")
        assert exchange(server, token_set())[0] == b"CLIENT_ERROR authentication failure\r\n"
    # A file that no longer reads keeps the running entries.
    auth_file.write_text("broken\n")
    ithaca = ascii_pair[0]
    ithaca.proc.send_signal(signal.SIGHUP)
    assert ithaca.logged("has a malformed entry. Should be 'user:password'; the running entries stay")
    assert exchange(ithaca, token_set(b"carol newpass"))[0] == b"STORED\r\n"


def run_server(path, args, timeout=10):
    """Runs a server that is expected to refuse to start; its exit and output.
    (memcached refuses to run as root without -u.)"""
    who = root_args() if path == memcached_binary() else []
    return subprocess.run([path, *who, *BASE_ARGS, "-p", str(free_port()), *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("case", ["missing", "malformed"])
def test_ascii_auth_file_errors_at_start_like_memcached(case, tmp_path):
    path = tmp_path / "auth"
    if case == "malformed":
        path.write_text("alice:ok\nno colon here\n")
        words = f"Authfile [{path}] has a malformed entry. Should be 'user:password'"
    else:
        words = f"Could not open authfile [{path}] for reading, error No such file or directory"
    ithaca = run_server(ithaca_binary()[0], ["-Y", str(path)])
    memcached = run_server(memcached_binary(), ["-Y", str(path)])
    assert memcached.returncode == 1 and words in memcached.stderr, memcached.stderr
    assert ithaca.returncode == 1, ithaca.stdout + ithaca.stderr
    assert words in ithaca.stdout + ithaca.stderr


@pytest.mark.parametrize("flags,words", [
    (["-Y", "{auth}", "-U", "{port}"], "Cannot use UDP with ascii authentication enabled (-U 0 to disable)"),
    (["-S", "-U", "{port}"], "ERROR: Cannot enable UDP while using binary SASL authentication."),
])
def test_authentication_refuses_udp_like_memcached(flags, words, auth_file, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCACHED_SASL_PWDB", str(auth_file))
    args = [f.format(auth=auth_file, port=free_port()) for f in flags]
    for path in (ithaca_binary()[0], memcached_binary()):
        # BASE_ARGS says -U 0; the later -U wins in both. Exit 64: EX_USAGE.
        r = run_server(path, args)
        assert r.returncode == 64 and words in r.stdout + r.stderr, (path, r.returncode, r.stdout + r.stderr)


def test_ascii_auth_in_the_router_role(ithaca_factory, memcached_factory, auth_file):
    """The client logs in to ithaca; the pool's memcached has no -Y and sees
    nothing of an unauthenticated client."""
    backend = memcached_factory()
    router = ithaca_factory(args=["-Y", str(auth_file)],
                            config_text=router_yaml([f"{backend.host}:{backend.port}"]))
    assert [reply for reply, _ in steps(router, [b"get k\r\n", b"delete k\r\n", b"touch k 10\r\n"])] == \
        [b"CLIENT_ERROR unauthenticated\r\n"] * 3
    keys = [b"r%d" % i for i in range(100)]
    with mcwire.Conn(*router.address) as c:
        assert c.call(token_set(b"alice wrong")) == b"CLIENT_ERROR authentication failure\r\n"
        assert c.call(token_set()) == b"STORED\r\n"
        for k in keys:
            assert c.call(b"set %s 0 0 2\r\nv%s\r\n" % (k, k[-1:])) == b"STORED\r\n"
        values = mcwire.parse_values(c.call(b"get " + b" ".join(keys) + b"\r\n"))
    assert len(values) == 100
    with mcwire.Conn(*backend.address) as c:
        st = mcwire.parse_stats(c.call(b"stats\r\n"))
        assert c.call(b"get r5\r\n") == b"VALUE r5 0 2\r\nv5\r\nEND\r\n"
    assert st["cmd_set"] == "100" and st["cmd_get"] == "100"  # nothing of the refused set/get
    with mcwire.Conn(*router.address) as c:
        assert c.call(b"get r5\r\n") == b"CLIENT_ERROR unauthenticated\r\n"


# --- -S: SASL on the binary protocol -------------------------------------------------


@pytest.fixture
def sasl_env(tmp_path, monkeypatch):
    """The same user and password for both: a sasldb under a memcached.conf
    that offers PLAIN only (memcached), and a pwdb file (ithaca)."""
    saslpasswd2 = shutil.which("saslpasswd2") or "/usr/sbin/saslpasswd2"
    if not os.access(saslpasswd2, os.X_OK):
        pytest.fail("saslpasswd2 is not installed (apt-get install sasl2-bin; scripts/install-deps.sh)",
                    pytrace=False)
    sasldb = tmp_path / "sasldb2"
    subprocess.run([saslpasswd2, "-p", "-c", "-f", str(sasldb), "-a", "memcached", USER],
                   input=PASSWORD.encode(), check=True)
    (tmp_path / "memcached.conf").write_text(f"mech_list: plain\nsasldb_path: {sasldb}\n")
    pwdb = tmp_path / "pwdb"
    pwdb.write_text(f"{USER}:{PASSWORD}\n")
    monkeypatch.setenv("SASL_CONF_PATH", str(tmp_path))
    monkeypatch.setenv("MEMCACHED_SASL_PWDB", str(pwdb))
    return pwdb


@pytest.fixture
def sasl_pair(ithaca_factory, memcached_factory, sasl_env):
    return ithaca_factory(args=["-S"]), memcached_factory(args=["-S"])


AUTH_OK = P(OP_SASL_AUTH, key=b"PLAIN", value=plain(), opaque=9)

# Exchanges on a fresh connection, compared response by response (and
# whether the server closed after them).
SASL_EXCHANGES = {
    "get_before_auth": G(b"foo", opaque=1) + P(OP_NOOP),
    "getq_before_auth": G(b"foo", OP_GETQ, opaque=1),
    "noop_before_auth": P(OP_NOOP, opaque=2),
    "set_before_auth": S(b"k", b"v", opaque=3),
    "unknown_opcode_before_auth": P(0x50, opaque=4),
    "version_before_auth": P(OP_VERSION, opaque=5) + P(OP_SASL_LIST, opaque=6),
    "list_mechs": P(OP_SASL_LIST, opaque=6),
    "right_password": AUTH_OK + S(b"k", b"v", opaque=1) + G(b"k", opaque=2) + P(OP_NOOP, opaque=3),
    "wrong_password": P(OP_SASL_AUTH, key=b"PLAIN", value=plain(password="nope"), opaque=7) +
                      G(b"k", opaque=8),
    "unknown_user": P(OP_SASL_AUTH, key=b"PLAIN", value=plain(user="mallory"), opaque=7) + P(OP_NOOP),
    "unknown_mechanism": P(OP_SASL_AUTH, key=b"CRAM-MD5", value=plain(), opaque=7) + P(OP_NOOP),
    "lowercase_mechanism": P(OP_SASL_AUTH, key=b"plain", value=plain(), opaque=7) + P(OP_NOOP),
    "step_without_auth": P(OP_SASL_STEP, key=b"PLAIN", value=plain(), opaque=7) + P(OP_NOOP),
    "auth_then_step": P(OP_SASL_AUTH, key=b"PLAIN", opaque=7) +
                      P(OP_SASL_STEP, key=b"PLAIN", value=plain(), opaque=8) + P(OP_NOOP, opaque=9),
    "not_plain": P(OP_SASL_AUTH, key=b"PLAIN", value=b"alice s3cret", opaque=7) + P(OP_NOOP),
    "authzid_self": P(OP_SASL_AUTH, key=b"PLAIN", value=plain(authzid=USER), opaque=7) + P(OP_NOOP),
    "authzid_other": P(OP_SASL_AUTH, key=b"PLAIN", value=plain(authzid="bob"), opaque=7) + P(OP_NOOP),
    "long_mechanism": P(OP_SASL_AUTH, key=b"M" * 33, value=b"data", opaque=7) + P(OP_VERSION),
    "list_after_auth_logs_out": AUTH_OK + P(OP_SASL_LIST, opaque=1) + G(b"k", opaque=2),
    "quit_before_auth": P(0x07, opaque=1),
    "ascii_get": b"get foo\r\n",
    "ascii_line_of_24": b"get foo bar baz quux 123\r\n",
}


@pytest.mark.parametrize("name", sorted(SASL_EXCHANGES))
def test_sasl_binary_exchanges_like_memcached(name, sasl_pair):
    ithaca, memcached = sasl_pair
    data = SASL_EXCHANGES[name]
    (got, got_closed), (expected, expected_closed) = exchange(ithaca, data), exchange(memcached, data)
    assert (responses(got), got_closed) == (responses(expected), expected_closed)


def test_sasl_error_and_answer_words(sasl_pair):
    """What the comparison above holds, spelled out: a command before
    authenticating gets "Auth failure." and the connection closes; PLAIN is
    the mechanism; the right password answers "Authenticated"."""
    ithaca = sasl_pair[0]
    got, closed = exchange(ithaca, G(b"foo", opaque=1) + P(OP_NOOP))
    rs = responses(got)
    assert closed and len(rs) == 1 and rs[0]["status"] == ST_AUTH_ERROR and rs[0]["value"] == b"Auth failure."
    rs = responses(exchange(ithaca, P(OP_SASL_LIST) + AUTH_OK + P(OP_SASL_AUTH, key=b"PLAIN"))[0])
    assert [(r["status"], r["value"]) for r in rs] == [(0, b"PLAIN"), (0, b"Authenticated"), (ST_AUTH_CONTINUE, b"")]


def pylibmc_client(server, password):
    import pylibmc
    return pylibmc.Client([f"{server.host}:{server.port}"], binary=True, username=USER, password=password)


def pylibmc_outcome(server, password):
    """What a pylibmc (libmemcached) client gets: a few keys stored and read
    back and a 100-key multiget, or the error it raised."""
    import pylibmc
    c = pylibmc_client(server, password)
    try:
        for i in range(5):
            c.set(f"few{i}", f"value{i}")
        got = [c.get(f"few{i}") for i in range(5)]
        c.set_multi({f"m{i}": str(i) for i in range(100)})
        many = c.get_multi([f"m{i}" for i in range(100)])
        return ("ok", got, len(many))
    except pylibmc.Error as e:
        return ("error", "AUTHENTICATION FAILURE" in str(e))
    finally:
        c.disconnect_all()


def test_sasl_with_pylibmc_like_memcached(sasl_pair):
    ithaca, memcached = sasl_pair
    wrong = [pylibmc_outcome(server, "nope") for server in sasl_pair]
    right = [pylibmc_outcome(server, PASSWORD) for server in sasl_pair]
    assert wrong[0] == wrong[1] == ("error", True)
    assert right[0] == right[1] == ("ok", [f"value{i}" for i in range(5)], 100)
    # The counters agree with memcached's (pylibmc lists the mechanisms, then
    # authenticates once per connection).
    counts = []
    for server in sasl_pair:
        with mcwire.Conn(*server.address) as c:
            c.binary_batch([AUTH_OK])
            counts.append({k: v for k, v in binary_stats(c).items() if k.startswith("auth_")})
    assert counts[0] == counts[1]
    assert counts[0] == {"auth_cmds": "3", "auth_errors": "1"}, counts


def libmemcached_tool(tool, server, password, *args, cwd=None):
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not installed (apt-get install libmemcached-tools)", pytrace=False)
    return subprocess.run([path, f"--servers={server.host}:{server.port}", "--binary", f"--username={USER}",
                           f"--password={password}", *args], capture_output=True, text=True, timeout=20, cwd=cwd)


def test_sasl_with_libmemcached_tools_like_memcached(sasl_pair, tmp_path):
    (tmp_path / "greeting").write_text("hello over sasl\n")
    seen = {}
    for server in sasl_pair:
        bad = libmemcached_tool("memccp", server, "nope", "greeting", cwd=tmp_path)
        missing = libmemcached_tool("memccat", server, PASSWORD, "greeting")
        ok = libmemcached_tool("memccp", server, PASSWORD, "greeting", cwd=tmp_path)
        cat = libmemcached_tool("memccat", server, PASSWORD, "greeting")
        denied = libmemcached_tool("memccat", server, "nope", "greeting")
        seen[server.name] = [(r.returncode, r.stdout, "AUTHENTICATION FAILURE" in r.stderr)
                             for r in (bad, missing, ok, cat, denied)]
    assert seen["ithaca"] == seen["memcached"]
    bad, missing, ok, cat, denied = seen["ithaca"]
    assert bad[0] != 0 and bad[2] and missing[0] != 0 and ok[0] == 0
    assert cat[0] == 0 and cat[1].startswith("hello over sasl\n")
    assert denied[0] != 0 and denied[2] and "hello" not in denied[1]


def test_sasl_settings_like_memcached(sasl_pair):
    got = {}
    for server in sasl_pair:
        with mcwire.Conn(*server.address) as c:
            c.binary_batch([AUTH_OK])
            st = binary_stats(c, b"settings")
        got[server.name] = {k: st[k] for k in ("auth_enabled_sasl", "auth_enabled_ascii", "binding_protocol")}
    assert got["ithaca"] == got["memcached"] == {"auth_enabled_sasl": "yes", "auth_enabled_ascii": "no",
                                                  "binding_protocol": "binary"}


def test_sasl_pwdb_in_memcacheds_form_and_a_sighup(ithaca_factory, sasl_env):
    """A pwdb written for memcached --enable-sasl-pwdb names the user with
    its realm, the host name ("alice@HOST:password"); ithaca takes it, and
    re-reads the file on SIGHUP."""
    sasl_env.write_text(f"{USER}@{socket.gethostname()}:{PASSWORD}\n")
    ithaca = ithaca_factory(args=["-S"])
    assert pylibmc_outcome(ithaca, PASSWORD)[0] == "ok"
    sasl_env.write_text(f"{USER}:changed\n")
    ithaca.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: pylibmc_outcome(ithaca, "changed")[0] == "ok", 10, "the new password")
    assert pylibmc_outcome(ithaca, PASSWORD) == ("error", True)


def test_sasl_in_the_router_role(ithaca_factory, memcached_factory, sasl_env):
    backend = memcached_factory()
    router = ithaca_factory(args=["-S"], config_text=router_yaml([f"{backend.host}:{backend.port}"]))
    got, closed = exchange(router, S(b"k", b"v", opaque=1))
    assert closed and [r["status"] for r in responses(got)] == [ST_AUTH_ERROR]
    assert pylibmc_outcome(router, "nope") == ("error", True)
    assert pylibmc_outcome(router, PASSWORD) == ("ok", [f"value{i}" for i in range(5)], 100)
    with mcwire.Conn(*backend.address) as c:
        values = mcwire.parse_values(c.call(b"get few3 m42 k\r\n"))
    assert [(k, data) for k, _, data, _ in values] == [(b"few3", b"value3"), (b"m42", b"42")]


def test_sasl_needs_its_password_file(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMCACHED_SASL_PWDB", raising=False)
    r = run_server(ithaca_binary()[0], ["-S"])
    assert r.returncode == 1 and "MEMCACHED_SASL_PWDB" in r.stdout + r.stderr, r.stdout + r.stderr
    monkeypatch.setenv("MEMCACHED_SASL_PWDB", str(tmp_path / "missing"))
    r = run_server(ithaca_binary()[0], ["-S"])
    assert r.returncode == 1
    assert f"Could not open sasl database [{tmp_path / 'missing'}] for reading" in r.stdout + r.stderr
