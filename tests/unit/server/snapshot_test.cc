// snapshot.h: one writer publishes whole values, readers pick a new one up
// only when the generation moved, and an old value lives while read.
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "snapshot.h"

namespace ithaca::server {

namespace {
std::shared_ptr<const std::string> value(std::string s) { return std::make_shared<const std::string>(std::move(s)); }
}  // namespace

TEST_CASE("a reader keeps its snapshot until it refreshes after a publish") {
  snapshot_cell<std::string> cell(value("one"));
  const uint64_t g1 = cell.generation();
  snapshot_reader<std::string> reader(cell);
  CHECK(reader.get() == "one");
  CHECK_FALSE(reader.refresh());  // nothing published: no change
  cell.publish(value("two"));
  CHECK(cell.generation() == g1 + 1);
  CHECK(reader.get() == "one");  // a batch in progress keeps its value
  CHECK(reader.refresh());
  CHECK(reader.get() == "two");
  CHECK(reader->size() == 3);
  CHECK_FALSE(reader.refresh());
  // Two publishes between refreshes: the reader lands on the last.
  cell.publish(value("three"));
  cell.publish(value("four"));
  CHECK(reader.refresh());
  CHECK(reader.get() == "four");
}

TEST_CASE("load gives the current value and its generation") {
  snapshot_cell<std::string> cell(value("a"));
  uint64_t g = 0;
  CHECK(*cell.load(&g) == "a");
  CHECK(g == cell.generation());
  cell.publish(value("b"));
  uint64_t g2 = 0;
  CHECK(*cell.load(&g2) == "b");
  CHECK(g2 == g + 1);
}

TEST_CASE("a replaced value lives until its last reader lets go of it") {
  auto first = value("first");
  std::weak_ptr<const std::string> watch = first;
  snapshot_cell<std::string> cell(std::move(first));
  auto reader = std::make_unique<snapshot_reader<std::string>>(cell);
  cell.publish(value("second"));
  CHECK_FALSE(watch.expired());  // the reader still holds it
  CHECK(reader->get() == "first");
  reader->refresh();
  CHECK(watch.expired());  // freed by the reader's refresh, not by the publish
}

TEST_CASE("readers on other threads see only whole published values, the last one in the end") {
  struct pair_value {
    int a, b;  // always published equal
  };
  snapshot_cell<pair_value> cell(std::make_shared<const pair_value>(pair_value{0, 0}));
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      snapshot_reader<pair_value> reader(cell);
      while (!stop.load()) {
        reader.refresh();
        if (reader->a != reader->b) torn.fetch_add(1);
      }
      reader.refresh();
      if (reader->a != 5000) torn.fetch_add(1000);
    });
  }
  for (int i = 1; i <= 5000; ++i) cell.publish(std::make_shared<const pair_value>(pair_value{i, i}));
  stop = true;
  for (auto& t : readers) t.join();
  CHECK(torn.load() == 0);
}

}  // namespace ithaca::server
