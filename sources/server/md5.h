// MD5 (RFC 1321), for mcrouter's `__mcrouter__.config_md5_digest`: the digest of the
// config file's text, a name for a version of it, not a security measure. Written out
// here so that reading a config does not load OpenSSL (net/openssl_loader.h: only TLS
// does). [any thread; pure]
#pragma once

#include <string>
#include <string_view>

namespace ithaca::server {

// The 32 lower-case hex digits of text's MD5.
std::string md5_hex(std::string_view text);

}  // namespace ithaca::server
