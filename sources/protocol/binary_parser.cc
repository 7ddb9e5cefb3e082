#include "binary_parser.h"

#include <climits>

#include "binary_format.h"

namespace ithaca::protocol {
namespace {

parse_result fail(error_kind kind, std::size_t consumed, binary_status status, bool close) {
  parse_result r;
  r.status = parse_status::Error;
  r.consumed = consumed;
  r.error = kind;
  r.bstatus = status;
  r.close = close;
  return r;
}

// memcached answers a malformed packet for a known opcode with "Invalid
// arguments" and closes the connection (its protocol_error()).
parse_result invalid(std::size_t consumed) {
  return fail(error_kind::InvalidArguments, consumed, binary_status::InvalidArguments, true);
}

// memcached keeps the bytes to swallow in an int: above INT_MAX it turns
// negative and nothing is swallowed; the bytes that follow are then parsed as
// packets (and their magic closes the connection).
std::size_t swallow_of(std::size_t body_rest) { return body_rest > static_cast<std::size_t>(INT_MAX) ? 0 : body_rest; }

struct opcode_info {
  command cmd = command::Unknown;
  bool quiet = false;
  bool with_key = false;  // GetK, GAT K variants: the reply carries the key
};

opcode_info classify(std::uint8_t op) {
  switch (static_cast<opcode>(op)) {
    case opcode::Get: return {command::Get};
    case opcode::GetQ: return {command::Get, true};
    case opcode::GetK: return {command::Get, false, true};
    case opcode::GetKQ: return {command::Get, true, true};
    case opcode::Set: return {command::Set};
    case opcode::SetQ: return {command::Set, true};
    case opcode::Add: return {command::Add};
    case opcode::AddQ: return {command::Add, true};
    case opcode::Replace: return {command::Replace};
    case opcode::ReplaceQ: return {command::Replace, true};
    case opcode::Append: return {command::Append};
    case opcode::AppendQ: return {command::Append, true};
    case opcode::Prepend: return {command::Prepend};
    case opcode::PrependQ: return {command::Prepend, true};
    case opcode::Delete: return {command::Delete};
    case opcode::DeleteQ: return {command::Delete, true};
    case opcode::Increment: return {command::Incr};
    case opcode::IncrementQ: return {command::Incr, true};
    case opcode::Decrement: return {command::Decr};
    case opcode::DecrementQ: return {command::Decr, true};
    case opcode::Quit: return {command::Quit};
    case opcode::QuitQ: return {command::Quit, true};
    case opcode::Flush: return {command::FlushAll};
    case opcode::FlushQ: return {command::FlushAll, true};
    case opcode::Noop: return {command::Noop};
    case opcode::Version: return {command::Version};
    case opcode::Stat: return {command::Stat};
    case opcode::Verbosity: return {command::Verbosity};
    case opcode::Touch: return {command::Touch};
    case opcode::Gat: return {command::Gat};
    case opcode::GatQ: return {command::Gat, true};
    case opcode::GatK: return {command::Gat, false, true};
    case opcode::GatKQ: return {command::Gat, true, true};
    case opcode::SaslListMechs: return {command::SaslListMechs};
    case opcode::SaslAuth: return {command::SaslAuth};
    case opcode::SaslStep: return {command::SaslStep};
  }
  return {};
}

// Whether a packet's lengths fit its opcode's rules, checked before waiting
// for the body so that a hostile length is refused without buffering it.
enum class lengths { Fit, Invalid, UnknownCommand };

lengths check_lengths(command cmd, std::size_t key_len, std::size_t ext_len, std::size_t body_len) {
  bool ok = true;
  switch (cmd) {
    case command::Unknown:
      return lengths::UnknownCommand;  // memcached answers 0x81, swallows the body, keeps the connection
    case command::Verbosity:
      // Unlike other opcodes, a bad verbosity packet is "unknown command"
      // and the connection stays open (memcached 1.6.18).
      if (!(ext_len == 4 && key_len == 0 && body_len == 4)) return lengths::UnknownCommand;
      break;
    case command::Version:
    case command::Noop:
    case command::Quit:
    case command::SaslListMechs: ok = ext_len == 0 && key_len == 0 && body_len == 0; break;
    case command::FlushAll: ok = key_len == 0 && body_len == ext_len && (ext_len == 0 || ext_len == 4); break;
    case command::Set:
    case command::Add:
    case command::Replace: ok = ext_len == 8 && key_len != 0; break;
    case command::Append:
    case command::Prepend: ok = ext_len == 0 && key_len != 0; break;
    case command::Get:
    case command::Delete: ok = ext_len == 0 && key_len > 0 && body_len == key_len; break;
    case command::Incr:
    case command::Decr: ok = ext_len == 20 && key_len > 0 && body_len == key_len + ext_len; break;
    case command::Stat: ok = ext_len == 0 && body_len == key_len; break;
    case command::SaslAuth:
    case command::SaslStep: ok = ext_len == 0 && key_len != 0; break;
    case command::Touch:
    case command::Gat: ok = ext_len == 4 && key_len != 0 && body_len == key_len + ext_len; break;
    default: break;
  }
  if (ok && key_len > kMaxKeyLength && cmd != command::SaslAuth && cmd != command::SaslStep) {
    ok = false;  // memcached: "Invalid arguments" and close
  }
  return ok ? lengths::Fit : lengths::Invalid;
}

// The opcodes whose body ends with a value (SASL's data is one when SASL is on).
bool has_value(command cmd) {
  switch (cmd) {
    case command::Set:
    case command::Add:
    case command::Replace:
    case command::Append:
    case command::Prepend:
    case command::SaslAuth:
    case command::SaslStep: return true;
    default: return false;
  }
}

// The extras of a whole packet into `out`, by opcode.
void decode_extras(command cmd, const char* extras, std::size_t ext_len, request& out) {
  switch (cmd) {
    case command::Set:
    case command::Add:
    case command::Replace:
      out.flags = load_be32(extras);
      out.exptime = static_cast<std::int64_t>(load_be32(extras + 4));
      break;
    case command::Incr:
    case command::Decr:
      out.delta = load_be64(extras);
      out.initial = load_be64(extras + 8);
      out.exptime = static_cast<std::int64_t>(load_be32(extras + 16));
      break;
    case command::Touch:
    case command::Gat: out.exptime = static_cast<std::int64_t>(load_be32(extras)); break;
    case command::FlushAll:
      if (ext_len == 4) {
        out.flush_delay = static_cast<std::int64_t>(load_be32(extras));
        out.has_flush_delay = true;
      }
      break;
    case command::Verbosity: out.verbosity = load_be32(extras); break;
    case command::Stat: out.args = out.key(); break;
    default: break;
  }
}

}  // namespace

// SASL off: memcached reads the key, answers "Unknown command" and swallows
// the rest of the body as it arrives, never holding it (a 600 MB SASL body
// costs nothing). SASL on (-S) and `refused` (a mechanism name over 32 bytes:
// "Invalid arguments"; data it could not hold in an item: "Out of memory"):
// the same, with that status. NeedMore until the key is there.
parse_result binary_parser::refuse_sasl(std::string_view input, std::size_t key_end, std::size_t key_len,
                                        std::size_t data_len) {
  if (input.size() < key_end) {
    need_ = key_end;
    return parse_result::need_more();
  }
  need_ = 0;
  parse_result r =
      !settings_.sasl
          ? fail(error_kind::UnknownCommand, key_end, binary_status::UnknownCommand, false)
          : fail(error_kind::SaslRefused, key_end,
                 key_len > kMaxSaslMechLength ? binary_status::InvalidArguments : binary_status::OutOfMemory, false);
  r.swallow = swallow_of(data_len);
  return r;
}

// A value over item_size_max, refused before it is buffered. memcached has
// read the extras and key at this point, so we wait for them too (the
// executor needs the key: a too-large set unlinks the old item); the value is
// swallowed as it arrives.
parse_result binary_parser::refuse_value(std::string_view input, std::size_t key_end, std::size_t key_len,
                                         std::size_t value_len, request& out) {
  if (input.size() < key_end) {
    need_ = key_end;
    return parse_result::need_more();
  }
  need_ = 0;
  out.keys.push_back(input.substr(key_end - key_len, key_len));
  parse_result r = fail(error_kind::TooLarge, key_end, binary_status::ValueTooLarge, false);
  r.swallow = swallow_of(value_len);
  return r;
}

// One binary request from the front of `input`: the 24-byte header, then
// every length checked against the others and the opcode's rules before
// anything is trusted (check_lengths; memcached closes on a bad magic or
// lengths that lie: Error with close). A value over item_size_max, an unknown
// opcode's or SASL's body, is swallowed as it arrives (swallow_of), never
// buffered. NeedMore consumes nothing but swallowed bytes. [the connection's
// coroutine; pure, no lock]
parse_result binary_parser::parse(std::string_view input, request& out) {
  if (need_ > input.size() || input.size() < kBinaryHeaderSize) return parse_result::need_more();
  const binary_header h = decode_header(input.data());
  out.clear();
  out.proto = protocol_kind::Binary;
  out.opcode = h.opcode;
  out.opaque = h.opaque;

  if (h.magic != kBinaryRequestMagic) {
    need_ = 0;
    parse_result r = fail(error_kind::BadMagic, input.size(), binary_status::NoError, true);
    return r;  // memcached closes without a reply
  }
  const std::size_t key_len = h.key_length;
  const std::size_t ext_len = h.extras_length;
  const std::size_t body_len = h.body_length;
  const std::size_t head = kBinaryHeaderSize;
  if (key_len + ext_len > body_len) {
    // Lying lengths: memcached answers "Unknown command" and closes.
    need_ = 0;
    return fail(error_kind::LyingLength, head, binary_status::UnknownCommand, true);
  }

  const opcode_info info = classify(h.opcode);
  out.cmd = info.cmd;
  out.noreply = info.quiet;
  out.binary_with_key = info.with_key;
  out.cas = h.cas;

  switch (check_lengths(info.cmd, key_len, ext_len, body_len)) {
    case lengths::Fit: break;
    case lengths::UnknownCommand: {
      need_ = 0;
      parse_result r = fail(error_kind::UnknownCommand, head, binary_status::UnknownCommand, false);
      r.swallow = body_len;
      return r;
    }
    case lengths::Invalid: need_ = 0; return invalid(head);
  }
  const std::size_t key_end = head + ext_len + key_len;
  const std::size_t value_len = body_len - key_len - ext_len;
  const bool sasl = info.cmd == command::SaslAuth || info.cmd == command::SaslStep;
  if (sasl && (!settings_.sasl || key_len > kMaxSaslMechLength || value_len + 2 > settings_.item_size_max))
    return refuse_sasl(input, key_end, key_len, value_len);
  const bool value = has_value(info.cmd);
  if (value && value_len > settings_.item_size_max) return refuse_value(input, key_end, key_len, value_len, out);

  const std::size_t total = head + body_len;
  if (input.size() < total) {
    need_ = total;
    return parse_result::need_more();
  }
  need_ = 0;
  if (key_len > 0) out.keys.push_back(input.substr(head + ext_len, key_len));
  decode_extras(info.cmd, input.data() + head, ext_len, out);
  if (value) out.value = input.substr(key_end, total - key_end);
  return parse_result::ok(total);
}

}  // namespace ithaca::protocol
