// The executor's binary protocol (exec_binary.cc): responses by opcode, the
// quiet opcodes' silence, opaque and CAS carried back.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "binary_format.h"
#include "exec_harness.h"

namespace ithaca::cache {

using test::connection;

namespace {

std::string packet(uint8_t op, const std::string& key, const std::string& extras = "", const std::string& value = "",
                   uint32_t opaque = 0, uint64_t cas = 0) {
  protocol::binary_header h;
  h.magic = protocol::kBinaryRequestMagic;
  h.opcode = op;
  h.key_length = static_cast<uint16_t>(key.size());
  h.extras_length = static_cast<uint8_t>(extras.size());
  h.body_length = static_cast<uint32_t>(extras.size() + key.size() + value.size());
  h.opaque = opaque;
  h.cas = cas;
  char header[protocol::kBinaryHeaderSize];
  protocol::encode_header(h, header);
  return std::string(header, sizeof header) + extras + key + value;
}

std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// flags, exptime
std::string set_extras(uint32_t flags, uint32_t exptime) { return be32(flags) + be32(exptime); }

struct response {
  protocol::binary_header h;
  std::string extras, key, value;
};

std::vector<response> responses(const std::string& bytes) {
  std::vector<response> out;
  size_t at = 0;
  while (at < bytes.size()) {
    REQUIRE(bytes.size() - at >= protocol::kBinaryHeaderSize);
    response r;
    r.h = protocol::decode_header(bytes.data() + at);
    CHECK(r.h.magic == 0x81);
    at += protocol::kBinaryHeaderSize;
    REQUIRE(bytes.size() - at >= r.h.body_length);
    r.extras = bytes.substr(at, r.h.extras_length);
    r.key = bytes.substr(at + r.h.extras_length, r.h.key_length);
    r.value =
        bytes.substr(at + r.h.extras_length + r.h.key_length, r.h.body_length - r.h.extras_length - r.h.key_length);
    at += r.h.body_length;
    out.push_back(std::move(r));
  }
  return out;
}

constexpr uint8_t kGet = 0x00, kSet = 0x01, kAdd = 0x02, kDelete = 0x04, kGetQ = 0x09, kNoop = 0x0a, kGetK = 0x0c;
constexpr uint16_t kOk = 0x0000, kNotFound = 0x0001, kExists = 0x0002, kNotStored = 0x0005;
constexpr uint8_t kAppend = 0x0e;

}  // namespace

TEST_CASE("set answers with the new CAS; get and getk return flags, value and (getk) the key") {
  connection c;
  auto set = responses(c.send(packet(kSet, "k", set_extras(0xdeadbeef, 0), "value", 77)));
  REQUIRE(set.size() == 1);
  CHECK(set[0].h.opcode == kSet);
  CHECK(set[0].h.vbucket_or_status == kOk);
  CHECK(set[0].h.opaque == 77);
  CHECK(set[0].h.cas != 0);
  auto get = responses(c.send(packet(kGet, "k", "", "", 78)));
  REQUIRE(get.size() == 1);
  CHECK(get[0].h.vbucket_or_status == kOk);
  CHECK(get[0].extras == be32(0xdeadbeef));
  CHECK(get[0].key.empty());
  CHECK(get[0].value == "value");
  CHECK(get[0].h.cas == set[0].h.cas);
  CHECK(get[0].h.opaque == 78);
  auto getk = responses(c.send(packet(kGetK, "k")));
  REQUIRE(getk.size() == 1);
  CHECK(getk[0].key == "k");
  CHECK(getk[0].value == "value");
}

TEST_CASE("a miss is Not found for get, silence for getq; noop answers the batch") {
  connection c;
  auto miss = responses(c.send(packet(kGet, "nope")));
  REQUIRE(miss.size() == 1);
  CHECK(miss[0].h.vbucket_or_status == kNotFound);
  CHECK(miss[0].value == "Not found");
  c.send(packet(kSet, "here", set_extras(0, 0), "h"));
  auto batch = responses(
      c.send(packet(kGetQ, "nope", "", "", 1) + packet(kGetQ, "here", "", "", 2) + packet(kNoop, "", "", "", 3)));
  REQUIRE(batch.size() == 2);
  CHECK(batch[0].h.opcode == kGetQ);
  CHECK(batch[0].h.opaque == 2);
  CHECK(batch[0].value == "h");
  CHECK(batch[1].h.opcode == kNoop);
  CHECK(batch[1].h.opaque == 3);
}

TEST_CASE("add on an existing key, set with a stale CAS, delete of a missing key") {
  connection c;
  const auto set = responses(c.send(packet(kSet, "k", set_extras(0, 0), "a")));
  REQUIRE(set.size() == 1);
  auto add = responses(c.send(packet(kAdd, "k", set_extras(0, 0), "b")));
  REQUIRE(add.size() == 1);
  CHECK(add[0].h.vbucket_or_status == kExists);  // memcached's binary add: Key exists
  // Appending to a missing key is Not stored.
  auto append = responses(c.send(packet(kAppend, "missing", "", "x")));
  REQUIRE(append.size() == 1);
  CHECK(append[0].h.vbucket_or_status == kNotStored);
  auto stale = responses(c.send(packet(kSet, "k", set_extras(0, 0), "c", 0, set[0].h.cas + 1)));
  REQUIRE(stale.size() == 1);
  CHECK(stale[0].h.vbucket_or_status == kExists);
  auto fresh = responses(c.send(packet(kSet, "k", set_extras(0, 0), "d", 0, set[0].h.cas)));
  REQUIRE(fresh.size() == 1);
  CHECK(fresh[0].h.vbucket_or_status == kOk);
  auto del = responses(c.send(packet(kDelete, "k") + packet(kDelete, "k")));
  REQUIRE(del.size() == 2);
  CHECK(del[0].h.vbucket_or_status == kOk);
  CHECK(del[1].h.vbucket_or_status == kNotFound);
}

}  // namespace ithaca::cache
