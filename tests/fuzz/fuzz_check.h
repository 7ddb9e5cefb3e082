// The fuzz targets' assertion: a broken contract aborts with a message, in
// every build (release builds define NDEBUG, so assert() would vanish), and
// libFuzzer saves the input that did it as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                                                             \
  do {                                                                                                     \
    if (!(cond)) {                                                                                         \
      std::fprintf(stderr, "fuzz contract broken at %s:%d: %s (%s)\n", __FILE__, __LINE__, (what), #cond); \
      std::abort();                                                                                        \
    }                                                                                                      \
  } while (0)
