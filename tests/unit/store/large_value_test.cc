#include <doctest/doctest.h>

#include <cstdlib>
#include <dirent.h>
#include <memory>
#include <string>
#include <unistd.h>

#include "helpers.h"
#include "large_arena.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/ithaca-store-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~temp_dir() { rmdir(path.c_str()); }
  int entries() const {
    int n = 0;
    DIR* d = opendir(path.c_str());
    while (dirent* e = readdir(d)) n += std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..";
    closedir(d);
    return n;
  }
  // Descriptors of this process open on files in the directory (deleted or O_TMPFILE).
  int open_files() const {
    int n = 0;
    DIR* d = opendir("/proc/self/fd");
    while (dirent* e = readdir(d)) {
      char buf[512];
      std::string link = std::string("/proc/self/fd/") + e->d_name;
      ssize_t len = readlink(link.c_str(), buf, sizeof buf - 1);
      if (len > 0 && std::string_view(buf, static_cast<size_t>(len)).starts_with(path + "/")) ++n;
    }
    closedir(d);
    return n;
  }
};

std::string key_of(int i) {
  std::string key = "k";
  key += std::to_string(i);  // not "k" + ...: GCC 12 warns (-Wrestrict) on the inlined concat
  return key;
}

std::string pattern(size_t n, char seed) {
  std::string s(n, ' ');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + static_cast<char>(i % 23));
  return s;
}

}  // namespace

TEST_CASE("large values live in one unlinked temp file and read back") {
  temp_dir dir;
  store_config c = small_config();
  c.large_value_threshold = 1000;
  c.temp_dir = dir.path;
  store s(c);
  auto now = at_sec(1);
  CHECK(dir.open_files() == 1);  // the arena's file, whatever is stored
  const std::string big = pattern(50000, 'a');
  CHECK(put(s, "big", big, now, 0, 9) == store_status::Stored);
  CHECK(dir.entries() == 0);
  CHECK(dir.open_files() == 1);
  CHECK(s.stats().large_values == 1);
  CHECK(s.large_value_disk_used() == large_arena::rounded(big.size()));
  CHECK(s.mem_used() < 1000);  // only the header counts toward memory

  get_result r;
  s.get("big", now, {}, r);
  REQUIRE(r.status == get_status::Hit);
  REQUIRE(r.large);
  CHECK(r.flags == 9);
  CHECK(r.value.empty());
  CHECK(r.value_size == big.size());
  CHECK(r.large->size() == big.size());
  char part[100];
  CHECK(r.large->read(1234, part, sizeof part) == 100);
  CHECK(std::string_view(part, 100) == std::string_view(big).substr(1234, 100));
  CHECK(r.large->read(big.size() - 10, part, sizeof part) == 10);  // never past the value
  std::string all;
  CHECK(r.large.read_all(all));
  CHECK(all == big);

  // Replaced by another large value: the old extent stays readable through the handle,
  // and is not reused while it is held.
  const std::string big2 = pattern(3000, 'A');
  put(s, "big", big2, now);
  CHECK(s.large_value_disk_used() == large_arena::rounded(big.size()) + large_arena::rounded(big2.size()));
  put(s, "other", pattern(50000, 'z'), now);
  CHECK(r.large.read_all(all));
  CHECK(all == big);
  r.large.reset();
  CHECK(s.large_value_disk_used() == large_arena::rounded(big2.size()) + large_arena::rounded(50000));
  CHECK(fetch(s, "big", now) == big2);
  CHECK(s.remove("other", now) == remove_status::Deleted);

  // Append onto a large value.
  CHECK(put(s, "big", "tail", now, 0, 0, store_mode::Append) == store_status::Stored);
  CHECK(fetch(s, "big", now) == big2 + "tail");

  // Replaced by a small value, then a large again, then removed.
  put(s, "big", "small", now);
  CHECK(s.large_value_disk_used() == 0);
  CHECK(fetch(s, "big", now) == "small");
  put(s, "big", big, now);
  CHECK(s.remove("big", now) == remove_status::Deleted);
  CHECK(s.large_value_disk_used() == 0);
  CHECK(dir.open_files() == 1);
  CHECK(dir.entries() == 0);
  CHECK(s.mem_used() == 0);
}

TEST_CASE("large values stay within their disk budget: the coldest are evicted") {
  temp_dir dir;
  store_config c = small_config();
  c.large_value_threshold = 1000;
  c.large_value_disk_limit = 1 << 20;
  c.temp_dir = dir.path;
  store s(c);
  auto now = at_sec(1);
  const size_t n = 100000;
  get_result held;
  for (int i = 0; i < 60; ++i) {
    const std::string key = key_of(i);
    REQUIRE(put(s, key, pattern(n, static_cast<char>('a' + i % 20)), now) == store_status::Stored);
    CHECK(s.large_value_disk_used() <= c.large_value_disk_limit);
    if (i == 0) s.get("k0", now, {}, held);  // a reader keeps k0's extent through what follows
    if (i % 3 == 0) fetch(s, key, now);      // recently read: kept in preference
  }
  CHECK(s.stats().evictions > 0);
  CHECK(s.stats().large_value_inline_evictions == s.stats().evictions);  // by the stores
  CHECK(s.stats().large_value_gc_evictions == 0);
  CHECK(dir.open_files() == 1);
  // The held value was evicted but its bytes were not reused.
  std::string all;
  REQUIRE(held.large);
  CHECK(held.large.read_all(all));
  CHECK(all == pattern(n, 'a'));
  held.large.reset();
  // What survived reads back intact.
  int alive = 0;
  for (int i = 0; i < 60; ++i) {
    const std::string key = key_of(i);
    get_result r;
    s.get(key, now, {}, r);
    if (r.status != get_status::Hit) continue;
    ++alive;
    CHECK(r.large.read_all(all));
    CHECK(all == pattern(n, static_cast<char>('a' + i % 20)));
  }
  CHECK(alive >= 5);
  // A lower budget is honoured by the next GC sweep.
  s.set_large_value_disk_limit(300000);
  gc_stats g;
  s.gc_sweep(0, s.bucket_count(), now, g);
  CHECK(s.large_value_disk_used() <= 300000);
}

TEST_CASE("large value: a bad temp dir fails the store cleanly") {
  store_config c = small_config();
  c.large_value_threshold = 10;
  c.temp_dir = "/nonexistent/ithaca";
  store s(c);
  CHECK_FALSE(s.large_values_available());
  CHECK(put(s, "k", std::string(100, 'x'), at_sec(1)) == store_status::OutOfMemory);
  CHECK(s.stats().large_value_errors == 1);
  CHECK(put(s, "k", "tiny", at_sec(1)) == store_status::Stored);
  CHECK(s.mem_used() > 0);
}

TEST_CASE("large values: stores made in turn over one caller's arena share its file") {
  temp_dir dir;
  std::shared_ptr<large_arena> arena = large_arena::open(dir.path, 1 << 20);
  REQUIRE(arena);
  store_config c = small_config();
  c.large_value_threshold = 1000;
  c.large_value_disk_limit = 64 << 10;
  auto now = at_sec(1);
  for (int round = 0; round < 3; ++round) {
    store s(c, arena);
    CHECK(arena->limit() == c.large_value_disk_limit);  // the store's budget applies
    CHECK(put(s, "a", pattern(5000, 'a'), now) == store_status::Stored);
    CHECK(put(s, "b", pattern(9000, 'b'), now) == store_status::Stored);
    CHECK(fetch(s, "b", now) == pattern(9000, 'b'));
    CHECK(arena->used() == 5 * large_arena::kPage);  // 2 + 3 extents
    CHECK(dir.open_files() == 1);                    // one file for every store
  }
  // Each store gave its extents back as it went: the file is empty again.
  CHECK(arena->used() == 0);
  CHECK(arena->file_end() == 0);
  CHECK(dir.entries() == 0);
}

TEST_CASE("large values: the GC sweep brings disk usage under the low watermark, no store needed") {
  temp_dir dir;
  store_config c = small_config();
  c.large_value_threshold = 1000;
  c.large_value_disk_limit = 256 * large_arena::kPage;  // 1 MiB: high 90%, low 80%
  c.temp_dir = dir.path;
  store s(c);
  auto now = at_sec(1);
  // 240 one-extent values: 93.75% of the budget, above the high watermark but with room,
  // so no store had to evict.
  for (int i = 0; i < 240; ++i)
    REQUIRE(put(s, key_of(i), pattern(4000, static_cast<char>('a' + i % 20)), now) == store_status::Stored);
  CHECK(s.large_value_disk_used() == 240 * large_arena::kPage);
  CHECK(s.stats().large_value_inline_evictions == 0);
  for (int i = 0; i < 40; ++i) fetch(s, key_of(i), now);  // read since they were stored: the coldest are the others
  // A pass evicts from the coldest score down until usage is under 80%, spread over the
  // sweep's chunks as the cron runs it.
  gc_stats g;
  for (uint64_t next = 0; (next = s.gc_sweep(next, 64, now, g)) != 0;) {}
  const uint64_t low = c.large_value_disk_limit / 100 * 80;
  CHECK(s.large_value_disk_used() <= low);
  CHECK(s.large_value_disk_used() >= low - 16 * large_arena::kPage);  // not far under it
  CHECK(g.large_evictions > 0);
  const store_stats_snapshot st = s.stats();
  CHECK(st.large_value_gc_evictions == g.large_evictions);
  CHECK(st.evictions == g.large_evictions);
  CHECK(st.large_value_inline_evictions == 0);
  CHECK(st.curr_items == 240 - g.large_evictions);
  for (int i = 0; i < 40; ++i) CHECK(fetch(s, key_of(i), now) == pattern(4000, static_cast<char>('a' + i % 20)));
  // Under the high watermark again: the next passes leave everything alone.
  gc_stats quiet;
  s.gc_sweep(0, s.bucket_count(), now, quiet);
  s.gc_sweep(0, s.bucket_count(), now, quiet);
  CHECK(quiet.evictions == 0);
}
