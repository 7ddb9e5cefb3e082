// Drives the cache executor as a client connection does: bytes through the
// parser, each request to cache::execute (or execute_parse_error), and the
// replies read back as the bytes memcached would send. The store's clock is
// set by the test (ctx.now).
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "counters.h"
#include "executor.h"
#include "out_buffer.h"
#include "parser.h"
#include "store.h"

namespace ithaca::cache::test {

inline constexpr int64_t kWallBase = 1'700'000'000;

inline store::store_config small_store() {
  store::store_config c;
  c.bucket_count = 1024;
  return c;
}

class connection {
 public:
  explicit connection(const store::store_config& cfg = small_store(),
                      protocol::parser_settings ps = protocol::parser_settings{})
      : store_(cfg), settings_(ps), ctx_(store_, counters_), parser_(settings_) {
    ctx_.now = store::store_now{1000, kWallBase};
  }

  // The replies to `bytes` (whole requests or parts of them; a part waits
  // for the next call), and the last request's action in *action.
  std::string send(std::string_view bytes, flow::exec_action* action = nullptr) {
    pending_.append(bytes);
    protocol::out_buffer out;
    flow::exec_action last = flow::exec_action::Continue;
    for (;;) {
      protocol::request req;
      const protocol::parse_result r = parser_.parse(pending_, req);
      REQUIRE(r.consumed <= pending_.size());
      if (r.status == protocol::parse_status::NeedMore) {
        pending_.erase(0, r.consumed);
        break;
      }
      last = r.status == protocol::parse_status::Ok ? execute(req, out, ctx_) : execute_parse_error(r, req, out, ctx_);
      pending_.erase(0, r.consumed);
      if (last != flow::exec_action::Continue || (r.status == protocol::parse_status::Error && r.close)) break;
    }
    if (action) *action = last;
    return out.str();
  }

  // Moves the store's clock on.
  void advance_seconds(uint64_t s) { ctx_.now.ms += s * 1000; }
  int64_t unix_now() const { return ctx_.now.wall_base + static_cast<int64_t>(ctx_.now.ms / 1000); }

  store::store& store() { return store_; }
  exec_context& ctx() { return ctx_; }
  stats::command_counters& counters() { return counters_; }

 private:
  store::store store_;
  stats::command_counters counters_;
  protocol::parser_settings settings_;
  exec_context ctx_;
  protocol::parser parser_;
  std::string pending_;
};

}  // namespace ithaca::cache::test
