"""mcrouter's LeastFailuresPolicy (a FailoverRoute's failover_policy) and its
answer for a refused connect, through ithaca on mcrouter's own config
(mcrouter/test/test_basic_failover_least_failures.json, MIT licence, copied
below) in front of real memcacheds; the assertions are those of mcrouter's
test_mcrouter_basic.py TestBasicFailoverLeastFailures, the code is ours.

- The first child is always tried first; the others by how many errors in a
  row each answered last, sorted once, when the first child has answered: a
  request's own failures do not reorder the children it has still to try,
  so with max_tries 3 and the first three children down, the fourth is not
  asked, and the reply is the third's connect error.
- A refused connect answers in mcrouter's words: its client fails the
  request with folly's AsyncSocketException message.
- The next request finds the fourth child with the fewest errors: it is
  tried second, and answers.
"""
import mcwire
from conftest import ithaca_binary
from test_ascii_diff import SERVER_ARGS
from test_routes_mcrouter_a import killable_memcached

import pytest

# mcrouter/test/test_basic_failover_least_failures.json (MIT licence); its
# four servers are given here in order.
CONFIG = """{
  "pools": {
    "A.wildcard": {
      "servers": [ "%s" ]
    },
    "B.wildcard": {
      "servers": [ "%s" ]
    },
    "C.wildcard": {
      "servers": [ "%s" ]
    },
    "D.wildcard": {
      "servers": [ "%s" ]
    }
  },
  "route": {
    "type": "FailoverRoute",
    "children": ["PoolRoute|A.wildcard",
                 "PoolRoute|B.wildcard",
                 "PoolRoute|C.wildcard",
                 "PoolRoute|D.wildcard"],
    "failover_policy": {
      "type": "LeastFailuresPolicy",
      "max_tries": 3
    }
  }
}
"""

REFUSED = b"SERVER_ERROR AsyncSocketException: connect failed, type = Socket not open, errno = 111 " \
          b"(Connection refused)\r\n"


def serve(tmp_path, ithaca_factory, backends):
    if ithaca_binary()[1]:
        pytest.skip("an mcrouter config file")
    path = tmp_path / "least_failures.json"
    path.write_text(CONFIG % tuple(f"{b.host}:{b.port}" for b in backends))
    return ithaca_factory(args=["--config", str(path)])


def test_least_failures_sorts_once_and_skips_the_failing(tmp_path, ithaca_factory, memcached_factory):
    down = [killable_memcached() for _ in range(3)]
    d = memcached_factory(args=SERVER_ARGS)
    try:
        router = serve(tmp_path, ithaca_factory, down + [d])
        with mcwire.Conn(d.host, d.port) as m:
            assert m.call(b"set key 0 0 5\r\nvalue\r\n") == b"STORED\r\n"
        for s in down:
            s.stop()
        with mcwire.Conn(*router.address) as c:
            # A, B and C refuse; D is not asked (max_tries 3): C's error.
            assert c.call(b"get key\r\n") == REFUSED
            # A again (marked down now), then D, with the fewest errors.
            assert c.call(b"get key\r\n") == b"VALUE key 0 5\r\nvalue\r\nEND\r\n"
            # D answered: still first after A.
            assert c.call(b"get key\r\n") == b"VALUE key 0 5\r\nvalue\r\nEND\r\n"
    finally:
        for s in down:
            s.stop()
