// mcrouter's runtime variables (--runtime-vars-file): a JSON object of
// named values that routes read while they run, changed without a config
// reload. What ithaca reads of it: key ranges ([A, B], 0 <= A <= B <= 1) for
// a shadow's key_fraction_range_rv (routes/shadow_route.cc), as mcrouter's
// ShadowSettings takes a root-level variable of that name (its
// "key_fractions" object form is not read).
//
// Threads: the file is read on the pooler (at start, and at every reload:
// the file is watched with the config, server/config_watch.h) and the
// values land in slots, one per name a tree asked for, that workers read
// per request with relaxed loads (a request racing an update may see the
// new low end with the old high end: one request's choice, nothing more).
// Slots are made at tree build (pooler) under the registry's mutex and live
// as long as the process: a name costs one slot whatever the reloads.
#pragma once

#include <atomic>
#include <string>
#include <string_view>

namespace ithaca::route {

struct runtime_range {
  std::atomic<bool> set{false};  // the file gave this name a valid range
  std::atomic<double> lo{0};
  std::atomic<double> hi{0};
};

// The slot for `name`, with the value the last loaded file gave it (if any).
// [tree build, pooler; takes the registry mutex, never suspends]
runtime_range* runtime_range_slot(std::string_view name);

// Applies the text of the runtime variables file. Not a JSON object: false,
// `error` says why, and every value stays as it was. A variable named by a
// slot that is not a valid range keeps its old value and is logged; a
// variable absent keeps its old value too (as mcrouter keeps it). [pooler]
bool runtime_vars_apply(std::string_view text, const std::string& file, std::string* error);

}  // namespace ithaca::route
