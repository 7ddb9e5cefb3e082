// The server's TLS context (OpenSSL's SSL_CTX) for client listeners, built
// from config::tls_config (memcached's -Z / -o ssl_* / YAML `tls:`), and its
// reload: a SIGHUP or memcached's `refresh_certs` builds a whole new SSL_CTX
// from the same files and swaps it in. New handshakes take the new one; a
// connection keeps the context it was made with (SSL_new takes a reference
// on it), so nothing is dropped. A context that fails to build leaves the
// old one in place and says why, in memcached's words.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "tls_config.h"

struct ssl_ctx_st;
using SSL_CTX = ssl_ctx_st;

namespace ithaca::server {

// memcached's TLS counters (`stats`), and ithaca's kTLS count. [any thread]
struct tls_counters {
  std::atomic<uint64_t> handshake_errors{0};  // ssl_handshake_errors
  std::atomic<uint64_t> proto_errors{0};      // ssl_proto_errors: a record that failed after the handshake
  std::atomic<uint64_t> new_sessions{0};      // ssl_new_sessions (with ssl_session_cache)
  std::atomic<uint64_t> handshakes{0};        // ssl_handshakes: completed (ithaca's)
  std::atomic<uint64_t> ktls_send{0};         // ssl_kernel_tls_connections: kTLS sends on (ithaca's)
};

class tls_context : public std::enable_shared_from_this<tls_context> {
 public:
  // Builds the first context. nullptr and *error (memcached's message:
  // "Error loading the certificate chain: FILE : OpenSSL's reason") if a
  // file is missing or bad. Reads files: call it before the machines start,
  // or through mm::blocking_call. [any thread]
  static std::shared_ptr<tls_context> create(const config::tls_config& cfg, std::string* error);
  ~tls_context();

  // The context a new handshake uses (a reference: the caller may SSL_new
  // with it while a refresh swaps another in). [any thread; leaf mutex]
  std::shared_ptr<SSL_CTX> current() const;
  // Builds a new context from the same files; on success new handshakes use
  // it, else the running one stays and *error says why. Reads files (blocks
  // the calling thread: run it through mm::blocking_call). [any thread]
  bool refresh(std::string* error);
  // refresh() on mm's blocking pool, so a slow file system suspends only the
  // calling coroutine (at most `timeout`; the pool's call keeps this object
  // alive). [machine; suspends]
  bool refresh_from_coroutine(std::string* error, int64_t timeout_ms);
  // Seconds on the monotonic clock at the last successful (re)load.
  int64_t loaded_at_s() const { return loaded_at_s_.load(std::memory_order_relaxed); }
  const config::tls_config& config() const { return cfg_; }
  tls_counters& counters() { return counters_; }
  size_t wbuf_size() const { return cfg_.wbuf_size; }

  static int64_t monotonic_s();

 private:
  explicit tls_context(const config::tls_config& cfg) : cfg_(cfg) {}
  std::shared_ptr<SSL_CTX> build(std::string* error);

  const config::tls_config cfg_;
  tls_counters counters_;
  mutable std::mutex mutex_;  // leaf: guards ctx_ only (copied out under it)
  std::shared_ptr<SSL_CTX> ctx_;
  std::mutex refresh_mutex_;  // one rebuild at a time (SIGHUP and refresh_certs may race)
  std::atomic<int64_t> loaded_at_s_{0};
};

}  // namespace ithaca::server
