// A coroutine: a Boost.Context fiber on a cached stack, owned by one machine.
// Every field is touched only by the owning machine's thread.
#pragma once

#include <boost/context/fiber.hpp>

#include <functional>
#include <string>
#include <vector>

#include "machinarium.h"

namespace mm::detail {

enum class coroutine_state {
  Ready,    // in the ready queue, will run on this or the next scheduler turn
  Running,  // the one currently executing on the machine
  Waiting,  // suspended in a call (wait), woken by wake, timer or cancel
  Done      // its function returned; freed by the scheduler
};

struct coroutine {
  coroutine_id id = 0;
  std::string name;
  std::function<void()> fn;
  coroutine_state state = coroutine_state::Ready;
  bool cancelled = false;
  // The wait in progress (at most one) and its sequence number, which lets a
  // late wake from another thread recognise that the wait it meant is over.
  call* current_call = nullptr;
  uint64_t call_sequence = 0;
  std::vector<call*> joiners;  // coroutine_join waits, woken when Done
  // Context switching: `fiber` holds this coroutine's context while it is
  // suspended; `caller` holds the scheduler's while it runs.
  boost::context::fiber fiber;
  boost::context::fiber caller;
  void* stack_bottom = nullptr;  // for AddressSanitizer fiber annotations
  size_t stack_size = 0;
  void* asan_fake_stack = nullptr;

  // Wakes `c` from call `k` with `status` if that wait is still in progress.
  // Only the first wake counts. Returns whether it woke.
  static bool wake(coroutine* c, call* k, wait_status status);
};

}  // namespace mm::detail
