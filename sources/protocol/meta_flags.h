#pragma once
// Flags of one meta command (mg, ms, md, ma), as parsed from the command line.
// One bit per flag letter says it was present; flags that carry a token keep
// its parsed value. The order in which the client wrote the flags matters:
// memcached echoes the return flags (O k c f h l s t b) in request order, so
// that order is kept in `order`.

#include <array>
#include <cstdint>
#include <string_view>

namespace ithaca::protocol {

// Longest opaque token accepted, including the 'O' letter itself: memcached
// 1.6.18 accepts "O" + 31 bytes and answers "opaque token too long" beyond.
inline constexpr std::size_t kMetaMaxOpaqueToken = 32;

// memcached 1.6.45 refuses a meta line with 21 or more words (command, key,
// [datalen], flags): "options flags are too long" (1.6.18 refused 20 words).
inline constexpr std::size_t kMetaMaxWords = 20;

// memcached 1.6.45's tokenizer looks at the first 23 words; a flag word among
// them that starts with neither a letter (or one of [\]^_`) nor a digit makes
// the whole line a bad command line.
inline constexpr std::size_t kMetaTokenizedWords = 23;

struct meta_flags {
  // Bit per ASCII letter: bit (c - 'A') for 'A'..'Z', (c - 'a' + 26) for 'a'..'z'.
  std::uint64_t present = 0;

  static constexpr int bit_of(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    return -1;
  }
  bool has(char c) const {
    const int b = bit_of(c);
    return b >= 0 && ((present >> b) & 1u) != 0;
  }
  void set(char c) {
    const int b = bit_of(c);
    if (b >= 0) present |= std::uint64_t{1} << b;
  }

  // Token values (valid only when the letter is present).
  std::int64_t ttl = 0;            // T: new TTL (mg/ma: touch; ms: exptime)
  std::int64_t vivify_ttl = 0;     // N: autovivify on miss with this TTL
  std::int64_t recache_ttl = 0;    // R: win a recache if TTL below this
  std::uint32_t client_flags = 0;  // F: client flags (ms)
  std::uint64_t compare_cas = 0;   // C: compare CAS (ms, md, ma)
  std::uint64_t explicit_cas = 0;  // E: new CAS value (newer memcached; see parser)
  std::uint64_t delta = 1;         // D: ma delta (default 1)
  std::uint64_t initial = 0;       // J: ma initial value on autovivify
  char mode = 0;                   // M: ms E A P R S; ma I + D -
  std::string_view opaque;         // O: token without the 'O' (<= 31 bytes)

  // Return flags in request order (letters only; values come from the item).
  std::array<char, kMetaMaxWords> order{};
  std::uint8_t order_size = 0;

  // Back to the defaults above, field by field: `order` is read only up to
  // order_size, so its bytes are left as they are. (Assigning a whole
  // meta_flags{} zeroed a temporary with `rep stos` on every request: 2.7%
  // of the pipelined set row's CPU.)
  void clear() {
    present = 0;
    ttl = vivify_ttl = recache_ttl = 0;
    client_flags = 0;
    compare_cas = explicit_cas = 0;
    delta = 1;
    initial = 0;
    mode = 0;
    opaque = {};
    order_size = 0;
  }
};

}  // namespace ithaca::protocol
