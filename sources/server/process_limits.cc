#include "process_limits.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

namespace ithaca::server {

namespace {

constexpr int kCapIpcLock = 14;  // linux/capability.h's CAP_IPC_LOCK

// Whether the effective capabilities hold CAP_IPC_LOCK (mlock past the limit).
bool can_lock_past_the_limit() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("CapEff:", 0) == 0) {
      const uint64_t eff = std::stoull(line.substr(7), nullptr, 16);
      return (eff >> kCapIpcLock) & 1;
    }
  }
  return false;
}

}  // namespace

bool raise_core_limit() {
  rlimit old{};
  if (::getrlimit(RLIMIT_CORE, &old) == 0) {
    rlimit want{RLIM_INFINITY, RLIM_INFINITY};
    if (::setrlimit(RLIMIT_CORE, &want) != 0) {
      want.rlim_cur = want.rlim_max = old.rlim_max;
      (void)::setrlimit(RLIMIT_CORE, &want);
    }
  }
  rlimit now{};
  return ::getrlimit(RLIMIT_CORE, &now) == 0 && now.rlim_cur != 0;
}

std::string lock_all_memory(bool dropping_root) {
  if (::geteuid() == 0) {
    rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
    (void)::setrlimit(RLIMIT_MEMLOCK, &unlimited);  // without CAP_SYS_RESOURCE: the limit stays
  }
  rlimit limit{};
  (void)::getrlimit(RLIMIT_MEMLOCK, &limit);
  if (limit.rlim_cur != RLIM_INFINITY && (dropping_root || !can_lock_past_the_limit())) {
    return "warning: -k invalid, mlockall() not attempted: the locked-memory limit (RLIMIT_MEMLOCK) is " +
           std::to_string(limit.rlim_cur) + " bytes" + (dropping_root ? " for the user of -u" : "") +
           ", and every page mapped past it would then fail; raise it to unlimited (LimitMEMLOCK=infinity, "
           "ulimit -l unlimited) to lock";
  }
  if (::mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    return std::string("warning: -k invalid, mlockall() failed: ") + std::strerror(errno);
  }
  return {};
}

}  // namespace ithaca::server
