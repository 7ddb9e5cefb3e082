#include "run_as_user.h"

#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ithaca::server {

bool find_user(const std::string& name, target_user& out, std::string* error) {
  errno = 0;
  const passwd* pw = ::getpwnam(name.c_str());
  if (pw == nullptr) {
    if (error) *error = "can't find the user " + name + " to switch to";
    return false;
  }
  target_user u;
  u.name = name;
  u.uid = pw->pw_uid;
  u.gid = pw->pw_gid;
  int count = 16;
  for (int tries = 0; tries < 8; tries++) {
    u.groups.resize(static_cast<size_t>(count));
    int n = count;
    if (::getgrouplist(name.c_str(), u.gid, u.groups.data(), &n) >= 0) {
      u.groups.resize(static_cast<size_t>(n));
      out = std::move(u);
      return true;
    }
    count = n > count ? n : count * 2;  // too small: n says how many there are
  }
  u.groups = {u.gid};  // a user in thousands of groups: its own group only
  out = std::move(u);
  return true;
}

bool switch_user(const target_user& u, bool keep_dumpable, std::string* error) {
  auto fail = [&](const char* what) {
    if (error) *error = "failed to assume identity of user " + u.name + " (" + what + ": " + std::strerror(errno) + ")";
    return false;
  };
  if (::setgroups(u.groups.size(), u.groups.data()) != 0) return fail("setgroups");
  if (::setgid(u.gid) != 0) return fail("setgid");
  if (::setuid(u.uid) != 0) return fail("setuid");
  // A process that could become root again did not really switch.
  if (u.uid != 0 && (::setuid(0) == 0 || ::seteuid(0) == 0)) {
    if (error) *error = "failed to assume identity of user " + u.name + " (root could be taken back)";
    return false;
  }
  if (keep_dumpable && ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) return fail("prctl(PR_SET_DUMPABLE)");
  return true;
}

}  // namespace ithaca::server
