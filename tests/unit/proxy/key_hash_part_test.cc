// The hashed part of a key: twemproxy's hash tag and mcrouter's hash stop.
#include <doctest/doctest.h>

#include "key_hash_part.h"

using namespace ithaca::proxy;

namespace {
std::string_view part(std::string_view key, std::string tag, bool stop = false) {
  return key_hash_part(key, key_hash_options{std::move(tag), stop});
}
}  // namespace

TEST_CASE("no options: the whole key") { CHECK(part("{a}b|#|c", "") == "{a}b|#|c"); }

TEST_CASE("hash tag: the bytes between the first opener and the next closer") {
  CHECK(part("{user:7}.avatar", "{}") == "user:7");
  CHECK(part("x{a}y", "{}") == "a");
  CHECK(part("{a}{b}", "{}") == "a");     // the first tag counts
  CHECK(part("{a{b}c}", "{}") == "a{b");  // the first closer after the first opener
  CHECK(part("a}{b}", "{}") == "b");      // a closer before the opener is ignored
  CHECK(part("$x$y", "$$") == "x");       // opener and closer may be one character
  CHECK(part("{x}", "{}") == "x");
}

TEST_CASE("hash tag: empty tags and missing closers hash the whole key") {
  CHECK(part("{}{a}", "{}") == "{}{a}");  // empty first tag: twemproxy does not look further
  CHECK(part("a{}", "{}") == "a{}");
  CHECK(part("a{b", "{}") == "a{b");  // no closer
  CHECK(part("ab}", "{}") == "ab}");  // no opener
  CHECK(part("", "{}") == "");
  CHECK(part("{", "{}") == "{");
}

TEST_CASE("hash stop: the part before the first |#|") {
  CHECK(part("user:7|#|avatar", "", true) == "user:7");
  CHECK(part("a|#|b|#|c", "", true) == "a");
  CHECK(part("|#|x", "", true) == "");          // hashes to 0, as an empty key does
  CHECK(part("a|b#|c", "", true) == "a|b#|c");  // not a stop
  CHECK(part("a||#|", "", true) == "a|");
  CHECK(part("a|#", "", true) == "a|#");
}

TEST_CASE("both: the stop applies first, the tag is looked for before it") {
  CHECK(part("{a}b|#|c", "{}", true) == "a");
  CHECK(part("a|#|{b}", "{}", true) == "a");
  CHECK(part("{a|#|b}", "{}", true) == "{a");  // the tag's closer is past the stop: no tag
  CHECK(part("x{y}z", "{}", true) == "y");     // no stop: the tag alone
}

TEST_CASE("valid hash tags: empty or two characters") {
  CHECK(valid_hash_tag(""));
  CHECK(valid_hash_tag("{}"));
  CHECK(valid_hash_tag("::"));
  CHECK_FALSE(valid_hash_tag("{"));
  CHECK_FALSE(valid_hash_tag("{{}"));
}
