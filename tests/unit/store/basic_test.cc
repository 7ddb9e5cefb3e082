#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "helpers.h"

using namespace ithaca::store;
using namespace ithaca::store::test;

TEST_CASE("set then get returns value, flags and a cas") {
  store s(small_config());
  auto now = at_sec(10);
  uint64_t cas = 0;
  CHECK(put(s, "k", "hello", now, 0, 42, store_mode::Set, {}, &cas) == store_status::Stored);
  CHECK(cas != 0);
  get_result r;
  s.get("k", now, {}, r);
  CHECK(r.status == get_status::Hit);
  CHECK(r.value == "hello");
  CHECK(r.flags == 42);
  CHECK(r.cas == cas);
  CHECK(r.ttl == -1);
  auto st = s.stats();
  CHECK(st.curr_items == 1);
  CHECK(st.total_items == 1);
  CHECK(st.get_hits == 1);
  s.get("nope", now, {}, r);
  CHECK(r.status == get_status::Miss);
  CHECK(s.stats().get_misses == 1);
}

TEST_CASE("set replaces and the cas grows") {
  store s(small_config());
  auto now = at_sec(1);
  uint64_t c1 = 0, c2 = 0;
  put(s, "k", "a", now, 0, 0, store_mode::Set, {}, &c1);
  put(s, "k", "bb", now, 0, 0, store_mode::Set, {}, &c2);
  CHECK(c2 > c1);
  CHECK(fetch(s, "k", now) == "bb");
  CHECK(s.stats().curr_items == 1);
}

TEST_CASE("empty value and want_value=false") {
  store s(small_config());
  auto now = at_sec(1);
  CHECK(put(s, "k", "", now) == store_status::Stored);
  CHECK(fetch(s, "k", now) == "");
  put(s, "k", "xyz", now);
  get_options o;
  o.want_value = false;
  get_result r;
  s.get("k", now, o, r);
  CHECK(r.status == get_status::Hit);
  CHECK(r.value.empty());
}

TEST_CASE("add and replace") {
  store s(small_config());
  auto now = at_sec(1);
  CHECK(put(s, "k", "1", now, 0, 0, store_mode::Replace) == store_status::NotStored);
  CHECK(put(s, "k", "1", now, 0, 0, store_mode::Add) == store_status::Stored);
  CHECK(put(s, "k", "2", now, 0, 0, store_mode::Add) == store_status::NotStored);
  CHECK(fetch(s, "k", now) == "1");
  CHECK(put(s, "k", "3", now, 0, 0, store_mode::Replace) == store_status::Stored);
  CHECK(fetch(s, "k", now) == "3");
}

TEST_CASE("append and prepend keep flags and exptime") {
  store s(small_config());
  auto now = at_sec(1);
  CHECK(put(s, "k", "x", now, 0, 0, store_mode::Append) == store_status::NotStored);
  CHECK(put(s, "k", "x", now, 0, 0, store_mode::Prepend) == store_status::NotStored);
  put(s, "k", "mid", now, 100, 7);
  CHECK(put(s, "k", "-end", now, 0, 99, store_mode::Append) == store_status::Stored);
  CHECK(put(s, "k", "start-", now, 0, 99, store_mode::Prepend) == store_status::Stored);
  get_result r;
  s.get("k", now, {}, r);
  CHECK(r.value == "start-mid-end");
  CHECK(r.flags == 7);
  CHECK(r.ttl == 100);
  store_options o;
  o.compare_cas = r.cas + 1;
  CHECK(put(s, "k", "z", now, 0, 0, store_mode::Append, o) == store_status::Exists);
  o.compare_cas = r.cas;
  CHECK(put(s, "k", "z", now, 0, 0, store_mode::Append, o) == store_status::Stored);
  CHECK(fetch(s, "k", now) == "start-mid-endz");
}

TEST_CASE("cas: NotFound, Exists, Stored and stats") {
  store s(small_config());
  auto now = at_sec(1);
  store_options o;
  o.compare_cas = 5;
  CHECK(put(s, "k", "v", now, 0, 0, store_mode::Cas, o) == store_status::NotFound);
  uint64_t cas = 0;
  put(s, "k", "v", now, 0, 0, store_mode::Set, {}, &cas);
  o.compare_cas = cas + 100;
  CHECK(put(s, "k", "w", now, 0, 0, store_mode::Cas, o) == store_status::Exists);
  o.compare_cas = cas;
  CHECK(put(s, "k", "w", now, 0, 0, store_mode::Cas, o) == store_status::Stored);
  CHECK(put(s, "k", "x", now, 0, 0, store_mode::Cas, o) == store_status::Exists);
  CHECK(fetch(s, "k", now) == "w");
  auto st = s.stats();
  CHECK(st.cas_misses == 1);
  CHECK(st.cas_badval == 2);
  CHECK(st.cas_hits == 1);
}

TEST_CASE("meta set with compare cas and explicit cas") {
  store s(small_config());
  auto now = at_sec(1);
  store_options o;
  o.explicit_cas = 777;
  uint64_t cas = 0;
  CHECK(put(s, "k", "v", now, 0, 0, store_mode::Set, o, &cas) == store_status::Stored);
  CHECK(cas == 777);
  store_options c;
  c.compare_cas = 776;
  CHECK(put(s, "k", "w", now, 0, 0, store_mode::Set, c) == store_status::Exists);
  c.compare_cas = 777;
  CHECK(put(s, "k", "w", now, 0, 0, store_mode::Set, c) == store_status::Stored);
  CHECK(put(s, "other", "w", now, 0, 0, store_mode::Set, c) == store_status::NotFound);
}

TEST_CASE("cas race: two stores with the same cas, exactly one wins") {
  for (int round = 0; round < 50; ++round) {
    store s(small_config());
    auto now = at_sec(1);
    uint64_t cas = 0;
    put(s, "k", "0", now, 0, 0, store_mode::Set, {}, &cas);
    std::atomic<int> wins{0}, exists{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 2; ++t) {
      ts.emplace_back([&, t] {
        store_options o;
        o.compare_cas = cas;
        std::string v = std::to_string(t);
        auto st = put(s, "k", v, now, 0, 0, store_mode::Cas, o);
        if (st == store_status::Stored)
          ++wins;
        else if (st == store_status::Exists)
          ++exists;
      });
    }
    for (auto& t : ts) t.join();
    CHECK(wins == 1);
    CHECK(exists == 1);
  }
}

TEST_CASE("remove: hit, miss, cas mismatch") {
  store s(small_config());
  auto now = at_sec(1);
  CHECK(s.remove("k", now) == remove_status::NotFound);
  uint64_t cas = 0;
  put(s, "k", "v", now, 0, 0, store_mode::Set, {}, &cas);
  remove_options o;
  o.compare_cas = cas + 1;
  CHECK(s.remove("k", now, o) == remove_status::Exists);
  o.compare_cas = cas;
  CHECK(s.remove("k", now, o) == remove_status::Deleted);
  CHECK(fetch(s, "k", now) == "<miss>");
  auto st = s.stats();
  CHECK(st.delete_hits == 1);
  CHECK(st.delete_misses == 1);
  CHECK(st.curr_items == 0);
}

TEST_CASE("touch") {
  store s(small_config());
  auto now = at_sec(1);
  CHECK(s.touch("k", 10, now) == touch_status::NotFound);
  put(s, "k", "v", now, 5);
  CHECK(s.touch("k", 100, now) == touch_status::Touched);
  CHECK(fetch(s, "k", at_sec(50)) == "v");
  CHECK(fetch(s, "k", at_sec(101)) == "<miss>");
  auto st = s.stats();
  CHECK(st.touch_hits == 1);
  CHECK(st.touch_misses == 1);
}

TEST_CASE("gat updates exptime and returns the item") {
  store s(small_config());
  put(s, "k", "v", at_sec(1), 5);
  get_options o;
  o.touch = true;
  o.exptime = 60;
  get_result r;
  s.get("k", at_sec(2), o, r);
  CHECK(r.status == get_status::Hit);
  CHECK(r.ttl == 60);
  CHECK(fetch(s, "k", at_sec(30)) == "v");
}

TEST_CASE("bad keys and too large items") {
  store_config c = small_config();
  c.item_size_max = 1024;
  store s(c);
  auto now = at_sec(1);
  CHECK(put(s, "", "v", now) == store_status::BadKey);
  CHECK(put(s, std::string(251, 'k'), "v", now) == store_status::BadKey);
  CHECK(put(s, std::string(250, 'k'), "v", now) == store_status::Stored);
  get_result r;
  s.get("", now, {}, r);
  CHECK(r.status == get_status::BadKey);
  CHECK(s.remove(std::string(300, 'x'), now) == remove_status::BadKey);
  CHECK(put(s, "big", std::string(2000, 'v'), now) == store_status::TooLarge);
  CHECK(put(s, "ok", std::string(900, 'v'), now) == store_status::Stored);
}

TEST_CASE("flush_all without delay invalidates everything stored before") {
  store s(small_config());
  auto now = at_sec(5);
  put(s, "a", "1", now);
  put(s, "b", "2", now);
  s.flush_all(now, 0);
  CHECK(fetch(s, "a", now) == "<miss>");
  CHECK(s.stats().get_flushed == 1);
  put(s, "c", "3", now);  // same second, after the flush: visible
  CHECK(fetch(s, "c", now) == "3");
  CHECK(put(s, "b", "x", now, 0, 0, store_mode::Add) == store_status::Stored);
}

TEST_CASE("flush_all with delay takes effect at now + delay") {
  store s(small_config());
  put(s, "a", "1", at_sec(5));
  s.flush_all(at_sec(5), 10);
  CHECK(fetch(s, "a", at_sec(14)) == "1");
  put(s, "b", "2", at_sec(14));
  CHECK(fetch(s, "a", at_sec(15)) == "<miss>");
  CHECK(fetch(s, "b", at_sec(15)) == "<miss>");
  put(s, "c", "3", at_sec(16));
  CHECK(fetch(s, "c", at_sec(17)) == "3");
}

namespace {

struct recording_observer : change_observer {
  std::vector<std::string> log;
  void on_store(const item_view& v) noexcept override {
    log.push_back("set " + std::string(v.key) + "=" + std::string(v.value));
  }
  void on_remove(std::string_view key, remove_reason why) noexcept override {
    log.push_back("del " + std::string(key) + " " + std::to_string(static_cast<int>(why)));
  }
};

}  // namespace

TEST_CASE("change observer sees stores and removals in order; scan sees live items") {
  store s(small_config());
  recording_observer obs;
  s.set_observer(&obs);
  auto now = at_sec(1);
  put(s, "a", "1", now);
  put(s, "a", "2", now, 0, 0, store_mode::Append);
  s.remove("a", now);
  put(s, "b", "x", now);
  REQUIRE(obs.log.size() == 4);
  CHECK(obs.log[0] == "set a=1");
  CHECK(obs.log[1] == "set a=12");
  CHECK(obs.log[2] == "del a 0");
  CHECK(obs.log[3] == "set b=x");
  int seen = 0;
  uint64_t next = s.scan(0, s.bucket_count(), now, [&](const item_view& v) {
    CHECK(v.key == "b");
    ++seen;
  });
  CHECK(next == 0);
  CHECK(seen == 1);
}
