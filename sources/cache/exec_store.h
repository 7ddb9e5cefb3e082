// Store-side steps shared by the ascii and binary executors and by the parse
// error handler: they must behave identically for both protocols, because the
// binary packets are also the replication stream.
#pragma once

#include <string_view>

#include "executor.h"
#include "text_replies.h"

namespace ithaca::cache {

using protocol::kReplyOutOfMemoryStoring;

// set/add/replace/append/prepend/cas -> the store's mode.
store::store_mode store_mode_of(protocol::command cmd);

// memcached unlinks the old item when a `set` cannot store its new value (too
// large, out of memory), so a reader never sees the stale value afterwards.
// Only set does this (checked against memcached 1.6.18: add, replace, append,
// prepend and cas keep the old item), in both protocols.
void unlink_after_failed_set(store::store_status status, std::string_view key, exec_context& ctx);

// flush_all / binary Flush: counts cmd_flush; `delay` as sent (relative
// seconds, or an absolute unix time past 30 days, like an exptime).
void flush(int64_t delay, exec_context& ctx);

}  // namespace ithaca::cache
