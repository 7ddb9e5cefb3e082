// The confirmation exchange of `ack: slave`: the master's request and the
// slave's answer as bytes, the slave's decoder taking requests amid records,
// and the master's reader of heartbeats and confirmations in any pieces.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ack_reader.h"
#include "record.h"
#include "stream_decoder.h"
#include "test_bytes.h"

using namespace ithaca::replication;

namespace {
std::string request(uint64_t position) {
  std::string out(kAckSize, '\0');
  CHECK(encode_ack_request(out.data(), position) == kAckSize);
  return out;
}

std::string response(uint64_t position) {
  std::string out(kAckSize, '\0');
  CHECK(encode_ack_response(out.data(), position) == kAckSize);
  return out;
}

// Feeds `in` to a reader in pieces of `piece` bytes; the highest position.
uint64_t read_all(std::string_view in, size_t piece, ack_reader::status& st) {
  ack_reader r;
  uint64_t confirmed = 0;
  st = ack_reader::status::Ok;
  while (!in.empty() && st == ack_reader::status::Ok) {
    const size_t n = std::min(piece, in.size());
    st = r.feed(in.substr(0, n), confirmed);
    in.remove_prefix(n);
  }
  return confirmed;
}
}  // namespace

TEST_CASE("ack_packets_are_a_binary_noop_with_the_position_in_the_cas") {
  CHECK(request(0x0102030405060708) ==
        bytes({0x80, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
  CHECK(response(0x0102030405060708) ==
        bytes({0x81, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST_CASE("slave_decoder_takes_a_confirmation_request_between_records") {
  std::string set(set_size(1, 2), '\0');
  encode_set(set.data(), "k", 1, 2, "vv");
  const std::string stream = set + request(777) + set;
  for (size_t piece : {size_t{1}, size_t{5}, stream.size()}) {
    CAPTURE(piece);
    stream_decoder d(100);
    std::vector<record_kind> kinds;
    uint64_t position = 0;
    std::string_view all = stream;
    while (!all.empty()) {
      std::string_view in = all.substr(0, std::min(piece, all.size()));
      all.remove_prefix(in.size());
      record r;
      decode_status st;
      while ((st = d.next(in, r)) == decode_status::Ok) {
        kinds.push_back(r.kind);
        if (r.kind == record_kind::Ack) position = r.position;
      }
      REQUIRE(st == decode_status::NeedMore);
    }
    CHECK(kinds == std::vector<record_kind>{record_kind::Set, record_kind::Ack, record_kind::Set});
    CHECK(position == 777);
  }
  // A Noop with a body is not ours.
  std::string bad = request(1);
  bad[11] = 1;
  bad += "x";
  stream_decoder d(100);
  std::string_view in = bad;
  record r;
  CHECK(d.next(in, r) == decode_status::Error);
}

TEST_CASE("master_reads_heartbeats_and_confirmations_in_any_pieces") {
  const std::string in =
      std::string(3, '\0') + response(10) + std::string(1, '\0') + response(99) + response(50) + std::string(2, '\0');
  for (size_t piece : {size_t{1}, size_t{7}, size_t{24}, in.size()}) {
    CAPTURE(piece);
    ack_reader::status st;
    CHECK(read_all(in, piece, st) == 99);  // the highest, whatever the order
    CHECK(st == ack_reader::status::Ok);
  }
  ack_reader::status st;
  CHECK(read_all(std::string(100, '\0'), 3, st) == 0);  // a yrmcds slave: heartbeats only
  CHECK(st == ack_reader::status::Ok);
}

TEST_CASE("master_refuses_a_packet_that_is_not_a_confirmation") {
  std::string bad = response(5);
  bad[1] = 0x01;  // a Set response
  ack_reader::status st;
  read_all(bad, 1, st);
  CHECK(st == ack_reader::status::Error);
  bad = response(5);
  bad[7] = 1;  // status != 0
  read_all(bad, 24, st);
  CHECK(st == ack_reader::status::Error);
  ack_reader r;
  uint64_t c = 0;
  CHECK(r.feed(bad, c) == ack_reader::status::Error);
  CHECK_FALSE(r.error().empty());
  CHECK(r.feed(response(9), c) == ack_reader::status::Error);  // stays in error
  CHECK(c == 0);
}
