// Replication counters, for `stats`: written by the fan-out machine (master)
// or the slave coroutine, read by any worker. Relaxed atomics; one writer each.
#pragma once

#include <atomic>
#include <cstdint>

namespace ithaca::replication {

struct repl_counters {
  std::atomic<const char*> role{"none"};  // "master", "slave", "none"
  std::atomic<uint64_t> role_changes{0};  // promotions and demotions (role: auto)
  // Master.
  std::atomic<uint64_t> slaves{0};  // attached now
  std::atomic<uint64_t> slaves_joined{0};
  std::atomic<uint64_t> slaves_dropped{0};   // timed out, fell behind, failed, or the ring overflowed
  std::atomic<uint64_t> syncs_done{0};       // initial syncs completed
  std::atomic<uint64_t> sync_items{0};       // items sent by initial syncs
  std::atomic<uint64_t> records_sent{0};     // stream records handed to slave buffers (per slave)
  std::atomic<uint64_t> bytes_sent{0};       // bytes written to slave sockets
  std::atomic<uint64_t> lag_bytes{0};        // bytes waiting in slave buffers now (all slaves)
  std::atomic<uint64_t> queue_overflows{0};  // ring refusals seen (each dropped every slave)
  std::atomic<uint64_t> peers_refused{0};    // connections closed at accept: not in allow, or no slot left
  std::atomic<uint64_t> tls_refused{0};      // replication.tls: handshakes refused (no accepted certificate, not TLS)
  // Slave (yrmcds's repl_created/updated/removed, merged: a set is a set).
  std::atomic<uint64_t> master_connects{0};
  std::atomic<uint64_t> master_tls_failures{0};  // replication.tls: handshakes with the master that failed
  std::atomic<uint64_t> master_timeouts{0};      // connections the kernel gave up: the master's host was silent
  std::atomic<uint64_t> applied_sets{0};
  std::atomic<uint64_t> applied_touches{0};
  std::atomic<uint64_t> applied_deletes{0};
  // Sets of the master's the store refused (no memory under -M, or too large here):
  // the key is dropped instead, so the slave never serves its older value.
  std::atomic<uint64_t> sets_refused{0};
  std::atomic<uint64_t> stream_errors{0};
  // Master with `ack: slave` (ack_state.h): written by every worker
  // (fetch_add), so unlike the rest they have many writers.
  std::atomic<uint64_t> ack_confirmed{0};     // writes released after a slave's confirmation
  std::atomic<uint64_t> ack_waits{0};         // writes that waited for one
  std::atomic<uint64_t> ack_timeouts{0};      // ... and got the error after ack_timeout
  std::atomic<uint64_t> ack_unreplicated{0};  // errors at once: no slave attached, or the ring was full
  std::atomic<uint64_t> ack_latency_us{0};    // sum of the confirmed writes' waits
  std::atomic<uint64_t> ack_latency_max_us{0};
  std::atomic<uint64_t> ack_requests{0};  // confirmation requests sent (fan-out machine)
};

}  // namespace ithaca::replication
