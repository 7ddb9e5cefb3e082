#include "memory_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ithaca::store {

std::string memory_file_meta_path(const std::string& file) { return file + ".meta"; }

bool memory_file_read_meta(const std::string& file, memory_file_meta& m, std::string& why) {
  std::ifstream in(memory_file_meta_path(file));
  if (!in) {
    why = memory_file_meta_path(file) + ": " + std::strerror(errno);
    return false;
  }
  m = {};
  std::string key;
  int64_t value = 0;
  unsigned seen = 0;
  while (in >> key >> value) {
    ++seen;
    if (key == "format")
      m.format = static_cast<uint64_t>(value);
    else if (key == "clean")
      m.clean = value == 1;
    else if (key == "region_size")
      m.region_size = static_cast<uint64_t>(value);
    else if (key == "item_size_max")
      m.item_size_max = static_cast<uint64_t>(value);
    else if (key == "cas_enabled")
      m.cas_enabled = value == 1;
    else if (key == "generation")
      m.generation = static_cast<uint64_t>(value);
    else if (key == "top")
      m.top = static_cast<uint64_t>(value);
    else if (key == "checksum")
      m.checksum = static_cast<uint64_t>(value);
    else if (key == "stop_unix")
      m.stop_unix = value;
    else if (key == "wall_base")
      m.wall_base = value;
    else if (key == "cas_counter")
      m.cas_counter = static_cast<uint64_t>(value);
    else if (key == "oldest_cas")
      m.oldest_cas = static_cast<uint64_t>(value);
    else if (key == "oldest_live_unix")
      m.oldest_live_unix = value;
    else
      --seen;  // a later format's line: the format number says whether it matters
  }
  if (!in.eof() || seen < 13) {
    why = memory_file_meta_path(file) + ": unreadable or incomplete";
    return false;
  }
  return true;
}

bool memory_file_write_meta(const std::string& file, const memory_file_meta& m, std::string& why) {
  std::ostringstream o;
  // The checksum as a signed number: the reader reads every value as int64_t.
  o << "format " << m.format << "\nclean " << (m.clean ? 1 : 0) << "\nregion_size " << m.region_size
    << "\nitem_size_max " << m.item_size_max << "\ncas_enabled " << (m.cas_enabled ? 1 : 0) << "\ngeneration "
    << m.generation << "\ntop " << m.top << "\nchecksum " << static_cast<int64_t>(m.checksum) << "\nstop_unix "
    << m.stop_unix << "\nwall_base " << m.wall_base << "\ncas_counter " << static_cast<int64_t>(m.cas_counter)
    << "\noldest_cas " << static_cast<int64_t>(m.oldest_cas) << "\noldest_live_unix " << m.oldest_live_unix << "\n";
  const std::string text = o.str();
  const std::string path = memory_file_meta_path(file);
  const std::string tmp = path + ".tmp";
  auto fail = [&](const std::string& what) {
    why = what + ": " + std::strerror(errno);
    return false;
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fail(tmp);
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (!written) return fail(tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail(path);
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return true;
}

memory_file_state memory_file_prepare(const std::string& path, uint64_t size, uint64_t item_size_max, bool cas_enabled,
                                      bool replace_in_use) {
  memory_file_state s;
  s.path = path;
  s.size = size;
  s.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (s.fd < 0) throw std::runtime_error("memory file " + path + ": " + std::strerror(errno));
  if (::flock(s.fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(s.fd);
    if (err != EWOULDBLOCK || !replace_in_use) {
      throw std::runtime_error(
          "memory file " + path + ": " +
          (err == EWOULDBLOCK ? std::string("in use by another running process") : std::string(std::strerror(err))));
    }
    // The old process of a takeover maps this inode shared: never write into it.
    ::unlink(path.c_str());
    s.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (s.fd < 0 || ::flock(s.fd, LOCK_EX | LOCK_NB) != 0) {
      throw std::runtime_error("memory file " + path + ": a new file for the takeover: " + std::strerror(errno));
    }
  }
  struct stat st {};
  const uint64_t file_size = ::fstat(s.fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  memory_file_meta m;
  std::string why;
  auto differs = [&](const char* what, uint64_t was, uint64_t now) {
    s.why = std::string(what) + " was " + std::to_string(was) + ", is " + std::to_string(now);
  };
  if (file_size == 0) {
    s.why = "a new file";
  } else if (!memory_file_read_meta(path, m, why)) {
    s.why = why;
  } else if (m.format != kMemoryFileFormat) {
    differs("the format", m.format, kMemoryFileFormat);
  } else if (!m.clean) {
    s.why = "not stopped cleanly (SIGUSR1 stops and keeps it; a crash or SIGKILL does not)";
  } else if (m.region_size != size || file_size != size) {
    differs("the memory limit (-m)", m.region_size, size);
  } else if (m.item_size_max != item_size_max) {
    differs("item_size_max (-I)", m.item_size_max, item_size_max);
  } else if (m.cas_enabled != cas_enabled) {
    differs("cas_enabled (-C)", m.cas_enabled, cas_enabled);
  } else if (m.top > size || m.top % 8) {
    s.why = "its blocks' end lies outside it";
  } else {
    s.restorable = true;
  }
  s.meta = m;
  memory_file_meta dirty = m;
  dirty.format = kMemoryFileFormat;
  dirty.clean = false;
  dirty.region_size = size;
  dirty.item_size_max = item_size_max;
  dirty.cas_enabled = cas_enabled;
  dirty.generation = m.generation + 1;
  s.meta.generation = dirty.generation;
  if (!memory_file_write_meta(path, dirty, why)) {
    ::close(s.fd);
    throw std::runtime_error("memory file " + path + ": " + why);
  }
  return s;
}

// Not instrumented by AddressSanitizer: it reads the free blocks too, whose payloads the
// region poisons (item_region.cc), and their bytes are part of what the stop left.
__attribute__((no_sanitize_address)) uint64_t memory_file_checksum(const char* p, uint64_t n) noexcept {
  // Four lanes so the multiplies overlap (a 64 MiB region in ~20 ms), folded at the end.
  uint64_t h[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull, 0x27d4eb2f165667c5ull};
  constexpr uint64_t kMul = 0xff51afd7ed558ccdull;
  // Plain aligned loads (the region is page aligned, n a multiple of 8), not memcpy, which
  // ASan would intercept and check where the compiler keeps the call.
  using word_alias = uint64_t __attribute__((may_alias));
  const auto* words = reinterpret_cast<const word_alias*>(p);
  uint64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int l = 0; l < 4; ++l) {
      const uint64_t w = words[i / 8 + l];
      h[l] = (h[l] ^ w) * kMul;
      h[l] ^= h[l] >> 29;
    }
  }
  for (; i + 8 <= n; i += 8) {
    const uint64_t w = words[i / 8];
    h[0] = (h[0] ^ w) * kMul;
    h[0] ^= h[0] >> 29;
  }
  uint64_t r = n;
  for (uint64_t x : h) r = (r ^ x) * kMul, r ^= r >> 31;
  return r;
}

}  // namespace ithaca::store
