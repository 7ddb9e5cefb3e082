// OpenSSL, loaded when TLS is first configured rather than at every start: linked
// directly, libssl and libcrypto cost about 1.7 MiB of every server's resident
// memory (their relocations and symbol tables are touched at load), TLS or not,
// which issue 33's RSS-against-memcached budget cannot spare. So ithaca links neither:
// openssl_stubs.cc defines each OpenSSL function ithaca calls, forwarding to the
// library this loads (dlopen of libssl.so.3, which brings libcrypto.so.3).
//
// openssl_load is called before the first context is made (net/tls_setup.cc,
// server/tls_context.cc), where blocking on the file system is allowed (the config's
// load, the pooler at start-up and reload); a server without TLS never loads it.
// [any thread; the first call loads, under a static's initialisation]
#pragma once

#include <string>

namespace ithaca::net {

// True once OpenSSL is loaded; false and *error ("cannot load libssl.so.3: why") if it
// cannot be.
bool openssl_load(std::string* error);

// The address of OpenSSL's `name` (loading the library if no call did yet). Aborts with
// a message if the library or the name is missing: callers made a context first, so
// the library is there.
void* openssl_symbol(const char* name);

}  // namespace ithaca::net
