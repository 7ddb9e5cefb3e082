// libFuzzer target: the router's backend reply parser
// (protocol::backend_reply_parser). The stream is what a backend sends on
// one connection; the reply shapes the connection expects come from the
// options byte and the split seed (the first reply's shape, then one drawn
// after each reply ends), as backend_conn.cc would have them from its calls.
// Checked: consumed <= input, NeedMore consumes nothing, every view of a
// piece lies in its `raw` bytes and `raw` is what was consumed, and the
// pieces are the same fed whole, byte by byte and in seeded pieces.
#include <string>
#include <vector>

#include "backend_reply_parser.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "stream_window.h"

namespace {

using namespace ithaca::protocol;
using ithaca::fuzz::split_plan;
using ithaca::fuzz::stream_window;

constexpr reply_shape kShapes[] = {reply_shape::Line, reply_shape::Values, reply_shape::Stats, reply_shape::Meta,
                                   reply_shape::Version};

bool within(std::string_view inner, std::string_view outer) {
  if (inner.empty()) return true;
  const auto in0 = reinterpret_cast<std::uintptr_t>(inner.data());
  const auto out0 = reinterpret_cast<std::uintptr_t>(outer.data());
  return in0 >= out0 && in0 + inner.size() <= out0 + outer.size();
}

// Whether this piece ends the reply to one request of `shape`.
bool ends_reply(reply_shape shape, const reply_piece& p) {
  if (p.kind == piece_kind::Error) return true;
  if (shape == reply_shape::Values || shape == reply_shape::Stats) return p.kind == piece_kind::End;
  return true;
}

std::string describe(const reply_piece& p) {
  std::string s = "kind=" + std::to_string(static_cast<int>(p.kind)) + " raw=[";
  s += p.raw;
  s += "] line=[";
  s += p.line;
  s += "] key=[";
  s += p.key;
  s += "] flags=" + std::to_string(p.flags) + " cas=" + std::to_string(p.cas) + " has_cas=" +
       std::to_string(p.has_cas) + " data=[";
  s += p.data;
  s += "] code=[";
  s += p.code;
  s += "] mflags=[";
  s += p.meta_flags;
  s += "]";
  std::string_view token;
  for (const char letter : {'c', 'f', 'k', 'O', 's', 't', 'v'}) {
    if (p.meta_flag(letter, token)) {
      s += ' ';
      s += letter;
      s += token;
    }
  }
  return s;
}

struct feed_outcome {
  std::vector<std::string> pieces;
  bool error = false;
  std::size_t consumed = 0;
};

feed_outcome feed(std::string_view stream, std::size_t max_value, std::uint8_t first_shape, std::uint8_t shape_seed,
                  split_plan plan) {
  feed_outcome o;
  backend_reply_parser parser(max_value);
  split_plan shapes(split_plan::kind::Seeded, shape_seed);
  reply_shape shape = kShapes[first_shape % 5];
  stream_window w(stream);
  for (;;) {
    while (!w.view().empty()) {
      const std::string_view in = w.view();
      reply_piece piece;
      std::size_t consumed = 12345;
      const parse_status st = parser.next(in, shape, piece, consumed);
      FUZZ_CHECK(consumed <= in.size(), "consumed more than the input");
      if (st == parse_status::Error) {
        o.error = true;
        o.consumed = w.consumed();
        return o;
      }
      if (st == parse_status::NeedMore) {
        FUZZ_CHECK(consumed == 0, "NeedMore consumed bytes");
        break;
      }
      FUZZ_CHECK(consumed > 0, "Ok without progress");
      FUZZ_CHECK(piece.raw.data() == in.data() && piece.raw.size() == consumed, "raw is not the consumed bytes");
      for (std::string_view v : {piece.line, piece.key, piece.data, piece.code, piece.meta_flags}) {
        FUZZ_CHECK(within(v, piece.raw), "a piece view outside its raw bytes");
      }
      if (piece.kind == piece_kind::Value) FUZZ_CHECK(piece.data.size() <= max_value, "value over max_value");
      o.pieces.push_back(describe(piece));
      w.consume(consumed);
      if (ends_reply(shape, piece)) shape = kShapes[shapes.mix() % 5];
    }
    if (w.all_received()) break;
    w.receive(plan.next());
  }
  o.consumed = w.consumed();
  return o;
}

void check_same(const feed_outcome& whole, const feed_outcome& cut) {
  FUZZ_CHECK(whole.pieces.size() == cut.pieces.size(), "a different number of pieces");
  for (std::size_t i = 0; i < whole.pieces.size(); ++i) {
    if (whole.pieces[i] != cut.pieces[i]) {
      std::fprintf(stderr, "piece %zu differs:\n  whole:  %s\n  pieces: %s\n", i, whole.pieces[i].c_str(),
                   cut.pieces[i].c_str());
      FUZZ_CHECK(false, "a piece framed differently in pieces");
    }
  }
  FUZZ_CHECK(whole.error == cut.error, "an error in one feed only");
  FUZZ_CHECK(whole.consumed == cut.consumed, "a different number of bytes consumed");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ithaca::fuzz::fuzz_input in = ithaca::fuzz::read_fuzz_input(data, size);
  // options: bits 0-2 the first reply's shape; bit 3 a small value limit.
  const std::size_t max_value = (in.options & 8) != 0 ? 16 : backend_reply_parser::kDefaultMaxValue;
  const std::uint8_t first = in.options & 7;
  const feed_outcome whole = feed(in.stream, max_value, first, in.split_seed, split_plan(split_plan::kind::Whole));
  check_same(whole, feed(in.stream, max_value, first, in.split_seed, split_plan(split_plan::kind::ByteByByte)));
  check_same(whole, feed(in.stream, max_value, first, in.split_seed,
                         split_plan(split_plan::kind::Seeded, in.split_seed)));
  return 0;
}
