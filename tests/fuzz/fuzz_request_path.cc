// libFuzzer target: the whole request path of the cache role, from bytes to
// replies, without sockets. The stream is cut into reads as the split seed
// says and each read goes through route::execute_input (the loop the TCP
// client and the UDP loop run: parse, the local route, cache::execute, parse
// errors and their side effects) over a real store::store, exactly as
// server/client.cc keeps an incomplete request for the next read (the
// window of stream_window.h). The clock moves between reads (expiry, leases,
// absolute exptimes) and the GC sweep runs now and then.
//
// Large values are on in three of the four option modes, with a threshold of
// a few hundred bytes and a disk budget of a few 4 KiB extents, so an 8 KiB
// input stores, appends to, reads, touches, deletes and evicts values in the
// arena file and fills its budget. A value in the arena is read with
// mm::blocking_call, so each input runs as a coroutine on one machine kept
// for the process (fuzz_machine.h), and the arena's file is opened once per
// process too (each input's store takes it over), not once per input.
//
// Checked beyond "no crash, no sanitizer report": execute_input consumes
// no more than its input and leaves no local request in flight; a written
// reply stream is empty; the store's usage stays within its memory limit and
// the arena's within its disk budget; and once every item is flushed and
// swept, the store holds no items and no bytes, and the arena no extent (its
// file's high-water mark is back at 0: every extent came back and merged).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "counters.h"
#include "executor.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "fuzz_machine.h"
#include "large_arena.h"
#include "parser.h"
#include "reply_drain.h"
#include "request_loop.h"
#include "route_tree.h"
#include "stats_provider.h"
#include "store.h"
#include "stream_window.h"

namespace {

using namespace ithaca;
using fuzz::split_plan;

// Answers `stats` from the store alone (the server's provider needs the
// whole process: connections, workers, cron).
class store_stats_provider final : public stats::stats_provider {
 public:
  explicit store_stats_provider(store::store& s) : store_(s) {}
  bool collect(std::string_view arg, stats::stat_lines& out) override {
    if (!arg.empty() && arg != "settings") return false;
    const store::store_stats_snapshot st = store_.stats();
    out.emplace_back("curr_items", std::to_string(st.curr_items));
    out.emplace_back("bytes", std::to_string(st.bytes));
    out.emplace_back("limit_maxbytes", std::to_string(store_.memory_limit()));
    return true;
  }
  void reset() override {}
  void set_verbosity(uint32_t) override {}
  bool set_memory_limit(uint64_t bytes) override { return store_.set_memory_limit(bytes); }

 private:
  store::store& store_;
};

// What a client does with a batch's replies: writes them all (here: drops them).
class writer final : public flow::reply_drain {
 public:
  bool drain(protocol::out_buffer& out) override {
    write_all(out);
    return true;
  }
  static void write_all(protocol::out_buffer& out) {
    while (!out.empty()) {
      std::size_t n = 0;
      for (const iovec& v : out.iovecs()) n += v.iov_len;
      FUZZ_CHECK(n > 0, "a non-empty reply stream with no bytes to write");
      out.consume(n);
    }
  }
};

constexpr std::uint64_t kMemoryLimits[] = {64ull << 20, 4096, 32 << 10, 1 << 20};
constexpr std::uint64_t kItemSizes[] = {1 << 20, 1024, 200, 16 << 10};
constexpr std::uint64_t kSecond = 1000;

// Options bits 6-7: where values live. Mode 1 (the existing seeds' 0x40 and
// 0x45) keeps every value in memory; the others send values above a few
// hundred bytes to the arena, within a budget of 2 to 8 extents.
struct large_mode {
  std::uint64_t threshold;   // 0: large values off
  std::uint64_t disk_limit;  // the arena's budget
};
constexpr large_mode kLargeModes[] = {{256, 16 << 10}, {0, 16 << 10}, {512, 8 << 10}, {128, 32 << 10}};

// The process's arena file (unlinked at once: it goes with the process).
store::large_arena& process_arena(std::shared_ptr<store::large_arena>& keep) {
  static std::shared_ptr<store::large_arena> arena = [] {
    const char* dir = std::getenv("TMPDIR");
    auto a = store::large_arena::open(dir && *dir ? dir : "/tmp", 16 << 10);
    FUZZ_CHECK(a != nullptr, "cannot open the large values' arena file in $TMPDIR or /tmp");
    return std::shared_ptr<store::large_arena>(std::move(a));
  }();
  keep = arena;
  return *arena;
}

void sweep_all(store::store& s, const store::store_now& now) {
  store::gc_stats total{};
  std::uint64_t next = 0;
  do {
    next = s.gc_sweep(next, s.bucket_count(), now, total);
  } while (next != 0);
  // One step of the table's growth (16 buckets to start: it grows past 24 items), so
  // later requests run on a table half moved.
  s.grow_step(5);
}

void run_input(const fuzz::fuzz_input& in) {
  // options: bits 0-1 memory limit; bits 2-3 item_size_max; bit 4 no protocol
  // lock; bit 5 shutdown enabled; bits 6-7 large values (kLargeModes).
  store::store_config sc;
  sc.bucket_count = 16;
  sc.memory_limit = kMemoryLimits[in.options & 3];
  sc.item_size_max = kItemSizes[(in.options >> 2) & 3];
  const large_mode lm = kLargeModes[(in.options >> 6) & 3];
  sc.large_value_threshold = lm.threshold;
  sc.large_value_disk_limit = lm.disk_limit;
  std::shared_ptr<store::large_arena> arena_ref;
  store::large_arena& arena = process_arena(arena_ref);
  FUZZ_CHECK(arena.used() == 0 && arena.file_end() == 0, "an earlier input left extents in the arena");
  store::store st(sc, arena_ref);
  store_stats_provider stats(st);
  stats::command_counters counters;
  writer out_writer;
  cache::exec_context ctx(st, counters);
  commands::server_context server{stats, counters, (in.options & 32) != 0};
  ctx.drain = &out_writer;
  store::store_now now{kSecond, 1700000000};
  ctx.now = now;

  protocol::parser_settings ps;
  ps.item_size_max = sc.item_size_max;
  ps.lock_protocol = (in.options & 16) == 0;
  protocol::parser parser(ps);
  const auto tree = route::route_tree::local_only();
  flow::inflight_queue inflight;
  protocol::out_buffer out;
  route::loop_context loop{&ctx, server, &out_writer, tree.get(), inflight, out, nullptr};

  split_plan reads(split_plan::kind::Seeded, in.split_seed);
  split_plan clock(split_plan::kind::Seeded, static_cast<std::uint8_t>(in.split_seed ^ 0x5a));
  fuzz::stream_window w(in.stream);
  flow::exec_action action = flow::exec_action::Continue;
  while (action == flow::exec_action::Continue && !w.all_received()) {
    w.receive(reads.next());
    // Between reads: up to 3 s pass, sometimes 40 days (absolute exptimes).
    const std::uint64_t step = clock.mix();
    now.ms += step % (3 * kSecond) + ((step >> 20) % 64 == 0 ? 40ull * 86400 * kSecond : 0);
    ctx.now = now;
    const std::string_view input = w.view();
    const std::uint64_t limit_before = st.memory_limit();
    const bool within_limit = st.mem_used() <= limit_before;
    const std::size_t used = route::execute_input(parser, input, loop, action);
    // Stores evict inline or refuse (out of memory): usage never passes a
    // limit that was not lowered meanwhile (cache_memlimit may lower it).
    if (within_limit && st.memory_limit() >= limit_before) {
      FUZZ_CHECK(st.mem_used() <= st.memory_limit(), "the store passed its memory limit");
    }
    FUZZ_CHECK(arena.used() <= arena.limit(), "the arena passed its disk budget");
    FUZZ_CHECK(used <= input.size(), "execute_input consumed more than its input");
    FUZZ_CHECK(inflight.empty(), "a local request left in flight");
    writer::write_all(out);
    FUZZ_CHECK(out.empty() && out.size() == 0, "a written reply stream is not empty");
    w.consume(used);
    if ((step >> 8) % 4 == 0) {
      sweep_all(st, now);
      FUZZ_CHECK(arena.used() <= arena.limit(), "the arena passed its disk budget after a sweep");
    }
  }

  // Everything stored so far is flushed (by CAS and by store time) and
  // swept once lease placeholders (10 s) have expired: nothing may be left.
  now.ms += 2 * kSecond;
  st.flush_all(now);
  st.flush_all(now, 1);
  now.ms += 20 * kSecond;
  sweep_all(st, now);
  const store::store_stats_snapshot end = st.stats();
  FUZZ_CHECK(end.curr_items == 0, "items left after flush_all and a full sweep");
  FUZZ_CHECK(end.bytes == 0, "bytes still charged after every item is gone");
  FUZZ_CHECK(arena.used() == 0, "arena extents still in use after every item is gone");
  FUZZ_CHECK(arena.file_end() == 0, "the arena's free extents did not merge back to an empty file");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::fuzz_input in = fuzz::read_fuzz_input(data, size);
  fuzz::run_on_machine([&] { run_input(in); });
  return 0;
}
