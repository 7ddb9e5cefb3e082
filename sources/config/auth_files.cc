#include "auth_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ithaca::config {

namespace {

// The largest password file read: memcached's are "not supposed to be a
// huge database" (8 entries of 255 bytes for -Y).
constexpr off_t kMaxPasswordFileSize = off_t{1} << 20;

// memcached's safe_memcmp: every byte looked at, whatever differs first.
bool same_bytes(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

// The next piece fgets(buf, 256) returns from `text` at `at`: up to and with
// the next newline, at most 255 bytes.
std::string_view next_piece(std::string_view text, std::size_t at) {
  std::string_view rest = text.substr(at, kAuthFilePieceMax);
  const std::size_t nl = rest.find('\n');
  return nl == std::string_view::npos ? rest : rest.substr(0, nl + 1);
}

// Reads `path`, a regular file of at most kMaxPasswordFileSize bytes, opened
// without waiting (a FIFO is refused, not waited on). `what` names it in
// memcached's words ("authfile", "sasl database").
bool read_password_file(const std::string& path, const char* what, std::string& text, std::string* error) {
  auto fail = [&](const std::string& message) {
    if (error) *error = message;
    return false;
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return fail(std::string("Could not open ") + what + " [" + path + "] for reading, error " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return fail(std::string("Could not stat ") + what + " [" + path + "], error " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode) || st.st_size > kMaxPasswordFileSize) {
    ::close(fd);
    return fail(std::string(what) + " [" + path + "] is " +
                (S_ISREG(st.st_mode) ? "over 1 MiB" : "not a regular file") + "; refusing to read it");
  }
  text.clear();
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return fail(std::string("Could not read ") + what + " [" + path + "], error " + std::strerror(e));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > static_cast<std::size_t>(kMaxPasswordFileSize)) {
      ::close(fd);
      return fail(std::string(what) + " [" + path + "] grew over 1 MiB while read; refusing it");
    }
  }
  ::close(fd);
  return true;
}

}  // namespace

bool ascii_auth_table::check(std::string_view user, std::string_view password) const {
  bool found = false;
  for (const entry& e : entries) {
    // Every entry is compared, so the time says nothing of which matched.
    const bool u = same_bytes(user, e.user);
    const bool p = same_bytes(password, e.password);
    found = found || (u && p);
  }
  return found;
}

// authfile_load's loop, piece by piece: the user is what precedes the
// piece's first colon (a NUL byte before one ends the piece: malformed), the
// password what follows it up to the first \r, \n or NUL, or the piece's end;
// a piece ended by neither \r nor \n is the last one read.
bool parse_ascii_auth(std::string_view text, ascii_auth_table& out, std::vector<std::string>* notes) {
  out.entries.clear();
  std::size_t at = 0;
  while (at < text.size()) {
    const std::string_view piece = next_piece(text, at);
    const std::size_t nul = piece.find('\0');
    const std::size_t colon = piece.find(':');
    if (colon == std::string_view::npos || (nul != std::string_view::npos && nul < colon)) return false;
    const std::size_t end = piece.find_first_of(std::string_view("\r\n\0", 3), colon + 1);
    out.entries.push_back(
        {std::string(piece.substr(0, colon)),
         std::string(piece.substr(colon + 1, (end == std::string_view::npos ? piece.size() : end) - colon - 1))});
    at += piece.size();
    const bool last = end == std::string_view::npos || piece[end] == '\0';
    if (out.entries.size() == kAuthFileMaxEntries) {
      if (notes && at < text.size()) {
        notes->push_back("only the first " + std::to_string(kAuthFileMaxEntries) +
                         " entries are used (memcached's limit); the rest of the file is ignored");
      }
      break;
    }
    if (last) {
      if (notes && at < text.size()) {
        notes->push_back("entry " + std::to_string(out.entries.size()) +
                         " is longer than 255 bytes or has a NUL byte: it is cut there and the rest of the file "
                         "is ignored (as memcached reads it)");
      }
      break;
    }
  }
  return true;
}

bool load_ascii_auth(const std::string& path, ascii_auth_table& out, std::string* error,
                     std::vector<std::string>* notes) {
  std::string text;
  if (!read_password_file(path, "authfile", text, error)) return false;
  if (!parse_ascii_auth(text, out, notes)) {
    if (error) *error = "Authfile [" + path + "] has a malformed entry. Should be 'user:password'";
    return false;
  }
  return true;
}

bool sasl_pwdb_table::check(std::string_view user, std::string_view password) const {
  constexpr std::size_t kEntryMax = 256;  // sasl_defs.c MAX_ENTRY_LEN
  if (user.size() + password.size() > kEntryMax - 4) return false;
  bool found = false;
  for (const std::string& piece : pieces) {
    // memcached's buffer is zeroed past the piece: a byte beyond it reads as NUL.
    auto at = [&piece](std::size_t i) { return i < piece.size() ? piece[i] : '\0'; };
    const bool fits = piece.size() >= user.size() + 1 + password.size();
    const std::string_view p(piece);
    const bool u = fits && same_bytes(user, p.substr(0, user.size())) && at(user.size()) == ':';
    const bool w = fits && same_bytes(password, p.substr(user.size() + 1, password.size()));
    const char after = at(user.size() + 1 + password.size());
    const bool ends = after == ':' || after == '\n' || after == '\r' || after == '\0';
    found = found || (u && w && ends);
  }
  return found;
}

void parse_sasl_pwdb(std::string_view text, sasl_pwdb_table& out) {
  out.pieces.clear();
  for (std::size_t at = 0; at < text.size();) {
    const std::string_view piece = next_piece(text, at);
    out.pieces.emplace_back(piece);
    at += piece.size();
  }
}

bool load_sasl_pwdb(const std::string& path, sasl_pwdb_table& out, std::string* error) {
  std::string text;
  if (!read_password_file(path, "sasl database", text, error)) return false;
  parse_sasl_pwdb(text, out);
  return true;
}

}  // namespace ithaca::config
