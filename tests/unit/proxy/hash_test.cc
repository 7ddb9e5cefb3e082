// The key hash functions: published vectors where the function is a standard
// one (RFC 1321 MD5, CRC-32, FNV), and twemproxy 0.5.0's own values for the
// rest and for its variants (recorded by compiling its src/hashkit/*.c
// separately; test_placement.py checks the same functions against a running
// nutcracker). Keys with bytes >= 0x80 pin twemproxy's sign extension.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "hash/hash_functions.h"
#include "hash/hash_key.h"

using namespace ithaca::proxy;
namespace kinds = ithaca::kinds;

namespace {

std::string hex(const md5_digest_t& d) {
  std::string s;
  char b[3];
  for (auto c : d) {
    std::snprintf(b, sizeof b, "%02x", c);
    s += b;
  }
  return s;
}

}  // namespace

TEST_CASE("md5: RFC 1321 test suite") {
  CHECK(hex(md5_digest("")) == "d41d8cd98f00b204e9800998ecf8427e");
  CHECK(hex(md5_digest("a")) == "0cc175b9c0f1b6a831c399e269772661");
  CHECK(hex(md5_digest("abc")) == "900150983cd24fb0d6963f7d28e17f72");
  CHECK(hex(md5_digest("message digest")) == "f96b697d7cb7938d525a2f31aaf161d0");
  CHECK(hex(md5_digest("abcdefghijklmnopqrstuvwxyz")) == "c3fcd3d76192e4007dfb496cca67e13b");
  CHECK(hex(md5_digest("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")) ==
        "d174ab98d277d9f5a5611c2c9f419d9f");
  CHECK(hex(md5_digest("1234567890123456789012345678901234567890"
                       "1234567890123456789012345678901234567890")) == "57edf4a22be3c955ac49da2e2107b67a");
}

TEST_CASE("md5: padding at the block boundaries") {
  // 55 bytes: padding fits one block; 56..63: it needs a second; 64: exact.
  CHECK(hex(md5_digest(std::string(55, 'a'))) == "ef1772b6dff9a122358552954ad0df65");
  CHECK(hex(md5_digest(std::string(56, 'a'))) == "3b0c8ac703f828b04c6c197006d17218");
  CHECK(hex(md5_digest(std::string(63, 'a'))) == "b06521f39153d618550606be297466d5");
  CHECK(hex(md5_digest(std::string(64, 'a'))) == "014842d480b571495a4a0363793f7367");
  CHECK(hex(md5_digest(std::string(119, 'a'))) == "8a7bd0732ed6a28ce75f6dabc90e1613");
  CHECK(hex(md5_digest(std::string(120, 'a'))) == "5f61c0ccad4cac44c75ff505e1f1e537");
  CHECK(hex(md5_digest(std::string(1000, 'a'))) == "cabe45dcc9ae5b66ba86600cca6b8ba8");
}

TEST_CASE("md5: words are little-endian digest bytes") {
  const auto d = md5_digest("");  // d4 1d 8c d9 | 8f 00 b2 04 | e9 80 09 98 | ec f8 42 7e
  CHECK(md5_word(d, 0) == 0xd98c1dd4u);
  CHECK(md5_word(d, 1) == 0x04b2008fu);
  CHECK(md5_word(d, 2) == 0x980980e9u);
  CHECK(md5_word(d, 3) == 0x7e42f8ecu);
  CHECK(hash_md5("") == 0xd98c1dd4u);
}

TEST_CASE("standard check values") {
  CHECK(hash_crc32a("123456789") == 0xCBF43926u);                    // CRC-32
  CHECK(hash_crc32("123456789") == ((0xCBF43926u >> 16) & 0x7FFF));  // libmemcached's 15 bits
  CHECK((hash_crc16("123456789") & 0xFFFF) == 0x31C3u);              // CRC-16/XMODEM
  CHECK(hash_fnv1_32("a") == 0x050c5d7eu);                           // FNV-1 32
  CHECK(hash_fnv1a_32("a") == 0xe40c292cu);                          // FNV-1a 32
  CHECK(hash_fnv1_64("a") == 0x8601b7beu);                           // low half of FNV-1 64 (0xaf63bd4c8601b7be)
  CHECK(hash_fnv1_32("") == 2166136261u);
  CHECK(hash_fnv1a_64("") == 0x84222325u);      // low half of the 64-bit basis
  CHECK(hash_jenkins("") == 0xdeadbeefu + 13);  // lookup3: no mixing for an empty key
  CHECK(hash_hsieh("") == 0);
  CHECK(hash_one_at_a_time("") == 0);
}

TEST_CASE("every hash kind against twemproxy 0.5.0's values") {
  struct row {
    std::string key;
    std::uint32_t want[kinds::kHashKindCount];  // in hash_kind order
  };
  const row rows[] = {
      {"a",
       {0xca2e9442, 0xb975c10c, 0x00007c87, 0x000068b7, 0xe8b7be43, 0x8601b7be, 0x8601ec8c, 0x050c5d7e, 0xe40c292c,
        0x93642e87, 0x4b41757c, 0xe0a38690}},
      {"123456789",
       {0xc66b58c5, 0x94e7f925, 0x869031c3, 0x00004bf4, 0xcbf43926, 0x2bf916d6, 0x23c6cdfc, 0x24148816, 0xbb86b11c,
        0xe4fc1670, 0xb7760690, 0x19777af6}},
      {"hello world",
       {0x3e4a5a57, 0xbb3bb65e, 0xf2063be4, 0x00000d4a, 0x0d4a1185, 0xb1910e6f, 0x023cd2e7, 0x548da96f, 0xd58b3fa7,
        0x4f799873, 0x5e19153b, 0x153343fb}},
      // hsieh's 3-byte tail reads its last byte as a signed char
      {"ab\xff",
       {0x0603d118, 0x82abbd74, 0x7c74dfe3, 0x00004c9d, 0xcc9d9ead, 0x94505257, 0xfabe022f, 0xbc63d0d7, 0xc3b7e16f,
        0x75dc9fd6, 0xec9082b2, 0xe9af676b}},
      {"\xc3\xa9t\xc3\xa9",
       {0x7fcb4b35, 0x1e6aafde, 0xe626a767, 0x000044d1, 0x44d16cd4, 0xee202e17, 0xea769c57, 0xbebb7c97, 0x0beea017,
        0xcc955977, 0xda710acb, 0x89466c13}},
      {"The quick brown fox jumps over the lazy dog",
       {0x519e91f5, 0x9d7d109e, 0x22a3f0c8, 0x0000414f, 0x414fa339, 0x7de37ace, 0xe7e47110, 0xe9c86c6e, 0x048fff90,
        0x1c19ee97, 0x30c79125, 0x12b8163c}},
      {"",
       {0x00000000, 0xd98c1dd4, 0x00000000, 0x00000000, 0x00000000, 0x84222325, 0x84222325, 0x811c9dc5, 0x811c9dc5,
        0x00000000, 0x00000000, 0xdeadbefc}},
  };
  for (const auto& r : rows) {
    for (int k = 0; k < kinds::kHashKindCount; ++k) {
      const auto kind = static_cast<hash_kind>(k);
      CAPTURE(r.key);
      CAPTURE(to_string(kind));
      CHECK(hash_key(kind, r.key) == r.want[k]);
    }
  }
}

TEST_CASE("jenkins and murmur: every tail length gives a distinct, stable value") {
  // lookup3 mixes 12-byte blocks and murmur 4-byte words: walk across both
  // boundaries and check a value depends on every byte.
  std::string key;
  for (int n = 1; n <= 40; ++n) {
    key.push_back(static_cast<char>('a' + n % 26));
    std::string changed = key;
    changed.back() ^= 1;
    CAPTURE(n);
    CHECK(hash_jenkins(key) != hash_jenkins(changed));
    CHECK(hash_murmur(key) != hash_murmur(changed));
    CHECK(hash_hsieh(key) != hash_hsieh(changed));
  }
}

TEST_CASE("hash kind names are twemproxy's") {
  const char* names[] = {"one_at_a_time", "md5",     "crc16",    "crc32", "crc32a", "fnv1_64",
                         "fnv1a_64",      "fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins"};
  for (int k = 0; k < kinds::kHashKindCount; ++k) {
    hash_kind parsed = hash_kind::Md5;
    REQUIRE(from_string(names[k], parsed));
    CHECK(static_cast<int>(parsed) == k);
    CHECK(to_string(parsed) == names[k]);
  }
  hash_kind untouched = hash_kind::Murmur;
  CHECK_FALSE(from_string("MD5", untouched));
  CHECK_FALSE(from_string("crc32b", untouched));
  CHECK_FALSE(from_string("", untouched));
  CHECK(untouched == hash_kind::Murmur);
}
