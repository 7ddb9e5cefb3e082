#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <signal.h>

#include "harness.h"

int main(int argc, char** argv) {
  // Signals must be blocked before any machine thread exists (they inherit it).
  mm::signal_block({SIGUSR1});
  const char* backend = std::getenv("MM_BACKEND");
  std::printf("machinarium tests on backend: %s\n", backend ? backend : "auto");
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
