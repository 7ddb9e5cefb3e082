#include "process_limits.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ithaca::server {

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

std::string lock_all_memory() {
  if (::geteuid() == 0) {
    rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
    (void)::setrlimit(RLIMIT_MEMLOCK, &unlimited);  // without CAP_SYS_RESOURCE: the limit stays
  }
  if (::mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    return std::string("warning: -k invalid, mlockall() failed: ") + std::strerror(errno);
  }
  return {};
}

}  // namespace ithaca::server
