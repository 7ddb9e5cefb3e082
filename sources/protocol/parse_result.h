#pragma once
// What a parser returns. The connection drops `consumed` bytes from the front
// of its input buffer in every case (NeedMore may consume swallowed bytes).

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ithaca::protocol {

enum class parse_status : std::uint8_t {
  Ok,        // a request is in `out`; consume, execute, then parse again
  NeedMore,  // not enough input; consume, read more, then parse again
  Error,     // send `reply` (unless `silent`), consume; close if `close`
};

enum class error_kind : std::uint8_t {
  None,
  UnknownCommand,    // "ERROR" / binary 0x81
  BadFormat,         // CLIENT_ERROR ... (bad command line, bad flags, bad numbers)
  KeyTooLong,        // CLIENT_ERROR bad command line format / binary 0x04
  TooLarge,          // SERVER_ERROR object too large for cache / binary 0x03; value swallowed
  BadDataChunk,      // CLIENT_ERROR bad data chunk: value not followed by "\r\n"
  LineTooLong,       // no newline within the limit: close without a reply
  CrossProtocol,     // an HTTP-looking request line: close without a reply
  BadMagic,          // binary magic is not 0x80: close without a reply
  InvalidArguments,  // binary 0x04 (extras/key lengths wrong for the opcode): reply, close
  LyingLength,       // binary key+extras longer than the body: 0x81, close
  SaslRefused,       // -S: SASL mechanism over 32 bytes (0x04) or data too large (0x82); body swallowed
};

// Binary response status codes used by the parser's errors.
enum class binary_status : std::uint16_t {
  NoError = 0x0000,
  KeyNotFound = 0x0001,
  KeyExists = 0x0002,
  ValueTooLarge = 0x0003,
  InvalidArguments = 0x0004,
  ItemNotStored = 0x0005,
  DeltaBadValue = 0x0006,
  AuthError = 0x0020,
  AuthContinue = 0x0021,  // SASL: another step is wanted (its body: the challenge)
  UnknownCommand = 0x0081,
  OutOfMemory = 0x0082,
  // memcached's protocol_binary.h names them but 1.6.18 never sends them;
  // the router does (see routed_result.h).
  NotSupported = 0x0083,      // NOT_SUPPORTED
  InternalError = 0x0084,     // EINTERNAL
  TemporaryFailure = 0x0086,  // ETMPFAIL
};

struct parse_result {
  parse_status status = parse_status::NeedMore;
  std::size_t consumed = 0;
  error_kind error = error_kind::None;
  // Text protocols: the reply line without "\r\n" (empty for LineTooLong).
  std::string_view reply;
  // Binary protocol: the status to answer with (opcode/opaque are in the request).
  binary_status bstatus = binary_status::NoError;
  bool silent = false;  // ascii noreply suppresses this error reply, as memcached does
  bool close = false;   // close the connection after sending the reply (if any)
  // Set by the protocol parsers for TooLarge (and meta flag errors): the
  // value bytes that follow to discard. `parser` folds it into `consumed`
  // and into its own swallow state, so callers of `parser` always see 0.
  std::size_t swallow = 0;

  static parse_result ok(std::size_t n) { return {parse_status::Ok, n}; }
  static parse_result need_more(std::size_t n = 0) { return {parse_status::NeedMore, n}; }
};

}  // namespace ithaca::protocol
