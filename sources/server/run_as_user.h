// -u / process.user: started as root, the server binds its listeners first
// (ports below 1024 work) and then becomes the user: its groups (as
// initgroups(3) gives them), its gid, its uid, for every thread (glibc applies
// each set*id call to the whole process). memcached 1.6 switches before it
// binds; its messages are kept: "can't find the user X to switch to" (exit
// EX_NOUSER, 67), "failed to assume identity of user X" (EX_OSERR, 71).
// Not started as root: -u is ignored, as memcached ignores it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ithaca::server {

struct target_user {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // its supplementary groups, its gid among them
};

// Looks the user up (getpwnam, getgrouplist). False with memcached's words in
// *error. [main thread, before any other thread: NSS lookups may read files
// and open sockets, best done once and early]
bool find_user(const std::string& name, target_user& out, std::string* error);

// Becomes `u`: setgroups, setgid, setuid, then checks that root cannot be
// taken back. keep_dumpable: PR_SET_DUMPABLE 1 again (the kernel clears it on
// a uid change, which would make -r's core dumps impossible). False with
// *error (memcached's words first). [any thread, once; every thread follows]
bool switch_user(const target_user& u, bool keep_dumpable, std::string* error);

}  // namespace ithaca::server
