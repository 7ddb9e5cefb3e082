#pragma once
// Reply encoders for the three protocols. Each appends one reply to an
// out_buffer; byte formats were captured from memcached 1.6.18 (see the
// tests). Encoders never fail and never look at the store: the executor
// passes the item's fields in.

#include <cstdint>
#include <memory>
#include <string_view>

#include "out_buffer.h"
#include "parse_result.h"
#include "request.h"

namespace ithaca::protocol {

// ---- classic ascii ----------------------------------------------------------

enum class ascii_status : std::uint8_t {
  Stored,
  NotStored,
  Exists,
  NotFound,
  Deleted,
  Touched,
  Ok,
  End,
  Error,
};

// "STORED\r\n" etc.
void encode_ascii_status(out_buffer& out, ascii_status status);
// Any line, "\r\n" appended (CLIENT_ERROR ..., SERVER_ERROR ...).
void encode_ascii_line(out_buffer& out, std::string_view line);
// "VALUE <key> <flags> <bytes>[ <cas>]\r\n<data>\r\n" (cas for gets/gats).
void encode_ascii_value(out_buffer& out, std::string_view key, std::uint32_t flags, std::string_view data,
                        const std::uint64_t* cas = nullptr, value_owner owner = {});
// incr/decr result: "<n>\r\n".
void encode_ascii_number(out_buffer& out, std::uint64_t n);
// "STAT <name> <value>\r\n"; finish a stats reply with encode_ascii_status(End).
void encode_ascii_stat(out_buffer& out, std::string_view name, std::string_view value);
// "VERSION <v>\r\n".
void encode_ascii_version(out_buffer& out, std::string_view version);
// mcrouter lease-get miss (our decision, no oracle; mcrouter's ascii format):
// "LVALUE <key> <token> <flags> <bytes>\r\n<data>\r\nEND\r\n" — the data is
// usually empty; the client then sends lease-set with the token. A lease-get
// hit is answered exactly like get ("VALUE ... END"). A lease-set answers
// STORED, NOT_STORED (stale token) like set.
// mcrouter's metaget hit (its AsciiSerialized format; age and the server's
// address are not known here, as mcrouter prints them when it has none):
//   META <key> age: unknown; exptime: <exptime>; from: unknown; is_transient: 0\r\n
// `exptime`: the unix time the item expires, 0 if never. END follows.
void encode_metaget(out_buffer& out, std::string_view key, std::int64_t exptime);

void encode_lease_value(out_buffer& out, std::string_view key, std::uint64_t token, std::uint32_t flags,
                        std::string_view data);

// ---- meta -------------------------------------------------------------------

enum class meta_code : std::uint8_t { HD, VA, EN, NS, EX, NF, MN };

// What the executor knows about the item, for the return flags.
struct meta_item {
  std::uint64_t cas = 0;
  std::uint32_t flags = 0;
  std::int64_t ttl = -1;          // seconds left; -1: never expires
  std::uint64_t size = 0;         // value length
  bool fetched = false;           // h: fetched before this request
  std::uint64_t last_access = 0;  // l: seconds since last access
  bool win = false;               // W: this client should recache
  bool stale = false;             // X: the item is stale
  bool won_already = false;       // Z: another client has won the recache
};

// Meta reply. Return flags are echoed in request order (memcached does so:
// "mg foo v c f t s k O123" -> "VA 3 c22 f5 t-1 s3 kfoo O123"), then Z, X, W.
// Which letters a command returns (memcached 1.6.18):
//   mg hit: O k c f h l s t     mg miss (EN): O k
//   ms: O k c                   md: O k       ma: O k c t
// `item` may be null (miss). `data` is the value for VA.
// `key_binary`: echo the key base64-encoded followed by " b". memcached 1.6.18
// does this when the request had 'b' (ms, md, ma, mg miss) but for an mg hit
// only if the item was stored with a binary key; the executor decides.
void encode_meta(out_buffer& out, meta_code code, const request& req, const meta_item* item, std::string_view data = {},
                 bool key_binary = false, value_owner owner = {});
// "ME <key> <text>\r\n" (me hit; a miss is encode_meta(EN)).
void encode_meta_debug(out_buffer& out, std::string_view key, std::string_view text);

// ---- binary -----------------------------------------------------------------

// Generic response: header (magic 0x81, the request's opcode and opaque),
// extras, key, value.
void encode_binary(out_buffer& out, std::uint8_t opcode, std::uint32_t opaque, binary_status status, std::uint64_t cas,
                   std::string_view extras, std::string_view key, std::string_view value, value_owner owner = {});
// Get/GetK/GAT/GATK hit: extras = 4-byte flags; key if the request was a K variant.
void encode_binary_get(out_buffer& out, const request& req, std::uint32_t flags, std::uint64_t cas,
                       std::string_view value, value_owner owner = {});
// Error with memcached's message as body ("Not found", "Too large.", ...).
// A GetK/GATK miss carries the key instead of a message, as memcached does.
void encode_binary_error(out_buffer& out, const request& req, binary_status status);
// Incr/Decr result: 8-byte big-endian value.
void encode_binary_number(out_buffer& out, const request& req, std::uint64_t value, std::uint64_t cas);
// One stat; end the reply with encode_binary_stat(out, req, {}, {}).
void encode_binary_stat(out_buffer& out, const request& req, std::string_view name, std::string_view value);
// The message memcached puts in the body of an error response.
std::string_view binary_status_text(binary_status status);

// ---- parser errors ----------------------------------------------------------

// Encodes the reply of a parser Error result in the request's protocol
// (nothing when it is silent or has no reply, e.g. LineTooLong, CrossProtocol, BadMagic).
void encode_parse_error(out_buffer& out, const parse_result& result, const request& req);

}  // namespace ithaca::protocol
