#pragma once

#include <string>
#include <utility>

namespace ithaca::config {

// The error path of the readers that report through a `std::string* error`
// (null: the caller only wants the verdict): sets it and returns false, so a
// check ends in `return fail(error, "...")`. One definition for the files
// that used to keep a copy each, which a unity build (scripts/build.sh)
// would put in one translation unit.
inline bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

}  // namespace ithaca::config
