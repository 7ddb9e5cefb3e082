#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "watch_events.h"
#include "watch_hub.h"

using namespace ithaca::stats::watch;

namespace {

struct line {
  record_header hdr{};
  std::string text;
};

// Pops the slot's next record; false when the queue is empty.
bool pop_line(hub& h, int slot, line& out) {
  std::string_view rec;
  if (!h.queue(slot).try_peek(rec)) return false;
  REQUIRE(rec.size() > sizeof(record_header));
  std::memcpy(&out.hdr, rec.data(), sizeof out.hdr);
  out.text.assign(rec.substr(sizeof out.hdr));
  h.queue(slot).pop();
  return true;
}

// "ts=<digits>.<digits> gid=<digits> " then `rest` (std::regex would do, but
// GCC 12 warns inside <regex> under the sanitizers).
bool stamped(std::string_view text, std::string_view rest) {
  auto digits = [&](std::string_view prefix) {
    if (!text.starts_with(prefix)) return false;
    text.remove_prefix(prefix.size());
    std::size_t n = 0;
    while (n < text.size() && text[n] >= '0' && text[n] <= '9') ++n;
    text.remove_prefix(n);
    return n > 0;
  };
  return digits("ts=") && digits(".") && digits(" gid=") && text.starts_with(" ") && text.substr(1) == rest;
}

}  // namespace

TEST_CASE("the mask follows the watchers, and a line reaches only watchers of its kind") {
  hub h;
  CHECK(h.mask() == 0);
  h.emit(kFetchers, "type=item_get key=a");  // nobody watches: nothing counted
  CHECK(h.written() == 0);
  const int f = h.add(kFetchers);
  const int m = h.add(kMutations | kDeletions);
  REQUIRE(f >= 0);
  REQUIRE(m >= 0);
  CHECK(h.watchers() == 2);
  CHECK(h.mask() == (kFetchers | kMutations | kDeletions));
  CHECK(h.watching(kDeletions));
  CHECK_FALSE(h.watching(kEvictions));

  h.emit(kFetchers, "type=item_get key=a");
  h.emit(kMutations, "type=item_store key=b");
  line l;
  REQUIRE(pop_line(h, f, l));
  CHECK(l.hdr.kind == kFetchers);
  CHECK(l.hdr.gid >= h.min_gid(f));
  CHECK(stamped(l.text, "type=item_get key=a\n"));
  CHECK_FALSE(stamped(l.text, "type=item_get key=b\n"));
  CHECK_FALSE(pop_line(h, f, l));
  REQUIRE(pop_line(h, m, l));
  CHECK(l.text.find("type=item_store key=b\n") != std::string::npos);
  CHECK_FALSE(pop_line(h, m, l));

  h.remove(f);
  CHECK(h.mask() == (kMutations | kDeletions));
  h.remove(m);
  h.remove(m);  // twice is harmless
  CHECK(h.mask() == 0);
  CHECK(h.watchers() == 0);
}

TEST_CASE("a full watcher drops lines, counts them, and never blocks the producer") {
  hub h;
  const int s = h.add(kFetchers);
  REQUIRE(s >= 0);
  const std::string body = "type=item_get key=" + std::string(200, 'k');
  constexpr int kLines = 2000;  // ~460 KiB of lines into a 64 KiB queue
  for (int i = 0; i < kLines; ++i) h.emit(kFetchers, body);
  int delivered = 0;
  line l;
  while (pop_line(h, s, l)) ++delivered;
  CHECK(delivered > 0);
  CHECK(delivered < kLines);
  CHECK(h.written() == static_cast<uint64_t>(kLines));
  CHECK(h.skipped() == static_cast<uint64_t>(kLines - delivered));
  CHECK(h.take_skipped(s) == static_cast<uint64_t>(kLines - delivered));
  CHECK(h.take_skipped(s) == 0);
  // Room again: lines flow.
  h.emit(kFetchers, body);
  CHECK(pop_line(h, s, l));
  h.remove(s);
}

TEST_CASE("a slot's next watcher ignores lines stamped before it registered") {
  hub h;
  const int first = h.add(kFetchers);
  h.emit(kFetchers, "type=item_get key=old");
  h.remove(first);  // leaves its line in the slot's queue
  const int next = h.add(kMutations);
  CHECK(next == first);  // the free slot is reused
  line l;
  REQUIRE(pop_line(h, next, l));
  CHECK(l.hdr.gid < h.min_gid(next));
  h.emit(kMutations, "type=item_store key=new");
  REQUIRE(pop_line(h, next, l));
  CHECK(l.hdr.gid > h.min_gid(next));
  h.remove(next);
}

TEST_CASE("at most kMaxWatchers watch at once") {
  hub h;
  std::vector<int> slots;
  for (std::size_t i = 0; i < kMaxWatchers; ++i) {
    const int s = h.add(kFetchers);
    REQUIRE(s >= 0);
    slots.push_back(s);
  }
  CHECK(h.add(kFetchers) == -1);
  h.remove(slots.back());
  CHECK(h.add(kFetchers) == slots.back());
}

TEST_CASE("event lines carry memcached's fields in its order") {
  hub& h = hub::instance();
  const int s = h.add(kFetchers | kMutations | kDeletions | kEvictions | kConnEvents);
  REQUIRE(s >= 0);
  item_get("a b", true, 1, 7, 3);
  item_get("miss", false, 0, 7, 0);
  item_store("k", "stored", "set", 100, 2, 7, 4);
  deleted("k", "md", 2, 4);
  eviction("e", false, -1, 5, 3, 11000);
  conn_new("tcp:127.0.0.1:4242", 9);
  conn_close("tcp:[::1]:4243", "idle_timeout", 9);
  conn_close("unix:/tmp/s", "normal", 10);
  const char* want[] = {
      "type=item_get key=a%20b status=found clsid=1 cfd=7 size=3",
      "type=item_get key=miss status=not_found clsid=0 cfd=7 size=0",
      "type=item_store key=k status=stored cmd=set ttl=100 clsid=2 cfd=7 size=4",
      "type=deleted key=k cmd=md clsid=2 size=4",
      "type=eviction key=e fetch=no ttl=-1 la=5 clsid=3 size=11000",
      "type=conn_new rip=127.0.0.1 rport=4242 transport=tcp cfd=9",
      "type=conn_close rip=::1 rport=4243 transport=tcp reason=idle_timeout cfd=9",
      "type=conn_close rip=unix rport=0 transport=local reason=normal cfd=10",
  };
  uint64_t last_gid = 0;
  for (const char* w : want) {
    line l;
    REQUIRE(pop_line(h, s, l));
    CHECK(l.hdr.gid > last_gid);
    last_gid = l.hdr.gid;
    const std::string tail = std::string(" gid=") + std::to_string(l.hdr.gid) + " " + w + "\n";
    CHECK(l.text.starts_with("ts="));
    CHECK(l.text.ends_with(tail));
  }
  h.remove(s);
}

TEST_CASE("keys are URI-encoded as memcached does") {
  std::string out;
  append_uri_encoded(out, "Az09-._~ #%/\x01\xff");
  CHECK(out == "Az09-._~%20%23%25%2F%01%FF");
}
