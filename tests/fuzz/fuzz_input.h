// How a fuzz input is read by the targets that feed a stream to a parser.
//
//   byte 0      options, read by each target (parser settings, store limits)
//   byte 1      the split seed: where the stream is cut into reads
//   byte 2..    the stream, as a client or a backend would send it
//
// The seed files in corpus/ start with these two bytes too (printable ones,
// so a seed reads as the protocol it holds). The fuzzer mutates both header
// bytes like any other, so it chooses the cuts: each seed value names one
// plan of chunk sizes (1 byte, a few bytes, up to 4 KiB).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ithaca::fuzz {

struct fuzz_input {
  std::uint8_t options = 0;
  std::uint8_t split_seed = 0;
  std::string_view stream;
};

inline fuzz_input read_fuzz_input(const std::uint8_t* data, std::size_t size) {
  fuzz_input in;
  if (size > 0) in.options = data[0];
  if (size > 1) in.split_seed = data[1];
  if (size > 2) in.stream = std::string_view(reinterpret_cast<const char*>(data) + 2, size - 2);
  return in;
}

// Whether an input is also fed byte by byte. That pass costs two parse calls
// per byte, so its cost grows with the input: it always runs on streams of
// up to kBytewiseAlways bytes (where nearly every parser state is reached),
// and on a longer stream only when bits 3-5 of the split seed are 0 (one
// seed in eight; the fuzzer mutates the seed like any byte, so any long
// input can have its byte by byte pass). The seeded pieces run on every
// input. Deterministic, so a reproducer replays the same passes.
inline constexpr std::size_t kBytewiseAlways = 512;

inline bool bytewise_due(std::size_t stream_size, std::uint8_t split_seed) {
  return stream_size <= kBytewiseAlways || ((split_seed >> 3) & 7) == 0;
}

// Chunk sizes of one way of cutting a stream into reads. Whole: one read;
// ByteByByte: 1 byte each; Seeded: sizes from a splitmix64 generator whose
// seed and largest chunk come from the split seed.
class split_plan {
 public:
  enum class kind : std::uint8_t { Whole, ByteByByte, Seeded };

  split_plan(kind k, std::uint8_t seed = 0) : kind_(k), state_(seed) {
    static constexpr std::size_t kSpans[] = {2, 3, 8, 17, 64, 300, 1500, 4096};
    span_ = kSpans[seed % 8];
  }

  // The next read's size (at least 1; the caller clamps it to what is left).
  std::size_t next() {
    switch (kind_) {
      case kind::Whole: return SIZE_MAX;
      case kind::ByteByByte: return 1;
      case kind::Seeded: break;
    }
    return 1 + static_cast<std::size_t>(mix() % span_);
  }

  // A small number from the same generator (targets use it for clock steps).
  std::uint64_t mix() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  kind kind_;
  std::uint64_t state_;
  std::size_t span_;
};

}  // namespace ithaca::fuzz
