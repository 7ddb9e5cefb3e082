// The file-system half of the config watcher (config_watch.h): what to put
// an inotify watch on for one file so that every way it can change is seen,
// and how to tell afterwards whether it did change.
//
// A file can change in place (a write), be replaced by a rename (editors,
// `mv new conf`), or be reached through a symlink that is swapped (a
// Kubernetes ConfigMap: `conf -> ..data/conf`, `..data -> ..2026_12_02_...`,
// and an update renames a new `..data` over the old one). So the watches are
// on the directories holding each symlink met while resolving the path and
// the directory holding the file reached (a rename or a swap there shows as
// an event naming that entry), plus the file reached itself (a write
// through another path, or to a bind-mounted file, shows only there). After
// every event the path is walked again and the watches moved, since a swap
// leaves the old target's directory behind.
//
// Everything here makes blocking file-system calls (lstat, readlink, stat,
// inotify_add_watch), so it runs on the blocking pool, never on a machine
// that serves: a hung network file system must not stop the pooler.
// [the blocking pool; no lock, no shared state]
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ithaca::server {

// One directory entry a path's resolution went through.
struct watched_entry {
  std::string dir;   // the directory's physical path (no symlink in it)
  std::string name;  // the entry in it
};

struct path_walk {
  // Every symlink met, in order, then the entry finally reached (also when
  // it does not exist: it may be created).
  std::vector<watched_entry> entries;
  std::string target;  // the physical path reached; "" when the walk failed
  std::string error;   // why it failed ("PATH: No such file or directory")
};

// Resolves `path` (relative to the current directory when not absolute)
// one component at a time, as open(2) would, following at most 40 symlinks.
path_walk walk_path(const std::string& path);

// What a file is now: where its path leads and that file's identity. Two
// equal identities mean no change the watcher acts on: a rename or a swap
// changes the inode or the target, a write the size or the modification
// time (nanoseconds; the watcher compares only after a quiet second, so
// two writes in one clock tick are not both after a comparison).
struct file_identity {
  std::string target;  // walk_path's; "" when it failed
  int error = 0;       // stat's errno; 0 when the file is there
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const file_identity&) const = default;
};

// "was modified", "was replaced (inode 12 -> 34)", "now leads to PATH",
// "is gone (No such file or directory)", "appeared".
std::string describe_change(const file_identity& before, const file_identity& after);

// The watches for `files` on the inotify instance `fd` and the files'
// identities now.
struct watch_set {
  struct watch {
    bool file = false;            // a watch on the file itself: any event counts
    std::set<std::string> names;  // a directory's: events naming these count
  };
  std::map<int, watch> watches;  // by watch descriptor
  std::map<std::string, file_identity> identities;
  std::vector<std::string> problems;  // watches that could not be added, one line each
};

// Adds (or keeps: the kernel gives a watched inode its descriptor again) the
// watches `files` need and removes those of `previous` no longer needed.
watch_set arm_watches(int fd, const std::vector<std::string>& files, const std::vector<int>& previous);

}  // namespace ithaca::server
