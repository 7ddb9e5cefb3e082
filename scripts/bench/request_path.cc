// request_path: the cache role's own CPU per request, without sockets.
//
// scripts/bench/run measures whole servers, where the kernel's TCP work is
// 55-85% of a request and the run-to-run noise on a shared machine (5-10%)
// hides any change to ithaca's own code smaller than that. This tool runs the
// part that is ithaca's alone: the same batches the loadgen sends (16
// pipelined requests per read, 10,000 prefilled keys, the rows of
// scripts/bench/run) go through route::execute_input, the loop every TCP
// read runs (parse, prefetch lookahead, the local route, cache::execute, the
// reply stream), over a store of the server's default shape (2^20 buckets).
// The replies' bytes are summed, not written. It reports CPU nanoseconds per
// request (CLOCK_THREAD_CPUTIME_ID), the median of --rounds rounds.
//
// A/B: build it at two commits and compare rows; differences of 1-2% are
// real here (run it on an otherwise idle core: taskset -c 1).
//
// usage: request_path [--rows REGEX] [--rounds N] [--millis MS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "binary_format.h"
#include "counters.h"
#include "executor.h"
#include "parser.h"
#include "reply_drain.h"
#include "request_loop.h"
#include "route_tree.h"
#include "stats_provider.h"
#include "store.h"

namespace {

using namespace ithaca;

enum class proto { Ascii, Meta, Binary };

struct row {
  const char* name;
  proto p;
  double get_ratio;
  int multiget;   // keys per get request
  int per_batch;  // requests per read
  size_t value_size;
};

constexpr int kKeys = 10000;
constexpr int kBatches = 2048;  // distinct pre-made reads, cycled

const row kRows[] = {
    {"get 90% depth16 100B", proto::Ascii, 0.9, 1, 16, 100}, {"multiget10 100B", proto::Ascii, 0.9, 10, 4, 100},
    {"set 50% depth16 100B", proto::Ascii, 0.5, 1, 16, 100}, {"get 90% depth16 4KiB", proto::Ascii, 0.9, 1, 16, 4096},
    {"multiget10 4KiB", proto::Ascii, 0.9, 10, 4, 4096},     {"set 50% depth16 4KiB", proto::Ascii, 0.5, 1, 16, 4096},
    {"binary get 90% 100B", proto::Binary, 0.9, 1, 16, 100}, {"binary set 100% 100B", proto::Binary, 0.0, 1, 16, 100},
    {"meta mg 90% 100B", proto::Meta, 0.9, 1, 16, 100},      {"meta ms 100% 100B", proto::Meta, 0.0, 1, 16, 100},
};

std::string key_of(int k) {
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "key:%010d", k);
  return std::string(buf, static_cast<size_t>(n));
}

void put_binary(std::string& out, uint8_t op, const std::string& key, size_t extras_len, const std::string& value) {
  protocol::binary_header h;
  h.magic = protocol::kBinaryRequestMagic;
  h.opcode = op;
  h.key_length = static_cast<uint16_t>(key.size());
  h.extras_length = static_cast<uint8_t>(extras_len);
  h.body_length = static_cast<uint32_t>(extras_len + key.size() + value.size());
  char header[protocol::kBinaryHeaderSize];
  protocol::encode_header(h, header);
  out.append(header, sizeof header);
  out.append(extras_len, '\0');
  out += key;
  out += value;
}

void put_set(std::string& out, proto p, const std::string& key, const std::string& value) {
  switch (p) {
    case proto::Ascii: out += "set " + key + " 0 0 " + std::to_string(value.size()) + "\r\n" + value + "\r\n"; break;
    case proto::Meta: out += "ms " + key + " " + std::to_string(value.size()) + "\r\n" + value + "\r\n"; break;
    case proto::Binary: put_binary(out, 0x01, key, 8, value); break;
  }
}

void put_get(std::string& out, proto p, std::mt19937_64& rng, int keys) {
  std::uniform_int_distribution<int> pick(0, kKeys - 1);
  switch (p) {
    case proto::Ascii:
      out += "get";
      for (int i = 0; i < keys; i++) out += " " + key_of(pick(rng));
      out += "\r\n";
      break;
    case proto::Meta:
      for (int i = 0; i < keys; i++) out += "mg " + key_of(pick(rng)) + " v\r\n";
      break;
    case proto::Binary:
      for (int i = 0; i < keys; i++) put_binary(out, i + 1 < keys ? 0x0d : 0x0c, key_of(pick(rng)), 0, "");
      break;
  }
}

// Answers nothing: no `stats` in these rows.
class no_stats final : public stats::stats_provider {
 public:
  bool collect(std::string_view, stats::stat_lines&) override { return false; }
  void reset() override {}
  void set_verbosity(uint32_t) override {}
  bool set_memory_limit(uint64_t) override { return true; }
};

size_t drop_all(protocol::out_buffer& out) {
  size_t bytes = 0;
  while (!out.empty()) {
    size_t n = 0;
    for (const iovec& v : out.iovecs()) n += v.iov_len;
    out.consume(n);
    bytes += n;
  }
  return bytes;
}

class dropper final : public flow::reply_drain {
 public:
  bool drain(protocol::out_buffer& out) override {
    bytes += drop_all(out);
    return true;
  }
  size_t bytes = 0;
};

double thread_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// One row: CPU ns per request, median of `rounds` rounds of about `millis` each.
double run_row(const row& r, int rounds, int millis) {
  store::store_config sc;  // the server's defaults: 2^20 buckets, 64 MiB
  store::store st(sc);
  no_stats stats;
  stats::command_counters counters;
  dropper drain;
  cache::exec_context ctx(st, counters);
  commands::server_context server{stats, counters, false};
  ctx.drain = &drain;
  ctx.now = store::store_now{1000, 1700000000};
  protocol::parser parser{protocol::parser_settings{}};
  const auto tree = route::route_tree::local_only();
  flow::inflight_queue inflight;
  protocol::out_buffer out;
  route::loop_context loop{&ctx, server, &drain, tree.get(), inflight, out, nullptr};

  const std::string value(r.value_size, 'v');
  auto run = [&](std::string_view input) {
    flow::exec_action action = flow::exec_action::Continue;
    const size_t used = route::execute_input(parser, input, loop, action);
    if (used != input.size() || action != flow::exec_action::Continue) {
      std::fprintf(stderr, "request_path: %s: a batch was not consumed whole\n", r.name);
      std::exit(1);
    }
    drain.bytes += drop_all(out);
  };

  // Prefill, as the loadgen's --prefill does (in the row's protocol).
  for (int k = 0; k < kKeys; k += 16) {
    std::string batch;
    for (int i = k; i < std::min(k + 16, kKeys); i++) put_set(batch, r.p, key_of(i), value);
    run(batch);
  }

  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> coin(0, 1);
  std::uniform_int_distribution<int> pick(0, kKeys - 1);
  std::vector<std::string> batches(kBatches);
  for (std::string& b : batches) {
    for (int i = 0; i < r.per_batch; i++) {
      if (coin(rng) < r.get_ratio)
        put_get(b, r.p, rng, r.multiget);
      else
        put_set(b, r.p, key_of(pick(rng)), value);
    }
  }

  std::vector<double> per_request;
  for (int round = 0; round < rounds; round++) {
    const double start = thread_ns();
    const double until = start + millis * 1e6;
    uint64_t requests = 0;
    double now = start;
    while (now < until) {
      for (const std::string& b : batches) run(b);
      requests += static_cast<uint64_t>(kBatches) * static_cast<uint64_t>(r.per_batch);
      now = thread_ns();
    }
    per_request.push_back((now - start) / static_cast<double>(requests));
  }
  // The figures only count if the requests did what the row says: every get
  // a hit (the keys were prefilled), no request refused, every set stored.
  const store::store_stats_snapshot ss = st.stats();
  const bool gets = r.get_ratio > 0;
  if (ss.get_misses != 0 || (gets && ss.get_hits == 0) || counters.parse_errors.get() != 0 ||
      ss.curr_items != static_cast<uint64_t>(kKeys) || drain.bytes == 0) {
    std::fprintf(stderr, "request_path: %s: hits %llu misses %llu parse errors %llu items %llu: not the row's work\n",
                 r.name, static_cast<unsigned long long>(ss.get_hits), static_cast<unsigned long long>(ss.get_misses),
                 static_cast<unsigned long long>(counters.parse_errors.get()),
                 static_cast<unsigned long long>(ss.curr_items));
    std::exit(1);
  }
  std::sort(per_request.begin(), per_request.end());
  return per_request[per_request.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string rows = ".*";
  int rounds = 5;
  int millis = 400;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string opt = argv[i];
    if (opt == "--rows")
      rows = argv[i + 1];
    else if (opt == "--rounds")
      rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (opt == "--millis")
      millis = std::max(10, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: request_path [--rows REGEX] [--rounds N] [--millis MS]\n");
      return 2;
    }
  }
  const std::regex want(rows);
  std::printf("%-24s %10s\n", "row", "ns/request");
  for (const row& r : kRows) {
    if (!std::regex_search(r.name, want)) continue;
    std::printf("%-24s %10.1f\n", r.name, run_row(r, rounds, millis));
    std::fflush(stdout);
  }
  return 0;
}
