// net::tls_conn inside a real machine, over a socketpair with small socket
// buffers: a reader and a writer coroutine on one connection at once (with
// TLS 1.3 key updates in the middle), handshakes that fail or stall, and
// the peer's certificate checked. Certificates are made here with OpenSSL
// (a CA, a server and a client certificate it signed, and a stranger CA).
#include <doctest/doctest.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "machinarium.h"
#include "tls_conn.h"
#include "tls_setup.h"

using namespace ithaca;

namespace {

mm::backend_kind backend_from_env() {
  const char* b = std::getenv("MM_BACKEND");
  if (b && std::string(b) == "epoll") return mm::backend_kind::Epoll;
  if (b && std::string(b) == "io_uring") return mm::backend_kind::IoUring;
  return mm::backend_kind::Auto;
}

void run(std::function<void()> fn) {
  mm::machine_config cfg;
  cfg.name = "tls_test";
  cfg.backend = backend_from_env();
  mm::machine* m = mm::machine_create(cfg, [fn] {
    fn();
    mm::machine_stop(mm::machine_self());
  });
  REQUIRE(m != nullptr);
  mm::machine_join(m);
}

using key_ptr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using cert_ptr = std::unique_ptr<X509, decltype(&X509_free)>;

struct issued {
  key_ptr key{nullptr, EVP_PKEY_free};
  cert_ptr cert{nullptr, X509_free};
};

// A P-256 key and a certificate for `cn`, signed by `ca` (self-signed when null).
issued issue(const char* cn, const issued* ca, long serial) {
  issued out;
  out.key.reset(EVP_EC_gen("P-256"));
  out.cert.reset(X509_new());
  X509* c = out.cert.get();
  X509_set_version(c, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c), serial);
  X509_gmtime_adj(X509_getm_notBefore(c), -60);
  X509_gmtime_adj(X509_getm_notAfter(c), 3600);
  X509_set_pubkey(c, out.key.get());
  X509_NAME_add_entry_by_txt(X509_get_subject_name(c), "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509_set_issuer_name(c, ca ? X509_get_subject_name(ca->cert.get()) : X509_get_subject_name(c));
  if (!ca) {
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, c, c, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, NID_basic_constraints, "critical,CA:TRUE");
    X509_add_ext(c, ext, -1);
    X509_EXTENSION_free(ext);
  }
  X509_sign(c, ca ? ca->key.get() : out.key.get(), EVP_sha256());
  return out;
}

std::string write_pem(const std::string& dir, const std::string& name, const issued& i) {
  const std::string cert = dir + "/" + name + ".pem";
  FILE* f = std::fopen(cert.c_str(), "w");
  PEM_write_X509(f, i.cert.get());
  std::fclose(f);
  f = std::fopen((dir + "/" + name + ".key").c_str(), "w");
  PEM_write_PrivateKey(f, i.key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  return cert;
}

// The files, made once per process.
struct pki {
  std::string dir;
  pki() {
    char tmpl[] = "/tmp/ithaca-net-test-XXXXXX";
    dir = ::mkdtemp(tmpl);
    issued ca = issue("test-ca", nullptr, 1);
    issued other = issue("other-ca", nullptr, 2);
    write_pem(dir, "ca", ca);
    write_pem(dir, "otherca", other);
    write_pem(dir, "server", issue("server", &ca, 3));
    write_pem(dir, "client", issue("client", &ca, 4));
    write_pem(dir, "stranger", issue("stranger", &other, 5));
  }
  config::backend_tls side(const char* cert, const char* ca) const {
    config::backend_tls t;
    t.enabled = true;
    if (cert) {
      t.chain_cert = dir + "/" + cert + ".pem";
      t.key = dir + "/" + cert + ".key";
    }
    if (ca) t.ca_cert = dir + "/" + ca + ".pem";
    return t;
  }
};

const pki& certs() {
  static const pki p;
  return p;
}

// Two attached ends of a socketpair with small buffers (so writes block
// and the waits are exercised).
struct pair {
  std::unique_ptr<mm::io> a, b;
  pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    const int small = 8192;
    for (int fd : fds) {
      ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    }
    a = mm::io::attach(fds[0]);
    b = mm::io::attach(fds[1]);
    REQUIRE(a);
    REQUIRE(b);
  }
};

struct sides {
  net::ssl_ctx_ptr server, client;
};

sides contexts(const char* client_cert = "client", const char* client_ca = "ca") {
  std::string why;
  sides s;
  s.server = net::make_mutual_server_ctx(certs().side("server", "ca"), &why);
  REQUIRE_MESSAGE(s.server, why);
  s.client = net::make_client_ctx(certs().side(client_cert, client_ca), &why);
  REQUIRE_MESSAGE(s.client, why);
  return s;
}

}  // namespace

TEST_CASE("a reader and a writer coroutine share one connection, through key updates, both ways") {
  const sides ctx = contexts();
  run([&] {
    pair p;
    std::unique_ptr<net::tls_conn> server, client;
    std::string server_why, client_why;
    mm::wait_group hs;
    hs.add(1);
    mm::coroutine_create("server handshake", [&] {
      server = net::tls_conn::accept(*p.b, ctx.server.get(), mm::deadline_after(5000), &server_why);
      hs.done();
    });
    client = net::tls_conn::connect(*p.a, ctx.client.get(), "", false, mm::deadline_after(5000), &client_why);
    REQUIRE(hs.wait(5000) == mm::wait_status::Ok);
    REQUIRE_MESSAGE(client, client_why);
    REQUIRE_MESSAGE(server, server_why);
    CHECK(std::string(client->version()) == "TLSv1.3");
    CHECK(server->peer_subject() == "/CN=client");
    CHECK(client->peer_subject() == "/CN=server");

    // Each side: a writer sending kTotal bytes in pieces (asking the peer
    // for a key update now and then) and a reader taking kTotal bytes, at
    // once, on the one connection; the small buffers make both wait.
    constexpr size_t kTotal = 4 << 20;
    struct side {
      net::tls_conn* conn;
      size_t read = 0, written = 0;
      bool bad = false;
      ssize_t error = 0;
    };
    side sides[2] = {{client.get()}, {server.get()}};
    mm::wait_group done;
    for (side& s : sides) {
      done.add(2);
      mm::coroutine_create("writer", [&s, &done] {
        std::string piece(100000, '\0');
        while (s.written < kTotal) {
          const size_t n = std::min(piece.size(), kTotal - s.written);
          for (size_t i = 0; i < n; i++) piece[i] = static_cast<char>((s.written + i) % 251);
          if ((s.written / n) % 7 == 3) s.conn->request_key_update();
          const ssize_t w = s.conn->write(piece.data(), n, 10000);
          if (w != static_cast<ssize_t>(n)) {
            s.error = w;
            break;
          }
          s.written += n;
        }
        done.done();
      });
      mm::coroutine_create("reader", [&s, &done] {
        char buf[7000];
        while (s.read < kTotal) {
          const ssize_t r = s.conn->read(buf, sizeof buf, 10000);
          if (r <= 0) {
            s.error = r;
            break;
          }
          for (ssize_t i = 0; i < r; i++) {
            if (buf[i] != static_cast<char>((s.read + static_cast<size_t>(i)) % 251)) s.bad = true;
          }
          s.read += static_cast<size_t>(r);
        }
        done.done();
      });
    }
    const int64_t start = mm::now_ns();
    REQUIRE(done.wait(30000) == mm::wait_status::Ok);
    for (const side& s : sides) {
      CHECK(s.error == 0);
      CHECK(s.written == kTotal);
      CHECK(s.read == kTotal);
      CHECK_FALSE(s.bad);
    }
    CHECK((mm::now_ns() - start) / 1000000 < 20000);
    client.reset();
    server.reset();
  });
}

TEST_CASE("a client certificate from another CA is refused by the mutual server") {
  const sides ctx = contexts("stranger", "ca");
  run([&] {
    pair p;
    std::unique_ptr<net::tls_conn> server, client;
    std::string server_why, client_why;
    mm::wait_group hs;
    hs.add(1);
    mm::coroutine_create("server handshake", [&] {
      server = net::tls_conn::accept(*p.b, ctx.server.get(), mm::deadline_after(5000), &server_why);
      hs.done();
    });
    client = net::tls_conn::connect(*p.a, ctx.client.get(), "", false, mm::deadline_after(5000), &client_why);
    REQUIRE(hs.wait(5000) == mm::wait_status::Ok);
    CHECK_FALSE(server);
    CHECK_MESSAGE(server_why.find("certificate verify failed") != std::string::npos, server_why);
    if (client) {
      // TLS 1.3: the client's side ends first; the refusal is its next read.
      char c;
      CHECK(client->read(&c, 1, 2000) < 0);
    }
  });
}

TEST_CASE("a server certificate from another CA, or without the name asked, is refused by the client") {
  const sides ctx = contexts("client", "otherca");
  run([&] {
    pair p;
    std::string why;
    mm::coroutine_create("server handshake", [&] {
      std::string ignored;
      net::tls_conn::accept(*p.b, ctx.server.get(), mm::deadline_after(2000), &ignored);
    });
    auto client = net::tls_conn::connect(*p.a, ctx.client.get(), "", false, mm::deadline_after(5000), &why);
    CHECK_FALSE(client);
    CHECK_MESSAGE(why.find("certificate verify failed") != std::string::npos, why);
    mm::sleep(50);
  });
  const sides right = contexts();
  run([&] {
    pair p;
    std::string why;
    mm::coroutine_create("server handshake", [&] {
      std::string ignored;
      net::tls_conn::accept(*p.b, right.server.get(), mm::deadline_after(2000), &ignored);
    });
    auto client =
        net::tls_conn::connect(*p.a, right.client.get(), "cache.example", true, mm::deadline_after(5000), &why);
    CHECK_FALSE(client);
    CHECK_MESSAGE(why.find("hostname mismatch") != std::string::npos, why);
    mm::sleep(50);
  });
}

TEST_CASE("a peer that never answers: the handshake ends at its deadline; a plaintext peer fails it") {
  const sides ctx = contexts();
  run([&] {
    pair p;
    std::string why;
    const int64_t start = mm::now_ns();
    auto client = net::tls_conn::connect(*p.a, ctx.client.get(), "", false, mm::deadline_after(200), &why);
    CHECK_FALSE(client);
    CHECK(why == "TLS handshake timed out");
    const int64_t ms = (mm::now_ns() - start) / 1000000;
    CHECK(ms >= 150);
    CHECK(ms < 2000);
  });
  run([&] {
    pair p;
    std::string why;
    REQUIRE(p.a->write("\0\0\0\0\0\0\0\0", 8, 1000) == 8);  // a yrmcds heartbeat, say
    auto server = net::tls_conn::accept(*p.b, ctx.server.get(), mm::deadline_after(2000), &why);
    CHECK_FALSE(server);
    CHECK(why.starts_with("TLS handshake: "));
  });
}
