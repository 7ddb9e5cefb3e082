#pragma once
// The part of a key a pool hashes, from two per-pool options:
//
// - hash stop (mcrouter): a key containing "|#|" hashes only what comes
//   before its first "|#|" ("user:7|#|avatar" hashes "user:7"), so related
//   keys can share a server. Key "|#|x" hashes the empty part.
// - hash tag (twemproxy's `hash_tag`, two characters, e.g. "{}"): if the key
//   holds the opening character, and the closing one somewhere after it, and
//   there is at least one byte between them, only those bytes are hashed
//   ("{user:7}.avatar" hashes "user:7"). Only the FIRST opening character and
//   the first closing one after it count: "{}{a}" and "a{}" hash the whole
//   key (empty tag), and so does "a{b" (no closer). nc_server.c
//   server_pool_idx.
//
// When both are set the hash stop applies first and the tag is looked for
// only in what precedes the "|#|": the stop marks where the routed part of the
// key ends, so a tag after it is not part of the routing key.
// "{a}b|#|c" hashes "a"; "a|#|{b}" hashes "a".
//
// An empty part hashes to 0 under every hash kind (distribution::key_hash, as
// twemproxy does for an empty key).

#include <string>
#include <string_view>

namespace ithaca::proxy {

struct key_hash_options {
  // "" (off) or exactly two characters; check with valid_hash_tag().
  std::string hash_tag;
  bool hash_stop = false;
};

inline constexpr std::string_view kHashStop = "|#|";

// twemproxy's rule for its config: empty (off) or exactly two characters.
bool valid_hash_tag(std::string_view tag);

// A view into `key`.
std::string_view key_hash_part(std::string_view key, const key_hash_options& options);

}  // namespace ithaca::proxy
