// The executor's `watch` events (exec_watch.cc): what a get, a store and a
// delete log for a watcher of their kind, with the connection's id as cfd.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "exec_harness.h"
#include "watch_events.h"
#include "watch_hub.h"

namespace ithaca::cache {

using test::connection;
namespace watch = stats::watch;

namespace {

// The lines of `slot` so far, without their "ts=... gid=... " stamp.
std::vector<std::string> drain(int slot) {
  std::vector<std::string> out;
  watch::hub& h = watch::hub::instance();
  std::string_view rec;
  while (h.queue(slot).try_peek(rec)) {
    std::string text(rec.substr(sizeof(watch::record_header)));
    h.queue(slot).pop();
    const size_t gid = text.find(" gid=");
    REQUIRE(gid != std::string::npos);
    text.erase(0, text.find(' ', gid + 1) + 1);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    out.push_back(std::move(text));
  }
  return out;
}

bool has(const std::string& line, const std::string& part) { return line.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("nothing is logged while nobody watches") {
  connection c;
  CHECK_FALSE(watch::watching(watch::kFetchers | watch::kMutations | watch::kDeletions));
  CHECK(c.send("set k 0 0 1\r\nx\r\nget k\r\ndelete k\r\n") == "STORED\r\nVALUE k 0 1\r\nx\r\nEND\r\nDELETED\r\n");
}

TEST_CASE("gets, stores and deletes are logged to their watchers, with the connection as cfd") {
  connection c;
  c.ctx().conn_id = 17;
  watch::hub& h = watch::hub::instance();
  const int fetchers = h.add(watch::kFetchers);
  const int changes = h.add(watch::kMutations | watch::kDeletions);
  REQUIRE(fetchers >= 0);
  REQUIRE(changes >= 0);
  CHECK(c.send("set k 0 0 3\r\nabc\r\n") == "STORED\r\n");
  CHECK(c.send("get k nope\r\n") == "VALUE k 0 3\r\nabc\r\nEND\r\n");
  CHECK(c.send("delete k\r\n") == "DELETED\r\n");
  const unsigned cls = c.store().classes().item_class(1, 0, 3);
  const std::string clsid = " clsid=" + std::to_string(cls);
  const auto got = drain(fetchers);
  const auto changed = drain(changes);
  h.remove(fetchers);
  h.remove(changes);
  // The set's and the delete's own lookups are item_gets too, as memcached's are.
  REQUIRE(got.size() == 4);
  CHECK(has(got[0], "type=item_get key=k status=not_found"));
  CHECK(has(got[1], "type=item_get key=k status=found" + clsid + " cfd=17 size=3"));
  CHECK(has(got[2], "type=item_get key=nope status=not_found clsid=0 cfd=17"));
  CHECK(has(got[3], "type=item_get key=k status=found"));
  REQUIRE(changed.size() == 2);
  CHECK(has(changed[0], "type=item_store key=k status=stored cmd=set"));
  CHECK(has(changed[0], clsid + " cfd=17 size=3"));
  CHECK(has(changed[1], "type=deleted key=k cmd=delete" + clsid + " size=3"));
}

}  // namespace ithaca::cache
