// memcached -Y's token exchange (protocol/ascii_auth.h), step by step, with
// the input whole and growing a byte at a time: a step must not depend on
// how the bytes were cut. Expectations from memcached 1.6.45's
// try_read_command_asciiauth (proto_text.c).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ascii_auth.h"
#include "sasl_plain.h"

using namespace ithaca::protocol;
using kind = ascii_auth_step::kind;

namespace {

// What a connection sees: steps over a buffer that grows `chunk` bytes at a
// time (0: all at once), each step's consumed bytes dropped from its front.
struct seen {
  std::vector<std::string> replies;  // Reply lines, "CHECK user/password" for a Check
  bool closed = false;
  std::size_t left = 0;  // bytes never consumed
};

seen run(std::string_view input, std::size_t chunk) {
  seen s;
  std::string buf;
  std::size_t fed = 0;
  while (true) {
    if (chunk == 0) {
      buf.append(input);
      fed = input.size();
    } else if (fed < input.size()) {
      buf.append(input.substr(fed, chunk));
      fed = std::min(input.size(), fed + chunk);
    }
    for (;;) {
      if (buf.empty()) break;
      ascii_auth_step st = next_ascii_auth(buf);
      if (st.what == kind::NeedMore) {
        CHECK(st.consumed == 0);
        break;
      }
      if (st.what == kind::Close) {
        s.closed = true;
        s.left = buf.size();
        return s;
      }
      if (st.what == kind::Reply) s.replies.emplace_back(st.reply);
      if (st.what == kind::Check) s.replies.push_back("CHECK " + std::string(st.user) + "/" + std::string(st.password));
      REQUIRE(st.consumed > 0);
      buf.erase(0, st.consumed);
    }
    if (fed >= input.size()) break;
  }
  s.left = buf.size();
  return s;
}

// The same outcome whole and a byte at a time.
seen both(std::string_view input) {
  seen whole = run(input, 0);
  seen bytes = run(input, 1);
  CHECK(whole.replies == bytes.replies);
  CHECK(whole.closed == bytes.closed);
  CHECK(whole.left == bytes.left);
  return whole;
}

}  // namespace

TEST_CASE("the token set: user and password, whatever the key, flags and exptime") {
  seen s = both("set anykey 123 456 12\r\nalice s3cret\r\n");
  REQUIRE(s.replies == std::vector<std::string>{"CHECK alice/s3cret"});
  CHECK(s.left == 0);
  // The password is everything after the first space.
  CHECK(both("set k 0 0 8\r\nu p w  x\r\n").replies == std::vector<std::string>{"CHECK u/p w  x"});
  CHECK(both("set k 0 0 2\r\nu \r\n").replies == std::vector<std::string>{"CHECK u/"});
  // Runs of spaces between tokens; "setx" passes memcached's 3-byte compare.
  CHECK(both("setx   k  0 0    3\r\na b\r\n").replies == std::vector<std::string>{"CHECK a/b"});
}

TEST_CASE("every other command is unauthenticated, the line consumed") {
  seen s = both("get foo\r\nmg foo v\r\nset k 0 0\r\nset k 0 0 x\r\nversion\r\nstats\r\n");
  CHECK(s.replies == std::vector<std::string>(6, std::string(kReplyUnauthenticated)));
  CHECK(s.left == 0);
  // A 5th token over 32 bits, or signed.
  CHECK(both("set k 0 0 4294967296\r\n").replies == std::vector<std::string>{std::string(kReplyUnauthenticated)});
  CHECK(both("set k 0 0 -1\r\n").replies == std::vector<std::string>{std::string(kReplyUnauthenticated)});
}

TEST_CASE("a bare newline loses the line's last byte, as memcached's tokenizer reads it") {
  // "set k 0 0 12\n": the tokenizer sees "set k 0 0 1": one byte of value.
  seen s = both("set k 0 0 12\nx\r\n");
  CHECK(s.replies == std::vector<std::string>{std::string(kReplyAuthBadFormat)});
  CHECK(s.left == 0);
}

TEST_CASE("a token over 16384 bytes is refused on its line alone") {
  seen s = both("set k 0 0 16385\r\nget x\r\n");
  CHECK(s.replies == std::vector<std::string>{std::string(kReplyAuthTokenTooLong), std::string(kReplyUnauthenticated)});
  // 16384 is taken: the exchange waits for that many bytes.
  seen w = both("set k 0 0 16384\r\nab");
  CHECK(w.replies.empty());
  CHECK(!w.closed);
}

TEST_CASE("the value must end in \\r\\n and hold a space") {
  CHECK(both("set k 0 0 3\r\na bxx").replies == std::vector<std::string>{std::string(kReplyAuthBadTermination)});
  CHECK(both("set k 0 0 3\r\nabc\r\n").replies == std::vector<std::string>{std::string(kReplyAuthBadFormat)});
}

TEST_CASE("short lines close, and so do 2049 bytes without a newline") {
  CHECK(both("mn\r\n").closed);
  CHECK(both("gets\r\n").closed);
  CHECK(!both("get a\r\n").closed);  // six bytes before the newline: answered
  seen wait = both(std::string(2048, 'x'));
  CHECK(!wait.closed);
  CHECK(wait.left == 2048);
  CHECK(both(std::string(2049, 'x')).closed);
  // A binary packet has no newline: it waits, as memcached's ascii-only port does.
  CHECK(!both(std::string("\x80\x00\x00\x00", 4) + std::string(20, '\0')).closed);
}

TEST_CASE("sasl PLAIN splits into three parts at two NULs") {
  using namespace std::string_literals;
  sasl_plain_message m;
  // The parts are views into the message: it must outlive them.
  const std::string first = "\0alice\0secret"s;
  REQUIRE(split_sasl_plain(first, m));
  CHECK(m.authzid.empty());
  CHECK(m.authcid == "alice");
  CHECK(m.password == "secret");
  const std::string second = "bob\0alice\0"s;
  REQUIRE(split_sasl_plain(second, m));
  CHECK(m.authzid == "bob");
  CHECK(m.password.empty());
  CHECK(!split_sasl_plain("alice\0secret"s, m));
  CHECK(!split_sasl_plain("\0a\0b\0c"s, m));
  CHECK(!split_sasl_plain("", m));
}
