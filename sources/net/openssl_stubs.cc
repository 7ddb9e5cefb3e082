// Every OpenSSL function ithaca calls, defined here and forwarded to the library
// openssl_loader.h loads on first use (ithaca links neither libssl nor libcrypto: see
// there why). The OpenSSL headers declare each one, so a definition here whose types
// differ from the library's does not compile. Each address is looked up once (a
// function-local static: thread-safe). A new OpenSSL call elsewhere needs its line here:
// the link fails until it has one.
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "openssl_loader.h"

#define ITHACA_OPENSSL_FORWARD(ret, name, params, args)                                   \
  extern "C" ret name params {                                                            \
    static const auto f = reinterpret_cast<decltype(&name)>(ithaca::net::openssl_symbol(#name)); \
    return f args;                                                                        \
  }

// libcrypto
ITHACA_OPENSSL_FORWARD(long, BIO_ctrl, (BIO * b, int cmd, long larg, void* parg), (b, cmd, larg, parg))
ITHACA_OPENSSL_FORWARD(void, ERR_clear_error, (void), ())
ITHACA_OPENSSL_FORWARD(void, ERR_error_string_n, (unsigned long e, char* buf, size_t len), (e, buf, len))
ITHACA_OPENSSL_FORWARD(unsigned long, ERR_get_error, (void), ())
ITHACA_OPENSSL_FORWARD(unsigned long, ERR_peek_error, (void), ())
ITHACA_OPENSSL_FORWARD(unsigned long, ERR_peek_last_error, (void), ())
ITHACA_OPENSSL_FORWARD(char*, X509_NAME_oneline, (const X509_NAME* a, char* buf, int size), (a, buf, size))
ITHACA_OPENSSL_FORWARD(int, X509_VERIFY_PARAM_set1_ip_asc, (X509_VERIFY_PARAM * param, const char* ipasc),
                       (param, ipasc))
ITHACA_OPENSSL_FORWARD(void, X509_free, (X509 * a), (a))
ITHACA_OPENSSL_FORWARD(X509_NAME*, X509_get_subject_name, (const X509* a), (a))
ITHACA_OPENSSL_FORWARD(const char*, X509_verify_cert_error_string, (long n), (n))

// libssl: contexts
ITHACA_OPENSSL_FORWARD(const SSL_METHOD*, TLS_client_method, (void), ())
ITHACA_OPENSSL_FORWARD(const SSL_METHOD*, TLS_server_method, (void), ())
ITHACA_OPENSSL_FORWARD(SSL_CTX*, SSL_CTX_new, (const SSL_METHOD* meth), (meth))
ITHACA_OPENSSL_FORWARD(void, SSL_CTX_free, (SSL_CTX * ctx), (ctx))
ITHACA_OPENSSL_FORWARD(int, SSL_CTX_check_private_key, (const SSL_CTX* ctx), (ctx))
ITHACA_OPENSSL_FORWARD(long, SSL_CTX_ctrl, (SSL_CTX * ctx, int cmd, long larg, void* parg), (ctx, cmd, larg, parg))
ITHACA_OPENSSL_FORWARD(void*, SSL_CTX_get_ex_data, (const SSL_CTX* ctx, int idx), (ctx, idx))
ITHACA_OPENSSL_FORWARD(int, SSL_CTX_set_ex_data, (SSL_CTX * ctx, int idx, void* data), (ctx, idx, data))
ITHACA_OPENSSL_FORWARD(int, SSL_CTX_load_verify_locations, (SSL_CTX * ctx, const char* file, const char* path),
                       (ctx, file, path))
ITHACA_OPENSSL_FORWARD(void, SSL_CTX_sess_set_new_cb,
                       (SSL_CTX * ctx, int (*cb)(struct ssl_st* ssl, SSL_SESSION* sess)), (ctx, cb))
ITHACA_OPENSSL_FORWARD(int, SSL_CTX_set_cipher_list, (SSL_CTX * ctx, const char* str), (ctx, str))
ITHACA_OPENSSL_FORWARD(void, SSL_CTX_set_client_CA_list, (SSL_CTX * ctx, STACK_OF(X509_NAME) * list), (ctx, list))
ITHACA_OPENSSL_FORWARD(int, SSL_CTX_set_default_verify_paths, (SSL_CTX * ctx), (ctx))
ITHACA_OPENSSL_FORWARD(int, SSL_CTX_set_num_tickets, (SSL_CTX * ctx, size_t n), (ctx, n))
ITHACA_OPENSSL_FORWARD(uint64_t, SSL_CTX_set_options, (SSL_CTX * ctx, uint64_t op), (ctx, op))
ITHACA_OPENSSL_FORWARD(int, SSL_CTX_set_session_id_context, (SSL_CTX * ctx, const unsigned char* sid, unsigned int len),
                       (ctx, sid, len))
ITHACA_OPENSSL_FORWARD(void, SSL_CTX_set_verify, (SSL_CTX * ctx, int mode, SSL_verify_cb cb), (ctx, mode, cb))
ITHACA_OPENSSL_FORWARD(int, SSL_CTX_use_PrivateKey_file, (SSL_CTX * ctx, const char* file, int type),
                       (ctx, file, type))
ITHACA_OPENSSL_FORWARD(int, SSL_CTX_use_certificate_chain_file, (SSL_CTX * ctx, const char* file), (ctx, file))
ITHACA_OPENSSL_FORWARD(STACK_OF(X509_NAME)*, SSL_load_client_CA_file, (const char* file), (file))

// libssl: connections
ITHACA_OPENSSL_FORWARD(SSL*, SSL_new, (SSL_CTX * ctx), (ctx))
ITHACA_OPENSSL_FORWARD(void, SSL_free, (SSL * s), (s))
ITHACA_OPENSSL_FORWARD(int, SSL_accept, (SSL * s), (s))
ITHACA_OPENSSL_FORWARD(long, SSL_ctrl, (SSL * s, int cmd, long larg, void* parg), (s, cmd, larg, parg))
ITHACA_OPENSSL_FORWARD(int, SSL_do_handshake, (SSL * s), (s))
ITHACA_OPENSSL_FORWARD(X509_VERIFY_PARAM*, SSL_get0_param, (SSL * s), (s))
ITHACA_OPENSSL_FORWARD(X509*, SSL_get1_peer_certificate, (const SSL* s), (s))
ITHACA_OPENSSL_FORWARD(SSL_CTX*, SSL_get_SSL_CTX, (const SSL* s), (s))
ITHACA_OPENSSL_FORWARD(int, SSL_get_error, (const SSL* s, int ret), (s, ret))
ITHACA_OPENSSL_FORWARD(int, SSL_get_key_update_type, (const SSL* s), (s))
ITHACA_OPENSSL_FORWARD(BIO*, SSL_get_rbio, (const SSL* s), (s))
ITHACA_OPENSSL_FORWARD(BIO*, SSL_get_wbio, (const SSL* s), (s))
ITHACA_OPENSSL_FORWARD(long, SSL_get_verify_result, (const SSL* s), (s))
ITHACA_OPENSSL_FORWARD(const char*, SSL_get_version, (const SSL* s), (s))
ITHACA_OPENSSL_FORWARD(int, SSL_is_init_finished, (const SSL* s), (s))
ITHACA_OPENSSL_FORWARD(int, SSL_key_update, (SSL * s, int type), (s, type))
ITHACA_OPENSSL_FORWARD(int, SSL_read, (SSL * s, void* buf, int num), (s, buf, num))
ITHACA_OPENSSL_FORWARD(int, SSL_write, (SSL * s, const void* buf, int num), (s, buf, num))
ITHACA_OPENSSL_FORWARD(int, SSL_set1_host, (SSL * s, const char* host), (s, host))
ITHACA_OPENSSL_FORWARD(void, SSL_set_accept_state, (SSL * s), (s))
ITHACA_OPENSSL_FORWARD(void, SSL_set_connect_state, (SSL * s), (s))
ITHACA_OPENSSL_FORWARD(int, SSL_set_fd, (SSL * s, int fd), (s, fd))
ITHACA_OPENSSL_FORWARD(void, SSL_set_verify, (SSL * s, int mode, SSL_verify_cb cb), (s, mode, cb))
ITHACA_OPENSSL_FORWARD(int, SSL_shutdown, (SSL * s), (s))
ITHACA_OPENSSL_FORWARD(int, SSL_version, (const SSL* s), (s))
