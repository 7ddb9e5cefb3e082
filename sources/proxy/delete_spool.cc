#include "delete_spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <spdlog/spdlog.h>

#include "backend_connect.h"
#include "spool_file.h"

namespace ithaca::proxy {

namespace {

spool_totals g_totals;
std::atomic<delete_spool*> g_current{nullptr};

constexpr mm::millis kTick = 100;              // the machine looks for servers to replay this often
constexpr std::size_t kReadChunk = 64 * 1024;  // a replay reads its file this much at a time
constexpr std::size_t kMaxReplyLine = 1024;
constexpr std::size_t kBatch = 64;  // deletes a replay pipelines before it reads their replies

bool replayable_key(std::string_view key) {
  if (key.empty() || key.size() > 250) return false;
  for (unsigned char c : key) {
    if (c <= ' ' || c == 0x7f) return false;
  }
  return true;
}

void count_drop(backend_server& s) {
  s.spool().dropped.fetch_add(1, std::memory_order_relaxed);
  g_totals.dropped.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

const spool_totals& spool_counters() { return g_totals; }

void count_spool_drop(backend_server& server) { count_drop(server); }

void spool_mailbox::post(uint64_t seq, bool written) {
  std::lock_guard lock(mu);
  done.push_back(outcome{seq, written});
  if (waiter) {
    // One wake per wait: the worker takes every outcome there is when it runs.
    waiter->wake();
    waiter.reset();
  }
}

std::string spool_file_name(const backend_server& server) {
  std::string name = server.pool() + "_" + server.address();
  for (char& c : name) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    if (!keep) c = '_';
  }
  return name + ".spool";
}

// A prober waiting for a replay. [mu]: both sides.
struct delete_spool::ticket {
  std::mutex mu;
  std::optional<mm::remote_waiter> waiter;  // the prober's current wait, if it waits
  bool done = false;
  bool ok = false;
};

// What the workers, the prober and the main thread send the machine.
struct delete_spool::message {
  enum class kind : uint8_t { Append, Replay, Adopt };
  kind what = kind::Append;
  std::shared_ptr<backend_server> server;
  std::string key;                       // Append
  std::shared_ptr<spool_mailbox> reply;  // Append: whom to tell (null: nobody)
  uint64_t seq = 0;                      // Append: the worker's number for it
  int64_t deadline_ns = 0;               // Append: not written from then on
  std::shared_ptr<ticket> replay;        // Replay
};

// One spool file. [spool machine only]
struct delete_spool::file_state {
  std::shared_ptr<backend_server> server;  // the latest server object of this file's name
  std::string path;
  int fd = -1;              // appends (O_APPEND); -1 while there is no file
  uint64_t size = 0;        // bytes in the file
  uint64_t done = 0;        // the prefix already replayed
  int64_t next_try_ns = 0;  // after a failed replay: not before this
  bool replaying = false;
  bool failing = false;  // the last write failed (logged once, until one succeeds)
  // fsync: this batch wrote to the file (synced_size: its size before), and
  // whether the batch's sync worked.
  bool dirty = false;
  bool sync_ok = true;
  uint64_t synced_size = 0;
  std::vector<std::shared_ptr<ticket>> tickets;  // probers waiting for the running replay
};

class delete_spool::machine_side {
 public:
  explicit machine_side(delete_spool& owner) : owner_(owner), asynclog_(owner.settings_.asynclog) {}
  ~machine_side() {
    for (auto& [path, f] : files_) {
      if (f.fd >= 0) ::close(f.fd);
    }
  }

  // The machine's main coroutine: records in order, replays when due. A
  // batch (what the inbox holds) is written, synced (fsync) and answered
  // before this coroutine waits again, so a replay (another coroutine, which
  // runs only while this one waits) never sees a record not yet answered.
  void run() {
    for (;;) {
      message m;
      const mm::wait_status st = owner_.inbox_->read(m, kTick);
      if (st == mm::wait_status::Cancelled) break;
      if (st == mm::wait_status::Ok) {
        handle(std::move(m));
        // Take what else is queued before looking for replays.
        while (owner_.inbox_->try_read(m)) handle(std::move(m));
        commit();
      }
      start_due_replays();
    }
    // Stopping: what the workers queued still goes to disk.
    message m;
    while (owner_.inbox_->try_read(m)) {
      if (m.what == message::kind::Append) append(std::move(m));
    }
    commit();
  }

 private:
  file_state& state_of(const std::shared_ptr<backend_server>& server) {
    std::string path = owner_.settings_.dir + "/" + spool_file_name(*server);
    auto [it, fresh] = files_.try_emplace(path);
    file_state& f = it->second;
    if (fresh) f.path = std::move(path);
    f.server = server;  // a reload's new object for the same pool and address
    return f;
  }

  void handle(message m) {
    switch (m.what) {
      case message::kind::Append: append(std::move(m)); break;
      case message::kind::Adopt: adopt(m.server); break;
      case message::kind::Replay: {
        file_state& f = state_of(m.server);
        if (f.done >= f.size) {
          complete(*m.replay, true);
        } else {
          f.tickets.push_back(std::move(m.replay));
          if (!f.replaying) start_replay(f);
        }
        break;
      }
    }
  }

  // Appends one record, or answers at once that it was not written: its
  // deadline passed (its worker gave up and answered the failure), the file
  // cannot be opened (the directory became a file, a read-only mount...), or
  // the write failed (nothing of it is left in the file). Without fsync a
  // written record is answered at once: write(2) has returned, the kernel
  // holds it, and it survives this process's death. With fsync it waits for
  // the batch's commit().
  void append(message m) {
    file_state& f = state_of(m.server);
    const uint64_t len = m.key.size() + 1;
    if (m.deadline_ns >= 0 && mm::deadline_after(0) >= m.deadline_ns) {
      refuse(m, len);
      return;
    }
    std::string why;
    if (f.fd < 0) f.fd = spool_open(owner_.settings_.dir, f.path, &why);
    m.key.push_back('\n');
    if (f.fd < 0 || !spool_append(f.fd, f.size, m.key, &why)) {
      if (!f.failing) {
        spdlog::error("spool: cannot write {}: {}; failed deletes for {}/{} get the failure until a write works",
                      f.path, why, m.server->pool(), m.server->address());
      }
      f.failing = true;
      refuse(m, len);
      return;
    }
    if (f.failing) spdlog::info("spool: {} is written again", f.path);
    f.failing = false;
    f.size += len;
    write_asynclog(*m.server, std::string_view(m.key).substr(0, m.key.size() - 1));
    if (!owner_.settings_.fsync) {
      accept(m);
      return;
    }
    if (!f.dirty) {
      f.dirty = true;
      f.synced_size = f.size - len;
      dirty_.push_back(&f);
    }
    unsynced_.push_back(unsynced{std::move(m), &f, len});
  }

  // mcrouter's asynclog line for a delete just spooled (asynclog_file.h),
  // its pool named as the config named it (without the "~placement" or
  // "#N" ithaca adds to a pool it derives). Its failure fails nothing: the
  // delete is in ithaca's spool; logged once until a write works.
  void write_asynclog(const backend_server& server, std::string_view key) {
    if (!asynclog_.enabled()) return;
    std::string_view pool = server.pool();
    pool = pool.substr(0, pool.find_first_of("~#"));
    std::string why;
    const bool ok = asynclog_.write_delete(server.address(), pool, key, &why);
    if (!ok && !asynclog_failing_) spdlog::error("asynclog: {}; failed deletes are not logged there", why);
    if (ok && asynclog_failing_) spdlog::info("asynclog: written again");
    asynclog_failing_ = !ok;
  }

  // fsync: syncs every file the batch wrote, then answers the batch's
  // records: written if their file synced, else taken back out of it (cut
  // back to its size before the batch) and not written.
  void commit() {
    for (file_state* f : dirty_) {
      std::string why;
      f->sync_ok = spool_sync(f->fd, f->synced_size, &why);
      if (!f->sync_ok) {
        spdlog::error(
            "spool: cannot sync {}: {}; the {} bytes of deletes written since the last sync are taken out "
            "and get the failure",
            f->path, why, f->size - f->synced_size);
        f->size = f->synced_size;
      }
      f->dirty = false;
    }
    for (unsynced& u : unsynced_) {
      if (u.file->sync_ok) {
        accept(u.m);
      } else {
        refuse(u.m, u.len);
      }
    }
    unsynced_.clear();
    dirty_.clear();
  }

  // The record is in its file: counted spooled, its worker told.
  static void accept(const message& m) {
    m.server->spool().spooled.fetch_add(1, std::memory_order_relaxed);
    g_totals.spooled.fetch_add(1, std::memory_order_relaxed);
    if (m.reply) m.reply->post(m.seq, true);
  }

  // The record is not in its file: its bytes given back, counted dropped,
  // its worker told (the client gets the failure).
  static void refuse(const message& m, uint64_t len) {
    m.server->spool().bytes.fetch_sub(len, std::memory_order_relaxed);
    count_drop(*m.server);
    if (m.reply) m.reply->post(m.seq, false);
  }

  // A file an earlier run left: its records count against the bound now.
  void adopt(const std::shared_ptr<backend_server>& server) {
    file_state& f = state_of(server);
    struct stat sb {};
    if (f.size != 0 || ::stat(f.path.c_str(), &sb) != 0 || sb.st_size <= 0) return;
    f.size = static_cast<uint64_t>(sb.st_size);
    server->spool().bytes.fetch_add(f.size, std::memory_order_relaxed);
    spdlog::info("spool: {} holds {} bytes of deletes for {}/{} from an earlier run", f.path, f.size, server->pool(),
                 server->address());
  }

  // A server that is up with deletes left, and not in its back-off, is
  // replayed now (the prober's gate covers the servers that are down).
  void start_due_replays() {
    const int64_t now = mm::now_ns();
    for (auto& [path, f] : files_) {
      if (f.replaying || f.done >= f.size || !f.server->up() || f.server->retired() || now < f.next_try_ns) continue;
      start_replay(f);
    }
  }

  void start_replay(file_state& f) {
    f.replaying = true;
    // file_state lives in a std::map that never erases: the reference stays valid.
    mm::coroutine_create("spool replay " + f.server->address(), [this, &f] {
      const bool ok = replay(f);
      f.replaying = false;
      if (!ok) f.next_try_ns = mm::now_ns() + static_cast<int64_t>(f.server->settings().retry_interval_ms) * 1000000;
      for (auto& t : f.tickets) complete(*t, ok);
      f.tickets.clear();
    });
  }

  static void complete(ticket& t, bool ok) {
    std::lock_guard lock(t.mu);
    t.done = true;
    t.ok = ok;
    if (t.waiter) t.waiter->wake();
  }

  // Sends the file's deletes from `done` on, in order, on one connection of
  // its own: batches of up to kBatch pipelined `delete`s, each reply checked
  // in turn (DELETED or NOT_FOUND). True once the file is empty (it is then
  // removed). A reply that is neither, or none within the pool's timeout,
  // ends the replay: the deletes answered so far are done, the rest are kept
  // (sent again next time: a delete twice is harmless). Appends made
  // meanwhile (this machine, between its waits) are sent too.
  bool replay(file_state& f) {
    backend_server& s = *f.server;
    const server_settings& st = s.settings();
    if (!s.address_ok()) return false;
    // Plain or TLS, as the pool's connections (backend_connect.h).
    backend_link io = connect_backend(s, mm::deadline_after(static_cast<mm::millis>(st.connect_timeout_ms)));
    if (!io) return false;
    const int rfd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (rfd < 0) {
      io.close();
      return false;
    }
    bool ok = true;
    std::string chunk(kReadChunk, '\0');
    std::string request, replies;
    std::vector<uint32_t> lengths;  // the batch's records, with their newline
    char buf[4096];
    while (ok && f.done < f.size) {
      const ssize_t n = ::pread(rfd, chunk.data(), chunk.size(), static_cast<off_t>(f.done));
      if (n <= 0) {
        ok = false;
        break;
      }
      std::string_view data(chunk.data(), static_cast<std::size_t>(n));
      if (data.find('\n') == std::string_view::npos) {
        // A torn last record (the process died mid-write): nothing to send.
        spdlog::warn("spool: {} ends with a torn record of {} bytes; skipped", f.path, data.size());
        s.spool().bytes.fetch_sub(std::min<uint64_t>(data.size(), s.spool().bytes.load()), std::memory_order_relaxed);
        f.done += data.size();
        break;
      }
      while (ok) {
        request.clear();
        lengths.clear();
        for (std::size_t eol = data.find('\n'); eol != std::string_view::npos && lengths.size() < kBatch;
             eol = data.find('\n')) {
          request.append("delete ").append(data.substr(0, eol)).append("\r\n");
          lengths.push_back(static_cast<uint32_t>(eol + 1));
          data.remove_prefix(eol + 1);
        }
        if (lengths.empty()) break;  // the chunk's complete records are done: read on
        const int64_t deadline = mm::deadline_after(static_cast<mm::millis>(st.timeout_ms));
        std::string why;
        if (io.write(request.data(), request.size(), mm::millis_until(deadline)) <= 0) why = "write failed";
        replies.clear();
        for (std::size_t answered = 0; why.empty() && answered < lengths.size();) {
          const std::size_t nl = replies.find('\n');
          if (nl == std::string::npos) {
            if (replies.size() > kMaxReplyLine) {
              why = "a reply line too long";
              continue;
            }
            const ssize_t r = io.read(buf, sizeof buf, mm::millis_until(deadline));
            if (r <= 0) {
              why = r == 0 ? "closed" : "no reply";
            } else {
              replies.append(buf, static_cast<std::size_t>(r));
            }
            continue;
          }
          const std::string_view line(replies.data(), nl + 1);
          if (line != "DELETED\r\n" && line != "NOT_FOUND\r\n") {
            why = "answered " + std::string(line.substr(0, line.find_first_of("\r\n")));
            break;
          }
          replies.erase(0, nl + 1);
          f.done += lengths[answered];
          s.spool().bytes.fetch_sub(lengths[answered], std::memory_order_relaxed);
          s.spool().replayed.fetch_add(1, std::memory_order_relaxed);
          g_totals.replayed.fetch_add(1, std::memory_order_relaxed);
          ++answered;
        }
        if (!why.empty()) {
          spdlog::warn("spool: replay to {}/{} stopped ({}); {} bytes kept", s.pool(), s.address(), why,
                       f.size - f.done);
          ok = false;
        }
      }
    }
    ::close(rfd);
    io.close();
    if (f.done >= f.size) {
      // Everything was taken: start the next file afresh.
      if (f.fd >= 0) ::close(f.fd);
      f.fd = -1;
      ::unlink(f.path.c_str());
      f.size = f.done = 0;
      return true;
    }
    return false;
  }

  // fsync: a record written in this batch, answered by commit().
  struct unsynced {
    message m;
    file_state* file;
    uint64_t len;
  };

  delete_spool& owner_;
  asynclog_file asynclog_;
  bool asynclog_failing_ = false;
  std::map<std::string, file_state> files_;  // by path
  std::vector<unsynced> unsynced_;           // fsync: this batch's records, in order
  std::vector<file_state*> dirty_;           // fsync: the files this batch wrote
};

delete_spool::delete_spool(spool_settings settings)
    : settings_(std::move(settings)), inbox_(std::make_unique<mm::channel<message>>(kQueue)) {}

delete_spool::~delete_spool() { stop(); }

delete_spool* delete_spool::current() { return g_current.load(std::memory_order_acquire); }

bool delete_spool::start(const mm::machine_config& base) {
  side_ = std::make_unique<machine_side>(*this);
  mm::machine_config mc = base;
  mc.name = "spool";
  machine_side* side = side_.get();
  machine_ = mm::machine_create(mc, [side] { side->run(); });
  if (machine_ == nullptr) {
    side_.reset();
    return false;
  }
  g_current.store(this, std::memory_order_release);
  spdlog::info("spool: reliable deletes are spooled under {} (at most {} bytes per server{})", settings_.dir,
               settings_.max_bytes, settings_.fsync ? ", each batch synced" : "");
  return true;
}

void delete_spool::stop() {
  if (machine_ == nullptr) return;
  g_current.store(nullptr, std::memory_order_release);
  mm::machine_stop(machine_);
  mm::machine_join(machine_);
  machine_ = nullptr;
  side_.reset();  // closes the files
  // Fails (ENOTEMPTY), as it should, while a file holds deletes.
  if (settings_.remove_dir_if_empty) ::rmdir(settings_.dir.c_str());
}

void delete_spool::adopt(std::shared_ptr<backend_server> server) {
  message m;
  m.what = message::kind::Adopt;
  m.server = std::move(server);
  (void)inbox_->try_write(std::move(m));  // start-up: the queue is empty
}

bool delete_spool::submit(const std::shared_ptr<backend_server>& server, std::string_view key,
                          std::shared_ptr<spool_mailbox> reply, uint64_t seq, int64_t deadline_ns) {
  spool_counts& c = server->spool();
  if (!replayable_key(key)) {
    count_drop(*server);
    return false;
  }
  const uint64_t need = key.size() + 1;
  uint64_t b = c.bytes.load(std::memory_order_relaxed);
  do {
    if (b + need > settings_.max_bytes) {
      count_drop(*server);
      return false;
    }
  } while (!c.bytes.compare_exchange_weak(b, b + need, std::memory_order_relaxed));
  message m;
  m.server = server;
  m.key.assign(key);
  m.reply = std::move(reply);
  m.seq = seq;
  m.deadline_ns = deadline_ns;
  if (!inbox_->try_write(std::move(m))) {
    c.bytes.fetch_sub(need, std::memory_order_relaxed);
    count_drop(*server);
    return false;
  }
  return true;
}

bool delete_spool::replay_before_up(const std::shared_ptr<backend_server>& server, int64_t deadline_ns) {
  // Bytes are reserved before a record is queued, so 0 means nothing queued or on disk.
  if (server->spool().bytes.load(std::memory_order_relaxed) == 0) return true;
  auto t = std::make_shared<ticket>();
  message m;
  m.what = message::kind::Replay;
  m.server = server;
  m.replay = t;
  if (!inbox_->try_write(std::move(m))) return false;
  for (;;) {
    mm::remote_waiter w;  // this coroutine's next wait
    {
      std::lock_guard lock(t->mu);
      if (t->done) break;
      t->waiter = w;
    }
    if (w.wait_until(deadline_ns) != mm::wait_status::Ok) break;
  }
  std::lock_guard lock(t->mu);
  t->waiter.reset();
  return t->done && t->ok;
}

}  // namespace ithaca::proxy
