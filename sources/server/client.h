// One client connection, served by one coroutine on its worker machine:
// read -> parse every complete request -> execute -> one writev for the
// batch's replies -> read again. Only this coroutine touches its state.
#pragma once

#include <string>

#include "executor.h"
#include "live_settings.h"
#include "out_buffer.h"
#include "parser.h"
#include "request_loop.h"
#include "request_slot.h"
#include "stream.h"
#include "worker.h"

namespace ithaca::server {

class client final : private flow::reply_drain {
 public:
  client(const worker_shared& shared, flow::command_counters& counters);
  void run(const accepted_socket& s);

 private:
  bool flush(stream& conn);
  // Reads, freeing spare request slots if the client stays quiet.
  ssize_t read_some(stream& conn, char* buf, size_t len, mm::millis idle);
  flow::exec_action serve_requests(stream& conn, std::string_view& reason);
  std::unique_ptr<stream> open_stream(mm::io& conn, const accepted_socket& s);
  std::string_view close_reason(ssize_t n, mm::millis idle);
  // flow::reply_drain: a batch's replies passed the high-water mark; write
  // them now (the batch waits for a slow reader, within the write timeout).
  bool drain(protocol::out_buffer& out) override;
  // Picks up a newer live snapshot, if any, for the batch about to run.
  void refresh_live();

  const worker_shared& shared_;
  live_reader live_;
  flow::command_counters& counters_;
  protocol::parser parser_;
  protocol::out_buffer out_;
  cache::exec_context ctx_;
  flow::server_context server_;
  flow::inflight_queue inflight_;  // requests of the batch, in order
  route::loop_context loop_;
  std::string pending_;  // an incomplete request carried over to the next read
  stream* conn_ = nullptr;  // while run() serves it
};

}  // namespace ithaca::server
