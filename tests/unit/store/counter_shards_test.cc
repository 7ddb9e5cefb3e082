// counter_shards: per-thread shards with plain stores for their owners and fetch_add for the
// threads beyond them; the readers' sum must lose no update either way.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "counter_shards.h"

using ithaca::store::counter_shards;

TEST_CASE("counter_shards: more threads than owned shards, racing a reader, lose no update") {
  // 2 x kOwned threads: at least kOwned of them write the shared shard together
  // (fetch_add), the rest their own (load + store). Some add, some take away, on two cells.
  counter_shards shards(3);
  constexpr int kThreads = 2 * static_cast<int>(counter_shards::kOwned);
  constexpr int kAdds = 20000;
  std::atomic<bool> done{false};
  int64_t out_of_range = 0;  // sums seen outside what can have been added
  std::thread reader([&] {
    while (!done.load()) {
      const int64_t s = shards.sum(1);
      if (s < 0 || s > int64_t{kThreads} * kAdds) out_of_range++;
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; t++) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kAdds; i++) {
        shards.add(1, 1);
        shards.add(2, t % 2 ? 3 : -1);
      }
    });
  }
  for (auto& w : writers) w.join();
  done = true;
  reader.join();
  CHECK(out_of_range == 0);
  CHECK(shards.sum(0) == 0);
  CHECK(shards.sum(1) == int64_t{kThreads} * kAdds);
  CHECK(shards.sum(2) == int64_t{kThreads / 2} * kAdds * 3 - int64_t{kThreads / 2} * kAdds);
}

TEST_CASE("counter_shards: a thread keeps its shard, owned ones are distinct") {
  const auto mine = counter_shards::this_thread_shard();
  CHECK(counter_shards::this_thread_shard().index == mine.index);
  CHECK(mine.index <= counter_shards::kOwned);
  CHECK(mine.owned == (mine.index < counter_shards::kOwned));
  std::vector<ithaca::store::thread_shard> seen(8);
  std::vector<std::thread> ts;
  for (int i = 0; i < 8; i++) ts.emplace_back([&seen, i] { seen[i] = counter_shards::this_thread_shard(); });
  for (auto& t : ts) t.join();
  for (int i = 0; i < 8; i++) {
    for (int j = i + 1; j < 8; j++) {
      if (seen[i].owned && seen[j].owned) CHECK(seen[i].index != seen[j].index);
    }
  }
}
