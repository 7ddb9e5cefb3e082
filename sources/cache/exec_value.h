// Turning a store hit into bytes an encoder can append: the executor's one
// place that knows where a value lives (the item itself, pinned; copied into
// the get_result; or in a temp file) and how long the bytes must stay alive in
// the out_buffer.
#pragma once

#include <memory>
#include <string_view>

#include "out_buffer.h"
#include "store_types.h"
#include "value_owner.h"

namespace ithaca::cache {

struct value_bytes {
  std::string_view data;
  // Keeps `data` alive until the out_buffer has written it: the item's pin
  // (get_options::pin), or a temp-file value's buffer. Null when `data` is in
  // the worker's scratch result: the out_buffer then copies it at once. A
  // value the out_buffer copies (kCopyThreshold) drops its owner at once.
  protocol::value_owner owner;
};

// The get_options every value-sending read uses: want the value, pinned when
// the reply buffer will reference it, copied when it would copy it anyway.
inline store::get_options pinned_get_options() {
  store::get_options o;
  o.pin = true;
  o.copy_at_most = protocol::out_buffer::kCopyThreshold;
  return o;
}

// Takes the value out of a hit. A pinned item's pin moves into out.owner (no
// copy here: the encoder copies a small value, references a larger one); a
// value copied into `res` stays there (the encoder copies it before the next
// store call); a temp-file value is read
// through read_large_value, which suspends the calling coroutine. After a suspension `res` may have been reused by
// another coroutine of this worker, so callers must not touch `res` again
// until their next store call. False on a temp-file read error.
bool take_value_held(store::get_result& res, value_bytes& out);
// Inline for the common case, a value copied into `res` (out of line, the
// caller re-read the 8-byte fields take_value stored as 16-byte words: a
// store-forwarding stall on every hit).
inline bool take_value(store::get_result& res, value_bytes& out) {
  if (!res.pinned && !res.large) {
    // No owner: the encoder copies the bytes into the reply buffer at once
    // (out_buffer::append_value), one memcpy with no allocation, since the
    // reply buffer keeps its capacity. res.value is the worker's reusable
    // buffer and keeps its own, which spares the store an unlock-reserve-retry
    // (a second lookup and a malloc) on the next large hit.
    out.owner.reset();
    out.data = res.value;
    return true;
  }
  return take_value_held(res, out);
}

// The worker's reusable get_result: its value string keeps its capacity, so a
// hit costs a memcpy and no allocation. Only valid between a store call and
// the take_value that follows it (see above).
store::get_result& scratch_get_result();

}  // namespace ithaca::cache
