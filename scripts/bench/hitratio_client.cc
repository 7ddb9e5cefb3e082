// hitratio_client: the request streams of scripts/bench/hitratio, and the
// look-aside client that sends one to a memcached-ascii server.
//
//   hitratio_client generate --out FILE [--keys N] [--alpha A] [--requests N] [--warmup N]
//                            [--one-hit-share S] [--sizes 100:5,400:3] [--ttl-mix 0:8,60:2] [--seed N]
//   hitratio_client convert  --out FILE --trace FILE --format oracleGeneral|csv
//                            [--warmup N] [--requests N] [--item-size-max BYTES]
//   hitratio_client replay   --stream FILE --port P [--host H] [--window W] [--cpu-pid PID]
//                            [--timeout-ms MS] [--samples K]
//
// A stream file is made once and replayed against each server, so every
// server sees the same requests byte for byte. Its layout (little-endian):
// the 8 bytes "IHRSTRM1", u64 records, u64 warm-up records (the first ones;
// the rest are measured), then per record: u8 op (0 get, 1 set, 2 delete),
// u8 key length, u32 value size, u32 ttl, the key's bytes.
//
// replay is a look-aside cache user: a get; on a miss, a set of the record's
// size and ttl. It pipelines up to --window requests on one connection and
// sends each record in the stream's order, but never while a get of the same
// key is still in flight: that get may miss, and its fill (the set) must come
// before anything else touches the key. The fill is written as soon as the
// miss is read, ahead of every later request; the server answers one
// connection's requests in order, so a key's get never overtakes its own
// earlier set, fill or delete. What differs from a one-at-a-time client is
// only when a fill lands: up to a window of other keys' requests after its
// get instead of right after it (an LRU position moves by at most that);
// --window 1 is strictly one request at a time. Misses are counted from the
// replies.
//
// Output (replay): one JSON line on stdout; generate and convert print one
// JSON line of what they wrote and what they skipped.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

constexpr char kStreamMagic[8] = {'I', 'H', 'R', 'S', 'T', 'R', 'M', '1'};
constexpr size_t kHeaderBytes = 24;
constexpr size_t kRecordFixedBytes = 10;              // op, key length, size, ttl
constexpr uint32_t kMaxRelativeTtl = 30 * 24 * 3600;  // memcached reads more as a unix time

enum class op : uint8_t { Get = 0, Set = 1, Delete = 2 };

[[noreturn]] void die(const std::string& why) {
  fprintf(stderr, "hitratio_client: %s\n", why.c_str());
  exit(2);
}

uint64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The stream's own PRNG (splitmix64): the same seed gives the same stream on
// any platform, which std's distributions do not promise.
struct splitmix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

uint64_t mix64(uint64_t a, uint64_t b) {
  splitmix m{a * 0x100000001B3ULL ^ b};
  return m.next();
}

// ---- writing a stream ------------------------------------------------------

// Writes records straight to the file (a trace may be far larger than
// memory); the header's counts are written last.
class stream_writer {
 public:
  explicit stream_writer(const std::string& path) : path_(path) {
    f_ = fopen(path.c_str(), "wb");
    if (f_ == nullptr) die("cannot write " + path + ": " + strerror(errno));
    setvbuf(f_, nullptr, _IOFBF, 1 << 20);
    char header[kHeaderBytes] = {};
    put(header, kHeaderBytes);
  }
  ~stream_writer() {
    if (f_ != nullptr) fclose(f_);
  }
  void add(op o, std::string_view key, uint32_t size, uint32_t ttl) {
    char fixed[kRecordFixedBytes];
    fixed[0] = static_cast<char>(o);
    fixed[1] = static_cast<char>(key.size());
    memcpy(fixed + 2, &size, 4);
    memcpy(fixed + 6, &ttl, 4);
    put(fixed, kRecordFixedBytes);
    put(key.data(), key.size());
    records++;
  }
  void finish(uint64_t warmup) {
    char header[kHeaderBytes];
    memcpy(header, kStreamMagic, 8);
    memcpy(header + 8, &records, 8);
    memcpy(header + 16, &warmup, 8);
    if (fseek(f_, 0, SEEK_SET) != 0) die("cannot seek in " + path_);
    put(header, kHeaderBytes);
    if (fclose(f_) != 0) die("cannot write " + path_ + ": " + strerror(errno));
    f_ = nullptr;
  }
  uint64_t records = 0;

 private:
  void put(const char* p, size_t n) {
    if (n > 0 && fwrite(p, 1, n, f_) != n) die("cannot write " + path_ + ": " + strerror(errno));
  }
  std::string path_;
  FILE* f_;
};

// "100:5,400:3" or "100,400,1500" (equal weights) -> {value, weight} pairs.
std::vector<std::pair<uint32_t, double>> parse_weighted(const std::string& spec, const char* what) {
  std::vector<std::pair<uint32_t, double>> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string part = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t colon = part.find(':');
    try {
      uint32_t v = static_cast<uint32_t>(std::stoul(part.substr(0, colon)));
      double w = colon == std::string::npos ? 1.0 : std::stod(part.substr(colon + 1));
      if (w < 0) throw std::invalid_argument("negative");
      out.emplace_back(v, w);
    } catch (const std::exception&) {
      die(std::string("bad ") + what + " '" + spec + "' (want VALUE[:WEIGHT],...)");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  double total = 0;
  for (auto& p : out) total += p.second;
  if (out.empty() || total <= 0) die(std::string("bad ") + what + " '" + spec + "'");
  return out;
}

// A key's value size (and ttl) is a fixed function of the key and the seed: a
// key keeps its size whenever it is asked for, as a real object does.
uint32_t pick_weighted(const std::vector<std::pair<uint32_t, double>>& table, uint64_t h) {
  double total = 0;
  for (auto& p : table) total += p.second;
  double x = static_cast<double>(h >> 11) * 0x1.0p-53 * total;
  for (auto& p : table) {
    if (x < p.second) return p.first;
    x -= p.second;
  }
  return table.back().first;
}

struct generate_options {
  std::string out;
  uint64_t keys = 2000000, requests = 2000000, warmup = 2000000, seed = 1;
  double alpha = 0.99, one_hit_share = 0;
  std::string sizes = "100", ttl_mix = "0";
};

// Zipf(alpha) over ranks 1..keys by inverting the CDF (a binary search of
// the prefix sums); key "key:<rank-1>". A one-hit wonder is "key:<n>" with
// n counting up from `keys`: asked for once, never again.
int generate(const generate_options& g) {
  if (g.keys == 0) die("--keys must be at least 1");
  auto sizes = parse_weighted(g.sizes, "--sizes");
  auto ttls = parse_weighted(g.ttl_mix, "--ttl-mix");
  std::vector<double> cdf(g.keys);
  double sum = 0;
  for (uint64_t i = 0; i < g.keys; i++) {
    sum += std::pow(static_cast<double>(i + 1), -g.alpha);
    cdf[i] = sum;
  }
  splitmix rng{g.seed};
  stream_writer w(g.out);
  uint64_t next_fresh = g.keys, one_hits = 0;
  char key[32];
  for (uint64_t i = 0; i < g.warmup + g.requests; i++) {
    uint64_t id;
    if (g.one_hit_share > 0 && rng.unit() < g.one_hit_share) {
      id = next_fresh++;
      one_hits++;
    } else {
      double u = rng.unit() * sum;
      id = static_cast<uint64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
      if (id >= g.keys) id = g.keys - 1;
    }
    int n = snprintf(key, sizeof key, "key:%llu", static_cast<unsigned long long>(id));
    uint32_t size = pick_weighted(sizes, mix64(g.seed, id * 2));
    uint32_t ttl = pick_weighted(ttls, mix64(g.seed, id * 2 + 1));
    w.add(op::Get, std::string_view(key, n), size, ttl);
  }
  w.finish(g.warmup);
  printf("{\"records\":%llu,\"warmup\":%llu,\"one_hit_wonders\":%llu}\n", (unsigned long long)w.records,
         (unsigned long long)g.warmup, (unsigned long long)one_hits);
  return 0;
}

// ---- converting a trace ----------------------------------------------------

struct convert_options {
  std::string out, trace, format;
  uint64_t warmup = 0, requests = UINT64_MAX;
  uint64_t item_size_max = 1024 * 1024;
  // How many records to keep: the warm-up and then --requests (all by default).
  uint64_t limit() const { return requests > UINT64_MAX - warmup ? UINT64_MAX : warmup + requests; }
};

struct convert_counts {
  uint64_t lines = 0, header = 0, malformed = 0, skipped_ops = 0, too_large = 0, bad_key = 0;
  std::map<std::string, uint64_t> skipped_by_op;
};

// memcached's ascii keys: 1..250 bytes, no space or control character.
bool valid_key(std::string_view k) {
  if (k.empty() || k.size() > 250) return false;
  for (unsigned char c : k)
    if (c <= ' ' || c == 0x7f) return false;
  return true;
}

std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> f;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    f.push_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return f;
}

bool parse_u64(std::string_view s, uint64_t& out) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out = v;
  return true;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// A record of a trace, before the warm-up split; false when it is skipped.
bool convert_add(stream_writer& w, const convert_options& c, convert_counts& n, op o, std::string_view key,
                 uint64_t size, uint64_t ttl) {
  if (!valid_key(key)) {
    n.bad_key++;
    return false;
  }
  if (o != op::Delete && size > c.item_size_max) {
    n.too_large++;
    return false;
  }
  w.add(o, key, static_cast<uint32_t>(size), static_cast<uint32_t>(std::min<uint64_t>(ttl, kMaxRelativeTtl)));
  return true;
}

// libCacheSim's oracleGeneral: packed little-endian records of 24 bytes,
// u32 clock_time, u64 obj_id, u32 obj_size, i64 next_access_vtime. Every
// record is a read; the key is obj_id in decimal.
void convert_oracle(stream_writer& w, const convert_options& c, convert_counts& n) {
  FILE* f = fopen(c.trace.c_str(), "rb");
  if (f == nullptr) die("cannot open " + c.trace + ": " + strerror(errno));
  unsigned char rec[24];
  char key[24];
  while (w.records < c.limit() && fread(rec, 1, sizeof rec, f) == sizeof rec) {
    n.lines++;
    uint64_t id;
    uint32_t size;
    memcpy(&id, rec + 4, 8);
    memcpy(&size, rec + 12, 4);
    int len = snprintf(key, sizeof key, "%llu", static_cast<unsigned long long>(id));
    convert_add(w, c, n, op::Get, std::string_view(key, len), size, 0);
  }
  if (!feof(f) && !ferror(f) && w.records < c.limit()) n.malformed++;
  fclose(f);
}

// CSV: time,key,size,op[,ttl], or the Twitter cache traces' seven columns
// time,key,key_size,value_size,client_id,op,ttl. get/gets are look-aside
// gets; set/add/replace/cas are sets; delete deletes; any other op is skipped
// and counted. A first line whose size is not a number is a header.
void convert_csv(stream_writer& w, const convert_options& c, convert_counts& n) {
  std::ifstream in(c.trace);
  if (!in) die("cannot open " + c.trace + ": " + strerror(errno));
  std::string line;
  while (w.records < c.limit() && std::getline(in, line)) {
    n.lines++;
    if (line.empty() || line == "\r") continue;
    auto f = split_csv(line);
    std::string_view key, size_s, op_s, ttl_s;
    if (f.size() == 4 || f.size() == 5) {
      key = f[1], size_s = f[2], op_s = f[3];
      if (f.size() == 5) ttl_s = f[4];
    } else if (f.size() == 7) {
      key = f[1], size_s = f[3], op_s = f[5], ttl_s = f[6];
    } else {
      n.malformed++;
      continue;
    }
    uint64_t size = 0, ttl = 0;
    if (!parse_u64(size_s, size)) {
      if (n.lines == 1)
        n.header++;
      else
        n.malformed++;
      continue;
    }
    if (!ttl_s.empty() && !parse_u64(ttl_s, ttl)) {
      n.malformed++;
      continue;
    }
    std::string o = trim(op_s);
    std::transform(o.begin(), o.end(), o.begin(), [](unsigned char ch) { return std::tolower(ch); });
    op kind;
    if (o == "get" || o == "gets")
      kind = op::Get;
    else if (o == "set" || o == "add" || o == "replace" || o == "cas")
      kind = op::Set;
    else if (o == "delete")
      kind = op::Delete;
    else {
      n.skipped_ops++;
      n.skipped_by_op[o]++;
      continue;
    }
    convert_add(w, c, n, kind, trim(key), size, ttl);
  }
}

int convert(const convert_options& c) {
  stream_writer w(c.out);
  convert_counts n;
  if (c.format == "oracleGeneral")
    convert_oracle(w, c, n);
  else if (c.format == "csv")
    convert_csv(w, c, n);
  else
    die("--format must be oracleGeneral or csv");
  uint64_t warmup = std::min(c.warmup, w.records);
  w.finish(warmup);
  std::string by_op;
  for (auto& [name, count] : n.skipped_by_op) {
    if (!by_op.empty()) by_op += ',';
    by_op += '"';
    for (char ch : name) by_op += (ch == '"' || ch == '\\' || static_cast<unsigned char>(ch) < ' ') ? '?' : ch;
    by_op += "\":";
    by_op += std::to_string(count);
  }
  printf(
      "{\"records\":%llu,\"warmup\":%llu,\"lines\":%llu,\"header\":%llu,\"malformed\":%llu,"
      "\"skipped_ops\":%llu,\"skipped_by_op\":{%s},\"too_large\":%llu,\"bad_key\":%llu}\n",
      (unsigned long long)w.records, (unsigned long long)warmup, (unsigned long long)n.lines,
      (unsigned long long)n.header, (unsigned long long)n.malformed, (unsigned long long)n.skipped_ops, by_op.c_str(),
      (unsigned long long)n.too_large, (unsigned long long)n.bad_key);
  return 0;
}

// ---- replaying a stream ----------------------------------------------------

struct record {
  op kind;
  uint32_t size, ttl;
  std::string_view key;
};

// A stream file mapped read-only and read in order: nothing is copied, so a
// trace's size is bounded by the disk, not the memory.
class stream_view {
 public:
  explicit stream_view(const std::string& path) : path_(path) {
    int fd = open(path.c_str(), O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) die("cannot open " + path + ": " + strerror(errno));
    size_ = static_cast<size_t>(st.st_size);
    if (size_ < kHeaderBytes) die(path + " is not a stream file");
    void* m = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) die("cannot map " + path + ": " + strerror(errno));
    base_ = static_cast<const char*>(m);
    madvise(m, size_, MADV_SEQUENTIAL);
    if (memcmp(base_, kStreamMagic, 8) != 0) die(path + " is not a stream file");
    memcpy(&count_, base_ + 8, 8);
    memcpy(&warmup_, base_ + 16, 8);
  }
  ~stream_view() { munmap(const_cast<char*>(base_), size_); }
  uint64_t count() const { return count_; }
  uint64_t warmup() const { return std::min(warmup_, count_); }
  static constexpr uint64_t kFirst = kHeaderBytes;

  // The record at byte offset `at`; `next` is the offset of the one after.
  record at(uint64_t at, uint64_t& next) const {
    if (at + kRecordFixedBytes > size_) die(path_ + " is truncated");
    record r;
    r.kind = static_cast<op>(base_[at]);
    size_t klen = static_cast<unsigned char>(base_[at + 1]);
    memcpy(&r.size, base_ + at + 2, 4);
    memcpy(&r.ttl, base_ + at + 6, 4);
    if (at + kRecordFixedBytes + klen > size_ || static_cast<uint8_t>(r.kind) > 2) die(path_ + " is corrupt");
    r.key = std::string_view(base_ + at + kRecordFixedBytes, klen);
    next = at + kRecordFixedBytes + klen;
    return r;
  }

 private:
  std::string path_;
  const char* base_;
  size_t size_;
  uint64_t count_ = 0, warmup_ = 0;
};

struct phase_counts {
  uint64_t writes = 0, records = 0, gets = 0, hits = 0, misses = 0, fills = 0, sets = 0, deletes = 0, set_errors = 0,
           errors = 0;
};

struct replay_options {
  std::string stream, host = "127.0.0.1";
  int port = 0, window = 16, cpu_pid = 0, timeout_ms = 10000, samples = 20;
};

// What the next reply answers, in the order the requests were written.
struct pending {
  op kind;
  bool fill;        // a look-aside set after a miss
  uint64_t record;  // index of its record in the stream
  uint64_t offset;  // and where it is in the file
};

// The <bytes> of "VALUE <key> <flags> <bytes>[ <cas>]".
bool value_bytes(std::string_view l, uint64_t& bytes) {
  size_t k = l.find(' ', 6);
  if (k == std::string_view::npos) return false;
  size_t f = l.find(' ', k + 1);
  if (f == std::string_view::npos) return false;
  size_t e = l.find(' ', f + 1);
  return parse_u64(l.substr(f + 1, e == std::string_view::npos ? std::string_view::npos : e - f - 1), bytes);
}

class connection {
 public:
  explicit connection(const replay_options& o) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(o.port));
    if (inet_pton(AF_INET, o.host.c_str(), &a.sin_addr) != 1) die("bad --host " + o.host);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      die("connect " + o.host + ":" + std::to_string(o.port) + ": " + strerror(errno));
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // Blocking calls bounded by the socket's timeouts: one syscall per
    // send or recv, no poll beside each (the client's CPU is the run's cost).
    timeval tv{o.timeout_ms / 1000, (o.timeout_ms % 1000) * 1000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  ~connection() { close(fd_); }

  void write_all(const std::string& out) {
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = send(fd_, out.data() + done, out.size() - done, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) die("the server read nothing within --timeout-ms");
      if (n < 0 && errno != EINTR) die(std::string("send: ") + strerror(errno));
      if (n > 0) done += static_cast<size_t>(n);
    }
  }

  // One line of the reply, without its "\r\n".
  std::string_view line() {
    while (true) {
      size_t nl = in_.find("\r\n", pos_);
      if (nl != std::string::npos) {
        std::string_view l(in_.data() + pos_, nl - pos_);
        pos_ = nl + 2;
        return l;
      }
      fill();
    }
  }
  void skip(size_t bytes) {
    while (in_.size() - pos_ < bytes) fill();
    pos_ += bytes;
  }

  // Whether the whole reply to a request of this kind is already read, so
  // that reading it will not block.
  bool reply_ready(op kind) const {
    size_t nl = in_.find("\r\n", pos_);
    if (nl == std::string::npos) return false;
    std::string_view l(in_.data() + pos_, nl - pos_);
    if (kind != op::Get || !l.starts_with("VALUE ")) return true;
    uint64_t bytes = 0;
    if (!value_bytes(l, bytes)) return true;        // read_reply says what is wrong
    return in_.size() - (nl + 2) >= bytes + 2 + 5;  // data, "\r\n", "END\r\n"
  }

  // Reads what the server has sent (blocks until something comes).
  void fill() {
    if (pos_ > 0 && pos_ == in_.size()) {
      in_.clear();
      pos_ = 0;
    } else if (pos_ > (1 << 20)) {
      in_.erase(0, pos_);
      pos_ = 0;
    }
    char buf[65536];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n == 0) die("the server closed the connection");
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) die("the server did not answer within --timeout-ms");
    if (n < 0 && errno != EINTR) die(std::string("recv: ") + strerror(errno));
    if (n > 0) in_.append(buf, static_cast<size_t>(n));
  }

  int fd_;
  std::string in_;
  size_t pos_ = 0;
};

void append_set(std::string& out, const record& r, const std::string& value) {
  out += "set ";
  out += r.key;
  out += " 0 " + std::to_string(r.ttl) + " " + std::to_string(r.size) + "\r\n";
  out.append(value.data(), r.size);
  out += "\r\n";
}

// Reads one reply and counts it; true when it is a get's miss (to fill).
bool read_reply(connection& c, const pending& p, phase_counts& ph) {
  std::string_view l = c.line();
  if (p.kind == op::Get) {
    if (l == "END") {
      ph.misses++;
      return true;
    }
    if (l.starts_with("VALUE ")) {
      uint64_t bytes = 0;
      if (!value_bytes(l, bytes)) die("bad VALUE line: " + std::string(l));
      c.skip(bytes + 2);
      if (c.line() != "END") die("a get's reply does not end with END");
      ph.hits++;
      return false;
    }
    ph.errors++;  // SERVER_ERROR and the like: counted, and a miss
    ph.misses++;
    return true;
  }
  if (p.kind == op::Set) {
    if (l != "STORED") ph.set_errors++;
  } else if (l != "DELETED" && l != "NOT_FOUND") {
    ph.errors++;
  }
  return false;
}

void print_phase(const char* name, const phase_counts& p, bool comma) {
  printf(
      "\"%s\":{\"writes\":%llu,\"records\":%llu,\"gets\":%llu,\"hits\":%llu,\"misses\":%llu,\"fills\":%llu,\"sets\":%"
      "llu,"
      "\"deletes\":%llu,\"set_errors\":%llu,\"errors\":%llu}%s",
      name, (unsigned long long)p.writes, (unsigned long long)p.records, (unsigned long long)p.gets,
      (unsigned long long)p.hits, (unsigned long long)p.misses, (unsigned long long)p.fills, (unsigned long long)p.sets,
      (unsigned long long)p.deletes, (unsigned long long)p.set_errors, (unsigned long long)p.errors, comma ? "," : "");
}

// utime + stime of pid in seconds (/proc/PID/stat fields 14 and 15); -1 if unreadable.
double process_cpu_seconds(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return -1;
  size_t p = line.rfind(')');
  if (p == std::string::npos) return -1;
  unsigned long long ticks[2] = {0, 0};
  if (sscanf(line.c_str() + p + 2, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", &ticks[0], &ticks[1]) != 2)
    return -1;
  return static_cast<double>(ticks[0] + ticks[1]) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Appends record i's request; a get makes its key unresolved until its reply.
void append_request(std::string& out, const record& r, const std::string& value, phase_counts& ph) {
  ph.records++;
  if (r.kind == op::Get) {
    out += "get ";
    out += r.key;
    out += "\r\n";
    ph.gets++;
  } else if (r.kind == op::Set) {
    append_set(out, r, value);
    ph.sets++;
  } else {
    out += "delete ";
    out += r.key;
    out += "\r\n";
    ph.deletes++;
  }
}

// curr_items and bytes over time: the items held at the end are one moment
// of a store whose background sweep evicts in steps (ithaca's GC between its
// watermarks), so the mean of samples taken at fixed points of the measured
// part says more. Taken on a connection of its own.
struct held_samples {
  uint64_t count = 0;
  double items = 0, bytes = 0;
  void take(connection& c) {
    c.write_all("stats\r\n");
    uint64_t v;
    while (true) {
      std::string_view l = c.line();
      if (l == "END") break;
      if (l.starts_with("STAT curr_items ") && parse_u64(l.substr(16), v)) items += static_cast<double>(v);
      if (l.starts_with("STAT bytes ") && parse_u64(l.substr(11), v)) bytes += static_cast<double>(v);
      if (l.starts_with("ERROR") || l.starts_with("SERVER_ERROR")) die("stats: " + std::string(l));
    }
    count++;
  }
};

// The look-aside loop over a sliding window: up to --window requests in
// flight, each write carrying every request allowed so far. A record waits
// (and every record after it: the stream's order is kept) while a get of its
// key is in flight, since that get's miss must be filled before anything
// else touches the key; once the reply is read, the fill goes into the very
// next write, ahead of any later request. The measured part starts on an
// empty pipe.
int replay(const replay_options& o) {
  if (o.window < 1) die("--window must be at least 1");
  const stream_view s(o.stream);
  std::string value;  // the bytes of every value: grown to the largest yet
  connection c(o);
  connection stats_conn(o);
  held_samples held;

  phase_counts phases[2];
  std::deque<pending> in_flight;
  std::unordered_map<std::string_view, uint32_t> unresolved;  // key -> gets of it in flight
  std::string out;
  uint64_t t_measured = 0;
  double cpu0 = -1;
  const uint64_t n = s.count(), warmup = s.warmup();
  const size_t window = static_cast<size_t>(o.window);
  const uint64_t sample_every = o.samples > 0 ? std::max<uint64_t>(1, (n - warmup) / o.samples) : UINT64_MAX;
  uint64_t next_sample = o.samples > 0 ? warmup + sample_every : UINT64_MAX;
  uint64_t i = 0, at = stream_view::kFirst;
  while (true) {
    if (i == warmup && in_flight.empty() && t_measured == 0) {
      t_measured = now_ns();
      if (o.cpu_pid > 0) cpu0 = process_cpu_seconds(o.cpu_pid);
    }
    if (i >= next_sample) {
      held.take(stats_conn);
      next_sample += sample_every;
    }
    while (i < n && in_flight.size() < window && (i != warmup || in_flight.empty())) {
      uint64_t next;
      const record r = s.at(at, next);
      if (unresolved.contains(r.key)) break;
      if (r.size > value.size()) value.assign(r.size, 'v');
      append_request(out, r, value, phases[i >= warmup ? 1 : 0]);
      in_flight.push_back({r.kind, false, i, at});
      if (r.kind == op::Get) unresolved[r.key]++;
      i++;
      at = next;
    }
    if (!out.empty()) {
      phases[i > warmup ? 1 : 0].writes++;
      c.write_all(out);
      out.clear();
    }
    if (in_flight.empty()) {
      if (i >= n) break;
      continue;
    }
    // Every reply already here, and at least one.
    do {
      const pending p = in_flight.front();
      in_flight.pop_front();
      phase_counts& ph = phases[p.record >= warmup ? 1 : 0];
      if (p.fill) ph.fills++;
      const bool missed = read_reply(c, p, ph);
      if (p.kind == op::Get) {
        uint64_t next;
        const record r = s.at(p.offset, next);
        auto it = unresolved.find(r.key);
        if (--it->second == 0) unresolved.erase(it);
        if (missed) {
          append_set(out, r, value);
          in_flight.push_back({op::Set, true, p.record, p.offset});
        }
      }
    } while (!in_flight.empty() && c.reply_ready(in_flight.front().kind));
  }
  uint64_t t_end = now_ns();
  double cpu1 = o.cpu_pid > 0 ? process_cpu_seconds(o.cpu_pid) : -1;
  double secs = t_measured ? static_cast<double>(t_end - t_measured) / 1e9 : 0;
  printf("{");
  print_phase("warmup", phases[0], true);
  print_phase("measured", phases[1], true);
  printf(
      "\"window\":%d,\"measured_s\":%.3f,\"requests_per_s\":%.1f,\"server_cpu_s\":%.3f,\"samples\":%llu,"
      "\"items_mean\":%.1f,\"bytes_mean\":%.1f}\n",
      o.window, secs, secs > 0 ? static_cast<double>(phases[1].records) / secs : 0.0,
      cpu0 >= 0 && cpu1 >= 0 ? cpu1 - cpu0 : -1.0, (unsigned long long)held.count,
      held.count ? held.items / static_cast<double>(held.count) : -1.0,
      held.count ? held.bytes / static_cast<double>(held.count) : -1.0);
  return 0;
}

[[noreturn]] void usage() {
  fprintf(stderr,
          "usage: hitratio_client generate --out FILE [--keys N] [--alpha A] [--requests N] [--warmup N]\n"
          "                                [--one-hit-share S] [--sizes SPEC] [--ttl-mix SPEC] [--seed N]\n"
          "       hitratio_client convert --out FILE --trace FILE --format oracleGeneral|csv [--warmup N]\n"
          "                               [--requests N] [--item-size-max BYTES]\n"
          "       hitratio_client replay --stream FILE --port P [--host H] [--window W] [--cpu-pid PID]\n"
          "                              [--timeout-ms MS] [--samples K]\n");
  exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage();
  const std::string mode = argv[1];
  generate_options g;
  convert_options c;
  replay_options r;
  try {
    for (int i = 2; i < argc; i++) {
      std::string a = argv[i];
      if (i + 1 >= argc) usage();
      std::string v = argv[++i];
      if (a == "--out")
        g.out = c.out = v;
      else if (a == "--keys")
        g.keys = std::stoull(v);
      else if (a == "--alpha")
        g.alpha = std::stod(v);
      else if (a == "--requests")
        g.requests = c.requests = std::stoull(v);
      else if (a == "--warmup")
        g.warmup = c.warmup = std::stoull(v);
      else if (a == "--one-hit-share")
        g.one_hit_share = std::stod(v);
      else if (a == "--sizes")
        g.sizes = v;
      else if (a == "--ttl-mix")
        g.ttl_mix = v;
      else if (a == "--seed")
        g.seed = std::stoull(v);
      else if (a == "--trace")
        c.trace = v;
      else if (a == "--format")
        c.format = v;
      else if (a == "--item-size-max")
        c.item_size_max = std::stoull(v);
      else if (a == "--stream")
        r.stream = v;
      else if (a == "--host")
        r.host = v;
      else if (a == "--port")
        r.port = std::stoi(v);
      else if (a == "--window")
        r.window = std::stoi(v);
      else if (a == "--cpu-pid")
        r.cpu_pid = std::stoi(v);
      else if (a == "--timeout-ms")
        r.timeout_ms = std::stoi(v);
      else if (a == "--samples")
        r.samples = std::stoi(v);
      else
        usage();
    }
  } catch (const std::exception&) {
    usage();
  }
  if (mode == "generate" && !g.out.empty()) return generate(g);
  if (mode == "convert" && !c.out.empty() && !c.trace.empty()) return convert(c);
  if (mode == "replay" && !r.stream.empty() && r.port > 0) return replay(r);
  usage();
}
