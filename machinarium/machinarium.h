// machinarium: ithaca's coroutine runtime (in the style of Odyssey's).
//
// This is the library's one public header. A *machine* is a pthread running a
// coroutine scheduler on its own event loop (io_uring or epoll). Coroutines are
// stackful (Boost.Context fibers on mmap'd stacks behind a guard page). Every
// wait in the library is built on one suspension primitive, `mm::call`, so every
// wait has a timeout and can be cancelled, and reports ok / timed out / cancelled.
//
// Threading rules (see INTERNALS.md, "machinarium"):
//  - Functions marked [machine] must be called from a coroutine running on a
//    machine; they act on that machine.
//  - Functions marked [any thread] may be called from anywhere.
//  - An `io` belongs to the machine that created or attached it; only that
//    machine may read, write or close it. To move it, detach() it and attach the
//    fd on the other machine (the fd crosses over a channel).
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mm {

// Timeouts are in milliseconds. Forever is spelled out at the call site.
using millis = int64_t;
inline constexpr millis kForever = -1;

enum class wait_status {
  Ok,        // woken by the event waited for
  TimedOut,  // the timeout elapsed first
  Cancelled  // the coroutine was cancelled (cancellation is sticky)
};
const char* to_string(wait_status s);

enum class backend_kind { Auto, IoUring, Epoll };
const char* to_string(backend_kind k);

// ---------------------------------------------------------------- logging
// machinarium logs through a handler so the library depends on no logging
// framework. The default handler writes to stderr. [any thread]
enum class log_level { Debug, Info, Warn, Error };
using log_handler = void (*)(log_level, std::string_view message);
void set_log_handler(log_handler h);

// ---------------------------------------------------------------- machines
struct machine_config {
  std::string name = "machine";
  backend_kind backend = backend_kind::Auto;
  size_t stack_size = 64 * 1024;  // usable bytes per coroutine stack (+1 guard page)
  size_t stack_cache_max = 512;   // freed stacks kept for reuse
  unsigned uring_entries = 1024;  // submission queue size (io_uring backend)
  unsigned uring_buffers = 256;   // provided receive buffers (io_uring backend)
  unsigned uring_buffer_size = 16 * 1024;
  // Multishot recv into the provided-buffer ring (io_uring backend): one
  // request per socket delivers data as it arrives, no recv syscall per read.
  // Off, io_uring reads with recv + POLL_ADD.
  bool uring_multishot_recv = true;
};

struct machine_counters {
  uint64_t coroutines_alive = 0;
  uint64_t coroutines_created = 0;
  uint64_t stacks_cached = 0;
  uint64_t messages_received = 0;  // cross-machine wake-ups and spawns delivered
  uint64_t loop_iterations = 0;
  uint64_t context_switches = 0;
  uint64_t timers_pending = 0;
  // Coroutines still ready when the loop last went to the backend (what the
  // turn's budget left over; 0 on an idle machine).
  uint64_t ready_queue = 0;
  // io_uring only (0 with epoll): SQEs handed to the kernel, CQEs reaped.
  uint64_t uring_submissions = 0;
  uint64_t uring_completions = 0;
};

class machine;

// Starts a machine thread; `main` runs as its first coroutine (named "main").
// The machine runs until machine_stop() and then until every coroutine ended.
// Returns nullptr (and logs why) if the backend cannot be created. [any thread]
machine* machine_create(machine_config cfg, std::function<void()> main);
// Cancels every coroutine on the machine; the thread exits once all have ended.
// [any thread]
void machine_stop(machine* m);
// Waits for the machine thread to exit and frees it. Not from the machine itself.
void machine_join(machine* m);
// Runs `fn` as a new coroutine on machine `m`. [any thread]
void machine_spawn(machine* m, std::string_view name, std::function<void()> fn);

machine* machine_self();  // nullptr outside a machine
const char* machine_name(const machine* m);
// "io_uring" or "epoll", and why that backend was chosen (probe result).
const char* machine_backend_name(const machine* m);
std::string machine_backend_reason(const machine* m);
machine_counters machine_counters_get(const machine* m);  // [any thread]

// ---------------------------------------------------------------- coroutines
using coroutine_id = uint64_t;  // unique in the process; 0 is never used

// Creates a coroutine on the current machine; it runs on the next scheduler
// turn. An exception escaping `fn` is logged and ends that coroutine only.
// [machine]
coroutine_id coroutine_create(std::string_view name, std::function<void()> fn);
coroutine_id coroutine_self();
const char* coroutine_name();
// Cancels a coroutine of the current machine: its current and every later wait
// returns Cancelled. Unknown or finished ids are ignored. [machine]
void coroutine_cancel(coroutine_id id);
bool coroutine_cancelled();  // is the current coroutine cancelled?
// Waits until coroutine `id` (current machine) ends. Ok at once if it has.
// Like every wait it returns Cancelled at once in a cancelled coroutine.
wait_status coroutine_join(coroutine_id id, millis timeout);
// Cancels coroutine `id` and waits until it has ended, also when the caller
// is itself cancelled (where coroutine_join returns at once): for a parent
// that must outlive its children because they use its state. A cancelled
// coroutine ends at its next wait, so this takes a loop turn or two. False if
// `id` still runs after `timeout`. [machine]
bool coroutine_finish(coroutine_id id, millis timeout);
void yield();                        // lets every other ready coroutine run once
wait_status sleep(millis duration);  // TimedOut is the normal result; Cancelled if cancelled

// Monotonic time in nanoseconds, cached once per loop iteration. [machine]
int64_t now_ns();
// The deadline (monotonic ns, for wait_until) `timeout` from now, read from
// the real clock; -1 for kForever. [any thread]
int64_t deadline_after(millis timeout);
// What is left of `deadline` in milliseconds, rounded up so a wait never ends
// early; 0 once it has passed; kForever for -1. [any thread]
millis millis_until(int64_t deadline);

// ---------------------------------------------------------------- the suspension primitive
namespace detail {
struct coroutine;
struct timer;
}  // namespace detail

// One wait of one coroutine, at most one in progress at a time. wait() arms a
// timer, records itself so a wake or a cancel can reach it, suspends the current
// coroutine, and reports why it resumed. wake() is for the same machine; see
// remote_waiter for waking from another thread.
class call {
 public:
  call();
  ~call();
  call(const call&) = delete;
  call& operator=(const call&) = delete;

  wait_status wait(millis timeout);             // [machine]
  wait_status wait_until(int64_t deadline_ns);  // deadline from now_ns(); <0 = forever
  void wake();                                  // [machine] no-op if nobody waits
  bool waiting() const { return coroutine_ != nullptr; }

 private:
  friend struct detail::coroutine;
  friend class machine;
  detail::coroutine* coroutine_ = nullptr;
  wait_status status_ = wait_status::Ok;
  bool woken_ = false;
};

// Wakes a coroutine that waits on another machine (or the same one). The
// waiter registers itself with `arm()` before waiting; any thread may then call
// `wake()` while the waiter is still registered with the structure that owns it.
// A wake that arrives after the wait ended is ignored (matched by sequence).
class remote_waiter {
 public:
  remote_waiter();                              // [machine] binds to the current coroutine
  wait_status wait_until(int64_t deadline_ns);  // [machine]
  void wake() const;                            // [any thread]

 private:
  machine* machine_;
  coroutine_id coroutine_;
  uint64_t sequence_;
};

// ---------------------------------------------------------------- same-machine sync
// An event with memory: signal() with nobody waiting is remembered and the next
// wait() returns Ok at once. One machine only. [machine]
class cond {
 public:
  void signal();
  void broadcast();
  wait_status wait(millis timeout);

 private:
  std::deque<call*> waiters_;
  bool signalled_ = false;
};

// Counts outstanding work; wait() returns when the count is zero. [machine]
class wait_group {
 public:
  void add(int n = 1) { count_ += n; }
  void done();
  wait_status wait(millis timeout);
  int count() const { return count_; }

 private:
  int count_ = 0;
  cond zero_;
};

// ---------------------------------------------------------------- channels
// A bounded multi-producer multi-consumer queue between machines (or threads).
// Policy when full is the writer's choice, stated at the call site:
//   write(v, timeout) waits for room (TimedOut / Cancelled if none came);
//   try_write(v) refuses at once (returns false) so the caller can count a drop.
// Wake-ups are coalesced: a writer wakes a reader only if one is waiting, which
// only happens when the queue was empty; a machine's event fd is written only
// when its inbox goes from empty to non-empty.
namespace detail {
class waiter_list {
 public:
  void push(remote_waiter* w) { list_.push_back(w); }
  bool remove(remote_waiter* w);  // false if it was already popped for a wake
  remote_waiter* pop();           // nullptr if empty
  bool empty() const { return list_.empty(); }

 private:
  std::deque<remote_waiter*> list_;
};
}  // namespace detail

template <class T>
class channel {
 public:
  explicit channel(size_t capacity) : capacity_(capacity ? capacity : 1) {}
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;

  bool try_write(T value) {  // [any thread]
    remote_waiter* to_wake = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (items_.size() >= capacity_) return false;
      items_.push_back(std::move(value));
      to_wake = readers_.pop();
    }
    if (to_wake) to_wake->wake();
    return true;
  }

  wait_status write(T value, millis timeout) {  // [machine]
    int64_t deadline = deadline_after(timeout);
    for (;;) {
      if (coroutine_cancelled()) return wait_status::Cancelled;
      remote_waiter self;
      remote_waiter* to_wake = nullptr;
      bool written = false;
      {
        std::lock_guard lock(mutex_);
        if (items_.size() < capacity_) {
          items_.push_back(std::move(value));
          to_wake = readers_.pop();
          written = true;
        } else {
          writers_.push(&self);
        }
      }
      if (written) {
        if (to_wake) to_wake->wake();
        return wait_status::Ok;
      }
      wait_status s = self.wait_until(deadline);
      forget(writers_, &self, s);
      if (s != wait_status::Ok) return s;
    }
  }

  wait_status read(T& out, millis timeout) {  // [machine]
    int64_t deadline = deadline_after(timeout);
    for (;;) {
      if (coroutine_cancelled()) return wait_status::Cancelled;
      remote_waiter self;
      remote_waiter* to_wake = nullptr;
      bool got = false;
      {
        std::lock_guard lock(mutex_);
        if (!items_.empty()) {
          out = std::move(items_.front());
          items_.pop_front();
          to_wake = writers_.pop();
          got = true;
        } else {
          readers_.push(&self);
        }
      }
      if (got) {
        if (to_wake) to_wake->wake();
        return wait_status::Ok;
      }
      wait_status s = self.wait_until(deadline);
      forget(readers_, &self, s);
      if (s != wait_status::Ok) return s;
    }
  }

  bool try_read(T& out) {  // [any thread]
    remote_waiter* to_wake = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (items_.empty()) return false;
      out = std::move(items_.front());
      items_.pop_front();
      to_wake = writers_.pop();
    }
    if (to_wake) to_wake->wake();
    return true;
  }

  size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }
  size_t capacity() const { return capacity_; }

 private:
  // After a wait: take ourselves off the list. If we had been popped for a
  // wake but the wait ended another way (timeout, cancel), pass that wake on to
  // the next waiter so it is not lost.
  void forget(detail::waiter_list& list, remote_waiter* self, wait_status s) {
    remote_waiter* pass_on = nullptr;
    {
      std::lock_guard lock(mutex_);
      bool was_listed = list.remove(self);
      if (!was_listed && s != wait_status::Ok) pass_on = list.pop();
    }
    if (pass_on) pass_on->wake();
  }

  mutable std::mutex mutex_;  // leaf lock: nothing is called while it is held
  std::deque<T> items_;
  size_t capacity_;
  detail::waiter_list readers_;
  detail::waiter_list writers_;
};

// ---------------------------------------------------------------- byte queue
// A bounded queue of variable-size records over one byte ring allocated at
// construction: many producers (any thread, even one holding a spin lock) hand
// records to one consumer coroutine on a machine.
//
// Producers never block, never allocate and take no lock: a record's space is
// claimed with one compare-and-swap on the head, written in place, and
// published by one release store of its 8-byte header. A full ring refuses at
// once (try_reserve returns false) so the caller applies its own policy.
// Records are contiguous (a record that would straddle the end of the ring is
// preceded by a padding record and starts again at offset 0), so an encoder
// writes straight into the ring and the consumer sees each record as one span;
// the price is at most one record's size of padding per lap, and a record may
// be at most max_record() bytes (half the ring minus its header, so it always
// fits once the ring drains). The consumer zeroes the bytes it releases,
// so a header word is non-zero only once its producer has published it.
//
// Records are read in the order their space was claimed. A record claimed but
// not yet published holds back the ones behind it (its producer is between two
// instructions of a memcpy; the consumer waits for it).
//
// The consumer waits through a `byte_queue::reader` on its own machine (an
// eventfd attached to that machine, so the wait is an ordinary mm::call with a
// timeout and cancellation). Wake-ups are coalesced: a producer writes the
// eventfd only if the consumer said it is going to sleep, and only the first
// producer to see that does.
class io;

class byte_queue {
 public:
  // `capacity` is rounded up to a power of two, at least 4 KiB. [any thread]
  explicit byte_queue(size_t capacity);
  ~byte_queue();
  byte_queue(const byte_queue&) = delete;
  byte_queue& operator=(const byte_queue&) = delete;

  struct reservation {
    char* data = nullptr;  // `size` writable bytes, 8-byte aligned
    size_t size = 0;
    size_t header = 0;  // (internal) offset of the record's header
    // The stream position just past this record (bytes claimed since the
    // queue was made, padding included): read_position() reaches it exactly
    // when the consumer pops this record. Positions never wrap.
    uint64_t end = 0;
  };
  // Claims `size` contiguous bytes. False at once if the ring lacks room or
  // size > max_record(). [any thread; lock-free, never blocks or allocates]
  bool try_reserve(size_t size, reservation& r);
  // Publishes a reserved record; wakes the consumer if it sleeps. [any thread]
  void commit(const reservation& r);
  // try_reserve + copy + commit.
  bool try_push(std::string_view record);

  // Consumer side (one consumer at a time, no lock). The oldest published
  // record, if any; stays valid until pop().
  bool try_peek(std::string_view& record);
  void pop();  // releases the record try_peek returned
  // The consumer's position: every record whose `end` is <= it was popped.
  // [any thread; acquire]
  uint64_t read_position() const { return tail_.load(std::memory_order_acquire); }

  size_t capacity() const { return capacity_; }
  size_t max_record() const { return capacity_ / 2 - 8; }
  // Bytes claimed and not yet released (headers and padding included). [any thread]
  size_t used() const;
  // Eventfd writes made to wake the consumer (coalescing shows here). [any thread]
  uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }
  // Times the consumer announced it would sleep on an empty ring (its one
  // writer is the consumer). Coalescing means wakeups() <= sleeps(). [any thread]
  uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }

  // The consumer's wait: attaches an eventfd to the current machine; one
  // reader at a time, destroyed on the machine that made it. [machine]
  class reader {
   public:
    explicit reader(byte_queue& q);
    ~reader();
    reader(const reader&) = delete;
    reader& operator=(const reader&) = delete;
    // Ok once a record can be peeked; TimedOut / Cancelled otherwise.
    wait_status wait(millis timeout);

   private:
    byte_queue& queue_;
    std::unique_ptr<io> event_;
  };

 private:
  uint64_t header_at(size_t offset) const;  // acquire load
  bool readable();                          // consumer: skips padding
  void release(size_t offset, size_t slot);

  size_t capacity_;
  size_t mask_;
  uint64_t* ring_;  // capacity_ bytes, 8-byte aligned
  int event_fd_;
  alignas(64) std::atomic<uint64_t> head_{0};  // next byte to claim (monotonic)
  alignas(64) std::atomic<uint64_t> tail_{0};  // next byte to read (consumer writes)
  std::atomic<bool> sleeping_{false};          // the consumer is about to wait
  std::atomic<uint64_t> wakeups_{0};
  std::atomic<uint64_t> sleeps_{0};
};

// ---------------------------------------------------------------- sockets
// Results are >= 0 on success or -errno: -ETIMEDOUT after a timeout,
// -ECANCELED when the coroutine was cancelled, 0 from read() at end of stream.
namespace detail {
struct io_state;
}

class io {
 public:
  // Takes ownership of `fd`, makes it non-blocking and attaches it to the
  // current machine's loop. nullptr (errno set) on failure. [machine]
  static std::unique_ptr<io> attach(int fd);
  ~io();  // closes the fd if still owned
  io(const io&) = delete;
  io& operator=(const io&) = delete;

  int fd() const;
  // Reads what is available, at least 1 byte, up to len. 0 at end of stream.
  ssize_t read(void* buf, size_t len, millis timeout);
  // read() without the wait: -EAGAIN when nothing is there yet. After an
  // -EAGAIN the backend watches for the next byte, so the io may be parked
  // (park_set::park) before the coroutine waits on anything.
  ssize_t try_read(void* buf, size_t len);
  // Reads exactly len bytes (or fails; a short stream gives -ECONNRESET).
  ssize_t read_exact(void* buf, size_t len, millis timeout);
  // Write everything (partial writes are continued) or fail.
  ssize_t write(const void* buf, size_t len, millis timeout);
  ssize_t writev(const iovec* iov, int count, millis timeout);
  // As write(), but on io_uring the bytes are copied and sent by a SEND
  // request submitted with the loop's next io_uring_enter, beside every other
  // socket's: one syscall for all the writes of a loop turn (a router's
  // writes to its backends). Waits for the completion, within the timeout.
  // A timeout or cancel returns at once; the bytes already queued still go
  // out in order (the io owns them), so the caller should give the
  // connection up. Not to be mixed with write()/writev() on the same io while
  // a batched write is pending. On epoll, or on what is not a stream socket,
  // it is write().
  ssize_t write_batched(const void* buf, size_t len, millis timeout);
  // Accepts one connection; returns the new fd (non-blocking, close-on-exec,
  // not attached to any machine yet) or -errno.
  // On io_uring the kernel goes on accepting after accept() returned (one
  // multishot accept, queued in user space for the next accept()); a
  // cancelled accept() stops that (the kernel's cancel, asynchronously).
  int accept(millis timeout, sockaddr_storage* peer = nullptr, socklen_t* peer_len = nullptr);
  // Stops every accept the kernel makes for this listener and waits, within
  // `timeout`, until it has: from then on new connections stay in the listen
  // queue, for this process's next accept() or another process holding the
  // socket (a takeover). Connections the kernel took before the stop are
  // moved to `accepted`, the caller's to serve or close. 0, -ETIMEDOUT,
  // -ECANCELED, or -EBUSY while an accept() waits on this io. [machine]
  int stop_accepting(millis timeout, std::vector<int>* accepted);
  // Datagrams (UDP).
  ssize_t recvmsg(msghdr* msg, millis timeout);
  ssize_t sendmsg(const msghdr* msg, millis timeout);
  // Waits until the fd is readable / writable (eventfd, signalfd, and a fd
  // someone else reads and writes, such as OpenSSL's on a TLS socket). Call
  // them after the fd said EAGAIN: with epoll (edge-triggered) they wait for
  // the next readiness, not for one reported before.
  wait_status wait_readable(millis timeout);
  wait_status wait_writable(millis timeout);
  // Gives up ownership: removes the fd from this machine and returns it, so it
  // can be sent to another machine and attached there. No wait may be in
  // progress on this io. Returns -1 if it could not detach.
  int detach();
  // Closes now. Only the owning machine closes a socket.
  void close();

 private:
  friend class park_set;
  explicit io(detail::io_state* s) : state_(s) {}
  detail::io_state* state_;
};

// ---------------------------------------------------------------- parking
// Many sockets waiting for input without a coroutine each (idle client
// connections): a parked io costs its io state and the caller's entry, no
// stack and no buffer. The backend's readiness report (an epoll edge, an
// io_uring multishot recv or POLL_ADD completion) or the entry's timeout
// queues the entry, and a pool of coroutines takes queued entries in the
// order they were queued. An entry is queued at most once, so the queue never
// holds more than the set's entries. One machine only, no lock. [machine]
class park_set {
 public:
  // The caller embeds one per connection; the set only links it.
  struct entry {
    io* conn = nullptr;    // set by the caller before park()
    bool expired = false;  // queued because its timeout passed, not for input
    // The set's own: which list holds it, its links and its deadline.
    enum class place : unsigned char { None, Parked, Queued } where = place::None;
    entry* prev = nullptr;
    entry* next = nullptr;
    int64_t deadline = -1;  // monotonic ns; -1: no timeout
    park_set* set = nullptr;
  };

  park_set() = default;
  park_set(const park_set&) = delete;
  park_set& operator=(const park_set&) = delete;

  // Parks `e` until input may be there or `timeout` passes (kForever: no
  // timeout). Call it only right after e.conn->try_read() returned -EAGAIN,
  // with no wait in between: the backend then watches for the next byte.
  void park(entry& e, millis timeout);
  // Queues `e` at once, as if input had arrived (a new connection).
  void queue(entry& e);
  // Takes `e` out, parked or queued (before its io is closed elsewhere).
  void remove(entry& e);
  // The oldest queued entry (expired says why it was queued), or nullptr.
  entry* take();
  // Waits until an entry may be queued: Ok (take() may still find none
  // when another coroutine was first), TimedOut, or Cancelled.
  wait_status wait(millis timeout);
  // The timeouts: sleeps until the earliest deadline and queues every entry
  // whose deadline passed; returns when its coroutine is cancelled. One
  // coroutine per set runs it.
  void run_timeouts();
  // Every entry still parked or queued, taken out (shutdown closes them).
  std::vector<entry*> drain();
  size_t parked() const { return parked_; }
  size_t queued() const { return queued_; }
  // Called after an entry was queued (in the scheduler or a coroutine; must
  // not wait): the owner may start another pool coroutine.
  std::function<void()> on_queued;

 private:
  struct list {
    entry* head = nullptr;
    entry* tail = nullptr;
    void push_back(entry* e);
    void insert_by_deadline(entry* e);  // from the tail: most parks come last
    void unlink(entry* e);
  };
  static void input_ready(void* arg);  // io_state's on_input
  void to_queue(entry& e);
  void unhook(entry& e);

  list timed_;    // parked with a timeout, earliest deadline first
  list untimed_;  // parked without one
  list ready_;    // queued, oldest first
  size_t parked_ = 0;
  size_t queued_ = 0;
  cond queued_cond_;            // pool coroutines wait on it
  call* timer_call_ = nullptr;  // run_timeouts' wait, woken by an earlier deadline
};

// Address helpers. parse "host:port", "[v6]:port", or "unix:/path".
struct address {
  sockaddr_storage storage{};
  socklen_t length = 0;
  std::string to_string() const;
  static bool parse(std::string_view text, address& out, std::string* error);
};

// Creates a listening socket (SO_REUSEADDR; reuse_port sets SO_REUSEPORT; an
// IPv6 one is IPV6_V6ONLY, as memcached's are, so 0.0.0.0 and :: share a port).
// A unix path that exists is not removed: bind fails with EADDRINUSE (what
// is there, and whether it may go, is the caller's to decide).
// Returns nullptr and sets *error on failure. [machine]
std::unique_ptr<io> listen(const address& addr, int backlog, bool reuse_port, std::string* error);
// Takes a listening socket made by another process (mcrouter's
// --listen-sock-fd, a systemd socket, a takeover): checks it listens, makes it
// non-blocking and close-on-exec and attaches it. The fd is the io's on
// success; on failure it is left open (the caller's). [machine]
std::unique_ptr<io> adopt_listener(int fd, std::string* error);
// Binds a datagram socket. [machine]
std::unique_ptr<io> bind_udp(const address& addr, std::string* error);
// Binds a datagram socket (non-blocking, close-on-exec) and returns its fd,
// attached to no machine, or -1 and *error. reuse_port sets SO_REUSEPORT
// before the bind, so several sockets (one per machine) can share the address
// and the kernel spreads the datagrams over them (SO_REUSEADDR is then left
// off: on UDP it would let any socket share the port). [any thread]
int bind_udp_socket(const address& addr, bool reuse_port, std::string* error);
// Connects with a timeout; nullptr and *err = -errno on failure. [machine]
std::unique_ptr<io> connect(const address& addr, millis timeout, int* err);
// The address a socket is bound to (to learn the port after binding port 0).
address local_address(int fd);

int set_nodelay(int fd, bool on);
int set_reuseport(int fd, bool on);
int set_keepalive(int fd, bool on, int idle_s = 60, int interval_s = 10, int count = 5);
// TCP_USER_TIMEOUT: data sent and not acknowledged by the peer for longer
// than `timeout` fails the connection (the socket's error becomes ETIMEDOUT,
// or the ICMP error met meanwhile, such as EHOSTUNREACH); with keepalive on,
// it is also how long unanswered probes are tolerated (the kernel then ignores
// the probe count). 0 restores the kernel's retransmission limit (about 15
// minutes). Needs no traffic from the peer: a quiet peer that acknowledges
// what it receives is never timed out.
int set_user_timeout(int fd, millis timeout);
// True once the kernel has given a TCP connection up (state CLOSE: reset,
// timed out, or closed both ways), false while it lives or if it cannot tell.
// read() returns a socket's own ETIMEDOUT as -ETIMEDOUT, as it does the end
// of a wait with no data; a reader that must tell the two apart asks this.
bool tcp_closed(int fd);

// ---------------------------------------------------------------- signals
// Blocks `signals` in the calling thread; call before creating machines so every
// machine thread inherits the mask. Then exactly one machine calls
// signal_wait() to receive them through a signalfd.
void signal_block(std::initializer_list<int> signals);
// Returns the signal number, or -ETIMEDOUT / -ECANCELED. [machine]
int signal_wait(millis timeout);

// ---------------------------------------------------------------- blocking calls
// Runs `fn` on a small pool of plain threads (for getaddrinfo, file I/O) and
// suspends only the calling coroutine until it finishes. On timeout or cancel
// the call returns at once but `fn` still runs to completion on the pool, so it
// must own everything it touches (capture by value or shared_ptr). [machine]
wait_status blocking_call(std::function<void()> fn, millis timeout);
// Resolves host:port through blocking_call. [machine]
bool resolve(const std::string& host, const std::string& port, address& out, millis timeout, std::string* error);

}  // namespace mm
