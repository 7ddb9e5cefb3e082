// memcached's UDP protocol (protocol.txt, "UDP protocol").
//
// Every datagram starts with an 8-byte frame header: request id, sequence
// number, total datagrams, reserved (u16 each, network byte order). A request
// fits in one datagram; the replies to it are split into datagrams of at most
// kUdpMaxDatagram bytes (header included, as memcached's UDP_MAX_PAYLOAD_SIZE),
// each carrying the request id, its sequence number 0..n-1 and the total n.
//
// Shape: instance.cc binds, for each listen host, one socket per worker with
// SO_REUSEPORT on the same address:port (the kernel spreads datagrams over
// them); each worker runs one `udp` coroutine per socket it got. The coroutine
// loops recvmsg -> execute the whole datagram with a fresh parser -> send the
// framed replies to the sender. A datagram whose requests may wait on backend
// servers (a routed tree, or writes that wait for a slave's ack) is served by
// a coroutine of its own instead, so one slow server does not hold up the
// datagrams behind it; at most kUdpMaxConcurrent of those run per socket, and
// a datagram over that is dropped and counted (`udp_dropped`), as memcached
// drops what it cannot take. Each datagram's replies go back with its own
// request id. All of this state is the udp_server's own: only its coroutines,
// on its worker machine, touch it; the socket's sends are taken one at a time
// (an fd has one write waiter).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "executor.h"
#include "out_buffer.h"
#include "request.h"
#include "request_loop.h"
#include "worker.h"

namespace ithaca::server {

inline constexpr size_t kUdpHeaderSize = 8;
// memcached 1.6.18 sends datagrams of at most 1400 bytes including the header
// (1392 payload bytes each; measured against a real memcached).
inline constexpr size_t kUdpMaxDatagram = 1400;
inline constexpr size_t kUdpMaxPayload = kUdpMaxDatagram - kUdpHeaderSize;
// A reply longer than this cannot be numbered in u16 sequence numbers.
inline constexpr size_t kUdpMaxReply = kUdpMaxPayload * 65535;

struct udp_frame {
  uint16_t request_id = 0;
  uint16_t sequence = 0;
  uint16_t total = 0;
  uint16_t reserved = 0;
};

// Splits a datagram into its frame and payload. False (drop it) like
// memcached's try_read_udp: 8 bytes or fewer, or total != 1 (a request in
// several datagrams is not supported). The sequence number and the reserved
// field are not checked, as memcached does not check them.
bool udp_parse_frame(std::string_view datagram, udp_frame& frame, std::string_view& payload);
// Writes a frame header (reserved = 0) into out[0..8).
void udp_write_header(char* out, uint16_t request_id, uint16_t sequence, uint16_t total);
// Datagrams needed for a reply of `bytes` bytes (0 for an empty reply).
size_t udp_datagram_count(size_t bytes);

// Binds the UDP listeners: for every address ("host:port", distinct) one
// SO_REUSEPORT socket per worker, logging "listening on udp HOST:PORT" once
// per address. Runs on the instance thread before any worker starts. On
// failure, logs, closes what it bound and returns false. out[w] gets worker
// w's sockets.
bool udp_bind_listeners(const std::vector<std::string>& addresses, unsigned workers,
                        std::vector<std::vector<udp_socket>>& out);

// Datagrams served concurrently per UDP socket (per worker), each holding
// its payload copy and its replies.
inline constexpr size_t kUdpMaxConcurrent = 128;

class udp_server {
 public:
  udp_server(const worker_shared& shared, stats::command_counters& counters);
  ~udp_server();
  udp_server(const udp_server&) = delete;
  udp_server& operator=(const udp_server&) = delete;
  // Serves the socket until the coroutine is cancelled (machine stop). Takes
  // ownership of s.fd. [machine: the worker's]
  void run(const udp_socket& s);

 private:
  // One datagram's requests and replies (and its own in-flight queue).
  struct batch final : flow::reply_drain {
    explicit batch(const worker_shared& shared, stats::command_counters& counters);
    // flow::reply_drain: a reply cannot be sent before it is complete (the
    // frame carries the datagram count), so this only refuses, once the
    // reply is past what the frame can number: the batch stops and is dropped.
    bool drain(protocol::out_buffer& out) override { return out.size() <= kUdpMaxReply; }

    live_reader live;  // the snapshot this batch's datagram runs on
    protocol::out_buffer out;
    cache::exec_context ctx;
    commands::server_context server;
    flow::inflight_queue inflight;
    std::string payload;  // a concurrent batch's copy of its datagram's payload
    sockaddr_storage peer{};
    socklen_t peer_len = 0;
    uint16_t request_id = 0;
    mm::coroutine_id coroutine = 0;  // a concurrent batch's, while it runs
  };

  // Executes every request in `payload`; the replies land in b.out.
  flow::exec_action process(batch& b, std::string_view payload);
  // Sends b.out as framed datagrams to b.peer, then empties b.out.
  void send_reply(mm::io& sock, batch& b);
  // Whether datagrams on the current snapshot may wait for a server.
  bool may_wait();
  // Starts a concurrent batch for the datagram in datagram_; false (dropped)
  // when kUdpMaxConcurrent already run.
  bool start_concurrent(mm::io& sock, std::string_view payload, const sockaddr_storage& peer, socklen_t peer_len,
                        uint16_t request_id);
  void serve_concurrent(mm::io& sock, batch& b);

  const worker_shared& shared_;
  stats::command_counters& counters_;
  batch inline_;                                 // the receive loop's own batch, for datagrams that never wait
  std::vector<std::unique_ptr<batch>> running_;  // concurrent batches in flight
  std::vector<std::unique_ptr<batch>> spare_;    // finished ones kept for reuse
  bool sending_ = false;                         // a batch is inside send_reply (one write waiter per fd)
  mm::cond send_free_;
  std::vector<char> datagram_;  // one receive buffer per socket, sized for the largest datagram
};

}  // namespace ithaca::server
