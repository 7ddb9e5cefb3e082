#include "slave.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include <unistd.h>

#include "machinarium.h"
#include "record.h"
#include "stream_decoder.h"
#include "tls_conn.h"

namespace ithaca::replication {

namespace {
constexpr size_t kReadSize = 256 * 1024;
constexpr mm::millis kConnectTimeout = 5000;
constexpr mm::millis kReadWait = 1000;  // the master may be quiet for long: read again

// The master's connection: the socket, and with replication.tls the session
// on it, which the reader (follow) and the sender (send_replies) use at once
// (net/tls_conn.h).
struct master_conn {
  mm::io& io;
  net::tls_conn* tls = nullptr;
  int fd() const { return io.fd(); }
  ssize_t read(void* buf, size_t len, mm::millis timeout) {
    return tls ? tls->read(buf, len, timeout) : io.read(buf, len, timeout);
  }
  ssize_t write(const void* buf, size_t len, mm::millis timeout) {
    return tls ? tls->write(buf, len, timeout) : io.write(buf, len, timeout);
  }
};

void apply(const record& r, store::store& st, const store::store_now& now, repl_counters& c) {
  switch (r.kind) {
    case record_kind::Set: {
      store::store_result res;
      st.set(r.key, store::store_mode::Set, {r.value.data(), r.value.size()}, r.flags, r.exptime, now, {}, res);
      c.applied_sets.fetch_add(1, std::memory_order_relaxed);
      if (res.status == store::store_status::OutOfMemory || res.status == store::store_status::TooLarge) {
        // A set that does not fit here (memcached -M on this slave, or a smaller
        // memory or item limit than the master's): as memcached does for a set it
        // cannot store, the key's older value goes, so a promoted slave answers a
        // miss for it rather than a value the master replaced.
        st.remove(r.key, now);
        c.sets_refused.fetch_add(1, std::memory_order_relaxed);
      }
      break;
    }
    case record_kind::Touch:
      st.touch(r.key, r.exptime, now);
      c.applied_touches.fetch_add(1, std::memory_order_relaxed);
      break;
    case record_kind::Delete:
      st.remove(r.key, now);
      c.applied_deletes.fetch_add(1, std::memory_order_relaxed);
      break;
    case record_kind::Ack: break;  // answered by the sender (follow)
  }
}

// What goes back to the master, from one coroutine so packets never
// interleave: a heartbeat byte per interval (yrmcds: '\0'; the master drops
// a slave silent for its slave_timeout) and, when the master asked
// (`ack: slave`), the confirmation of the latest position asked: every record
// before the request has been applied by then (follow applies a read's
// records in order before it signals). Confirmations are coalesced: one
// answers every earlier request.
struct master_replies {
  uint64_t asked = 0;  // the latest position the master asked to confirm
  uint64_t sent = 0;   // the latest confirmed
  mm::cond more;       // follow -> sender: asked moved
  // The sender's failed write (-errno), which ends the connection: the
  // socket has one error and either coroutine may be the one to read it.
  ssize_t write_error = 0;
};

// Writes one reply; a failure is kept for follow. False if it failed.
bool reply(master_conn& master, const char* data, size_t size, mm::millis timeout, master_replies& rep) {
  const ssize_t r = master.write(data, size, timeout);
  if (r >= 0) return true;
  if (r != -ECANCELED) rep.write_error = r;
  return false;
}

void send_replies(master_conn& master, const slave_settings& s, master_replies& rep) {
  const auto interval = static_cast<mm::millis>(s.heartbeat_interval_ms);
  int64_t next_beat = mm::deadline_after(interval);
  for (;;) {
    if (rep.more.wait(mm::millis_until(next_beat)) == mm::wait_status::Cancelled) return;
    if (rep.asked > rep.sent) {
      const uint64_t position = rep.asked;
      char packet[kAckSize];
      encode_ack_response(packet, position);
      if (!reply(master, packet, sizeof packet, interval * 10, rep)) return;
      rep.sent = position;
    }
    if (mm::millis_until(next_beat) == 0) {
      const char zero = '\0';
      if (!reply(master, &zero, 1, interval * 10, rep)) return;
      next_beat = mm::deadline_after(interval);
    }
  }
}

// A master host that goes silent (power loss, a partition, its link down)
// closes nothing: the heartbeats would wait in the send buffer and the reads
// time out for ever. They are data the master's kernel must acknowledge:
// unacknowledged for master_timeout, our kernel fails the connection
// (TCP_USER_TIMEOUT: ETIMEDOUT, or the ICMP error met meanwhile). Keepalive
// covers the gaps between heartbeats (a heartbeat_interval longer than
// master_timeout): probes from half the timeout of silence, and once one is
// unanswered at master_timeout the connection fails (the user timeout
// governs the probes). Nothing needs traffic from the master: an idle one
// acknowledges both and is never dropped.
void watch_master(int fd, const slave_settings& s) {
  const auto half_s = static_cast<int>(std::clamp<uint64_t>((s.master_timeout_ms + 1999) / 2000, 1, 32767));
  if (mm::set_user_timeout(fd, static_cast<mm::millis>(s.master_timeout_ms)) < 0 ||
      mm::set_keepalive(fd, true, half_s, half_s, 2) < 0)
    spdlog::warn(
        "replication: cannot set master_timeout on the master's connection: {}; a silent master "
        "host is noticed only after the kernel's retransmissions (about 15 min)",
        std::strerror(errno));
}

// The kernel gave the connection up because the master's host stopped
// answering (as opposed to a master that closed or reset it).
bool unreachable(int error) {
  switch (error) {
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EHOSTDOWN:
    case ENETDOWN: return true;
    default: return false;
  }
}

// Logs (once per connection) and counts why the connection ended: the
// reader's result `n` (0: end of stream, -errno; -ETIMEDOUT: the kernel gave
// it up) or the sender's error. Whichever coroutine touched the socket first
// took its error; the other then sees the end of the stream (reader) or
// EPIPE (sender), which says nothing.
void lost(ssize_t n, const master_replies& rep, const std::string& master, const slave_settings& s, repl_counters& c) {
  if ((n == 0 || n == -ETIMEDOUT) && rep.write_error != 0 && rep.write_error != -EPIPE) n = rep.write_error;
  const int error = static_cast<int>(-n);
  if (unreachable(error)) {
    c.master_timeouts.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("replication: the master {} is unreachable: {} (master_timeout {} ms); reconnecting", master,
                 std::strerror(error), s.master_timeout_ms);
    return;
  }
  spdlog::warn("replication: the master closed the connection{}{}", n < 0 ? ": " : "",
               n < 0 ? std::strerror(error) : "");
}

// A takeover's follow (takeover_follow): its deadline, and how it ended.
struct takeover_end {
  int64_t deadline_ns = 0;
  bool handed_over = false;  // the end mark came: everything before it is applied
  std::string why;           // otherwise
};

// One connection's life: returns when the master goes away, the stream
// breaks, or the coroutine is cancelled; a takeover's also at the end mark
// or its deadline.
void follow(master_conn& master, const std::string& name, const slave_settings& s, store::store& st,
            const std::function<store::store_now()>& now, repl_counters& c, takeover_end* end = nullptr) {
  master_replies rep;
  mm::coroutine_id beat = mm::coroutine_create("repl heartbeat", [&master, &s, &rep] { send_replies(master, s, rep); });
  stream_decoder decoder(s.max_value);
  std::vector<char> buf(kReadSize);
  for (;;) {
    ssize_t n = master.read(buf.data(), buf.size(), kReadWait);
    if (end && mm::now_ns() > end->deadline_ns) {
      end->why = "no end of the stream within the takeover timeout";
      break;
    }
    if (n == -ETIMEDOUT) {
      // A quiet master, or a connection the kernel gave up (a socket's
      // own ETIMEDOUT reads the same as a wait that ended with no
      // data), or one the sender found broken.
      if (rep.write_error == 0 && !mm::tcp_closed(master.fd())) continue;
      // Its error, unless a read or write took it already, is still to be read.
      const ssize_t again = master.read(buf.data(), buf.size(), 0);
      if (again != 0) n = again;
    }
    if (n == -ECANCELED) break;
    if (n <= 0) {
      if (end) {
        end->why =
            n == 0 ? "the old process closed the stream" : std::string("read: ") + std::strerror(static_cast<int>(-n));
        break;
      }
      lost(n, rep, name, s, c);
      break;
    }
    std::string_view in(buf.data(), static_cast<size_t>(n));
    const store::store_now t = now();
    record r;
    decode_status ds;
    while ((ds = decoder.next(in, r)) == decode_status::Ok) {
      if (end && r.kind == record_kind::Ack && r.position == kHandoverPosition) {
        end->handed_over = true;  // nothing follows it
        break;
      }
      if (r.kind == record_kind::Ack)
        rep.asked = r.position;
      else
        apply(r, st, t, c);
    }
    if (end && end->handed_over) break;
    if (rep.asked > rep.sent) rep.more.signal();
    if (ds == decode_status::Error) {
      c.stream_errors.fetch_add(1, std::memory_order_relaxed);
      spdlog::error("replication: {}; reconnecting for a new sync", decoder.error());
      break;
    }
  }
  // The sender uses `rep` and `master`: it ends before they go, also when
  // this session was cancelled (a promotion, a shutdown).
  mm::coroutine_finish(beat, 5000);
}
}  // namespace

bool slave_session(const slave_settings& s, store::store& st, const std::function<store::store_now()>& now,
                   repl_counters& c, bool* logged_failure) {
  mm::address addr;
  std::string error;
  std::unique_ptr<mm::io> master;
  int err = 0;
  if (mm::resolve(s.master_host, s.master_port, addr, kConnectTimeout, &error))
    master = mm::connect(addr, kConnectTimeout, &err);
  if (!master) {
    if (!*logged_failure) {  // once per outage, not once per attempt
      spdlog::warn("replication: cannot connect to the master {}:{}: {}", s.master_host, s.master_port,
                   error.empty() ? std::strerror(-err) : error);
      *logged_failure = true;
    }
    return false;
  }
  mm::set_nodelay(master->fd(), true);
  std::unique_ptr<net::tls_conn> tls;
  if (s.tls_ctx) {
    // Mutual TLS: our certificate goes with the handshake; the master's
    // must chain to replication.tls.ca_cert.
    std::string why;
    tls = net::tls_conn::connect(*master, s.tls_ctx.get(), s.tls_server_name, true, mm::deadline_after(kConnectTimeout),
                                 &why);
    if (!tls) {
      master->close();
      if (why == "cancelled") return false;
      c.master_tls_failures.fetch_add(1, std::memory_order_relaxed);
      if (!*logged_failure) {
        spdlog::warn("replication: the master {}:{} refused or failed the TLS handshake: {}", s.master_host,
                     s.master_port, why);
        *logged_failure = true;
      }
      return false;
    }
  }
  *logged_failure = false;
  watch_master(master->fd(), s);
  c.master_connects.fetch_add(1, std::memory_order_relaxed);
  // Forget everything (yrmcds clears its hash): the master's initial
  // sync follows. Items stored before now become invalid at once and
  // the GC reclaims them. From here the master decides expiry: an item
  // past its deadline on this clock stays (hidden from reads) until the
  // master's DeleteQ, so its late Touch or SetQ still finds it.
  st.flush_all(now(), 0);
  st.set_expiry_by_master(true);
  const std::string name = addr.to_string();
  spdlog::info("replication: following the master {}{}; local data forgotten", name,
               tls ? std::string(" over ") + tls->version() : std::string());
  master_conn conn{*master, tls.get()};
  follow(conn, name, s, st, now, c);
  tls.reset();
  return true;
}

bool takeover_follow(int fd, const slave_settings& s, store::store& st, const std::function<store::store_now()>& now,
                     repl_counters& c, int64_t deadline_ns, std::string* why) {
  std::unique_ptr<mm::io> io = mm::io::attach(fd);
  if (!io) {
    *why = std::string("attach: ") + std::strerror(errno);
    ::close(fd);
    return false;
  }
  // The old process decides expiry until the end: its DeleteQ for an item
  // that expires meanwhile follows (as on any slave).
  st.set_expiry_by_master(true);
  master_conn conn{*io, nullptr};
  takeover_end end;
  end.deadline_ns = deadline_ns;
  follow(conn, "takeover", s, st, now, c, &end);
  st.set_expiry_by_master(false);
  if (!end.handed_over) *why = end.why.empty() ? "cancelled" : end.why;
  return end.handed_over;
}

void slave_main(const slave_settings& s, store::store& st, const std::function<store::store_now()>& now,
                repl_counters& c) {
  c.role.store("slave");
  bool logged_failure = false;
  while (!mm::coroutine_cancelled()) {
    slave_session(s, st, now, c, &logged_failure);
    if (mm::sleep(static_cast<mm::millis>(s.reconnect_delay_ms)) == mm::wait_status::Cancelled) return;
  }
}

}  // namespace ithaca::replication
