#include "exec_store.h"

#include "store_time.h"

namespace ithaca::cache {

store::store_mode store_mode_of(protocol::command cmd) {
  using protocol::command;
  switch (cmd) {
    case command::Add: return store::store_mode::Add;
    case command::Replace: return store::store_mode::Replace;
    case command::Append: return store::store_mode::Append;
    case command::Prepend: return store::store_mode::Prepend;
    case command::Cas: return store::store_mode::Cas;
    default: return store::store_mode::Set;
  }
}

void unlink_after_failed_set(store::store_status status, std::string_view key, exec_context& ctx) {
  if (status == store::store_status::TooLarge || status == store::store_status::OutOfMemory) {
    ctx.store.remove(key, ctx.now);
  }
}

void flush(int64_t delay, exec_context& ctx) {
  ctx.counters.cmd_flush.add();
  if (delay > store::kMaxRelativeExptime) {
    // An absolute time: the store takes a delay from now. One already past
    // flushes at once.
    const int64_t unix_now = ctx.now.wall_base + static_cast<int64_t>(ctx.now.ms / 1000);
    delay = delay > unix_now ? delay - unix_now : 0;
  }
  ctx.store.flush_all(ctx.now, delay);
}

}  // namespace ithaca::cache
