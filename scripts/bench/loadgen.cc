// loadgen: a closed-loop memcached load generator on plain epoll.
//
// Each thread owns its connections and its epoll; a connection keeps `depth`
// requests in flight (pipelined), and issues the next one when a reply is
// complete. Replies are parsed and verified (hits, misses, errors). A request
// older than --timeout-ms counts as an error and its connection is reset, so
// the tool never hangs on a silent or confused server.
//
// --rate R caps the offered load at R requests/s (split evenly between the
// threads): a request is issued only while the thread is behind its share of
// R since the run began, counted in whole milliseconds. Comparing a
// server's CPU per request at one fixed rate, with and without some extra
// duty (a replication slave, say), measures what that duty costs it,
// unconfused by the larger batches a faster run gets.
//
// --tls makes every connection a TLS client (OpenSSL on the non-blocking
// socket; no certificate check unless --tls-ca names the CAs to check the
// server against). The connections are opened, and their handshakes run,
// before the timed window (and before --prefill), so ops/s is the steady
// state; a connection reset during the run handshakes again inside the loop,
// and a handshake that fails or outlasts --timeout-ms counts as an error.
//
// --cpu-pid PID reads utime + stime of PID (/proc/PID/stat) at the start and
// the end of the timed window: the server's CPU seconds over exactly the
// measured requests ("server_cpu_s"; -1 without it).
//
// Output: one JSON line (machine readable) and one human line, on stdout.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

enum class protocol { Ascii, Binary, Meta };

struct options {
  std::string host = "127.0.0.1";
  int port = 11211;
  int conns = 1;
  int threads = 1;
  int depth = 1;
  double duration = 5;
  uint64_t keys = 10000;
  size_t value_size = 100;
  double get_ratio = 0.9;
  int multiget = 1;
  protocol proto = protocol::Ascii;
  bool prefill = false;
  uint64_t seed = 1;
  int timeout_ms = 2000;
  double rate = 0;  // requests/s for the whole run; 0: as fast as replies come
  bool tls = false;
  std::string tls_ca;  // --tls-ca: verify the server's chain against these CAs
  int cpu_pid = 0;     // --cpu-pid: the server whose CPU the window used
};

// The one client context of the run (--tls); shared by the threads, which
// OpenSSL allows for SSL_new.
SSL_CTX* g_tls_ctx = nullptr;

std::string tls_error() {
  unsigned long e = ERR_get_error();
  if (e == 0) return strerror(errno);
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

uint64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Log-linear histogram (HDR style): 32 linear sub-buckets per power of two,
// about 3% relative precision, values in nanoseconds.
class histogram {
 public:
  static constexpr int kSubBits = 5;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = 2 * kSub + (64 - kSubBits - 1) * kSub;

  histogram() : counts_(kBuckets, 0) {}

  static int index(uint64_t v) {
    if (v < 2 * kSub) return static_cast<int>(v);
    int e = 63 - std::countl_zero(v);  // >= kSubBits + 1
    return 2 * kSub + (e - kSubBits - 1) * kSub + static_cast<int>((v >> (e - kSubBits)) - kSub);
  }
  static uint64_t upper(int i) {  // highest value mapped to bucket i
    if (i < 2 * kSub) return i;
    int e = (i - 2 * kSub) / kSub + kSubBits + 1;
    uint64_t sub = (i - 2 * kSub) % kSub + kSub;
    return ((sub + 1) << (e - kSubBits)) - 1;
  }
  void add(uint64_t v) {
    counts_[index(v)]++;
    total_++;
  }
  void merge(const histogram& o) {
    for (int i = 0; i < kBuckets; i++) counts_[i] += o.counts_[i];
    total_ += o.total_;
  }
  uint64_t percentile(double p) const {
    if (total_ == 0) return 0;
    uint64_t want = static_cast<uint64_t>(p * static_cast<double>(total_));
    if (want >= total_) want = total_ - 1;
    uint64_t seen = 0;
    for (int i = 0; i < kBuckets; i++) {
      seen += counts_[i];
      if (seen > want) return upper(i);
    }
    return upper(kBuckets - 1);
  }

 private:
  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;
};

struct counters {
  uint64_t requests = 0;  // completed requests (a multiget counts once)
  uint64_t keys = 0;      // keys asked by completed gets + keys set
  uint64_t gets = 0, sets = 0, hits = 0, misses = 0;
  uint64_t errors = 0;  // error replies, garbage, timeouts, resets
  uint64_t timeouts = 0;
  uint64_t reconnects = 0;
  uint64_t handshake_errors = 0;  // --tls: failed or timed-out handshakes (also in errors)
  histogram latency;
  void merge(const counters& o) {
    requests += o.requests;
    keys += o.keys;
    gets += o.gets;
    sets += o.sets;
    hits += o.hits;
    misses += o.misses;
    errors += o.errors;
    timeouts += o.timeouts;
    reconnects += o.reconnects;
    handshake_errors += o.handshake_errors;
    latency.merge(o.latency);
  }
};

struct pending {
  uint64_t sent_ns;
  bool is_get;
  int nkeys;    // keys in this request
  int replies;  // meta: mg replies still expected; binary: last opaque
  uint32_t opaque;
};

// One connection and its state. Owned by one thread.
struct conn {
  int fd = -1;
  SSL* ssl = nullptr;        // --tls only
  bool handshaking = false;  // --tls: SSL_connect not done yet; no request is issued
  uint64_t opened_ns = 0;    // --tls: when the handshake began (bounded by --timeout-ms)
  std::string out;           // bytes not yet written (under TLS: not yet taken by SSL_write)
  std::string in;            // bytes received, not yet parsed
  std::deque<pending> inflight;
  bool want_write = false;
};

class worker {
 public:
  worker(const options& o, int id, int nconns, uint64_t key_lo, uint64_t key_hi)
      : o_(o),
        conns_(nconns),
        key_lo_(key_lo),
        key_hi_(key_hi),
        rng_(o.seed * 1000003 + id),
        value_(o.value_size, 'v') {}

  counters stats;

  // Opens every connection and, under --tls, completes its handshake (the
  // connect phase: never timed). A connection that cannot be opened or
  // handshaken here ends the run (exit 2), saying why.
  void connect_all() {
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    for (auto& c : conns_) {
      if (!open_conn(c)) {
        fprintf(stderr, "loadgen: connect failed: %s\n", strerror(errno));
        exit(2);
      }
    }
    if (!g_tls_ctx) return;
    connecting_ = true;
    const uint64_t deadline = now_ns() + static_cast<uint64_t>(o_.timeout_ms) * 1000000;
    std::vector<epoll_event> evs(64);
    for (;;) {
      bool waiting = false;
      for (auto& c : conns_) waiting |= c.handshaking;
      if (!waiting) break;
      if (now_ns() > deadline) {
        fprintf(stderr, "loadgen: TLS handshake with %s:%d timed out (%d ms)\n", o_.host.c_str(), o_.port,
                o_.timeout_ms);
        exit(2);
      }
      // The first event of a connection is its TCP connect completing.
      int n = epoll_wait(ep_, evs.data(), static_cast<int>(evs.size()), 10);
      for (int i = 0; i < n; i++) {
        conn& c = *static_cast<conn*>(evs[i].data.ptr);
        if (c.handshaking) handshake(c);
      }
    }
    connecting_ = false;
  }

  // Closes every connection (close_notify first under TLS, when the socket takes it at once).
  void disconnect_all() {
    for (auto& c : conns_) close_conn(c, true);
    close(ep_);
    ep_ = -1;
  }

  // "TLSv1.3 TLS_AES_256_GCM_SHA384" of the first connection; "" without --tls.
  std::string tls_description() const {
    const conn& c = conns_.front();
    if (!c.ssl) return "";
    return std::string(SSL_get_version(c.ssl)) + " " + SSL_get_cipher_name(c.ssl);
  }

  // Sets every key of [key_lo, key_hi) (pipelined, verified). Not timed.
  void prefill() {
    prefill_mode_ = true;
    next_prefill_ = key_lo_;
    run_until(UINT64_MAX);
    prefill_mode_ = false;
  }
  void run(uint64_t end_ns) {
    stats = counters{};
    rate_start_ns_ = now_ns();
    issued_ = 0;
    run_until(end_ns);
  }

 private:
  const options& o_;
  std::vector<conn> conns_;
  uint64_t key_lo_, key_hi_, next_prefill_ = 0;
  bool prefill_mode_ = false;
  std::mt19937_64 rng_;
  std::string value_;
  int ep_ = -1;
  bool connecting_ = false;  // in connect_all: a failed handshake ends the run
  uint32_t opaque_ = 1;
  char keybuf_[32];

  std::string_view key(uint64_t k) {
    int n = snprintf(keybuf_, sizeof keybuf_, "key:%010llu", static_cast<unsigned long long>(k));
    return {keybuf_, static_cast<size_t>(n)};
  }

  bool open_conn(conn& c) {
    c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c.fd < 0) return false;
    int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(o_.port));
    inet_pton(AF_INET, o_.host.c_str(), &sa.sin_addr);
    if (connect(c.fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0 && errno != EINPROGRESS) {
      close(c.fd);
      c.fd = -1;
      return false;
    }
    if (g_tls_ctx) {
      c.ssl = SSL_new(g_tls_ctx);
      if (c.ssl == nullptr || SSL_set_fd(c.ssl, c.fd) != 1) {
        fprintf(stderr, "loadgen: SSL_new: %s\n", tls_error().c_str());
        exit(2);
      }
      SSL_set_connect_state(c.ssl);
      c.handshaking = true;
      c.opened_ns = now_ns();
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.ptr = &c;
    epoll_ctl(ep_, EPOLL_CTL_ADD, c.fd, &ev);
    c.want_write = true;
    return true;
  }

  void close_conn(conn& c, bool notify) {
    if (c.ssl) {
      if (notify && !c.handshaking) SSL_shutdown(c.ssl);  // one try: close_notify if it fits now
      SSL_free(c.ssl);
      c.ssl = nullptr;
      ERR_clear_error();  // a failed call's queue would confuse the next SSL_get_error
    }
    c.handshaking = false;
    if (c.fd >= 0) {
      epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
      close(c.fd);
      c.fd = -1;
    }
  }

  // Counts every in-flight request as an error and reconnects.
  void reset(conn& c) {
    stats.errors += c.inflight.size();
    c.inflight.clear();
    c.in.clear();
    c.out.clear();
    close_conn(c, false);
    stats.reconnects++;
    open_conn(c);
  }

  void set_write_interest(conn& c, bool want) {
    if (want == c.want_write) return;
    epoll_event ev{};
    ev.events = want ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
    ev.data.ptr = &c;
    epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
    c.want_write = want;
  }

  // --tls: one step of SSL_connect, on the connection's readiness.
  void handshake(conn& c) {
    int r = SSL_connect(c.ssl);
    if (r == 1) {
      c.handshaking = false;
      set_write_interest(c, !c.out.empty());
      return;
    }
    int e = SSL_get_error(c.ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      set_write_interest(c, e == SSL_ERROR_WANT_WRITE);
      return;
    }
    std::string why = e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0
                          ? std::string(errno ? strerror(errno) : "connection closed by the server")
                          : tls_error();
    if (connecting_) {
      fprintf(stderr, "loadgen: TLS handshake with %s:%d failed: %s\n", o_.host.c_str(), o_.port, why.c_str());
      exit(2);
    }
    stats.errors++;
    stats.handshake_errors++;
    reset(c);
  }

  // Appends what the socket (under TLS: OpenSSL) has to c.in. False on EOF or error.
  bool read_in(conn& c, char* buf, size_t size) {
    if (c.ssl) return read_tls(c, buf, size);
    for (;;) {
      ssize_t r = read(c.fd, buf, size);
      if (r > 0) {
        c.in.append(buf, r);
        continue;
      }
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) return true;
      return false;
    }
  }

  // SSL_read until OpenSSL needs the socket again (it may hold decrypted
  // bytes the socket's readiness does not show, so it is drained each time).
  bool read_tls(conn& c, char* buf, size_t size) {
    for (;;) {
      int r = SSL_read(c.ssl, buf, static_cast<int>(size));
      if (r > 0) {
        c.in.append(buf, r);
        continue;
      }
      int e = SSL_get_error(c.ssl, r);
      if (e == SSL_ERROR_WANT_READ) return true;
      if (e == SSL_ERROR_WANT_WRITE) {
        set_write_interest(c, true);
        return true;
      }
      return false;  // close_notify, EOF or a bad record
    }
  }

  void put_bin(conn& c, uint8_t op, std::string_view k, std::string_view extras, std::string_view v, uint32_t opaque) {
    uint8_t h[24] = {};
    h[0] = 0x80;
    h[1] = op;
    uint16_t kl = htons(static_cast<uint16_t>(k.size()));
    memcpy(h + 2, &kl, 2);
    h[4] = static_cast<uint8_t>(extras.size());
    uint32_t bl = htonl(static_cast<uint32_t>(extras.size() + k.size() + v.size()));
    memcpy(h + 8, &bl, 4);
    memcpy(h + 12, &opaque, 4);
    c.out.append(reinterpret_cast<char*>(h), 24);
    c.out.append(extras);
    c.out.append(k);
    c.out.append(v);
  }

  void issue_set(conn& c, uint64_t k) {
    pending p{now_ns(), false, 1, 1, 0};
    std::string_view kv = key(k);
    switch (o_.proto) {
      case protocol::Ascii:
        c.out.append("set ")
            .append(kv)
            .append(" 0 0 ")
            .append(std::to_string(value_.size()))
            .append("\r\n")
            .append(value_)
            .append("\r\n");
        break;
      case protocol::Meta:
        c.out.append("ms ")
            .append(kv)
            .append(" ")
            .append(std::to_string(value_.size()))
            .append("\r\n")
            .append(value_)
            .append("\r\n");
        break;
      case protocol::Binary: {
        char extras[8] = {};
        p.opaque = opaque_++;
        put_bin(c, 0x01, kv, {extras, 8}, value_, p.opaque);
        break;
      }
    }
    c.inflight.push_back(p);
  }

  void issue_get(conn& c) {
    int m = o_.multiget;
    pending p{now_ns(), true, m, m, 0};
    std::uniform_int_distribution<uint64_t> pick(0, o_.keys - 1);
    switch (o_.proto) {
      case protocol::Ascii:
        c.out.append("get");
        for (int i = 0; i < m; i++) c.out.append(" ").append(key(pick(rng_)));
        c.out.append("\r\n");
        break;
      case protocol::Meta:
        for (int i = 0; i < m; i++) c.out.append("mg ").append(key(pick(rng_))).append(" v\r\n");
        break;
      case protocol::Binary:
        // m-1 quiet GetKQ (answer only on a hit) then one GetK closing the request.
        for (int i = 0; i < m; i++) {
          uint32_t op = opaque_++;
          put_bin(c, i + 1 < m ? 0x0d : 0x0c, key(pick(rng_)), {}, {}, op);
          p.opaque = op;
        }
        break;
    }
    c.inflight.push_back(p);
  }

  void issue(conn& c) {
    if (prefill_mode_) {
      issue_set(c, next_prefill_++);
      return;
    }
    std::uniform_real_distribution<double> u(0, 1);
    if (u(rng_) < o_.get_ratio) {
      issue_get(c);
    } else {
      std::uniform_int_distribution<uint64_t> pick(0, o_.keys - 1);
      issue_set(c, pick(rng_));
    }
  }

  bool more_work(uint64_t end_ns, uint64_t now) const {
    if (prefill_mode_) return next_prefill_ < key_hi_;
    return now < end_ns;
  }

  // Under --rate: whether this thread is still behind its share of the rate.
  bool within_rate(uint64_t now) const {
    if (prefill_mode_ || o_.rate <= 0) return true;
    // Whole milliseconds: each tick's share leaves as one burst, so the server
    // sees batches like a full-speed run's, not a trickle of single requests.
    const double share = o_.rate / o_.threads;
    const uint64_t ticks_ms = (now - rate_start_ns_) / 1000000 + 1;
    return static_cast<double>(issued_) < share * static_cast<double>(ticks_ms) / 1e3;
  }

  void complete(conn& c, bool error, int hits) {
    pending p = c.inflight.front();
    c.inflight.pop_front();
    if (error) {
      stats.errors++;
      return;
    }
    stats.requests++;
    stats.latency.add(now_ns() - p.sent_ns);
    if (p.is_get) {
      stats.gets++;
      stats.keys += p.nkeys;
      stats.hits += hits;
      stats.misses += p.nkeys - hits;
    } else {
      stats.sets++;
      stats.keys++;
    }
  }

  static bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

  // Parses as many complete replies as c.in holds. Returns false on garbage.
  bool parse(conn& c) {
    size_t pos = 0;
    bool ok = true;
    while (!c.inflight.empty()) {
      std::string_view in(c.in.data() + pos, c.in.size() - pos);
      pending& p = c.inflight.front();
      if (o_.proto == protocol::Binary) {
        if (in.size() < 24) break;
        auto b = reinterpret_cast<const uint8_t*>(in.data());
        if (b[0] != 0x81) {
          ok = false;
          break;
        }
        uint32_t bl, op;
        memcpy(&bl, b + 8, 4);
        bl = ntohl(bl);
        memcpy(&op, b + 12, 4);
        uint16_t st;
        memcpy(&st, b + 6, 2);
        st = ntohs(st);
        if (in.size() < 24 + bl) break;
        pos += 24 + bl;
        if (p.is_get) {
          if (st == 0) hits_acc_++;  // 1 is a miss, others errors
          if (st != 0 && st != 1) err_acc_ = true;
          if (op == p.opaque) {
            complete(c, err_acc_, hits_acc_);
            hits_acc_ = 0;
            err_acc_ = false;
          }
        } else {
          complete(c, st != 0, 0);
        }
        continue;
      }
      size_t eol = in.find("\r\n");
      if (eol == std::string_view::npos) {
        if (in.size() > 4096) ok = false;
        break;
      }
      std::string_view line = in.substr(0, eol);
      if (starts(line, "VALUE ") || starts(line, "VA ")) {
        // data block: find its length (4th token for VALUE, 2nd for VA)
        size_t tok = starts(line, "VA ") ? 1 : 3, start = 0, i = 0;
        for (; i < tok; i++) {
          start = line.find(' ', start);
          if (start == std::string_view::npos) break;
          start++;
        }
        if (i < tok) {
          ok = false;
          break;
        }
        size_t n = strtoull(std::string(line.substr(start, 20)).c_str(), nullptr, 10);
        if (in.size() < eol + 2 + n + 2) break;
        pos += eol + 2 + n + 2;
        hits_acc_++;
        if (starts(line, "VA ")) {
          if (--p.replies == 0) {
            complete(c, err_acc_, hits_acc_);
            hits_acc_ = 0;
            err_acc_ = false;
          }
        }
        continue;
      }
      pos += eol + 2;
      bool error = starts(line, "ERROR") || starts(line, "CLIENT_ERROR") || starts(line, "SERVER_ERROR");
      if (o_.proto == protocol::Meta) {
        // one single-line reply per mg (EN = miss, or an error) or per ms
        if (!p.is_get) {
          complete(c, !starts(line, "HD"), 0);
          continue;
        }
        if (error)
          err_acc_ = true;
        else if (line != "EN" && !starts(line, "HD")) {
          ok = false;
          break;
        }
        if (--p.replies == 0) {
          complete(c, err_acc_, hits_acc_);
          hits_acc_ = 0;
          err_acc_ = false;
        }
        continue;
      }
      if (p.is_get) {
        if (line == "END" || error) {
          complete(c, error, hits_acc_);
          hits_acc_ = 0;
          continue;
        }
        ok = false;
        break;
      }
      complete(c, line != "STORED", 0);
    }
    c.in.erase(0, pos);
    if (c.inflight.empty() && !c.in.empty()) ok = false;  // a reply nobody asked for
    return ok;
  }

  uint64_t rate_start_ns_ = 0;  // --rate: when the timed run began
  uint64_t issued_ = 0;         // --rate: requests issued since then
  int hits_acc_ = 0;            // hits of the request being parsed
  bool err_acc_ = false;        // an error inside the request being parsed

  void flush_out(conn& c) {
    if (c.ssl) {
      flush_tls(c);
      return;
    }
    while (!c.out.empty()) {
      ssize_t n = write(c.fd, c.out.data(), c.out.size());
      if (n > 0) {
        c.out.erase(0, n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      reset(c);
      return;
    }
    set_write_interest(c, !c.out.empty());
  }

  // SSL_write of c.out, one record (up to 16 KiB) per call (partial writes
  // on). On WANT_WRITE the bytes stay at the front of c.out and the next call
  // passes them again (the buffer may have moved or grown behind them, which
  // SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER allows).
  void flush_tls(conn& c) {
    if (c.handshaking) return;  // nothing is queued before the handshake ends
    while (!c.out.empty()) {
      int n = SSL_write(c.ssl, c.out.data(), static_cast<int>(std::min<size_t>(c.out.size(), 1 << 30)));
      if (n > 0) {
        c.out.erase(0, n);
        continue;
      }
      int e = SSL_get_error(c.ssl, n);
      if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) break;
      reset(c);
      return;
    }
    set_write_interest(c, !c.out.empty());
  }

  void top_up(conn& c, uint64_t end_ns, uint64_t now) {
    if (c.fd < 0 && !open_conn(c)) return;  // server gone: retried next loop
    if (c.handshaking) return;              // --tls, after a reset: requests wait for it
    int depth = prefill_mode_ ? std::max(o_.depth, 32) : o_.depth;
    while (static_cast<int>(c.inflight.size()) < depth && more_work(end_ns, now) && within_rate(now)) {
      issue(c);
      issued_++;
    }
    flush_out(c);
  }

  // The connections are connect_all's (and stay open after).
  void run_until(uint64_t end_ns) {
    uint64_t now = now_ns();
    for (auto& c : conns_) top_up(c, end_ns, now);
    std::vector<epoll_event> evs(64);
    char buf[1 << 16];
    uint64_t timeout_ns = static_cast<uint64_t>(o_.timeout_ms) * 1000000;
    for (;;) {
      now = now_ns();
      bool busy = false;
      for (auto& c : conns_) busy |= !c.inflight.empty();
      if (!busy && !more_work(end_ns, now)) break;
      // Under --rate an idle connection may be owed a request any moment.
      int n = epoll_wait(ep_, evs.data(), static_cast<int>(evs.size()), o_.rate > 0 ? 1 : 10);
      for (int i = 0; i < n; i++) {
        conn& c = *static_cast<conn*>(evs[i].data.ptr);
        if (c.handshaking) {  // --tls, a connection reset during the run
          handshake(c);
          if (c.fd >= 0 && !c.handshaking) top_up(c, end_ns, now_ns());
          continue;
        }
        // Under TLS a writable socket may be what an SSL_read that wanted to write waits for.
        if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR) || (c.ssl && (evs[i].events & EPOLLOUT))) {
          if (!read_in(c, buf, sizeof buf)) {
            reset(c);  // EOF or error
          } else if (!parse(c)) {
            hits_acc_ = 0;
            err_acc_ = false;
            reset(c);
          }
        }
        if (c.fd >= 0 && (evs[i].events & EPOLLOUT)) flush_out(c);
        if (c.fd >= 0) top_up(c, end_ns, now_ns());
      }
      now = now_ns();
      for (auto& c : conns_) {
        if (c.handshaking && now - c.opened_ns > timeout_ns) {
          stats.timeouts++;
          stats.handshake_errors++;
          reset(c);
        } else if (!c.inflight.empty() && now - c.inflight.front().sent_ns > timeout_ns) {
          stats.timeouts += c.inflight.size();
          c.inflight.clear();
          hits_acc_ = 0;
          err_acc_ = false;
          reset(c);
          top_up(c, end_ns, now);
        } else if (c.fd >= 0 && (c.inflight.empty() || o_.rate > 0)) {
          top_up(c, end_ns, now);
        }
      }
    }
  }
};

[[noreturn]] void usage() {
  fprintf(stderr,
          "usage: loadgen [--host H] [--port P] [--conns N] [--threads T] [--depth D]\n"
          "               [--duration S] [--keys K] [--value-size B] [--get-ratio R]\n"
          "               [--multiget M] [--protocol ascii|binary|meta] [--prefill]\n"
          "               [--seed N] [--timeout-ms MS] [--rate OPS_PER_S]\n"
          "               [--tls] [--tls-ca FILE] [--cpu-pid PID]\n"
          "  --duration 0 with --prefill only stores every key and reports that.\n"
          "  --tls: TLS connections, handshaken before the timed window; the server's\n"
          "  certificate is checked only with --tls-ca (its CAs).\n"
          "  --cpu-pid: that process's utime+stime over the timed window (server_cpu_s).\n");
  exit(2);
}

options parse_args(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--host")
      o.host = val();
    else if (a == "--port")
      o.port = std::stoi(val());
    else if (a == "--conns")
      o.conns = std::stoi(val());
    else if (a == "--threads")
      o.threads = std::stoi(val());
    else if (a == "--depth")
      o.depth = std::stoi(val());
    else if (a == "--duration")
      o.duration = std::stod(val());
    else if (a == "--keys")
      o.keys = std::stoull(val());
    else if (a == "--value-size")
      o.value_size = std::stoull(val());
    else if (a == "--get-ratio")
      o.get_ratio = std::stod(val());
    else if (a == "--multiget")
      o.multiget = std::stoi(val());
    else if (a == "--prefill")
      o.prefill = true;
    else if (a == "--seed")
      o.seed = std::stoull(val());
    else if (a == "--timeout-ms")
      o.timeout_ms = std::stoi(val());
    else if (a == "--rate")
      o.rate = std::stod(val());
    else if (a == "--tls")
      o.tls = true;
    else if (a == "--tls-ca") {
      o.tls_ca = val();
      o.tls = true;
    } else if (a == "--cpu-pid")
      o.cpu_pid = std::stoi(val());
    else if (a == "--protocol") {
      std::string p = val();
      if (p == "ascii")
        o.proto = protocol::Ascii;
      else if (p == "binary")
        o.proto = protocol::Binary;
      else if (p == "meta")
        o.proto = protocol::Meta;
      else
        usage();
    } else
      usage();
  }
  if (o.conns < 1 || o.threads < 1 || o.depth < 1 || o.multiget < 1 || o.keys < 1) usage();
  if (o.threads > o.conns) o.threads = o.conns;
  return o;
}

// The client context of --tls: any version the server offers from TLS 1.2,
// partial writes (flush_tls), and the chain checked only against --tls-ca.
SSL_CTX* make_tls_ctx(const options& o) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    fprintf(stderr, "loadgen: SSL_CTX_new: %s\n", tls_error().c_str());
    exit(2);
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (o.tls_ca.empty()) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  } else {
    if (SSL_CTX_load_verify_locations(ctx, o.tls_ca.c_str(), nullptr) != 1) {
      fprintf(stderr, "loadgen: --tls-ca %s: %s\n", o.tls_ca.c_str(), tls_error().c_str());
      exit(2);
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  return ctx;
}

// utime + stime of pid in seconds (/proc/PID/stat fields 14 and 15); -1 if unreadable.
double cpu_seconds(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return -1;
  size_t p = line.rfind(')');  // the command name may hold spaces
  if (p == std::string::npos) return -1;
  unsigned long long ticks[2] = {0, 0};
  // After ") " come fields 3 (state), 4, ...: utime is the 12th token, stime the 13th.
  if (sscanf(line.c_str() + p + 2, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", &ticks[0], &ticks[1]) != 2)
    return -1;
  return static_cast<double>(ticks[0] + ticks[1]) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Runs fn(worker) on one thread per worker and waits for them all.
template <typename F>
void on_each(const std::vector<worker*>& workers, F fn) {
  std::vector<std::thread> ts;
  for (auto* w : workers) ts.emplace_back([w, &fn] { fn(w); });
  for (auto& t : ts) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  options o = parse_args(argc, argv);
  signal(SIGPIPE, SIG_IGN);  // a server hanging up is an error to count, not our death
  if (o.tls) g_tls_ctx = make_tls_ctx(o);
  std::vector<worker*> workers;
  for (int t = 0; t < o.threads; t++) {
    int n = o.conns / o.threads + (t < o.conns % o.threads ? 1 : 0);
    uint64_t lo = o.keys * t / o.threads, hi = o.keys * (t + 1) / o.threads;
    workers.push_back(new worker(o, t, n, lo, hi));
  }
  const char* proto = o.proto == protocol::Ascii ? "ascii" : o.proto == protocol::Binary ? "binary" : "meta";

  // The connect phase (TCP, and the TLS handshakes): outside every timing.
  on_each(workers, [](worker* w) { w->connect_all(); });
  const std::string tls = workers.front()->tls_description();

  counters prefill;
  double prefill_s = 0;
  if (o.prefill) {
    uint64_t t0 = now_ns();
    on_each(workers, [](worker* w) { w->prefill(); });
    prefill_s = static_cast<double>(now_ns() - t0) / 1e9;
    for (auto* w : workers) prefill.merge(w->stats);
  }

  counters total;
  double elapsed = 0, server_cpu = -1;
  if (o.duration > 0) {
    const double cpu0 = o.cpu_pid > 0 ? cpu_seconds(o.cpu_pid) : -1;
    uint64_t t0 = now_ns();
    uint64_t end = t0 + static_cast<uint64_t>(o.duration * 1e9);
    on_each(workers, [end](worker* w) { w->run(end); });
    elapsed = static_cast<double>(now_ns() - t0) / 1e9;
    const double cpu1 = o.cpu_pid > 0 ? cpu_seconds(o.cpu_pid) : -1;
    if (cpu0 >= 0 && cpu1 >= 0) server_cpu = cpu1 - cpu0;
    for (auto* w : workers) total.merge(w->stats);
  }
  for (auto* w : workers) w->disconnect_all();
  double ops = elapsed > 0 ? static_cast<double>(total.requests) / elapsed : 0;
  double keys = elapsed > 0 ? static_cast<double>(total.keys) / elapsed : 0;
  double p50 = total.latency.percentile(0.50) / 1e3, p99 = total.latency.percentile(0.99) / 1e3,
         p999 = total.latency.percentile(0.999) / 1e3;
  printf(
      "{\"protocol\":\"%s\",\"conns\":%d,\"threads\":%d,\"depth\":%d,\"multiget\":%d,"
      "\"value_size\":%zu,\"get_ratio\":%.3f,\"keys\":%llu,\"duration_s\":%.3f,"
      "\"requests\":%llu,\"ops_per_s\":%.1f,\"keys_per_s\":%.1f,"
      "\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,"
      "\"gets\":%llu,\"sets\":%llu,\"hits\":%llu,\"misses\":%llu,"
      "\"errors\":%llu,\"timeouts\":%llu,\"reconnects\":%llu,"
      "\"prefill_sets\":%llu,\"prefill_errors\":%llu,\"prefill_s\":%.3f,"
      "\"tls\":\"%s\",\"handshake_errors\":%llu,\"server_cpu_s\":%.3f}\n",
      proto, o.conns, o.threads, o.depth, o.multiget, o.value_size, o.get_ratio, (unsigned long long)o.keys, elapsed,
      (unsigned long long)total.requests, ops, keys, p50, p99, p999, (unsigned long long)total.gets,
      (unsigned long long)total.sets, (unsigned long long)total.hits, (unsigned long long)total.misses,
      (unsigned long long)(total.errors + total.timeouts), (unsigned long long)total.timeouts,
      (unsigned long long)total.reconnects, (unsigned long long)prefill.requests,
      (unsigned long long)(prefill.errors + prefill.timeouts), prefill_s, tls.c_str(),
      (unsigned long long)(total.handshake_errors + prefill.handshake_errors), server_cpu);
  printf(
      "# %s%s%s: %.0f ops/s (%.0f keys/s), p50 %.1f us, p99 %.1f us, p99.9 %.1f us, "
      "hits %llu misses %llu errors %llu (timeouts %llu)%s\n",
      proto, tls.empty() ? "" : " over ", tls.c_str(), ops, keys, p50, p99, p999, (unsigned long long)total.hits,
      (unsigned long long)total.misses, (unsigned long long)(total.errors + total.timeouts),
      (unsigned long long)total.timeouts,
      o.prefill
          ? (" prefill " + std::to_string(prefill.requests) + " sets in " + std::to_string(prefill_s) + " s").c_str()
          : "");
  for (auto* w : workers) delete w;
  if (g_tls_ctx) SSL_CTX_free(g_tls_ctx);
  return 0;
}
