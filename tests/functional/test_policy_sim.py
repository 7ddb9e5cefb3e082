"""scripts/bench/policy-sim on a small generated stream (the hit-ratio
benchmark's own file format): every policy runs, Belady's optimum is never
beaten, and on a stream with one-hit wonders the scan-resistant policies beat
LRU; on a stream the test writes by hand, the counts are the ones worked out
below."""
import os
import re
import struct
import subprocess
import sys

from test_hitratio_bench import ROOT, client_binary

SCRIPT = os.path.join(ROOT, "scripts", "bench", "policy-sim")


def run(stream, items):
    out = subprocess.run([sys.executable, SCRIPT, str(stream), "--items", str(items)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(\S+)\s+miss ratio ([0-9.]+)$", out.stdout, re.M)}


def test_policies_on_a_generated_stream(tmp_path):
    stream = tmp_path / "ohw.stream"
    subprocess.run([client_binary(), "generate", "--out", str(stream), "--keys", "50000", "--alpha", "0.99",
                    "--requests", "100000", "--warmup", "100000", "--one-hit-share", "0.3", "--sizes", "100",
                    "--ttl-mix", "0", "--seed", "1"], check=True, capture_output=True, timeout=60)
    r = run(stream, 9000)
    assert set(r) == {"lru", "s3fifo", "s3fifo-g4", "wtinylfu", "lfu", "belady"}, r
    assert all(r["belady"] <= v for v in r.values()), r
    assert r["s3fifo"] < r["lru"] and r["wtinylfu"] < r["lru"], r


def write_stream(path, keys, warmup):
    body = b"".join(struct.pack("<BBII", 1, len(k), 100, 0) + k for k in keys)
    path.write_bytes(b"IHRSTRM1" + struct.pack("<QQ", len(keys), warmup) + body)


def test_counts_on_a_stream_written_by_hand(tmp_path):
    # Room for 2 items; a b (warm-up), then a b c a b c measured.
    # LRU: a, b hit; c evicts a; a evicts b; b evicts c; c misses: 4 of 6.
    # Belady: a, b hit; c is wanted later than both held, so it is not stored
    # (a miss); a, b hit; c misses: 2 of 6.
    stream = tmp_path / "hand.stream"
    write_stream(stream, [b"a", b"b"] + [b"a", b"b", b"c"] * 2, 2)
    r = run(stream, 2)
    assert r["lru"] == round(4 / 6, 4), r
    assert r["belady"] == round(2 / 6, 4), r
