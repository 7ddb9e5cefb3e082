// The metrics listener's request head parser, fed whole and byte by byte.
#include <doctest/doctest.h>

#include <string>

#include "http_request.h"

using namespace ithaca::metrics;

namespace {
http_parse parse(const std::string& text, http_request& r, size_t max_head = 8192) {
  return parse_http_request(text, max_head, r);
}
}  // namespace

TEST_CASE("a GET with headers parses; the query string is dropped") {
  http_request r;
  const std::string head = "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n";
  REQUIRE(parse(head + "rest", r) == http_parse::Ok);
  CHECK(r.method == "GET");
  CHECK(r.path == "/metrics");
  CHECK(r.minor_version == 1);
  CHECK(r.head_size == head.size());
}

TEST_CASE("bare LF line ends and HTTP/1.0 are accepted") {
  http_request r;
  REQUIRE(parse("HEAD /metrics HTTP/1.0\nHost: a\n\n", r) == http_parse::Ok);
  CHECK(r.method == "HEAD");
  CHECK(r.minor_version == 0);
}

TEST_CASE("byte by byte: NeedMore until the blank line, then Ok") {
  const std::string head = "GET /metrics HTTP/1.1\r\nUser-Agent: Prometheus/2.42.0\r\n\r\n";
  std::string data;
  for (size_t i = 0; i + 1 < head.size(); ++i) {
    data += head[i];
    http_request r;
    CHECK_MESSAGE(parse(data, r) == http_parse::NeedMore, "after ", i + 1, " bytes");
  }
  data += head.back();
  http_request r;
  CHECK(parse(data, r) == http_parse::Ok);
}

TEST_CASE("malformed requests are Bad") {
  http_request r;
  CHECK(parse("GET /metrics\r\n\r\n", r) == http_parse::Bad);            // no version
  CHECK(parse("GET  /metrics HTTP/1.1\r\n\r\n", r) == http_parse::Bad);  // two spaces
  CHECK(parse("GET /metrics HTTP/2.0\r\n\r\n", r) == http_parse::Bad);   // not 1.x
  CHECK(parse("G(T /metrics HTTP/1.1\r\n\r\n", r) == http_parse::Bad);   // not a token
  CHECK(parse("GET /metrics HTTP/1.1\r\nNo colon\r\n\r\n", r) == http_parse::Bad);
  CHECK(parse("GET /metrics HTTP/1.1\r\nHost : a\r\n\r\n", r) == http_parse::Bad);  // space before colon
  CHECK(parse("GET /metrics HTTP/1.1\r\n folded\r\n\r\n", r) == http_parse::Bad);   // obs-fold
  CHECK(parse("\r\n\r\n", r) == http_parse::Bad);
  // A bad request line is refused before the head is complete.
  CHECK(parse("garbage\r\nHost: a\r\n", r) == http_parse::Bad);
}

TEST_CASE("a head over the bound is TooLarge, complete or not") {
  http_request r;
  const std::string big = "GET /metrics HTTP/1.1\r\nX-Pad: " + std::string(9000, 'a') + "\r\n";
  CHECK(parse(big, r) == http_parse::TooLarge);
  CHECK(parse(big + "\r\n", r) == http_parse::TooLarge);
  CHECK(parse(big + "\r\n", r, 20000) == http_parse::Ok);
  // Exactly at the bound is fine.
  const std::string exact = "GET / HTTP/1.1\r\n\r\n";
  CHECK(parse(exact, r, exact.size()) == http_parse::Ok);
  CHECK(parse(exact, r, exact.size() - 1) == http_parse::TooLarge);
}
