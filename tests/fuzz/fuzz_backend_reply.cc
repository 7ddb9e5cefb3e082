// libFuzzer target: the router's backend reply parser
// (protocol::backend_reply_parser). The stream is what a backend sends on
// one connection; the reply shapes the connection expects come from the
// options byte and the split seed (the first reply's shape, then one drawn
// after each reply ends), as backend_conn.cc would have them from its calls.
// Checked: consumed <= input, NeedMore consumes nothing, every view of a
// piece lies in its `raw` bytes and `raw` is what was consumed, and the
// pieces are the same fed whole, byte by byte and in seeded pieces.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "backend_reply_parser.h"
#include "event_record.h"
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

template <typename Sink>
void describe(Sink& s, const reply_piece& p) {
  s.num("kind", static_cast<int>(p.kind));
  s.str("raw", p.raw);
  s.str("line", p.line);
  s.str("key", p.key);
  s.num("flags", p.flags);
  s.num("cas", p.cas);
  s.num("has_cas", p.has_cas);
  s.str("data", p.data);
  s.str("code", p.code);
  s.str("mflags", p.meta_flags);
  std::string_view token;
  for (const char letter : {'c', 'f', 'k', 'O', 's', 't', 'v'}) {
    if (p.meta_flag(letter, token)) {
      s.num("letter", letter);
      s.str("token", token);
    }
  }
}

struct feed_outcome {
  std::vector<std::uint64_t> pieces;  // a digest of each piece
  std::vector<std::string> texts;     // each piece readable (only when asked for)
  bool error = false;
  std::size_t consumed = 0;
};

feed_outcome feed(std::string_view stream, std::size_t max_value, std::uint8_t first_shape, std::uint8_t shape_seed,
                  split_plan plan, bool texts = false) {
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
      ithaca::fuzz::digest d;
      describe(d, piece);
      o.pieces.push_back(d.value());
      if (texts) {
        ithaca::fuzz::event_text t;
        describe(t, piece);
        o.texts.push_back(t.value());
      }
      w.consume(consumed);
      if (ends_reply(shape, piece)) shape = kShapes[shapes.mix() % 5];
    }
    if (w.all_received()) break;
    w.receive(plan.next());
  }
  o.consumed = w.consumed();
  return o;
}

const char* difference(const feed_outcome& whole, const feed_outcome& cut) {
  if (whole.pieces.size() != cut.pieces.size()) return "a different number of pieces";
  if (whole.pieces != cut.pieces) return "a piece framed differently in pieces";
  if (whole.error != cut.error) return "an error in one feed only";
  if (whole.consumed != cut.consumed) return "a different number of bytes consumed";
  return nullptr;
}

// Feeds the stream as `plan` cuts it and checks it against `whole`; only on a
// difference are both feeds run again keeping their pieces as text, to show it.
void check_cut(const feed_outcome& whole, std::string_view stream, std::size_t max_value, std::uint8_t first,
               std::uint8_t shape_seed, split_plan plan) {
  const char* what = difference(whole, feed(stream, max_value, first, shape_seed, plan));
  if (what == nullptr) return;
  const feed_outcome w = feed(stream, max_value, first, shape_seed, split_plan(split_plan::kind::Whole), true);
  const feed_outcome c = feed(stream, max_value, first, shape_seed, plan, true);
  const std::size_t n = std::max(w.texts.size(), c.texts.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::string none = "(none)";
    const std::string& a = i < w.texts.size() ? w.texts[i] : none;
    const std::string& b = i < c.texts.size() ? c.texts[i] : none;
    if (a != b) {
      std::fprintf(stderr, "piece %zu differs:\n  whole:  %s\n  pieces: %s\n", i, a.c_str(), b.c_str());
      break;
    }
  }
  FUZZ_CHECK(false, what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ithaca::fuzz::fuzz_input in = ithaca::fuzz::read_fuzz_input(data, size);
  // options: bits 0-2 the first reply's shape; bit 3 a small value limit.
  const std::size_t max_value = (in.options & 8) != 0 ? 16 : backend_reply_parser::kDefaultMaxValue;
  const std::uint8_t first = in.options & 7;
  const feed_outcome whole = feed(in.stream, max_value, first, in.split_seed, split_plan(split_plan::kind::Whole));
  if (ithaca::fuzz::bytewise_due(in.stream.size(), in.split_seed)) {
    check_cut(whole, in.stream, max_value, first, in.split_seed, split_plan(split_plan::kind::ByteByByte));
  }
  check_cut(whole, in.stream, max_value, first, in.split_seed, split_plan(split_plan::kind::Seeded, in.split_seed));
  return 0;
}
