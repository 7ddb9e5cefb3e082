// md5.h against RFC 1321's test suite (A.5) and lengths around the padding's edges,
// checked against Python's hashlib when the test was written.
#include <doctest/doctest.h>

#include <string>

#include "md5.h"

using ithaca::server::md5_hex;

TEST_CASE("md5: RFC 1321's test suite") {
  CHECK(md5_hex("") == "d41d8cd98f00b204e9800998ecf8427e");
  CHECK(md5_hex("a") == "0cc175b9c0f1b6a831c399e269772661");
  CHECK(md5_hex("abc") == "900150983cd24fb0d6963f7d28e17f72");
  CHECK(md5_hex("message digest") == "f96b697d7cb7938d525a2f31aaf161d0");
  CHECK(md5_hex("abcdefghijklmnopqrstuvwxyz") == "c3fcd3d76192e4007dfb496cca67e13b");
  CHECK(md5_hex("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") ==
        "d174ab98d277d9f5a5611c2c9f419d9f");
  CHECK(md5_hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890") ==
        "57edf4a22be3c955ac49da2e2107b67a");
}

TEST_CASE("md5: lengths at the padding's edges (55, 56, 63, 64, 65 and 1000 bytes)") {
  CHECK(md5_hex(std::string(55, 'x')) == "04364420e25c512fd958a70738aa8f72");
  CHECK(md5_hex(std::string(56, 'x')) == "668a72d5ba17f08e62dabcafad6db14b");
  CHECK(md5_hex(std::string(63, 'x')) == "7dc2ca208106a2f703567bdff99d8981");
  CHECK(md5_hex(std::string(64, 'x')) == "c1bb4f81d892b2d57947682aeb252456");
  CHECK(md5_hex(std::string(65, 'x')) == "1bc932052302d074bdec39795fe00cf6");
  CHECK(md5_hex(std::string(1000, 'x')) == "398533d48111e9f664b1f64cb10c4b63");
}
