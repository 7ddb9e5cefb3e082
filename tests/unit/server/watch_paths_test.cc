// watch_paths.h: the entries watched for a file reached directly, through a
// symlink and through a Kubernetes ConfigMap's `..data`, and what an
// identity comparison says after each way a file changes.
#include <doctest/doctest.h>

#include <sys/inotify.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "log_capture.h"
#include "watch_paths.h"

namespace ithaca::server {

namespace {
using log::test::scratch_dir;

bool has_entry(const path_walk& w, const std::string& dir, const std::string& name) {
  for (const watched_entry& e : w.entries) {
    if (e.dir == dir && e.name == name) return true;
  }
  return false;
}

file_identity watch_identity(const std::string& path) {
  const int fd = ::inotify_init1(IN_CLOEXEC);
  REQUIRE(fd >= 0);
  watch_set s = arm_watches(fd, {path}, {});
  ::close(fd);
  return s.identities[path];
}
}  // namespace

TEST_CASE("a plain file: its directory's entry; relative paths resolve from the current directory") {
  scratch_dir dir;
  std::ofstream(dir / "conf.yaml") << "a: 1\n";
  path_walk w = walk_path(dir / "conf.yaml");
  CHECK(w.error == "");
  CHECK(w.target == dir / "conf.yaml");
  REQUIRE(w.entries.size() == 1);
  CHECK(has_entry(w, dir.path(), "conf.yaml"));
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  path_walk relative = walk_path("./sub/../conf.yaml");
  std::filesystem::current_path(cwd);
  CHECK(relative.error != "");  // sub does not exist: resolved as the kernel would, not lexically
  std::filesystem::create_directory(dir / "sub");
  std::filesystem::current_path(dir.path());
  relative = walk_path("sub/../conf.yaml");
  std::filesystem::current_path(cwd);
  CHECK(relative.target == dir / "conf.yaml");
}

TEST_CASE("a ConfigMap volume: the link, ..data and the file reached are watched") {
  scratch_dir dir;
  std::filesystem::create_directory(dir / "..2026_12_02.1");
  std::ofstream(dir / "..2026_12_02.1/m.json") << "{}\n";
  std::filesystem::create_directory_symlink("..2026_12_02.1", dir / "..data");
  std::filesystem::create_symlink("..data/m.json", dir / "m.json");
  path_walk w = walk_path(dir / "m.json");
  CHECK(w.error == "");
  CHECK(w.target == dir / "..2026_12_02.1/m.json");
  CHECK(has_entry(w, dir.path(), "m.json"));
  CHECK(has_entry(w, dir.path(), "..data"));
  CHECK(has_entry(w, dir / "..2026_12_02.1", "m.json"));
  const file_identity before = watch_identity(dir / "m.json");
  // The swap: a new directory, ..data renamed over, the old one removed.
  std::filesystem::create_directory(dir / "..2026_12_02.2");
  std::ofstream(dir / "..2026_12_02.2/m.json") << "{}\n";
  std::filesystem::create_directory_symlink("..2026_12_02.2", dir / "..data_tmp");
  std::filesystem::rename(dir / "..data_tmp", dir / "..data");
  std::filesystem::remove_all(dir / "..2026_12_02.1");
  const file_identity after = watch_identity(dir / "m.json");
  CHECK_FALSE(before == after);
  CHECK(describe_change(before, after) == "now leads to " + dir / "..2026_12_02.2/m.json");
}

TEST_CASE("a missing file's entry is watched for its creation; a symlink loop ends") {
  scratch_dir dir;
  path_walk w = walk_path(dir / "none.yaml");
  CHECK(w.target == "");
  CHECK(w.error.find("No such file or directory") != std::string::npos);
  CHECK(has_entry(w, dir.path(), "none.yaml"));
  std::filesystem::create_symlink("b", dir / "a");
  std::filesystem::create_symlink("a", dir / "b");
  w = walk_path(dir / "a");
  CHECK(w.error.find("Too many levels of symbolic links") != std::string::npos);
}

TEST_CASE("identities: a write, a rename over, a removal, a creation") {
  scratch_dir dir;
  const std::string path = dir / "c.yaml";
  std::ofstream(path) << "a: 1\n";
  file_identity one = watch_identity(path);
  CHECK(one == watch_identity(path));  // nothing changed
  std::ofstream(path) << "a: 12\n";    // in place
  file_identity two = watch_identity(path);
  CHECK(describe_change(one, two) == "was modified");
  std::ofstream(dir / "c.new") << "a: 1\n";
  std::filesystem::rename(dir / "c.new", path);
  file_identity three = watch_identity(path);
  CHECK(describe_change(two, three).starts_with("was replaced (inode "));
  std::filesystem::remove(path);
  file_identity gone = watch_identity(path);
  CHECK(describe_change(three, gone) == "is gone (No such file or directory)");
  std::ofstream(path) << "a: 1\n";
  CHECK(describe_change(gone, watch_identity(path)) == "appeared");
}

TEST_CASE("the watches: a rename in the directory is an event naming the entry; old watches are removed") {
  scratch_dir dir;
  std::filesystem::create_directory(dir / "old");
  std::ofstream(dir / "old/c.yaml") << "a: 1\n";
  std::ofstream(dir / "c.yaml") << "a: 1\n";
  const int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  REQUIRE(fd >= 0);
  watch_set first = arm_watches(fd, {dir / "old/c.yaml"}, {});
  CHECK(first.problems.empty());
  REQUIRE(first.watches.size() == 2);  // its directory, the file
  std::vector<int> previous;
  for (const auto& [wd, w] : first.watches) previous.push_back(wd);
  watch_set s = arm_watches(fd, {dir / "c.yaml"}, previous);
  REQUIRE(s.watches.size() == 2);
  int dir_wd = -1;
  for (const auto& [wd, w] : s.watches) {
    if (!w.file) dir_wd = wd;
    if (!w.file) CHECK(w.names == std::set<std::string>{"c.yaml"});
    CHECK_FALSE(first.watches.contains(wd));
  }
  char buf[4096];
  while (::read(fd, buf, sizeof buf) > 0) {}  // the removed watches' IN_IGNORED
  std::ofstream(dir / "c.new") << "a: 2\n";
  std::filesystem::rename(dir / "c.new", dir / "c.yaml");
  bool seen = false;
  ssize_t n = ::read(fd, buf, sizeof buf);
  for (ssize_t at = 0; at < n;) {
    const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
    if (e->wd == dir_wd && (e->mask & IN_MOVED_TO) && std::string(e->name) == "c.yaml") seen = true;
    at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
  }
  CHECK(seen);
  ::close(fd);
}

}  // namespace ithaca::server
