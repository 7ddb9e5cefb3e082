"""Every command of memcached's text protocol, with the expected bytes written
out (memcached 1.6.18's exact words, and 1.6.45's where the two differ: ithaca
answers as 1.6.45; the cases marked 1.6.45 were captured from it). Each case runs on a fresh server and is
one exchange: the requests are sent together and the replies are read until
`version`'s reply, which is not compared."""

import re

import pytest

import mcwire

K251 = b"k" * 251
K250 = b"k" * 250

# (name, requests, expected replies)
CASES = [
    # storage
    ("set", b"set a 5 0 3\r\nabc\r\nget a\r\n", b"STORED\r\nVALUE a 5 3\r\nabc\r\nEND\r\n"),
    ("set_empty_value", b"set a 0 0 0\r\n\r\nget a\r\n", b"STORED\r\nVALUE a 0 0\r\n\r\nEND\r\n"),
    ("set_binary_value", b"set a 0 0 7\r\n\r\nEND\r\n\r\nget a\r\n", b"STORED\r\nVALUE a 0 7\r\n\r\nEND\r\n\r\nEND\r\n"),
    ("set_max_flags", b"set a 4294967295 0 1\r\nx\r\nget a\r\n", b"STORED\r\nVALUE a 4294967295 1\r\nx\r\nEND\r\n"),
    ("set_key_250", b"set " + K250 + b" 0 0 1\r\nx\r\nget " + K250 + b"\r\n",
     b"STORED\r\nVALUE " + K250 + b" 0 1\r\nx\r\nEND\r\n"),
    ("set_noreply", b"set a 0 0 1 noreply\r\nx\r\nget a\r\n", b"VALUE a 0 1\r\nx\r\nEND\r\n"),
    ("set_negative_exptime", b"set a 0 -1 1\r\nx\r\nget a\r\n", b"STORED\r\nEND\r\n"),
    ("set_absolute_past_exptime", b"set a 0 1000000000 1\r\nx\r\nget a\r\n", b"STORED\r\nEND\r\n"),
    ("add_new", b"add a 0 0 1\r\nx\r\n", b"STORED\r\n"),
    ("add_existing", b"set a 0 0 1\r\nx\r\nadd a 0 0 1\r\ny\r\nget a\r\n",
     b"STORED\r\nNOT_STORED\r\nVALUE a 0 1\r\nx\r\nEND\r\n"),
    ("replace_missing", b"replace a 0 0 1\r\nx\r\n", b"NOT_STORED\r\n"),
    ("replace_existing", b"set a 0 0 1\r\nx\r\nreplace a 3 0 1\r\ny\r\nget a\r\n",
     b"STORED\r\nSTORED\r\nVALUE a 3 1\r\ny\r\nEND\r\n"),
    ("append_prepend", b"set a 7 0 1\r\nx\r\nappend a 0 0 2\r\nyz\r\nprepend a 0 0 1\r\nw\r\nget a\r\n",
     b"STORED\r\nSTORED\r\nSTORED\r\nVALUE a 7 4\r\nwxyz\r\nEND\r\n"),
    ("append_missing", b"append a 0 0 1\r\nx\r\nprepend a 0 0 1\r\nx\r\n", b"NOT_STORED\r\nNOT_STORED\r\n"),
    # retrieval
    ("get_miss", b"get nope\r\n", b"END\r\n"),
    ("get_multi", b"set a 0 0 1\r\n1\r\nset b 0 0 1\r\n2\r\nget a nope b a\r\n",
     b"STORED\r\nSTORED\r\nVALUE a 0 1\r\n1\r\nVALUE b 0 1\r\n2\r\nVALUE a 0 1\r\n1\r\nEND\r\n"),
    ("gat", b"set a 0 0 1\r\nx\r\ngat 0 a nope\r\ngat -1 a\r\nget a\r\n",
     b"STORED\r\nVALUE a 0 1\r\nx\r\nEND\r\nVALUE a 0 1\r\nx\r\nEND\r\nEND\r\n"),
    # touch / delete
    ("touch", b"set a 0 0 1\r\nx\r\ntouch a 0\r\ntouch nope 0\r\ntouch a -1\r\nget a\r\n",
     b"STORED\r\nTOUCHED\r\nNOT_FOUND\r\nTOUCHED\r\nEND\r\n"),
    ("delete", b"set a 0 0 1\r\nx\r\ndelete a\r\ndelete a\r\nget a\r\n",
     b"STORED\r\nDELETED\r\nNOT_FOUND\r\nEND\r\n"),
    ("delete_legacy_zero", b"set a 0 0 1\r\nx\r\ndelete a 0\r\n", b"STORED\r\nDELETED\r\n"),
    ("delete_noreply", b"set a 0 0 1\r\nx\r\ndelete a noreply\r\nget a\r\n", b"STORED\r\nEND\r\n"),
    ("delete_with_time", b"delete a 5\r\n", b"NOT_FOUND\r\n"),  # 1.6.45 ignores the time
    # incr / decr
    ("incr", b"set n 0 0 1\r\n9\r\nincr n 1\r\nincr n 18446744073709551605\r\nincr n 1\r\n",
     b"STORED\r\n10\r\n18446744073709551615\r\n0\r\n"),
    ("decr_floor_zero", b"set n 0 0 2\r\n10\r\ndecr n 3\r\ndecr n 100\r\n", b"STORED\r\n7\r\n0\r\n"),
    ("incr_missing", b"incr nope 1\r\ndecr nope 1\r\n", b"NOT_FOUND\r\nNOT_FOUND\r\n"),
    ("incr_non_numeric", b"set n 0 0 1\r\nx\r\nincr n 1\r\n",
     b"STORED\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n"),
    ("incr_20_digit_value", b"set n 0 0 20\r\n99999999999999999999\r\nincr n 1\r\n",
     b"STORED\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n"),
    ("incr_bad_delta", b"set n 0 0 1\r\n1\r\nincr n 18446744073709551616\r\nincr n -1\r\nincr n abc\r\n",
     b"STORED\r\n" + b"CLIENT_ERROR invalid numeric delta argument\r\n" * 3),
    ("incr_noreply", b"set n 0 0 1\r\n1\r\nincr n 5 noreply\r\nget n\r\n", b"STORED\r\nVALUE n 0 1\r\n6\r\nEND\r\n"),
    # flush_all
    ("flush_all", b"set a 0 0 1\r\nx\r\nflush_all\r\nget a\r\nset a 0 0 1\r\ny\r\nget a\r\n",
     b"STORED\r\nOK\r\nEND\r\nSTORED\r\nVALUE a 0 1\r\ny\r\nEND\r\n"),
    ("flush_all_delay", b"set a 0 0 1\r\nx\r\nflush_all 100\r\nget a\r\n", b"STORED\r\nOK\r\nVALUE a 0 1\r\nx\r\nEND\r\n"),
    ("flush_all_noreply", b"set a 0 0 1\r\nx\r\nflush_all noreply\r\nget a\r\n", b"STORED\r\nEND\r\n"),
    ("flush_all_bad", b"flush_all x\r\n", b"CLIENT_ERROR invalid exptime argument\r\n"),
    # misc
    ("verbosity", b"verbosity 1\r\nverbosity 1 noreply\r\nverbosity\r\n",
     b"OK\r\nCLIENT_ERROR bad command line format\r\n"),  # 1.6.45
    ("stats_reset", b"stats reset\r\n", b"RESET\r\n"),
    ("stats_unknown", b"stats nosuchgroup\r\n", b"ERROR\r\n"),
    # error paths
    ("unknown_command", b"bogus\r\n", b"ERROR\r\n"),
    ("empty_line", b"\r\n", b"CLIENT_ERROR bad command line format\r\n"),  # 1.6.45
    ("blank_line", b"   \r\n", b"ERROR\r\n"),
    ("uppercase_command", b"GET a\r\n", b"ERROR\r\n"),
    ("get_no_key", b"get\r\ngets\r\n", b"CLIENT_ERROR bad command line format\r\n" * 2),  # 1.6.45
    ("set_missing_length", b"set a 0 0\r\n", b"CLIENT_ERROR bad command line format\r\n"),  # 1.6.45
    ("set_negative_length", b"set a 0 0 -1\r\n", b"CLIENT_ERROR bad command line format\r\n"),
    # 1.6.45: once the length is known, an error swallows the data
    ("set_bad_exptime", b"set a 0 abc 1\r\nx\r\n", b"CLIENT_ERROR bad command line format\r\n"),
    ("set_key_251", b"set " + K251 + b" 0 0 1\r\nx\r\n", b"CLIENT_ERROR bad command line format\r\n"),
    # (1.6.45 sends an empty line after this one, a slip ithaca does not copy)
    ("get_key_251", b"get " + K251 + b"\r\n", b"CLIENT_ERROR bad command line format\r\n"),
    ("bad_data_chunk", b"set a 0 0 5\r\nhelloXX\r\nget a\r\n",
     b"CLIENT_ERROR bad data chunk\r\nCLIENT_ERROR bad command line format\r\nEND\r\n"),  # 1.6.45: "X\r\n"
    ("too_large", b"set a 0 0 1\r\nx\r\nset a 0 0 2097152\r\n" + b"x" * 2097152 + b"\r\nget a\r\n",
     b"STORED\r\nSERVER_ERROR object too large for cache\r\nEND\r\n"),
    ("cas_missing_unique", b"cas a 0 0 1\r\nx\r\n", b"CLIENT_ERROR bad command line format\r\n"),  # 1.6.45
    ("cas_not_found", b"cas a 0 0 1 1\r\nx\r\n", b"NOT_FOUND\r\n"),
]


def exchange(server, request):
    with mcwire.Conn(server.host, server.port) as c:
        return b"".join(c.exchange_until_sentinel(request + b"version\r\n"))


@pytest.mark.parametrize("name,request_bytes,expected", CASES, ids=[c[0] for c in CASES])
def test_command(ithaca, name, request_bytes, expected):
    assert exchange(ithaca, request_bytes) == expected


def test_gets_and_cas(ithaca):
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        assert c.call(b"set a 1 0 1\r\nx\r\n") == b"STORED\r\n"
        reply = c.call(b"gets a\r\n")
        m = re.fullmatch(rb"VALUE a 1 1 (\d+)\r\nx\r\nEND\r\n", reply)
        assert m, reply
        unique = int(m.group(1))
        assert c.call(b"cas a 2 0 1 %d\r\ny\r\n" % (unique + 1)) == b"EXISTS\r\n"
        assert c.call(b"cas a 2 0 1 %d\r\ny\r\n" % unique) == b"STORED\r\n"
        assert c.call(b"cas a 2 0 1 %d\r\nz\r\n" % unique) == b"EXISTS\r\n"
        reply = c.call(b"gats 0 a\r\n")
        m2 = re.fullmatch(rb"VALUE a 2 1 (\d+)\r\ny\r\nEND\r\n", reply)
        assert m2 and int(m2.group(1)) != unique, reply
        assert c.call(b"cas a 2 0 1 %d noreply\r\nw\r\nget a\r\n" % int(m2.group(1))) == \
            b"VALUE a 2 1\r\nw\r\nEND\r\n"


def test_version(ithaca):
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        assert re.fullmatch(rb"VERSION \S+\r\n", c.call(b"version\r\n"))


STANDARD_STATS = ["pid", "uptime", "time", "version", "curr_connections", "total_connections",
                  "cmd_get", "cmd_set", "get_hits", "get_misses", "curr_items", "total_items",
                  "bytes", "limit_maxbytes", "threads", "evictions"]


def test_stats(ithaca):
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        c.call(b"set a 0 0 1\r\nx\r\n")
        c.call(b"get a nope\r\n")
        reply = c.call(b"stats\r\n")
        assert reply.endswith(b"END\r\n")
        for line in reply.split(b"\r\n")[:-2]:
            assert re.fullmatch(rb"STAT \S+ \S.*", line), line
        stats = mcwire.parse_stats(reply)
        missing = [s for s in STANDARD_STATS if s not in stats]
        assert not missing, f"missing stats: {missing}"
        assert int(stats["pid"]) == ithaca.proc.pid
        assert int(stats["limit_maxbytes"]) == 64 << 20
        assert int(stats["threads"]) == 2
        assert int(stats["curr_items"]) == 1
        assert int(stats["cmd_get"]) == 2 and int(stats["get_hits"]) == 1 and int(stats["get_misses"]) == 1
        assert int(stats["cmd_set"]) == 1
        assert int(stats["curr_connections"]) >= 1
        assert c.call(b"stats reset\r\n") == b"RESET\r\n"
        stats = mcwire.parse_stats(c.call(b"stats\r\n"))
        assert int(stats["cmd_get"]) == 0 and int(stats["get_hits"]) == 0
        assert int(stats["curr_items"]) == 1  # a gauge, not reset


def test_stats_settings(ithaca):
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        stats = mcwire.parse_stats(c.call(b"stats settings\r\n"))
        assert int(stats["maxbytes"]) == 64 << 20
        assert int(stats["num_threads"]) == 2
        assert int(stats["tcpport"]) == ithaca.port
        assert "item_size_max" in stats


def test_quit(ithaca):
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        c.send(b"quit\r\n")
        assert c.is_closed(wait=5.0)
        assert c.buf == b""


def test_pipelined_byte_at_a_time(ithaca):
    """The server must parse requests split at every byte."""
    request = b"set a 0 0 3\r\nabc\r\nget a\r\ndelete a\r\n"
    with mcwire.Conn(ithaca.host, ithaca.port) as c:
        for i in range(len(request)):
            c.send(request[i:i + 1])
        assert c.read_replies(3) == [b"STORED\r\n", b"VALUE a 0 3\r\nabc\r\nEND\r\n", b"DELETED\r\n"]
