"""mcrouter's pool hashes written again in Python from their description
(fbi/hash.c's furc_hash over MurmurHash64A, and Crc32), independent of
ithaca's C++: the placement tests compare the two. Checked against the
values mcrouter's own tests pin (see test_mcrouter_placement.py)."""
import zlib

M = 0xc6a4a7935bd1e995
MASK = (1 << 64) - 1
SEED = 4193360111
STEP = 23


def murmur64a(data, seed):
    h = (seed ^ (len(data) * M)) & MASK
    n = len(data) // 8
    for i in range(n):
        k = int.from_bytes(data[8 * i:8 * i + 8], "little")
        k = (k * M) & MASK
        k ^= k >> 47
        k = (k * M) & MASK
        h ^= k
        h = (h * M) & MASK
    tail = data[8 * n:]
    if tail:
        h ^= int.from_bytes(tail, "little")
        h = (h * M) & MASK
    h ^= h >> 47
    h = (h * M) & MASK
    return h ^ (h >> 47)


def furc_hash(key, m):
    if m <= 1:
        return 0
    words = [murmur64a(key, SEED)]

    def bit(i):
        while len(words) <= i >> 6:
            words.append(murmur64a(words[-1].to_bytes(8, "little"), SEED))
        return (words[i >> 6] >> (i & 63)) & 1

    d = (m - 1).bit_length()
    a = d
    for _ in range(32):
        while not bit(a):
            d -= 1
            if d == 0:
                return 0
            a = d
        a += STEP
        num = 1
        for _ in range(d - 1):
            num = (num << 1) | bit(a)
            a += STEP
        if num < m:
            return num
    return 0


def mcrouter_crc32(key, n):
    return (zlib.crc32(key) & 0x7fffffff) % n
