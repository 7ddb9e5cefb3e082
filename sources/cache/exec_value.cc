#include "exec_value.h"

#include <string>

#include "exec_internal.h"
#include "machinarium.h"
#include "out_buffer.h"

namespace ithaca::cache {

namespace {
// A temp-file read that takes longer than this is answered as a miss; the
// read still completes on the pool thread, which owns everything it touches.
constexpr mm::millis kLargeReadTimeoutMs = 30000;

struct large_read {
  std::string data;
  bool ok = false;
};
}  // namespace

bool read_large_value(const store::large_value_ref& ref, std::string& into) {
  auto job = std::make_shared<large_read>();
  // The ref is captured by value: after a timeout the pool thread keeps the
  // file open through its own reference until the read is done.
  store::large_value_ref keep = ref;
  mm::wait_status st = mm::blocking_call([keep, job] { job->ok = keep.read_all(job->data); }, kLargeReadTimeoutMs);
  if (st != mm::wait_status::Ok || !job->ok) return false;
  into = std::move(job->data);
  return true;
}

// A value that something holds for the writer: the item's pin, or a temp
// file's bytes read into a buffer.
bool take_value_held(store::get_result& res, value_bytes& out) {
  out.owner.reset();
  if (res.pinned) {
    // The socket write reads the item itself; the out_buffer drops the pin
    // once it has passed the value (or at once, after copying a small one).
    out.data = res.pinned.value();
    void* object = nullptr;
    void* context = nullptr;
    res.pinned.detach(object, context);
    out.owner = protocol::value_owner(&store::item_ref::release, object, context);
    return true;
  }
  if (res.large) {
    store::large_value_ref ref = std::move(res.large);
    auto buf = std::make_shared<std::string>();
    if (!read_large_value(ref, *buf)) return false;
    out.data = *buf;
    out.owner = std::move(buf);
    return true;
  }
  out.data = res.value;
  return true;
}

store::get_result& scratch_get_result() {
  // One per worker thread. Coroutines of one worker share it, which is safe
  // because it is only used between a store call and take_value, and nothing
  // in that window suspends except the large read, which copies its ref first.
  thread_local store::get_result res;
  return res;
}

}  // namespace ithaca::cache
