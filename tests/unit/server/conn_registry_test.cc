// conn_registry.h: ids, the open and total counts, `stats conns`' walk, and
// the per-listener counters' stable addresses.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "conn_registry.h"

namespace ithaca::server {

TEST_CASE("connections get increasing ids; current follows adds and removes, total only adds") {
  conn_registry r;
  const uint64_t a = r.add({"tcp:127.0.0.1:1000", "tcp:0.0.0.0:11211", 5});
  const uint64_t b = r.add({"unix:/run/x.sock", "unix:/run/x.sock", 6});
  const uint64_t c = r.add({"tcp:127.0.0.1:1001", "tcp:0.0.0.0:11211", 7});
  CHECK(a < b);
  CHECK(b < c);
  CHECK(r.current() == 3);
  CHECK(r.total() == 3);
  r.remove(b);
  CHECK(r.current() == 2);
  CHECK(r.total() == 3);
  std::vector<std::string> seen;
  r.for_each([&](uint64_t id, const conn_info& info) {
    seen.push_back(std::to_string(id) + " " + info.address + " " + std::to_string(info.since_s));
  });
  CHECK(seen == std::vector<std::string>{std::to_string(a) + " tcp:127.0.0.1:1000 5",
                                         std::to_string(c) + " tcp:127.0.0.1:1001 7"});
  // An id is never given twice, also after a remove.
  const uint64_t d = r.add({"tcp:127.0.0.1:1002", "", 8});
  CHECK(d > c);
  CHECK(r.total() == 4);
}

TEST_CASE("adds and removes from several threads keep the counts right") {
  conn_registry r;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&r, w] {
      std::vector<uint64_t> mine;
      for (int i = 0; i < 1000; ++i) mine.push_back(r.add({"tcp:w" + std::to_string(w), "", 0}));
      for (size_t i = 0; i < mine.size(); i += 2) r.remove(mine[i]);
    });
  }
  for (auto& t : workers) t.join();
  CHECK(r.total() == 4000);
  CHECK(r.current() == 2000);
  size_t listed = 0;
  r.for_each([&](uint64_t, const conn_info&) { ++listed; });
  CHECK(listed == 2000);
}

TEST_CASE("listener counters keep their address as more are made") {
  conn_registry r;
  std::atomic<uint64_t>* first = r.new_listener_counter();
  first->fetch_add(3);
  std::vector<std::atomic<uint64_t>*> more;
  for (int i = 0; i < 1000; ++i) more.push_back(r.new_listener_counter());
  CHECK(first->load() == 3);
  CHECK(more.back()->load() == 0);
  CHECK(more.front() != first);
}

}  // namespace ithaca::server
