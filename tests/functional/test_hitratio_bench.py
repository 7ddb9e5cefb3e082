"""The hit-ratio benchmark (scripts/bench/hitratio, issue 33 part 3) on
streams small enough that the test knows every figure: traces in both formats
written here (libCacheSim's oracleGeneral and the CSV of time,key,size,op[,ttl]
or the Twitter traces' seven columns), and small generated streams. Each run
sends one stream to Debian's memcached (or $MEMCACHED_BIN) and to $ITHACA_BIN,
fresh, and the test reads the script's --json. The client is the one meson
built beside $ITHACA_BIN (build/scripts/hitratio_client), or $HITRATIO_CLIENT_BIN."""
import json
import os
import shutil
import struct
import subprocess
import sys

import pytest

from conftest import ithaca_binary, memcached_binary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "bench", "hitratio")


def client_binary():
    explicit = os.environ.get("HITRATIO_CLIENT_BIN")
    if explicit:
        return explicit
    ithaca = os.environ.get("ITHACA_BIN", "")
    if ithaca == "memcached" or not ithaca:
        pytest.skip("no built hitratio_client to find without ITHACA_BIN (set HITRATIO_CLIENT_BIN)")
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(ithaca))))
    path = os.path.join(build, "scripts", "hitratio_client")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not built (meson builds it beside ithaca)", pytrace=False)
    return path


def hitratio(tmp_path, *args, timeout=60):
    """Runs the script against memcached then ithaca; (rows of its --json, stdout)."""
    out = tmp_path / "result.json"
    ithaca, _ = ithaca_binary()
    p = subprocess.run([sys.executable, SCRIPT, "--ithaca", ithaca, "--memcached", memcached_binary(),
                        "--client", client_binary(), "--json", str(out), *args],
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return json.loads(out.read_text()), p.stdout


def servers(row):
    """{"memcached": result, ["ithaca baseline": result,] "ithaca": result} of one row."""
    mc, ith = row["results"][0], row["results"][-1]
    assert mc["server"].startswith("memcached ") and mc["exit_status"] == 0, mc
    out = {"memcached": mc, **{r["server"]: r for r in row["results"][1:]}}
    assert list(out)[-1] == "ithaca" and all(r["exit_status"] == 0 for r in out.values()), out
    return out


def oracle_general(path, ids, sizes=None):
    """libCacheSim's oracleGeneral: packed <IQIq records of 24 bytes."""
    with open(path, "wb") as f:
        for n, obj in enumerate(ids):
            f.write(struct.pack("<IQIq", n // 10, obj, sizes[n] if sizes else 100, -1))


def test_oracle_general_trace_that_fits_misses_each_key_once(tmp_path):
    # 400 keys, each asked for 5 times, interleaved so repeats fall inside
    # and across the client's batches: with everything fitting in -m 64 a
    # look-aside client misses exactly once per key, on its first touch.
    ids = [(n * 7919) % 400 + 2**63 for n in range(2000)]  # big ids: the u64 is read whole
    oracle_general(tmp_path / "t.oracleGeneral", ids, sizes=[10 + n % 300 for n in range(2000)])
    rows, out = hitratio(tmp_path, "--trace", str(tmp_path / "t.oracleGeneral"), "--format", "oracleGeneral")
    assert rows[0]["stream"]["records"] == 2000 and rows[0]["stream"]["warmup"] == 0
    for name, r in servers(rows[0]).items():
        assert (r["gets"], r["misses"]) == (2000, 400), name
        assert r["get_misses"] == 400, name
        assert r["curr_items"] == 400, name
        assert r["miss_ratio"] == pytest.approx(0.2)
        assert r["set_errors"] == 0 and r["errors"] == 0
        # 20 stats along the way, every 100 requests: all 400 keys are held
        # from request 400 on (keys repeat every 400), fewer before.
        assert r["client"]["samples"] == 20, name
        assert 16 * 400 / 20 < r["items_mean"] < 400, name
    assert "| ithaca / memcached" in out and "0.2000" in out


@pytest.mark.parametrize("compressed", [False, True])
def test_oracle_general_one_hit_wonders_all_miss(tmp_path, compressed):
    trace = tmp_path / "once.oracleGeneral"
    oracle_general(trace, range(1, 1001))
    if compressed:  # as libCacheSim publishes its traces: read through zstd's pipe
        if not shutil.which("zstd"):
            pytest.skip("zstd is not installed")
        subprocess.run(["zstd", "-q", "--rm", str(trace)], check=True, timeout=30)
        trace = tmp_path / "once.oracleGeneral.zst"
    rows, _ = hitratio(tmp_path, "--trace", str(trace), "--format", "oracleGeneral", "--warmup", "200")
    assert rows[0]["stream"]["warmup"] == 200 and rows[0]["stream"]["records"] == 1000
    for name, r in servers(rows[0]).items():
        assert (r["gets"], r["misses"], r["miss_ratio"]) == (800, 800, 1.0), name
        assert r["get_misses"] == 1000 and r["curr_items"] == 1000, name


def test_csv_trace_ops_delete_and_skips(tmp_path):
    # Each line's outcome for a look-aside client, in order.
    lines = [
        "time,key,size,op,ttl",  # a header, skipped
        "1,a,100,get,0",  # miss (then filled)
        "1,a,100,get,0",  # hit: the fill went before this get (same batch would overtake it)
        "2,a,100,delete,0",
        "2,a,100,get,0",  # miss: deleted
        "3,a,100,gets,0",  # hit
        "3,b,50,set,0",
        "4,b,50,get,0",  # hit: set by the trace
        "4,c,2000000,get,0",  # over --item-size-max: skipped
        "5,d,10,incr,0",  # an op the replay does not do: skipped
        "5,e e,10,get,0",  # a key memcached cannot take: skipped
        "6,f,10,add,0",
        "6,f,10,get,0",  # hit
        "7,g,10,replace,0",  # a replace is a set here
        "7,g,10,cas,0",
        "8,g,10,get",  # four columns: no ttl; hit
        "9,h,0,get,3600",  # miss; filled with an empty value
        "9,h,0,get,3600",  # hit
        "bad line",
    ]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    rows, out = hitratio(tmp_path, "--trace", str(tmp_path / "t.csv"), "--format", "csv", "--item-size-max",
                         "1048576")
    # --show prints the same tables from the --json, running nothing.
    shown = subprocess.run([sys.executable, SCRIPT, "--show", str(tmp_path / "result.json")], capture_output=True,
                           text=True, timeout=30)
    assert shown.returncode == 0 and shown.stdout == out, shown.stderr
    made = rows[0]["stream"]
    assert (made["header"], made["malformed"], made["too_large"], made["bad_key"]) == (1, 1, 1, 1)
    assert made["skipped_ops"] == 1 and made["skipped_by_op"] == {"incr": 1}
    assert made["records"] == 14
    for name, r in servers(rows[0]).items():
        c = r["client"]["measured"]
        assert (c["gets"], c["hits"], c["misses"]) == (9, 6, 3), name
        assert (c["sets"], c["deletes"], c["fills"]) == (4, 1, 3), name
        assert r["get_misses"] == 3 and r["curr_items"] == 5, name  # a, b, f, g, h
        assert r["set_errors"] == 0 and r["errors"] == 0, name


def test_csv_twitter_columns_with_a_window_of_one(tmp_path):
    # time,key,key_size,value_size,client,op,ttl; --window 1 is one request
    # at a time and must count the same. The second run also runs a
    # --baseline (the same binary here): a third column, the same figures.
    lines = [f"{n},k{n % 30},3,{20 + n % 7},1,get,0" for n in range(300)]
    lines += ["300,k0,2,20,1,delete,0", "301,k0,2,20,1,get,0", "302,k1,2,20,1,prepend,0"]
    (tmp_path / "tw.csv").write_text("\n".join(lines) + "\n")
    for window, more in (("1", []), ("16", ["--baseline", ithaca_binary()[0]])):
        rows, out = hitratio(tmp_path, "--trace", str(tmp_path / "tw.csv"), "--format", "csv", "--window", window,
                             *more)
        assert rows[0]["stream"]["skipped_by_op"] == {"prepend": 1}
        assert len(rows[0]["results"]) == 2 + len(more) // 2
        if more:
            assert "| ithaca / ithaca baseline |" in out
        for name, r in servers(rows[0]).items():
            assert (r["gets"], r["misses"]) == (301, 31), (name, window)
            assert r["curr_items"] == 30, (name, window)


def test_generated_streams(tmp_path):
    # One run, two rows would need a preset; two small runs instead:
    # (1) every request a one-hit wonder: miss ratio 1.0 on both;
    rows, _ = hitratio(tmp_path, "--keys", "100", "--requests", "3000", "--warmup", "1000", "--one-hit-share",
                       "1", "--sizes", "100:1,400:1")
    for name, r in servers(rows[0]).items():
        assert (r["gets"], r["misses"]) == (3000, 3000), name
        assert r["curr_items"] == 4000, name
    # (2) 500 keys that all fit, with a size and ttl mix: the warm-up touches
    # most, so the measured misses are exactly the keys first touched there,
    # the same count on both servers; and the same seed makes the same bytes.
    args = ["--keys", "500", "--alpha", "0.7", "--requests", "20000", "--warmup", "3000", "--sizes",
            "100,400,1500", "--ttl-mix", "0:8,3600:2", "--seed", "7"]
    rows, _ = hitratio(tmp_path, *args)
    again, _ = hitratio(tmp_path, *args)
    other, _ = hitratio(tmp_path, *args[:-1], "8")
    assert rows[0]["sha256"] == again[0]["sha256"] != other[0]["sha256"]
    s = servers(rows[0])
    distinct = s["memcached"]["curr_items"]
    assert 0 < distinct <= 500 and s["ithaca"]["curr_items"] == distinct
    for name, r in s.items():
        assert r["client_misses_all"] == r["get_misses"] == distinct, name
        assert r["misses"] == s["memcached"]["misses"], name
        assert r["evictions"] == 0, name
