// Turning a store hit into bytes an encoder can append: the executor's one
// place that knows where a value lives (copied into the get_result, or in a
// temp file) and how long the bytes must stay alive in the out_buffer.
#pragma once

#include <memory>
#include <string_view>

#include "store_types.h"

namespace ithaca::cache {

struct value_bytes {
  std::string_view data;
  // Keeps `data` alive until the out_buffer has written it (a temp-file
  // value's buffer). Null when `data` is in the worker's scratch result: the
  // out_buffer then copies it at once.
  std::shared_ptr<const void> owner;
};

// Takes the value out of a hit. A value held in memory stays in `res` (the
// encoder copies it before the next store call); a temp-file value is read
// through read_large_value, which suspends the calling coroutine. After a suspension `res` may have been reused by
// another coroutine of this worker, so callers must not touch `res` again
// until their next store call. False on a temp-file read error.
bool take_value(store::get_result& res, value_bytes& out);

// The worker's reusable get_result: its value string keeps its capacity, so a
// hit costs a memcpy and no allocation. Only valid between a store call and
// the take_value that follows it (see above).
store::get_result& scratch_get_result();

}  // namespace ithaca::cache
