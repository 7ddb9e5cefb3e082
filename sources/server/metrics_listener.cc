#include "metrics_listener.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <memory>

#include <spdlog/spdlog.h>

#include "http_request.h"
#include "route_kind.h"
#include "metrics_page.h"

namespace ithaca::server {

namespace {

std::string response(std::string_view status, std::string_view content_type, std::string_view body, bool head_only,
                     std::string_view extra_headers = {}) {
  std::string out;
  out.reserve(160 + (head_only ? 0 : body.size()));
  out.append("HTTP/1.1 ").append(status).append("\r\n");
  out.append("Content-Type: ").append(content_type).append("\r\n");
  out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  out.append(extra_headers);
  out.append("Connection: close\r\n\r\n");
  if (!head_only) out.append(body);
  return out;
}

std::string error_response(std::string_view status, std::string_view extra_headers = {}) {
  return response(status, "text/plain; charset=utf-8", std::string(status) + "\n", false, extra_headers);
}

constexpr std::string_view kPageType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace

metrics_listener::metrics_listener(metrics_listener_settings settings, server_stats& stats,
                                   std::vector<worker*> workers)
    : settings_(std::move(settings)), stats_(stats), workers_(std::move(workers)) {}

bool metrics_listener::start(const mm::machine_config& base) {
  mm::machine_config cfg = base;
  cfg.name = "metrics";
  std::promise<bool> bound;
  std::future<bool> result = bound.get_future();
  machine_ = mm::machine_create(cfg, [this, &bound] { main(&bound); });
  if (machine_ == nullptr) return false;
  // main() answers once it has bound (or failed to); `bound` outlives that.
  if (!result.get()) {
    join();
    return false;
  }
  return true;
}

void metrics_listener::stop() {
  if (machine_) mm::machine_stop(machine_);
}

void metrics_listener::join() {
  if (machine_) mm::machine_join(machine_);
  machine_ = nullptr;
}

void metrics_listener::main(std::promise<bool>* bound) {
  mm::address addr;
  std::string error;
  std::unique_ptr<mm::io> listener;
  if (!mm::address::parse(settings_.listen, addr, &error)) {
    spdlog::error("metrics listen {}: {}", settings_.listen, error);
  } else if (!(listener = mm::listen(addr, 128, false, &error))) {
    spdlog::error("metrics listen {}: {}", settings_.listen, error);
  }
  if (!listener) {
    bound->set_value(false);
    mm::machine_stop(mm::machine_self());
    return;
  }
  // The functional tests read this line to learn the port bound for port 0.
  spdlog::warn("metrics: serving http://{}/metrics", mm::local_address(listener->fd()).to_string());
  bound->set_value(true);
  accept_loop(*listener);
}

// The clients' coroutines are not tracked: a stop cancels every coroutine of
// the machine, and join() waits for all of them, before `this` goes.
void metrics_listener::accept_loop(mm::io& listener) {
  for (;;) {
    int fd = listener.accept(mm::kForever);
    if (fd == -ECANCELED) return;
    if (fd < 0) {
      // Out of descriptors or a transient error: back off, never spin.
      spdlog::warn("metrics accept: {}", std::strerror(-fd));
      if (mm::sleep(fd == -EMFILE || fd == -ENFILE ? 100 : 10) == mm::wait_status::Cancelled) return;
      continue;
    }
    if (active_ >= settings_.max_connections) {
      refused.fetch_add(1, std::memory_order_relaxed);
      // Best effort, without waiting: what the client sent so far is read
      // off (unread bytes would turn the close into a reset that may eat the
      // 503), the answer goes out if the socket takes it, then FIN.
      char sink[1024];
      while (::recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {}
      const std::string busy = error_response("503 Service Unavailable");
      ssize_t r = ::send(fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      (void)r;
      ::shutdown(fd, SHUT_WR);
      ::close(fd);
      continue;
    }
    ++active_;
    mm::coroutine_create("metrics client", [this, fd] {
      serve(fd);
      --active_;
    });
  }
}

// One request: read the head within read_timeout, answer, close.
void metrics_listener::serve(int fd) {
  std::unique_ptr<mm::io> conn = mm::io::attach(fd);
  if (!conn) {
    ::close(fd);
    return;
  }
  const int64_t deadline = mm::deadline_after(settings_.read_timeout);
  std::string data;
  std::vector<char> buf(4096);
  metrics::http_request req;
  metrics::http_parse state = metrics::http_parse::NeedMore;
  while (state == metrics::http_parse::NeedMore) {
    const mm::millis left = mm::millis_until(deadline);
    if (left == 0) break;
    ssize_t n = conn->read(buf.data(), buf.size(), left);
    if (n <= 0) {
      if (n == -ETIMEDOUT) break;  // answered 408 below
      return;                      // closed, reset or cancelled
    }
    data.append(buf.data(), static_cast<size_t>(n));
    state = metrics::parse_http_request(data, settings_.max_head, req);
  }
  std::string reply;
  switch (state) {
    case metrics::http_parse::NeedMore: reply = error_response("408 Request Timeout"); break;
    case metrics::http_parse::TooLarge: reply = error_response("431 Request Header Fields Too Large"); break;
    case metrics::http_parse::Bad: reply = error_response("400 Bad Request"); break;
    case metrics::http_parse::Ok:
      requests.fetch_add(1, std::memory_order_relaxed);
      if (req.path != "/metrics") {
        reply = error_response("404 Not Found");
      } else if (req.method != "GET" && req.method != "HEAD") {
        reply = error_response("405 Method Not Allowed", "Allow: GET, HEAD\r\n");
      } else {
        reply = response("200 OK", kPageType, page(), req.method == "HEAD");
      }
      break;
  }
  conn->write(reply.data(), reply.size(), settings_.write_timeout);
  // Half-close and let the client see the end before the descriptor goes, so
  // unread request bytes do not turn the close into a reset that eats the reply.
  ::shutdown(conn->fd(), SHUT_WR);
  char sink[512];
  const int64_t linger = mm::deadline_after(200);
  while (mm::millis_until(linger) > 0 && conn->read(sink, sizeof(sink), mm::millis_until(linger)) > 0) {}
}

std::string metrics_listener::page() {
  metrics::page_input in;
  stats_.collect("", in.general);
  stats_.collect("settings", in.settings);
  stats_.collect("items", in.items);
  stats_.collect("slabs", in.slabs);
  stats_.collect("pools", in.pools);
  stats_.collect("servers", in.servers);
  stats_.collect("latency", in.latency);
  stats_.collect("routes", in.routes);
  for (const route::kind_module* k : route::route_kinds()) {
    for (const route::route_stat& st : k->stats) in.route_help.emplace_back(st.field, st.help);
  }
  for (const worker* w : workers_) {
    const mm::machine_counters c = w->runtime();
    metrics::worker_runtime r;
    r.coroutines = c.coroutines_alive;
    r.coroutines_created = c.coroutines_created;
    r.ready = c.ready_queue;
    r.context_switches = c.context_switches;
    r.loop_iterations = c.loop_iterations;
    r.messages = c.messages_received;
    r.timers = c.timers_pending;
    r.stacks_cached = c.stacks_cached;
    r.uring = std::strcmp(w->backend_name(), "io_uring") == 0;
    r.uring_submissions = c.uring_submissions;
    r.uring_completions = c.uring_completions;
    in.workers.push_back(r);
  }
  return metrics::render_page(in);
}

}  // namespace ithaca::server
