// Runs a test's body as the main coroutine of a machine of its own (for the
// units that suspend: blocking_call, sleeps, conds), and waits for it.
#pragma once

#include <doctest/doctest.h>

#include <functional>

#include "machinarium.h"

namespace ithaca::server::test {

inline void in_machine(std::function<void()> body) {
  mm::machine_config cfg;
  cfg.name = "server-test";
  mm::machine* m = mm::machine_create(cfg, [body = std::move(body)] {
    body();
    mm::machine_stop(mm::machine_self());
  });
  REQUIRE(m != nullptr);
  mm::machine_join(m);
}

}  // namespace ithaca::server::test
