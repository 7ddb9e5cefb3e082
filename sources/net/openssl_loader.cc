#include "openssl_loader.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace ithaca::net {

namespace {

// libssl's soname for OpenSSL 3 (the version meson checks for), from the package the
// server was built against (Debian: libssl3).
constexpr const char* kLibssl = "libssl.so.3";

struct loaded_library {
  void* handle = nullptr;
  std::string error;
};

const loaded_library& library() {
  static const loaded_library lib = [] {
    loaded_library l;
    // RTLD_LOCAL: its symbols stay out of the global scope, so they never meet the
    // stubs of the same names in this executable (which it does not export either).
    l.handle = dlopen(kLibssl, RTLD_NOW | RTLD_LOCAL);
    if (!l.handle) {
      const char* why = dlerror();
      l.error = std::string("cannot load ") + kLibssl + " (TLS needs OpenSSL 3: the libssl3 package): " +
                (why ? why : "unknown error");
    }
    return l;
  }();
  return lib;
}

}  // namespace

bool openssl_load(std::string* error) {
  const loaded_library& l = library();
  if (!l.handle && error) *error = l.error;
  return l.handle != nullptr;
}

void* openssl_symbol(const char* name) {
  const loaded_library& l = library();
  void* p = l.handle ? dlsym(l.handle, name) : nullptr;
  if (!p) {
    std::fprintf(stderr, "ithaca: OpenSSL's %s is not available: %s\n", name,
                 l.handle ? "not in libssl/libcrypto" : l.error.c_str());
    std::abort();
  }
  return p;
}

}  // namespace ithaca::net
