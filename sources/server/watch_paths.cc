#include "watch_paths.h"

#include <limits.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

namespace ithaca::server {

namespace {

// The kernel's own limit (MAXSYMLINKS): a loop ends the walk with ELOOP.
constexpr int kWatchMaxLinks = 40;

// A directory: what is created, removed or renamed in it (the entry named
// decides whether it matters), written in it, and the directory itself going.
constexpr uint32_t kWatchDirMask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_CLOSE_WRITE |
                                   IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK;
// The file reached: written, or removed or renamed away.
constexpr uint32_t kWatchFileMask = IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;

std::vector<std::string> watch_split(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) parts.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

// "/a/b" -> "/a"; "/a" -> "/".
std::string watch_parent(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string watch_base(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool watch_readlink(const std::string& path, std::string& out) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
  if (n < 0 || n == static_cast<ssize_t>(sizeof buf)) return false;
  out.assign(buf, static_cast<size_t>(n));
  return true;
}

}  // namespace

path_walk walk_path(const std::string& path) {
  path_walk w;
  if (path.empty()) {
    w.error = "an empty path";
    return w;
  }
  std::string done;  // the physical path resolved so far; "" is the root
  if (path.front() != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) {
      w.error = path + ": the current directory: " + std::strerror(errno);
      return w;
    }
    done = std::strcmp(cwd, "/") == 0 ? "" : cwd;
  }
  std::vector<std::string> first = watch_split(path);
  std::deque<std::string> rest(first.begin(), first.end());
  int links = 0;
  while (!rest.empty()) {
    const std::string part = std::move(rest.front());
    rest.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      done = done.empty() ? "" : watch_parent(done);
      if (done == "/") done.clear();
      continue;
    }
    const std::string dir = done.empty() ? "/" : done;
    const std::string next = done + "/" + part;
    struct stat st {};
    if (::lstat(next.c_str(), &st) != 0) {
      w.entries.push_back({dir, part});  // watched so that its creation is seen
      w.error = next + ": " + std::strerror(errno);
      return w;
    }
    if (S_ISLNK(st.st_mode)) {
      w.entries.push_back({dir, part});
      std::string target;
      if (++links > kWatchMaxLinks || !watch_readlink(next, target)) {
        w.error = next + ": " + (links > kWatchMaxLinks ? std::strerror(ELOOP) : std::strerror(errno));
        return w;
      }
      if (!target.empty() && target.front() == '/') done.clear();
      std::vector<std::string> parts = watch_split(target);
      rest.insert(rest.begin(), parts.begin(), parts.end());
      continue;
    }
    if (!rest.empty() && !S_ISDIR(st.st_mode)) {
      w.error = next + ": " + std::strerror(ENOTDIR);
      return w;
    }
    done = next;
  }
  w.target = done.empty() ? "/" : done;
  w.entries.push_back({watch_parent(w.target), watch_base(w.target)});
  return w;
}

std::string describe_change(const file_identity& before, const file_identity& after) {
  if (before.error != 0 && after.error == 0) return "appeared";
  if (after.error != 0) return std::string("is gone (") + std::strerror(after.error) + ")";
  if (before.target != after.target) return "now leads to " + after.target;
  if (before.dev != after.dev || before.ino != after.ino) {
    return "was replaced (inode " + std::to_string(before.ino) + " -> " + std::to_string(after.ino) + ")";
  }
  return "was modified";
}

watch_set arm_watches(int fd, const std::vector<std::string>& files, const std::vector<int>& previous) {
  watch_set out;
  auto add = [&](const std::string& where, uint32_t mask) -> int {
    const int wd = ::inotify_add_watch(fd, where.c_str(), mask);
    if (wd < 0) out.problems.push_back(where + ": " + std::strerror(errno));
    return wd;
  };
  for (const std::string& file : files) {
    const path_walk w = walk_path(file);
    for (const watched_entry& e : w.entries) {
      const int wd = add(e.dir, kWatchDirMask);
      if (wd >= 0) out.watches[wd].names.insert(e.name);
    }
    file_identity id;
    id.target = w.target;
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
      id.error = errno;
    } else {
      id.dev = st.st_dev;
      id.ino = st.st_ino;
      id.size = static_cast<uint64_t>(st.st_size);
      id.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
      if (!w.target.empty() && S_ISREG(st.st_mode)) {
        const int wd = add(w.target, kWatchFileMask);
        if (wd >= 0) out.watches[wd].file = true;
      }
    }
    out.identities[file] = id;
  }
  for (int wd : previous) {
    if (!out.watches.contains(wd)) ::inotify_rm_watch(fd, wd);  // EINVAL if the kernel dropped it already
  }
  return out;
}

}  // namespace ithaca::server
