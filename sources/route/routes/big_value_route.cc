// The `big_value` route (mcrouter's BigValueRoute, which its
// --big-value-split-threshold puts above the whole tree): a set, add,
// replace or cas whose value is longer than `threshold` is stored as chunks
// of `threshold` bytes under "KEY:I:SUFFIX" (I from 0; SUFFIX the low 32
// bits of SpookyHash V2's 128-bit hash of the value, as mcrouter's
// IOBufHash), each a plain set with the request's flags and exptime; once
// every chunk is stored, KEY itself gets "1-N-SUFFIX" (version 1, N chunks)
// with flag 0x8000 (MC_MSG_FLAG_BIG_VALUE) by the request's own command. A
// chunk not stored fails the whole write with the worst chunk reply, KEY
// untouched. A get, gets, gat or gats whose KEY carries the flag reads the
// chunks and answers their concatenation under KEY (its flags, 0x8000
// included unless hide_reply_flag, and its cas); a chunk missing makes KEY
// a miss, metadata that does not parse too. Chunks go `batch_size` at a time
// (0: all at once).
//
// Leases, as mcrouter's: a lease-set of a big value is split the same way,
// its chunks plain sets and KEY's metadata the lease-set with the client's
// token. A lease-get whose KEY is big metadata reads the chunks as a get
// does; when one is missing, the metadata is invalidated (a cas with its
// CAS and exptime -1: a writer's newer metadata is left alone) and the
// lease-get is sent once more, so the client gets a token to fill it with
// (a second miss: SERVER_ERROR). A lease-get token reply never shows the
// metadata it may hold as a stale value. Everything else (deletes, append,
// prepend, meta commands) passes unchanged.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "command_class.h"
#include "hash/hash_functions.h"
#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

constexpr std::uint32_t kBigValueFlag = 0x8000;

// "1-N-SUFFIX": N chunks (at least one), SUFFIX a decimal; false: not ours.
bool big_value_info(std::string_view v, std::uint32_t& chunks, std::uint64_t& suffix) {
  const std::size_t a = v.find('-');
  const std::size_t b = a == std::string_view::npos ? a : v.find('-', a + 1);
  if (b == std::string_view::npos || v.substr(0, a) != "1") return false;
  const std::string_view n = v.substr(a + 1, b - a - 1), s = v.substr(b + 1);
  auto r1 = std::from_chars(n.data(), n.data() + n.size(), chunks);
  auto r2 = std::from_chars(s.data(), s.data() + s.size(), suffix);
  return !n.empty() && !s.empty() && r1.ec == std::errc() && r1.ptr == n.data() + n.size() && r2.ec == std::errc() &&
         r2.ptr == s.data() + s.size() && chunks > 0;
}

// "KEY:I:SUFFIX" into `out` (a request's scratch); false if it does not fit.
bool big_value_chunk_key(std::string_view key, std::uint32_t i, std::uint64_t suffix, std::span<char> out,
                         std::size_t& size) {
  char tail[48];  // ":I:SUFFIX": at most 1 + 10 + 1 + 20 bytes
  const int written =
      std::snprintf(tail, sizeof tail, ":%u:%llu", static_cast<unsigned>(i), static_cast<unsigned long long>(suffix));
  if (written <= 0) return false;
  const auto n = static_cast<std::size_t>(written);
  char* p = tail + n;
  if (key.size() + n > out.size()) return false;
  std::copy(key.begin(), key.end(), out.begin());
  std::copy(tail, p, out.begin() + static_cast<std::ptrdiff_t>(key.size()));
  size = key.size() + n;
  return true;
}

// Whether every chunk key of `key` fits in a key ("KEY:I:SUFFIX", I and
// SUFFIX at their longest): a key that does not is never split (its write
// is refused, as its chunks' would be) and never read as chunks.
constexpr std::size_t kBigValueMaxKey = 250;
bool big_value_splittable(std::string_view key) { return key.size() + 1 + 10 + 1 + 20 <= kBigValueMaxKey; }

bool big_value_write(const protocol::request& r) {
  using protocol::command;
  return r.cmd == command::Set || r.cmd == command::Add || r.cmd == command::Replace || r.cmd == command::Cas ||
         r.cmd == command::LeaseSet;
}
bool big_value_read(const protocol::request& r) {
  using protocol::command;
  return r.cmd == command::Get || r.cmd == command::Gets || r.cmd == command::Gat || r.cmd == command::Gats ||
         r.cmd == command::LeaseGet;
}

class big_value_route final : public route {
 public:
  big_value_route(std::string name, const route& target, std::uint64_t threshold, std::uint64_t batch, bool hide)
      : route(std::move(name)), target_(target), threshold_(threshold), batch_(batch), hide_(hide) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  dispatch_status resume(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "big_value"; }
  std::vector<const route*> children() const override { return {&target_}; }

 private:
  // Frame states.
  enum : std::uint32_t {
    kWriteChunks,  // chunk sets out, frame.count sent so far
    kWriteKey,     // the metadata write out (the last child)
    kRead,         // the request itself out (in place)
    kReadChunks,   // chunk gets out, frame.count sent so far
    kInvalidate,   // a lease-get missed a chunk: child 0 invalidates the metadata
  };
  // Or'ed into the state once a lease-get was sent again (at most once).
  static constexpr std::uint32_t kRetried = 0x100;
  std::uint32_t write_chunks(const request_slot& slot) const {
    return static_cast<std::uint32_t>((slot.req.value.size() + threshold_ - 1) / threshold_);
  }
  // The big keys of a read's first answer, each with its chunks, in key order.
  struct big_key {
    std::size_t index;
    std::uint32_t chunks;
    std::uint64_t suffix;
  };
  std::vector<big_key> big_keys(const request_slot& slot) const;
  // Sends chunk requests [from, from + batch) of `total`; returns how many.
  template <class Make>
  std::uint32_t send_batch(request_slot& slot, dispatch_env& env, std::uint32_t from, std::uint32_t total,
                           Make make) const;
  dispatch_status finish_write(request_slot& slot, dispatch_env& env) const;
  dispatch_status finish_read(request_slot& slot, dispatch_env& env) const;

  const route& target_;
  std::uint64_t threshold_;
  std::uint64_t batch_;
  bool hide_;
};

template <class Make>
std::uint32_t big_value_route::send_batch(request_slot& slot, dispatch_env& env, std::uint32_t from,
                                          std::uint32_t total, Make make) const {
  const std::uint32_t n =
      batch_ == 0 ? total - from : static_cast<std::uint32_t>(std::min<std::uint64_t>(batch_, total - from));
  for (std::uint32_t k = from; k < from + n; ++k) {
    request_slot& c = slot.child(k);
    c.req.noreply = false;  // every chunk's reply is looked at
    make(c.req, k);
    slot.add_call();
    dispatch_child(target_, c, env);
  }
  return n;
}

dispatch_status big_value_route::dispatch(request_slot& slot, dispatch_env& env) const {
  route_counters::add(counters().requests);
  const protocol::request& req = slot.req;
  if (req.proto == protocol::protocol_kind::Meta || req.keys.empty()) return target_.dispatch(slot, env);
  if (big_value_write(req) && req.value.size() > threshold_) {
    if (!big_value_splittable(req.key())) {
      // mcrouter's chunk writes would be refused for their key
      refuse(req, slot.result, "CLIENT_ERROR bad key", protocol::binary_status::InvalidArguments);
      return dispatch_status::Pending;  // no calls: ready at once, in order
    }
    std::uint64_t h1 = 0, h2 = 0;
    protocol::request& r = slot.req;
    proxy::spooky_v2_hash128(r.value, h1, h2);
    const std::uint64_t suffix = h1 & 0xffffffffu;
    slot.push_frame(slot_frame{this, kWriteChunks, 0, static_cast<std::int64_t>(suffix)});
    const std::uint32_t total = write_chunks(slot);
    slot.top_frame().count = send_batch(slot, env, 0, total, [&](protocol::request& c, std::uint32_t i) {
      std::size_t size = 0;
      if (big_value_chunk_key(r.key(), i, suffix, c.scratch, size)) {
        c.keys.set(0, std::string_view(c.scratch.data(), size));
      }
      c.cmd = protocol::command::Set;
      c.value = r.value.substr(i * threshold_, threshold_);
    });
    return dispatch_status::Pending;
  }
  if (big_value_read(req)) {
    slot.push_frame(slot_frame{this, kRead, 0, 0});
    dispatch_child(target_, slot, env);
    return dispatch_status::Pending;
  }
  return target_.dispatch(slot, env);
}

std::vector<big_value_route::big_key> big_value_route::big_keys(const request_slot& slot) const {
  std::vector<big_key> out;
  const protocol::routed_result& r = slot.result;
  for (std::size_t i = 0; i < r.key_count(); ++i) {
    const auto& h = r.hit(i);
    if (!h.found || (h.flags & kBigValueFlag) == 0) continue;
    big_key b{i, 0, 0};
    if (big_value_info(r.data(h), b.chunks, b.suffix) && big_value_splittable(slot.req.keys[i])) out.push_back(b);
  }
  return out;
}

dispatch_status big_value_route::resume(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  switch (f.state & ~kRetried) {
    case kWriteChunks: {
      const std::uint32_t total = write_chunks(slot);
      for (std::uint32_t k = 0; k < f.count; ++k) {
        if (slot.child_at(k).result.outcome != protocol::routed_outcome::Stored) return finish_write(slot, env);
      }
      if (f.count < total) {
        const auto suffix = static_cast<std::uint64_t>(f.saved);
        const protocol::request& r = slot.req;
        f.count += send_batch(slot, env, f.count, total, [&](protocol::request& c, std::uint32_t i) {
          std::size_t size = 0;
          if (big_value_chunk_key(r.key(), i, suffix, c.scratch, size)) {
            c.keys.set(0, std::string_view(c.scratch.data(), size));
          }
          c.cmd = protocol::command::Set;
          c.value = r.value.substr(i * threshold_, threshold_);
        });
        return dispatch_status::Pending;
      }
      return finish_write(slot, env);
    }
    case kWriteKey: std::swap(slot.result, slot.child_at(f.count).result); return dispatch_status::Done;
    case kRead: {
      if (slot.result.outcome == protocol::routed_outcome::LeaseToken && slot.result.key_count() == 1 &&
          slot.result.hit(0).found && (slot.result.hit(0).flags & kBigValueFlag) != 0) {
        slot.result.clear_hit(0);  // a token, without the metadata as its stale value
      }
      if (slot.result.outcome != protocol::routed_outcome::Hits) return dispatch_status::Done;
      std::uint32_t total = 0;
      for (const big_key& b : big_keys(slot)) total += b.chunks;
      // Flagged values that are not chunk metadata: misses (mcrouter's
      // DefaultReply).
      for (std::size_t i = 0; i < slot.result.key_count(); ++i) {
        const auto& h = slot.result.hit(i);
        std::uint32_t n = 0;
        std::uint64_t s = 0;
        if (h.found && (h.flags & kBigValueFlag) != 0 &&
            (!big_value_info(slot.result.data(h), n, s) || !big_value_splittable(slot.req.keys[i]))) {
          slot.result.clear_hit(i);
        }
      }
      if (total == 0) return dispatch_status::Done;
      f.state = kReadChunks | (f.state & kRetried);
      f.saved = total;
      [[fallthrough]];
    }
    case kReadChunks: {
      const auto total = static_cast<std::uint32_t>(f.saved);
      if (f.count >= total) return finish_read(slot, env);
      // The k-th chunk over the big keys in order.
      const std::vector<big_key> keys = big_keys(slot);
      const protocol::request& r = slot.req;
      f.count += send_batch(slot, env, f.count, total, [&](protocol::request& c, std::uint32_t k) {
        std::uint32_t at = k;
        std::size_t b = 0;
        while (at >= keys[b].chunks) at -= keys[b++].chunks;
        c.cmd = protocol::command::Get;
        c.keys.clear();
        std::size_t size = 0;
        big_value_chunk_key(r.keys[keys[b].index], at, keys[b].suffix, c.scratch, size);  // fits: splittable
        c.keys.push_back(std::string_view(c.scratch.data(), size));
      });
      return dispatch_status::Pending;
    }
    case kInvalidate: {
      const request_slot& c = slot.child_at(0);
      if (severity_of(c.result, c.req) >= severity::Error) {
        std::swap(slot.result, slot.child_at(0).result);
        return dispatch_status::Done;
      }
      // The lease-get once more: a miss now, with a token.
      f.state = kRead | kRetried;
      f.count = 0;
      f.saved = 0;
      slot.release_reply();
      dispatch_child(target_, slot, env);
      return dispatch_status::Pending;
    }
    default: return dispatch_status::Done;
  }
}

// Every chunk sent was answered: on all stored, write KEY's metadata (a child
// that is the request with its value and flag replaced); else answer with
// the worst chunk reply.
dispatch_status big_value_route::finish_write(request_slot& slot, dispatch_env& env) const {
  slot_frame& f = slot.top_frame();
  const std::uint32_t sent = f.count;
  std::uint32_t worst = 0;
  for (std::uint32_t k = 0; k < sent; ++k) {
    const auto& c = slot.child_at(k);
    if (c.result.outcome != protocol::routed_outcome::Stored &&
        (slot.child_at(worst).result.outcome == protocol::routed_outcome::Stored ||
         severity_of(c.result, c.req) > severity_of(slot.child_at(worst).result, slot.child_at(worst).req))) {
      worst = k;
    }
  }
  if (slot.child_at(worst).result.outcome != protocol::routed_outcome::Stored) {
    std::swap(slot.result, slot.child_at(worst).result);
    return dispatch_status::Done;
  }
  const auto suffix = static_cast<std::uint64_t>(f.saved);
  const std::uint32_t total = write_chunks(slot);
  request_slot& c = slot.child(sent);
  c.req.noreply = false;
  const std::string info = "1-" + std::to_string(total) + "-" + std::to_string(suffix);
  std::copy(info.begin(), info.end(), c.req.scratch.begin());  // the key is the parent's view
  c.req.value = std::string_view(c.req.scratch.data(), info.size());
  c.req.flags |= kBigValueFlag;
  f.state = kWriteKey;
  f.count = sent;
  slot.add_call();
  dispatch_child(target_, c, env);
  return dispatch_status::Pending;
}

// Every chunk answered: each big key's value is its chunks' data in order;
// a chunk missing (or failed) makes the key a miss (a lease-get's: see the
// top of the file).
dispatch_status big_value_route::finish_read(request_slot& slot, dispatch_env& env) const {
  std::uint32_t k = 0;
  std::string value;
  for (const big_key& b : big_keys(slot)) {
    value.clear();
    bool whole = true;
    for (std::uint32_t j = 0; j < b.chunks; ++j, ++k) {
      const protocol::routed_result& r = slot.child_at(k).result;
      if (r.outcome != protocol::routed_outcome::Hits || r.key_count() == 0 || !r.hit(0).found) {
        whole = false;
        continue;
      }
      value.append(r.data(r.hit(0)));
    }
    const auto& h = slot.result.hit(b.index);
    if (whole) {
      slot.result.set_hit(b.index, hide_ ? h.flags & ~kBigValueFlag : h.flags, h.cas, value);
    } else if (slot.req.cmd == protocol::command::LeaseGet) {
      slot_frame& f = slot.top_frame();
      if ((f.state & kRetried) != 0) {
        refuse(slot.req, slot.result,
               "SERVER_ERROR BigValueRoute: exhausted retries for lease-get for key " + std::string(slot.req.key()),
               protocol::binary_status::InternalError);
        return dispatch_status::Done;
      }
      // mcrouter's invalidation: a cas with the metadata's CAS and exptime -1.
      request_slot& c = slot.child(0);
      c.req.noreply = false;
      c.req.cmd = h.cas != 0 ? protocol::command::Cas : protocol::command::Delete;
      c.req.cas = h.cas;
      c.req.exptime = -1;
      c.req.flags = h.flags;
      c.req.value = std::string_view();
      f.state = kInvalidate | kRetried;
      slot.add_call();
      dispatch_child(target_, c, env);
      return dispatch_status::Pending;
    } else {
      slot.result.clear_hit(b.index);
    }
  }
  return dispatch_status::Done;
}

// ---- the kind: options, how the config formats spell them, build.

// The sizes are Text options, so the mcrouter flags can set them
// (config::module_node, cli.cc); finish_big_value checks them.
struct big_value_options final : config::route_options {
  std::string threshold;     // bytes above 0; required
  std::string batch = "10";  // mcrouter's --big-value-batch-size default; 0: all at once
  bool hide_reply_flag = false;
};

bool big_value_number(const std::string& text, std::uint64_t& out) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && r.ec == std::errc() && r.ptr == text.data() + text.size();
}

void finish_big_value(config::route_kind_reader& in, config::route_config& r) {
  const auto& o = config::options_of<big_value_options>(r);
  const bool yaml = in.format() == config::route_format::Yaml;
  std::uint64_t v = 0;
  if (!big_value_number(o.threshold, v) || v == 0) {
    const char* key = yaml ? "threshold" : "split_threshold";
    in.fail_at(key, std::string("BigValueRoute: ") + key + " is not a number of bytes above 0");
  }
  if (!big_value_number(o.batch, v)) in.fail_at("batch_size", "BigValueRoute: batch_size is not a number from 0");
}

constexpr config::child_slot kBigValueSlots[] = {
    {"target", "target", "target", false, 1, "BigValueRoute: no target"},
};
constexpr config::option_spec kBigValueOptions[] = {
    config::text_option<&big_value_options::threshold>(
        "threshold", "split_threshold", "values longer than this many bytes are stored as chunks of it", true, "5000"),
    config::text_option<&big_value_options::batch>("batch_size", "batch_size",
                                                   "chunks in flight at once (0: all; default 10)", false, "2"),
    config::flag_option<&big_value_options::hide_reply_flag>(
        "hide_reply_flag", "hide_reply_flag", "clear flag 0x8000 from a big value's reply (default false)"),
};

const route* build_big_value(tree_builder& b, const config::route_config& r) {
  const route* target = b.child(r, "target", true);
  if (target == nullptr) return nullptr;
  const auto& o = config::options_of<big_value_options>(r);
  std::uint64_t threshold = 0, batch = 0;
  if (!big_value_number(o.threshold, threshold) || threshold == 0 || !big_value_number(o.batch, batch)) {
    return b.fail(r, "threshold and batch_size must be whole numbers (threshold above 0)");
  }
  return b.add<big_value_route>(b.name_of(r), *target, threshold, batch, o.hide_reply_flag);
}

constexpr config::route_kind_info kBigValueInfo{
    "big_value",
    "BigValueRoute",
    "stores values over a threshold as chunks under derived keys and reads them back whole",
    kBigValueSlots,
    kBigValueOptions,
    [](config::route_format) -> std::shared_ptr<config::route_options> {
      return std::make_shared<big_value_options>();
    },
    config::route_kind_info::collapse::None,
    finish_big_value,
};

}  // namespace

extern constinit const kind_module kBigValueKind{kBigValueInfo, build_big_value};

}  // namespace ithaca::route
