// The master's shared stream log and each slave's outbox: a slave's bytes are
// the stream from its join position with its own records (initial-sync items,
// confirmation requests) exactly where the drain met them, whatever the sizes
// of the writes that carry them; a write's spans stay valid while the drain
// appends and trims; the backlog counts what is unsent.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "outbox.h"
#include "stream_log.h"

using namespace ithaca::replication;

namespace {
std::string joined(const std::vector<iovec>& spans) {
  std::string out;
  for (const iovec& v : spans) out.append(static_cast<const char*>(v.iov_base), v.iov_len);
  return out;
}

// Sends everything the outbox holds in writes of at most max_bytes / max_spans.
std::string send_all(outbox& box, const stream_log& log, size_t max_bytes, size_t max_spans) {
  std::string out;
  for (int guard = 0; guard < 100000; ++guard) {
    std::vector<iovec> spans;
    std::vector<stream_log::pin> pins;
    const size_t n = box.gather(log, max_bytes, max_spans, spans, pins);
    if (n == 0) break;
    CHECK(joined(spans).size() == n);
    out += joined(spans);
    box.consumed(n);
  }
  CHECK(box.empty(log.end()));
  return out;
}
}  // namespace

TEST_CASE("stream_log: bytes across blocks come back in order; trim frees only what is behind") {
  stream_log log(8);
  log.append("abcdefghij");  // two blocks and a bit
  log.append("klmnopqrstu");
  CHECK(log.end() == 21);
  std::vector<iovec> spans;
  std::vector<stream_log::pin> pins;
  CHECK(log.gather(3, 21, 1000, 100, spans, pins) == 18);
  CHECK(joined(spans) == "defghijklmnopqrstu");
  CHECK(pins.size() == 3);
  spans.clear();
  pins.clear();
  CHECK(log.gather(3, 21, 6, 100, spans, pins) == 6);
  CHECK(joined(spans) == "defghi");
  spans.clear();
  pins.clear();
  CHECK(log.gather(3, 21, 100, 2, spans, pins) == 13);  // two spans: two blocks' parts
  CHECK(joined(spans) == "defghijklmnop");
  log.trim(17);  // blocks [0,8) and [8,16) are behind
  CHECK(log.begin() == 16);
  CHECK(log.blocks() == 1);
  spans.clear();
  CHECK(log.gather(17, 21, 100, 100, spans, pins) == 4);
  CHECK(joined(spans) == "rstu");
}

TEST_CASE("stream_log: a pinned block outlives its trim; the open block stays for the next append") {
  stream_log log(4);
  log.append("wxyz12");
  std::vector<iovec> spans;
  std::vector<stream_log::pin> pins;
  log.gather(0, 6, 100, 100, spans, pins);
  log.trim(6);  // [0,4) goes, [4,6) is open and stays
  CHECK(log.blocks() == 1);
  CHECK(joined(spans) == "wxyz12");  // still readable through the pins
  log.append("34");
  spans.clear();
  pins.clear();
  CHECK(log.gather(4, 8, 100, 100, spans, pins) == 4);
  CHECK(joined(spans) == "1234");
}

TEST_CASE("outbox: own records go exactly where the drain met them, whatever the write sizes") {
  for (size_t max_bytes : {1, 2, 3, 7, 64, 1000}) {
    for (size_t max_spans : {1, 2, 64}) {
      CAPTURE(max_bytes);
      CAPTURE(max_spans);
      stream_log log(5);
      log.append("xx");  // before the slave joined: not its
      outbox box(log.end());
      box.add_own(log.end(), "<s1>");
      box.add_own(log.end(), "<s2>", "!");  // same position: one entry
      log.append("abcdefgh");
      box.add_own(log.end(), "<s3>");
      log.append("ijk");
      log.append("lmn");
      box.add_own(log.end(), "<ack>");
      CHECK(box.backlog(log.end()) == 14 + 4 + 5 + 4 + 5);
      CHECK(send_all(box, log, max_bytes, max_spans) == "<s1><s2>!abcdefgh<s3>ijklmn<ack>");
      CHECK(box.position() == log.end());
    }
  }
}

TEST_CASE("outbox: a record added after a write took the last one is a new entry; the write's bytes stay") {
  stream_log log;
  outbox box(log.end());
  box.add_own(log.end(), "first");
  std::vector<iovec> spans;
  std::vector<stream_log::pin> pins;
  CHECK(box.gather(log, 100, 64, spans, pins) == 5);
  box.add_own(log.end(), "-second");  // the drain, while the write waits
  CHECK(joined(spans) == "first");
  box.consumed(5);
  CHECK(box.backlog(log.end()) == 7);
  CHECK(send_all(box, log, 100, 64) == "-second");
}

TEST_CASE("outbox: a partial write resumes mid-record and mid-stream") {
  stream_log log(4);
  outbox box(log.end());
  log.append("0123456789");
  box.add_own(log.end(), "ABCDEF");
  log.append("xyz");
  std::vector<iovec> spans;
  std::vector<stream_log::pin> pins;
  CHECK(box.gather(log, 12, 64, spans, pins) == 12);  // 10 stream + 2 of the record
  CHECK(joined(spans) == "0123456789AB");
  box.consumed(12);
  CHECK(box.backlog(log.end()) == 4 + 3);
  CHECK(send_all(box, log, 3, 64) == "CDEFxyz");
}
