#include "parser_harness.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "command_class.h"
#include "event_record.h"
#include "fuzz_check.h"
#include "fuzz_input.h"
#include "out_buffer.h"
#include "parser.h"
#include "reply.h"
#include "stream_window.h"

namespace ithaca::fuzz {
namespace {

using namespace ithaca::protocol;

// What one parse() call produced that a connection acts on (Ok and Error),
// as text, so two feeds can be compared.
struct feed_outcome {
  std::vector<std::uint64_t> events;  // a digest of each event
  std::vector<std::string> texts;     // each event readable (only when asked for)
  std::size_t consumed = 0;
  bool closed = false;
  std::size_t swallowing = 0;
  bool awaiting_data = false;
};

bool within(std::string_view inner, std::string_view outer) {
  if (inner.empty()) return true;
  const auto in0 = reinterpret_cast<std::uintptr_t>(inner.data());
  const auto out0 = reinterpret_cast<std::uintptr_t>(outer.data());
  return in0 >= out0 && in0 + inner.size() <= out0 + outer.size();
}

// Views must point into the bytes given to parse() (or the scratch of a
// decoded base64 key): a view past them is a read past the input.
void check_views(const request& req, std::string_view input) {
  const std::string_view scratch(req.scratch.data(), req.scratch.size());
  for (std::size_t i = 0; i < req.keys.size(); ++i) {
    FUZZ_CHECK(within(req.keys[i], input) || within(req.keys[i], scratch), "key view outside the input");
  }
  FUZZ_CHECK(within(req.value, input), "value view outside the input");
  FUZZ_CHECK(within(req.args, input), "args view outside the input");
  FUZZ_CHECK(within(req.meta.opaque, input), "opaque view outside the input");
}

template <typename Sink>
void describe(Sink& s, const request& req) {
  s.num("cmd", static_cast<int>(req.cmd));
  s.num("proto", static_cast<int>(req.proto));
  s.num("nkeys", req.keys.size());
  for (std::size_t i = 0; i < req.keys.size(); ++i) s.str("key", req.keys[i]);
  s.str("value", req.value);
  s.num("flags", req.flags);
  s.num("exptime", req.exptime);
  s.num("cas", req.cas);
  s.num("delta", req.delta);
  s.num("initial", req.initial);
  s.num("lease", req.lease_token);
  s.num("flush", req.flush_delay);
  s.num("has_flush", req.has_flush_delay);
  s.num("verbosity", req.verbosity);
  s.num("memlimit", req.memlimit_mb);
  s.str("args", req.args);
  s.num("noreply", req.noreply);
  s.num("opcode", req.opcode);
  s.num("opaque", req.opaque);
  s.num("with_key", req.binary_with_key);
  const meta_flags& m = req.meta;
  s.num("mpresent", m.present);
  s.num("mttl", m.ttl);
  s.num("mvivify", m.vivify_ttl);
  s.num("mrecache", m.recache_ttl);
  s.num("mflags", m.client_flags);
  s.num("mcas", m.compare_cas);
  s.num("mecas", m.explicit_cas);
  s.num("mdelta", m.delta);
  s.num("minitial", m.initial);
  s.num("mmode", static_cast<int>(m.mode));
  s.str("mopaque", m.opaque);
  s.str("morder", std::string_view(m.order.data(), m.order_size));
  s.num("mkeyb", req.meta_key_binary);
}

// `skipped`: bytes of an earlier refused value that this call swallowed
// before it parsed (parser::parse counts them in `consumed`).
template <typename Sink>
void describe(Sink& s, const parse_result& r, const request& req, std::size_t skipped) {
  s.num(r.status == parse_status::Ok ? "Ok" : "Error", static_cast<int>(r.status));
  if (r.status == parse_status::Ok) {
    // Errors may fold swallowed bytes into `consumed` (as many as have
    // arrived), so only an Ok's length is the same in every feed.
    s.num("consumed", r.consumed - skipped);
  } else {
    s.num("error", static_cast<int>(r.error));
    s.str("reply", r.reply);
    s.num("bstatus", static_cast<int>(r.bstatus));
    s.num("silent", r.silent);
    s.num("close", r.close);
  }
  // Errors that close without a reply do not fill the request.
  if (r.error == error_kind::LineTooLong || r.error == error_kind::BadMagic) return;
  describe(s, req);
}

feed_outcome feed(std::string_view stream, const parser_settings& settings, split_plan plan, bool encode_errors,
                  bool texts = false) {
  feed_outcome o;
  parser p(settings);
  request req;
  stream_window w(stream);
  for (;;) {
    while (!w.view().empty()) {
      const std::string_view input = w.view();
      const std::size_t swallow_before = p.swallowing();
      const std::size_t skipped = std::min(swallow_before, input.size());
      req.clear();  // as the request loop does before each parse
      const parse_result r = p.parse(input, req);
      FUZZ_CHECK(r.consumed <= input.size(), "consumed more than the input");
      FUZZ_CHECK(r.swallow == 0, "parser leaked a swallow count to its caller");
      if (r.status == parse_status::NeedMore) {
        FUZZ_CHECK(r.consumed <= swallow_before, "NeedMore consumed bytes that were not being swallowed");
        w.consume(r.consumed);
        if (!w.view().empty()) {
          const parse_result again = p.parse(w.view(), req);
          FUZZ_CHECK(again.status == parse_status::NeedMore && again.consumed == 0,
                     "the same bytes after NeedMore gave another answer");
        }
        break;
      }
      if (r.status == parse_status::Ok) {
        FUZZ_CHECK(r.consumed > 0, "Ok without progress");
        if (classify(req) == command_class::Store) {
          FUZZ_CHECK(req.value.size() <= settings.item_size_max, "value over item_size_max accepted");
        }
      } else if (!r.close) {
        FUZZ_CHECK(r.consumed > 0, "an error that keeps the connection made no progress");
      }
      if (r.error != error_kind::LineTooLong && r.error != error_kind::BadMagic) check_views(req, input);
      digest d;
      describe(d, r, req, skipped);
      o.events.push_back(d.value());
      if (texts) {
        event_text t;
        describe(t, r, req, skipped);
        o.texts.push_back(t.value());
      }
      if (encode_errors && r.status == parse_status::Error) {
        out_buffer reply;
        encode_parse_error(reply, r, req);
      }
      w.consume(r.consumed);
      if (r.status == parse_status::Error && r.close) {
        o.closed = true;
        o.consumed = w.consumed();
        return o;
      }
    }
    if (w.all_received()) break;
    w.receive(plan.next());
  }
  o.consumed = w.consumed();
  o.swallowing = p.swallowing();
  o.awaiting_data = p.awaiting_data();
  return o;
}

// How `cut` (a feed in pieces) differs from `whole`, or nullptr. They must
// match exactly: a line over the length limit closes the connection whether
// or not its newline has arrived.
const char* difference(const feed_outcome& whole, const feed_outcome& cut) {
  if (whole.events.size() != cut.events.size()) return "a different number of requests in pieces";
  if (whole.closed != cut.closed) return "closed in one feed and not in the other";
  if (!whole.closed) {
    if (whole.consumed != cut.consumed) return "a different number of bytes consumed in pieces";
    if (whole.swallowing != cut.swallowing) return "a different swallow state in pieces";
    if (whole.awaiting_data != cut.awaiting_data) return "a different awaiting_data in pieces";
  }
  if (whole.events != cut.events) return "a request parsed differently in pieces";
  return nullptr;
}

// Feeds `stream` as `plan` cuts it and checks it against `whole`. Only on a
// difference are both feeds run again keeping their events as text, to show
// the first event that differs.
void check_cut(const feed_outcome& whole, std::string_view stream, const parser_settings& settings, split_plan plan) {
  const char* what = difference(whole, feed(stream, settings, plan, false));
  if (what == nullptr) return;
  const feed_outcome w = feed(stream, settings, split_plan(split_plan::kind::Whole), false, true);
  const feed_outcome c = feed(stream, settings, plan, false, true);
  const std::size_t n = std::max(w.texts.size(), c.texts.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::string none = "(none)";
    const std::string& a = i < w.texts.size() ? w.texts[i] : none;
    const std::string& b = i < c.texts.size() ? c.texts[i] : none;
    if (a != b) {
      std::fprintf(stderr, "request %zu differs:\n  whole:  %s\n  pieces: %s\n", i, a.c_str(), b.c_str());
      break;
    }
  }
  std::fprintf(stderr, "whole: %zu requests, closed %d, consumed %zu; pieces: %zu requests, closed %d, consumed %zu\n",
               w.texts.size(), w.closed, w.consumed, c.texts.size(), c.closed, c.consumed);
  FUZZ_CHECK(false, what);
}

}  // namespace

void run_parser_contract(parser_family family, const std::uint8_t* data, std::size_t size) {
  const fuzz_input in = read_fuzz_input(data, size);
  std::string stream(in.stream);
  if (family == parser_family::Binary && (stream.empty() || stream[0] != '\x80')) stream.insert(0, 1, '\x80');

  // options: bit 0 lock_protocol; bits 1-2 item_size_max; bit 3 short line
  // limits, so that inputs far below the real 16 KiB (and -max_len) reach
  // them. (Not below 106 bytes: whether a line is a multiget must be known
  // from its first bytes before its limit is reached.)
  parser_settings settings;
  settings.lock_protocol = (in.options & 1) == 0;
  static constexpr std::size_t kItemSizes[] = {1024 * 1024, 64, 1024, 5};
  settings.item_size_max = kItemSizes[(in.options >> 1) & 3];
  if ((in.options & 8) != 0) {
    settings.max_line_length = 200;
    settings.max_get_line_length = 600;
  }

  const feed_outcome whole = feed(stream, settings, split_plan(split_plan::kind::Whole), true);
  if (bytewise_due(stream.size(), in.split_seed)) {
    check_cut(whole, stream, settings, split_plan(split_plan::kind::ByteByByte));
  }
  check_cut(whole, stream, settings, split_plan(split_plan::kind::Seeded, in.split_seed));
}

}  // namespace ithaca::fuzz
