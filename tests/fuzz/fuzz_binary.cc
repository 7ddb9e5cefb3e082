// libFuzzer target: the binary protocol through protocol::parser (the checks
// are parser_harness.h's; the seeds in corpus/fuzz_binary/ steer it to binary).
#include <cstddef>
#include <cstdint>

#include "parser_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ithaca::fuzz::run_parser_contract(ithaca::fuzz::parser_family::Binary, data, size);
  return 0;
}
