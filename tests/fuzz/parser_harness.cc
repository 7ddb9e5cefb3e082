#include "parser_harness.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

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
  std::vector<std::string> events;
  std::vector<std::size_t> starts;  // stream offset of the bytes each event was parsed from
  std::size_t consumed = 0;
  bool closed = false;
  bool line_too_long = false;
  std::size_t swallowing = 0;
  bool awaiting_data = false;
};

bool within(std::string_view inner, std::string_view outer) {
  if (inner.empty()) return true;
  const auto in0 = reinterpret_cast<std::uintptr_t>(inner.data());
  const auto out0 = reinterpret_cast<std::uintptr_t>(outer.data());
  return in0 >= out0 && in0 + inner.size() <= out0 + outer.size();
}

bool is_storage(command c) {
  switch (c) {
    case command::Set:
    case command::Add:
    case command::Replace:
    case command::Append:
    case command::Prepend:
    case command::Cas:
    case command::LeaseSet:
    case command::MetaSet:
      return true;
    default:
      return false;
  }
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

std::string describe(const request& req) {
  std::string s;
  auto num = [&](const char* name, auto v) {
    s += name;
    s += '=';
    s += std::to_string(v);
    s += ' ';
  };
  auto str = [&](const char* name, std::string_view v) {
    s += name;
    s += "=[";
    s += v;
    s += "] ";
  };
  num("cmd", static_cast<int>(req.cmd));
  num("proto", static_cast<int>(req.proto));
  num("nkeys", req.keys.size());
  for (std::size_t i = 0; i < req.keys.size(); ++i) str("key", req.keys[i]);
  str("value", req.value);
  num("flags", req.flags);
  num("exptime", req.exptime);
  num("cas", req.cas);
  num("delta", req.delta);
  num("initial", req.initial);
  num("lease", req.lease_token);
  num("flush", req.flush_delay);
  num("has_flush", req.has_flush_delay);
  num("verbosity", req.verbosity);
  num("memlimit", req.memlimit_mb);
  str("args", req.args);
  num("noreply", req.noreply);
  num("opcode", req.opcode);
  num("opaque", req.opaque);
  num("with_key", req.binary_with_key);
  const meta_flags& m = req.meta;
  num("mpresent", m.present);
  num("mttl", m.ttl);
  num("mvivify", m.vivify_ttl);
  num("mrecache", m.recache_ttl);
  num("mflags", m.client_flags);
  num("mcas", m.compare_cas);
  num("mecas", m.explicit_cas);
  num("mdelta", m.delta);
  num("minitial", m.initial);
  num("mmode", static_cast<int>(m.mode));
  str("mopaque", m.opaque);
  str("morder", std::string_view(m.order.data(), m.order_size));
  num("mkeyb", req.meta_key_binary);
  return s;
}

// `skipped`: bytes of an earlier refused value that this call swallowed
// before it parsed (parser::parse counts them in `consumed`).
std::string describe(const parse_result& r, const request& req, std::size_t skipped) {
  std::string s = r.status == parse_status::Ok ? "Ok " : "Error ";
  if (r.status == parse_status::Ok) {
    // Errors may fold swallowed bytes into `consumed` (as many as have
    // arrived), so only an Ok's length is the same in every feed.
    s += "consumed=" + std::to_string(r.consumed - skipped) + ' ';
  } else {
    s += "error=" + std::to_string(static_cast<int>(r.error)) + " reply=[";
    s += r.reply;
    s += "] bstatus=" + std::to_string(static_cast<int>(r.bstatus)) + " silent=" +
         std::to_string(r.silent) + " close=" + std::to_string(r.close) + ' ';
  }
  // Errors that close without a reply do not fill the request.
  if (r.error == error_kind::LineTooLong || r.error == error_kind::BadMagic) return s;
  return s + describe(req);
}

feed_outcome feed(std::string_view stream, const parser_settings& settings, split_plan plan,
                  bool encode_errors) {
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
        if (is_storage(req.cmd)) {
          FUZZ_CHECK(req.value.size() <= settings.item_size_max, "value over item_size_max accepted");
        }
      } else if (!r.close) {
        FUZZ_CHECK(r.consumed > 0, "an error that keeps the connection made no progress");
      }
      if (r.error != error_kind::LineTooLong && r.error != error_kind::BadMagic) check_views(req, input);
      o.events.push_back(describe(r, req, skipped));
      o.starts.push_back(w.consumed() + skipped);
      if (encode_errors && r.status == parse_status::Error) {
        out_buffer reply;
        encode_parse_error(reply, r, req);
      }
      w.consume(r.consumed);
      if (r.status == parse_status::Error && r.close) {
        o.closed = true;
        o.line_too_long = r.error == error_kind::LineTooLong;
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

// `cut` (a feed in pieces) must match `whole`, but for a line over the
// length limit that the pieces closed on before its newline arrived.
void check_same(const feed_outcome& whole, const feed_outcome& cut, std::string_view stream,
                const parser_settings& settings) {
  std::size_t n = cut.events.size();
  if (cut.line_too_long && !whole.line_too_long) {
    const std::size_t k = n - 1;
    const std::size_t start = cut.starts[k];
    const std::size_t nl = stream.find('\n', start);
    FUZZ_CHECK(nl == std::string_view::npos || nl - start > settings.max_line_length,
               "pieces closed on a line that is not too long");
    FUZZ_CHECK(whole.events.size() > k || whole.closed, "pieces saw a line the whole stream did not");
    n = k;
  } else {
    FUZZ_CHECK(whole.events.size() == cut.events.size(), "a different number of requests in pieces");
    FUZZ_CHECK(whole.closed == cut.closed, "closed in one feed and not in the other");
    if (!whole.closed) {
      FUZZ_CHECK(whole.consumed == cut.consumed, "a different number of bytes consumed in pieces");
      FUZZ_CHECK(whole.swallowing == cut.swallowing, "a different swallow state in pieces");
      FUZZ_CHECK(whole.awaiting_data == cut.awaiting_data, "a different awaiting_data in pieces");
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (whole.events[i] != cut.events[i]) {
      std::fprintf(stderr, "request %zu differs:\n  whole:  %s\n  pieces: %s\n", i, whole.events[i].c_str(),
                   cut.events[i].c_str());
      FUZZ_CHECK(false, "a request parsed differently in pieces");
    }
  }
}

}  // namespace

void run_parser_contract(parser_family family, const std::uint8_t* data, std::size_t size) {
  const fuzz_input in = read_fuzz_input(data, size);
  std::string stream(in.stream);
  if (family == parser_family::Binary && (stream.empty() || stream[0] != '\x80')) stream.insert(0, 1, '\x80');

  // options: bit 0 lock_protocol; bits 1-2 item_size_max.
  parser_settings settings;
  settings.lock_protocol = (in.options & 1) == 0;
  static constexpr std::size_t kItemSizes[] = {1024 * 1024, 64, 1024, 5};
  settings.item_size_max = kItemSizes[(in.options >> 1) & 3];

  const feed_outcome whole = feed(stream, settings, split_plan(split_plan::kind::Whole), true);
  check_same(whole, feed(stream, settings, split_plan(split_plan::kind::ByteByByte), false), stream, settings);
  check_same(whole, feed(stream, settings, split_plan(split_plan::kind::Seeded, in.split_seed), false), stream,
             settings);
}

}  // namespace ithaca::fuzz
