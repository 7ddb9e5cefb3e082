// memcached's two password files, read as memcached 1.6.45 reads them, and
// the checks it makes against them.
//
//  - The -Y file (authfile.c): `user:password` lines. memcached reads it with
//    fgets in pieces of at most 255 bytes: a piece without a colon is an
//    error (an empty line too); the password ends at the first \r or \n; a
//    piece that ends without one (a line over 255 bytes, or the file's last
//    line without a newline) is the last entry read; at most 8 entries are
//    kept, the rest ignored. ithaca takes the same entries and says in a note
//    what memcached drops silently.
//  - The SASL password database (sasl_defs.c, --enable-sasl-pwdb,
//    MEMCACHED_SASL_PWDB): `user:password` lines, a password ending at a
//    colon, \r, \n or the end of its line; lines read in pieces of at most
//    255 bytes too. Nothing in it is an error: a piece that matches no user
//    matches no one. memcached reads the file at each authentication; ithaca
//    at start and on each SIGHUP (server/auth_store.h).
//
// Both compare in constant time for equal lengths (memcached's safe_memcmp).
// [any thread; pure, but for the reads of the load functions, which block:
// the blocking pool or the main thread, never a worker]
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ithaca::config {

// The -Y file's entries.
struct ascii_auth_table {
  struct entry {
    std::string user;
    std::string password;
  };
  std::vector<entry> entries;
  // authfile_check: an entry with exactly this user and password.
  bool check(std::string_view user, std::string_view password) const;
};

// memcached's limits for the -Y file.
inline constexpr std::size_t kAuthFileMaxEntries = 8;  // authfile.c MAX_ENTRIES
inline constexpr std::size_t kAuthFilePieceMax = 255;  // fgets into MAX_ENTRY_LEN (256) bytes

// Parses the -Y file's text. False when a piece has no colon. `notes` gets
// what memcached would drop without a word (entries past the eighth, the
// rest of a file cut by a long or unterminated line).
bool parse_ascii_auth(std::string_view text, ascii_auth_table& out, std::vector<std::string>* notes);

// Reads and parses `path`. False with *error in memcached's words ("Could not
// open authfile [F] for reading, error No such file or directory", "Authfile
// [F] has a malformed entry. Should be 'user:password'").
bool load_ascii_auth(const std::string& path, ascii_auth_table& out, std::string* error,
                     std::vector<std::string>* notes);

// The SASL password database: its lines as memcached's fgets cuts them.
struct sasl_pwdb_table {
  std::vector<std::string> pieces;
  // sasl_server_userdb_checkpass: a piece "user:password" followed by ':',
  // '\r', '\n' or its end. A user and password of more than 252 bytes
  // together never match (memcached's MAX_ENTRY_LEN - 4).
  bool check(std::string_view user, std::string_view password) const;
};

void parse_sasl_pwdb(std::string_view text, sasl_pwdb_table& out);

// Reads `path`. False with *error ("Could not open sasl database [F] for
// reading, error ...": memcached only fails each authentication then).
bool load_sasl_pwdb(const std::string& path, sasl_pwdb_table& out, std::string* error);

}  // namespace ithaca::config
