// Chooses the backend. (Stand-in until the io_uring backend lands: epoll only.)
#include <cstdlib>
#include <cstring>

#include "backend.h"

namespace mm::detail {

std::unique_ptr<backend> backend_create(const machine_config&, std::string* reason) {
  std::string error;
  auto b = backend_epoll_create(&error);
  *reason = b ? "epoll (io_uring backend not built yet)" : error;
  return b;
}

}  // namespace mm::detail
