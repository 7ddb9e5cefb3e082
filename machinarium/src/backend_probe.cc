// Chooses a machine's kernel backend at start-up and says why, in one line the
// machine logs. Runs on the machine thread (io_uring's SINGLE_ISSUER binds the
// ring to the thread that creates it).
#include <cstdlib>
#include <cstring>
#include <string>

#include "backend.h"
#include "backend_uring.h"

namespace mm::detail {
namespace {

// MM_BACKEND=epoll|io_uring|auto overrides an Auto configuration (the tests
// run every runtime test on both backends this way). An unknown value is
// reported, not silently taken as auto.
backend_kind kind_from_env(std::string* note) {
  const char* env = std::getenv("MM_BACKEND");
  if (!env || !*env || std::strcmp(env, "auto") == 0) return backend_kind::Auto;
  if (std::strcmp(env, "epoll") == 0) return backend_kind::Epoll;
  if (std::strcmp(env, "io_uring") == 0 || std::strcmp(env, "uring") == 0) return backend_kind::IoUring;
  *note = std::string("ignoring MM_BACKEND=") + env + "; ";
  return backend_kind::Auto;
}

std::unique_ptr<backend> make_epoll(std::string* reason, std::string why) {
  std::string error;
  std::unique_ptr<backend> b = backend_epoll_create(&error);
  if (!b) {
    *reason = why + "; epoll failed too: " + error;
    return nullptr;
  }
  *reason = std::move(why);
  return b;
}

}  // namespace

std::unique_ptr<backend> backend_create(const machine_config& cfg, std::string* reason) {
  std::string note;
  backend_kind kind = cfg.backend;
  const char* forced_by = "configuration";
  if (kind == backend_kind::Auto) {
    kind = kind_from_env(&note);
    forced_by = "MM_BACKEND";
  }

  if (kind == backend_kind::Epoll) {
    return make_epoll(reason, note + "epoll forced by " + forced_by);
  }

  std::string error;
  std::unique_ptr<backend> b = backend_uring_create(cfg, &error);
  if (b) {
    *reason = note + "io_uring: " + backend_uring_features(b.get());
    return b;
  }
  if (kind == backend_kind::IoUring) {
    *reason = note + "io_uring forced by " + forced_by + " but unavailable: " + error;
    return nullptr;
  }
  return make_epoll(reason, note + "io_uring unavailable: " + error + "; using epoll");
}

}  // namespace mm::detail
