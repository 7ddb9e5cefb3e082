#include "spool_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ithaca::config {

namespace {

// "/a/b" -> "/a", "/a" -> "/", "a" -> ".", trailing slashes ignored.
std::string parent_of(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// What is wrong with `at` (the directory itself or the ancestor it would be
// made in), in words that name both when they differ.
std::string problem_at(const std::string& dir, const std::string& at, const std::string& what) {
  if (at == dir) return dir + ": " + what;
  return dir + ": " + at + " " + what;
}

}  // namespace

bool uses_spool(const config& cfg) { return !cfg.router.pools.empty(); }

std::string spool_dir_of(const config& cfg) {
  if (!cfg.router.spool_dir.empty()) return cfg.router.spool_dir;
  // systemd: StateDirectory=ithaca sets STATE_DIRECTORY=/var/lib/ithaca (a
  // colon-separated list when the unit names several).
  if (const char* state = std::getenv("STATE_DIRECTORY"); state != nullptr && state[0] == '/') {
    const std::string first(state, std::strcspn(state, ":"));
    return first + "/spool";
  }
  const std::string base = cache_config::default_large_value_dir();
  if (!cfg.listen.tcp.empty() && cfg.listen.tcp.front().port != 0) {
    return base + "/ithaca-spool-" + std::to_string(cfg.listen.tcp.front().port);
  }
  return base + "/ithaca-spool-pid-" + std::to_string(::getpid());
}

std::string spool_dir_problem(const std::string& dir) {
  if (dir.empty()) return "an empty path";
  // Up from `dir` to the first path that exists: a directory is usable if we
  // may create entries in it; a missing one if its nearest existing ancestor
  // is such a directory (make_spool_dir makes the rest).
  std::string at = dir;
  for (;;) {
    struct stat sb {};
    if (::stat(at.c_str(), &sb) == 0) {
      if (!S_ISDIR(sb.st_mode)) return problem_at(dir, at, "is not a directory");
      // access() also says EROFS for a read-only mount, which root's
      // permission bits would not show.
      if (::access(at.c_str(), W_OK | X_OK) != 0) {
        return problem_at(dir, at, std::string("is not writable: ") + std::strerror(errno));
      }
      return "";
    }
    const int e = errno;
    if (e != ENOENT && e != ENOTDIR) return problem_at(dir, at, std::strerror(e));
    const std::string up = parent_of(at);
    if (up == at) return problem_at(dir, at, std::strerror(e));
    at = up;
  }
}

bool make_spool_dir(const std::string& dir, std::string* why, bool* made) {
  if (made != nullptr) *made = false;
  auto fail = [&](const std::string& fallback) {
    // The walk's words are clearer than mkdir's errno ("/f is not a directory").
    std::string p = spool_dir_problem(dir);
    *why = p.empty() ? fallback : p;
    return false;
  };
  if (dir.empty()) return fail("an empty path");
  // mkdir -p: every prefix ending before a '/', then the whole path.
  for (std::size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    const std::string prefix = dir.substr(0, i);
    if (::mkdir(prefix.c_str(), 0700) == 0) {
      if (i == dir.size() && made != nullptr) *made = true;
    } else if (errno != EEXIST) {
      return fail(prefix + ": " + std::strerror(errno));
    }
  }
  struct stat sb {};
  if (::stat(dir.c_str(), &sb) != 0) return fail(dir + ": " + std::strerror(errno));
  if (!S_ISDIR(sb.st_mode)) return fail(dir + ": is not a directory");
  // Proof by doing: a read-only mount, a full inode table or a permission
  // that access() would not tell apart fail here, not at the first delete.
  const std::string probe = dir + "/.ithaca-probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fail(dir + ": cannot create a file in it: " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

}  // namespace ithaca::config
