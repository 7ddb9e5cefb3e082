#include "slave.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include <spdlog/spdlog.h>

#include "machinarium.h"
#include "record.h"
#include "stream_decoder.h"

namespace ithaca::replication {

namespace {
constexpr size_t kReadSize = 256 * 1024;
constexpr mm::millis kConnectTimeout = 5000;
constexpr mm::millis kReadWait = 1000;  // the master may be quiet for long: read again

void apply(const record& r, store::store& st, const store::store_now& now, repl_counters& c) {
    switch (r.kind) {
    case record_kind::Set: {
        store::store_result res;
        st.set(r.key, store::store_mode::Set, {r.value.data(), r.value.size()}, r.flags, r.exptime, now, {},
               res);
        c.applied_sets.fetch_add(1, std::memory_order_relaxed);
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
    case record_kind::Ack:
        break;  // answered by the sender (follow)
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
};

void send_replies(mm::io& master, const slave_settings& s, master_replies& rep) {
    const auto interval = static_cast<mm::millis>(s.heartbeat_interval_ms);
    int64_t next_beat = mm::deadline_after(interval);
    for (;;) {
        if (rep.more.wait(mm::millis_until(next_beat)) == mm::wait_status::Cancelled) return;
        if (rep.asked > rep.sent) {
            const uint64_t position = rep.asked;
            char packet[kAckSize];
            encode_ack_response(packet, position);
            if (master.write(packet, sizeof packet, interval * 10) < 0) return;
            rep.sent = position;
        }
        if (mm::millis_until(next_beat) == 0) {
            const char zero = '\0';
            if (master.write(&zero, 1, interval * 10) < 0) return;
            next_beat = mm::deadline_after(interval);
        }
    }
}

// One connection's life: returns when the master goes away, the stream
// breaks, or the coroutine is cancelled.
void follow(mm::io& master, const slave_settings& s, store::store& st,
            const std::function<store::store_now()>& now, repl_counters& c) {
    master_replies rep;
    mm::coroutine_id beat = mm::coroutine_create("repl heartbeat", [&master, &s, &rep] { send_replies(master, s, rep); });
    stream_decoder decoder(s.max_value);
    std::vector<char> buf(kReadSize);
    for (;;) {
        ssize_t n = master.read(buf.data(), buf.size(), kReadWait);
        if (n == -ETIMEDOUT) continue;
        if (n == -ECANCELED) break;
        if (n <= 0) {
            spdlog::warn("replication: the master closed the connection{}{}", n < 0 ? ": " : "",
                         n < 0 ? std::strerror(static_cast<int>(-n)) : "");
            break;
        }
        std::string_view in(buf.data(), static_cast<size_t>(n));
        const store::store_now t = now();
        record r;
        decode_status ds;
        while ((ds = decoder.next(in, r)) == decode_status::Ok) {
            if (r.kind == record_kind::Ack)
                rep.asked = r.position;
            else
                apply(r, st, t, c);
        }
        if (rep.asked > rep.sent)
            rep.more.signal();
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
    *logged_failure = false;
    mm::set_nodelay(master->fd(), true);
    c.master_connects.fetch_add(1, std::memory_order_relaxed);
    // Forget everything (yrmcds clears its hash): the master's initial
    // sync follows. Items stored before now become invalid at once and
    // the GC reclaims them.
    st.flush_all(now(), 0);
    spdlog::info("replication: following the master {}; local data forgotten", addr.to_string());
    follow(*master, s, st, now, c);
    return true;
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
