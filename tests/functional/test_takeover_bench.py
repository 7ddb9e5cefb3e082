"""scripts/bench/takeover on small numbers (issue 34's benchmark): it runs
against $ITHACA_BIN and Debian's memcached (or $MEMCACHED_BIN), and its --json
says what the test checks: ithaca's takeover refused nothing and lost
nothing, memcached's warm restart kept its items and refused connections."""
import json
import os
import subprocess
import sys

from conftest import ithaca_binary, memcached_binary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "bench", "takeover")


def test_the_takeover_benchmark_on_small_numbers(tmp_path):
    ithaca, is_memcached = ithaca_binary()
    assert not is_memcached, "the benchmark needs ithaca"
    out = tmp_path / "result.json"
    run = subprocess.run([sys.executable, SCRIPT, "--ithaca", ithaca, "--memcached", memcached_binary(),
                          "--conns", "8", "--items", "5000", "--before", "1", "--after", "1", "--threads", "2",
                          "--json", str(out)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = json.loads(out.read_text())
    ours = rows["ithaca --takeover"]
    assert ours["refused connection attempts"] == 0
    assert ours["error or torn replies"] == 0
    assert ours["writes lost"] == 0
    assert ours["items present after"] == 5000
    assert ours["old process exit status"] == 0
    assert ours["writes acknowledged"] > 0
    (name, theirs), = [(k, v) for k, v in rows.items() if k.endswith("-e restart")]
    # memcached's restart keeps its items (the script restarts it in the
    # clock's next second) and refuses connections meanwhile.
    assert theirs["items present after"] == 5000, name
    assert theirs["writes lost"] == 0, name
    assert theirs["refused connection attempts"] > 0, name
    assert "refused connection attempts" in run.stdout
