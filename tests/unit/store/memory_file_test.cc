// memcached -e FILE (memory_file.h, store_memory_file.cc): a store saved by a graceful
// stop serves its items again from the same file; anything else is a clean start.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

namespace {

// A memory file in a directory of its own, removed with its meta at the end.
struct memory_file_dir {
  std::string dir;
  memory_file_dir() {
    char tmpl[] = "/tmp/ithaca-memfile-XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~memory_file_dir() {
    std::remove(file().c_str());
    std::remove((file() + ".meta").c_str());
    rmdir(dir.c_str());
  }
  std::string file() const { return dir + "/cache"; }
};

store_config memory_file_config(const memory_file_dir& d) {
  store_config c = small_config();
  c.memory_limit = 8 << 20;
  c.memory_file = d.file();
  return c;
}

// 200 items: i % 3 == 0 never expire, the others in 100 + i seconds; flags i.
void memory_file_fill(store& s, const store_now& now) {
  for (int i = 0; i < 200; ++i)
    REQUIRE(put(s, key_n("k", i), "value-" + std::to_string(i), now, i % 3 ? 100 + i : 0, static_cast<uint32_t>(i)) ==
            store_status::Stored);
}

}  // namespace

TEST_CASE("memory file: a saved store serves every item again, with flags, CAS and remaining TTL") {
  memory_file_dir d;
  const auto before = at_sec(10);
  uint64_t cas[200];
  {
    store s(memory_file_config(d));
    CHECK(s.region().file_backed());
    const auto r = s.restore_memory_file(before);
    CHECK(r.used);
    CHECK(r.why == "a new file");
    memory_file_fill(s, before);
    for (int i = 0; i < 200; ++i) {
      get_result g;
      s.get(key_n("k", i), before, {}, g);
      cas[i] = g.cas;
    }
    s.remove("k7", before);  // gone before the stop: stays gone
    std::string why;
    REQUIRE(s.save_memory_file(before, why));
  }
  // The next process: its server time starts at 0 again, 30 s of wall time later.
  const auto after = at_sec(0, 1'700'000'000 + 10 + 30);
  store s(memory_file_config(d));
  const auto r = s.restore_memory_file(after);
  CHECK(r.why.empty());
  CHECK(r.restored == 199);
  CHECK(s.stats().curr_items == 199);
  CHECK(s.mem_used() > 0);
  for (int i = 0; i < 200; ++i) {
    get_options peek;
    peek.bump = false;
    get_result g;
    s.get(key_n("k", i), after, peek, g);
    if (i == 7) {
      CHECK(g.status == get_status::Miss);
      continue;
    }
    REQUIRE(g.status == get_status::Hit);
    CHECK(g.value == "value-" + std::to_string(i));
    CHECK(g.flags == static_cast<uint32_t>(i));
    CHECK(g.cas == cas[i]);
    CHECK(g.ttl == (i % 3 ? 100 + i - 30 : -1));
  }
  // New stores get CAS values above every restored one, and the region takes them.
  uint64_t next = 0;
  REQUIRE(put(s, "new", "v", after, 0, 0, store_mode::Set, {}, &next) == store_status::Stored);
  CHECK(next > cas[199]);
}

TEST_CASE("memory file: expired by the wall clock across the stop, or flushed before it: not served") {
  memory_file_dir d;
  {
    store s(memory_file_config(d));
    s.restore_memory_file(at_sec(10));
    memory_file_fill(s, at_sec(10));
    put(s, "flushed", "x", at_sec(10));
    std::string why;
    REQUIRE(s.save_memory_file(at_sec(10), why));
  }
  {
    store s(memory_file_config(d));
    // 150 s later: items with a TTL of 100 + i for i <= 50 have expired (i = 50 this second).
    const auto r = s.restore_memory_file(at_sec(0, 1'700'000'000 + 160));
    CHECK(r.why.empty());
    int expired = 0;
    for (int i = 0; i <= 50; ++i) expired += i % 3 != 0;
    CHECK(r.dropped == static_cast<uint64_t>(expired));
    CHECK(fetch(s, "k1", at_sec(0, 1'700'000'000 + 160)) == "<miss>");
    CHECK(fetch(s, "k0", at_sec(0, 1'700'000'000 + 160)) == "value-0");
    s.flush_all(at_sec(1, 1'700'000'000 + 160));
    std::string why;
    REQUIRE(s.save_memory_file(at_sec(1, 1'700'000'000 + 160), why));
  }
  store s(memory_file_config(d));
  const auto r = s.restore_memory_file(at_sec(0, 1'700'000'000 + 170));
  CHECK(r.why.empty());
  CHECK(r.restored == 0);  // everything was flushed before the stop
  CHECK(fetch(s, "k0", at_sec(0, 1'700'000'000 + 170)) == "<miss>");
}

TEST_CASE("memory file: not saved (a crash), other settings, or a changed byte: a clean start") {
  memory_file_dir d;
  {
    store s(memory_file_config(d));
    s.restore_memory_file(at_sec(10));
    memory_file_fill(s, at_sec(10));
    // No save: what a SIGKILL leaves.
  }
  {
    store s(memory_file_config(d));
    const auto r = s.restore_memory_file(at_sec(10));
    CHECK(r.why.find("not stopped cleanly") != std::string::npos);
    CHECK(r.restored == 0);
    CHECK(s.stats().curr_items == 0);
    CHECK(fetch(s, "k3", at_sec(10)) == "<miss>");
    memory_file_fill(s, at_sec(10));
    std::string why;
    REQUIRE(s.save_memory_file(at_sec(10), why));
  }
  {
    store_config c = memory_file_config(d);
    c.memory_limit = 16 << 20;  // another -m
    store s(c);
    const auto r = s.restore_memory_file(at_sec(10));
    CHECK(r.why.find("memory limit") != std::string::npos);
    memory_file_fill(s, at_sec(10));
    std::string why;
    REQUIRE(s.save_memory_file(at_sec(10), why));
  }
  {
    store_config c = memory_file_config(d);
    c.memory_limit = 16 << 20;
    store s(c);
    const auto r = s.restore_memory_file(at_sec(10));
    REQUIRE(r.why.empty());
    CHECK(r.restored == 200);
    std::string why;
    REQUIRE(s.save_memory_file(at_sec(10), why));
  }
  {
    // One byte of one value changed in the file while no process held it.
    std::fstream f(d.file(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(48 + 8 + 3);
    f.put('!');
  }
  store_config c = memory_file_config(d);
  c.memory_limit = 16 << 20;
  store s(c);
  const auto r = s.restore_memory_file(at_sec(10));
  CHECK(r.why.find("checksum") != std::string::npos);
  CHECK(s.stats().curr_items == 0);
}
