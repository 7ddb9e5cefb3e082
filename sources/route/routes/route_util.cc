#include "route_util.h"

#include <array>

#include "command_class.h"
#include "number.h"

namespace ithaca::route {

using protocol::routed_outcome;

namespace {

// memcached reads an exptime over 30 days as a unix time.
constexpr std::int64_t kRelativeMax = 60 * 60 * 24 * 30;

// Bit of each name: 0 tko, 1 timeout, 2 connect_error, 3 remote_error,
// 4 busy, 5 local_error; 6: results ithaca never has.
struct failover_name {
  const char* name;
  int bit;
};
constexpr std::array<failover_name, 10> kFailoverNames = {{{"tko", 0},
                                                           {"timeout", 1},
                                                           {"connect_timeout", 1},
                                                           {"deadline_exceeded", 1},
                                                           {"connect_error", 2},
                                                           {"remote_error", 3},
                                                           {"busy", 4},
                                                           {"local_error", 5},
                                                           {"try_again", 6},
                                                           {"shutdown", 6}}};

std::uint32_t crc32_of(std::string_view s) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t crc = 0xffffffffu;
  for (const char ch : s) crc = table[(crc ^ static_cast<std::uint8_t>(ch)) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

}  // namespace

severity severity_of(const protocol::routed_result& r, const protocol::request& req) {
  switch (r.outcome) {
    case routed_outcome::Hits:
      if (r.failed_keys > 0) return severity::Failure;
      for (std::size_t i = 0; i < r.key_count(); ++i) {
        if (!r.hit(i).found) return severity::Miss;
      }
      return severity::Success;
    case routed_outcome::Stored:
    case routed_outcome::Deleted:
    case routed_outcome::Touched:
    case routed_outcome::Ok:
    case routed_outcome::Number:
    case routed_outcome::LeaseToken: return severity::Success;
    case routed_outcome::NotStored:
    case routed_outcome::Exists:
    case routed_outcome::NotFound:
    case routed_outcome::NonNumeric: return severity::Miss;
    case routed_outcome::ErrorLine:
    case routed_outcome::Refused: return severity::Error;
    case routed_outcome::Failed:
    case routed_outcome::Pending: return severity::Failure;
    case routed_outcome::Raw: {
      // A meta client's reply from a meta server, as it is.
      const std::string_view raw = r.raw;
      if (raw.starts_with("SERVER_ERROR") || raw.starts_with("CLIENT_ERROR") || raw.starts_with("ERROR")) {
        return severity::Error;
      }
      if (raw.starts_with("EN") || raw.starts_with("NF") || raw.starts_with("NS") || raw.starts_with("EX")) {
        return severity::Miss;
      }
      (void)req;
      return severity::Success;
    }
  }
  return severity::Failure;
}

bool parse_failover_errors(const std::vector<std::string>& names, failover_mask& out, std::string* bad) {
  if (names.empty()) {
    out = kFailoverAll;
    return true;
  }
  out = 0;
  for (const std::string& n : names) {
    bool known = false;
    for (const failover_name& f : kFailoverNames) {
      if (n == f.name) {
        out |= 1u << f.bit;
        known = true;
      }
    }
    if (!known) {
      if (bad) *bad = n;
      return false;
    }
  }
  return true;
}

bool fails_over(const protocol::routed_result& r, failover_mask mask) {
  auto on = [&](int bit) { return ((mask >> bit) & 1u) != 0; };
  switch (r.outcome) {
    case routed_outcome::Failed:
      switch (r.failure) {
        case protocol::call_failure::Down: return on(0);
        case protocol::call_failure::Timeout: return on(1);
        case protocol::call_failure::ConnectionError: return on(2);
        case protocol::call_failure::BadReply: return on(3);
        case protocol::call_failure::QueueFull: return on(4);
      }
      return true;
    case routed_outcome::Hits:
      // A multi-key get whose server failed: its keys came back as misses.
      return r.failed_keys > 0 && (mask & 0x1f) != 0;
    case routed_outcome::ErrorLine: return on(3) && std::string_view(r.text).starts_with("SERVER_ERROR");
    case routed_outcome::Refused: return on(5);
    case routed_outcome::Raw: return on(3) && std::string_view(r.raw).starts_with("SERVER_ERROR");
    default: return false;
  }
}

bool carries_exptime(const protocol::request& req) {
  const protocol::command_class c = protocol::classify(req);
  if (req.proto == protocol::protocol_kind::Meta) return c == protocol::command_class::Store || req.meta.has('T');
  return (c == protocol::command_class::Store || c == protocol::command_class::Touch ||
          req.cmd == protocol::command::Gat || req.cmd == protocol::command::Gats ||
          (req.proto == protocol::protocol_kind::Binary && req.cmd == protocol::command::Touch));
}

std::int64_t exptime_of(const protocol::request& req) {
  if (req.proto == protocol::protocol_kind::Meta) return req.meta.has('T') ? req.meta.ttl : 0;
  return req.exptime;
}

void set_exptime(protocol::request& req, std::int64_t exptime) {
  if (req.proto != protocol::protocol_kind::Meta) {
    req.exptime = exptime;
    return;
  }
  if (!req.meta.has('T')) {
    if (req.meta.order_size >= req.meta.order.size()) return;  // no room for one more flag
    req.meta.order[req.meta.order_size++] = 'T';
    req.meta.set('T');
  }
  req.meta.ttl = exptime;
}

void cap_exptime(protocol::request& req, std::uint32_t cap, std::int64_t now_unix) {
  const std::int64_t e = exptime_of(req);
  std::int64_t left = e;
  if (e > kRelativeMax) left = e - now_unix;       // absolute: what is left
  if (e < 0 || (left > 0 && left <= cap)) return;  // already expired, or within the cap
  if (e > kRelativeMax && left <= 0) return;       // an absolute time already past
  set_exptime(req, cap);
}

double key_fraction(std::string_view key) { return static_cast<double>(crc32_of(key)) / 4294967296.0; }

void default_reply(const protocol::request& req, protocol::routed_result& result) {
  result.prepare(req);
  switch (protocol::classify(req)) {
    case protocol::command_class::Retrieve:
      result.outcome = routed_outcome::Hits;  // every key a miss
      break;
    case protocol::command_class::Store: result.outcome = routed_outcome::NotStored; break;
    case protocol::command_class::Flush: result.outcome = routed_outcome::Ok; break;
    default: result.outcome = routed_outcome::NotFound; break;
  }
}

void refuse(const protocol::request& req, protocol::routed_result& result, std::string_view text,
            protocol::binary_status bstatus) {
  result.prepare(req);
  result.outcome = routed_outcome::Refused;
  result.text.assign(text);
  result.bstatus = bstatus;
}

void dispatch_each_key(const route& self, request_slot& slot, dispatch_env& env) {
  slot.result.prepare(slot.req);
  for (std::uint32_t i = 0; i < slot.req.keys.size(); ++i) {
    const std::uint32_t which[] = {i};
    request_slot& c = slot.child_for_keys(i, which);
    slot.add_call();
    dispatch_child(self, c, env);
  }
}

void merge_hits(protocol::routed_result& into, const protocol::routed_result& from,
                std::span<const std::uint32_t> map) {
  if (into.outcome == routed_outcome::Pending) into.outcome = routed_outcome::Hits;
  if (from.outcome != routed_outcome::Hits) {
    into.failed_keys += static_cast<std::uint32_t>(map.size());
    for (const std::uint32_t k : map) into.set_failed(k, true);
    return;
  }
  into.failed_keys += from.failed_keys;
  for (std::size_t i = 0; i < map.size() && i < from.key_count(); ++i) {
    const protocol::routed_result::key_hit& h = from.hit(i);
    if (h.failed) into.set_failed(map[i], true);
    if (!h.found) continue;
    const std::string_view raw = from.raw_piece(h);
    if (raw.empty()) {
      into.set_hit(map[i], h.flags, h.cas, from.data(h));
    } else {
      into.set_hit_raw(map[i], h.flags, h.cas, h.raw_has_cas, from.data(h), raw);
    }
  }
}

bool parse_meta_value(std::string_view raw, std::string_view& value, std::uint32_t& flags, std::int64_t& ttl) {
  if (!raw.starts_with("VA ")) return false;
  const std::size_t eol = raw.find("\r\n");
  if (eol == std::string_view::npos) return false;
  std::string_view line = raw.substr(3, eol - 3);
  std::uint64_t size = 0;
  bool have_size = false;
  flags = 0;
  ttl = -1;
  while (!line.empty()) {
    const std::size_t sp = line.find(' ');
    const std::string_view tok = line.substr(0, sp);
    line = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
    if (tok.empty()) continue;
    if (!have_size) {
      const auto v = protocol::parse_u64(tok);
      if (!v) return false;
      size = *v;
      have_size = true;
    } else if (tok[0] == 'f') {
      const auto v = protocol::parse_u64(tok.substr(1));
      if (!v || *v > UINT32_MAX) return false;
      flags = static_cast<std::uint32_t>(*v);
    } else if (tok[0] == 't') {
      const std::string_view n = tok.substr(1);
      if (n == "-1") {
        ttl = -1;
      } else {
        const auto v = protocol::parse_u64(n);
        if (!v) return false;
        ttl = static_cast<std::int64_t>(*v);
      }
    }
  }
  if (!have_size || raw.size() < eol + 2 + size + 2) return false;
  value = raw.substr(eol + 2, size);
  return true;
}

}  // namespace ithaca::route
