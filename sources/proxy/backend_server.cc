#include "backend_server.h"

#include <spdlog/spdlog.h>

#include "pool_group_stats.h"

namespace ithaca::proxy {

namespace {
std::atomic<uint64_t> g_health_epoch{1};
}  // namespace

uint64_t health_epoch() { return g_health_epoch.load(std::memory_order_acquire); }

const char* to_string(failure_kind f) {
  switch (f) {
    case failure_kind::Down: return "down";
    case failure_kind::Timeout: return "timeout";
    case failure_kind::Connect: return "connect";
    case failure_kind::Connection: return "connection";
    case failure_kind::BadReply: return "bad_reply";
    case failure_kind::QueueFull: return "queue_full";
    case failure_kind::ShadowFull: return "shadow_full";
  }
  return "?";
}

backend_server::backend_server(std::string pool, config::backend_server spec, server_settings settings,
                               unsigned workers, std::shared_ptr<ssl_ctx_st> tls_ctx)
    : pool_(std::move(pool)), spec_(std::move(spec)), settings_(std::move(settings)), tls_ctx_(std::move(tls_ctx)) {
  std::string error;
  // Numeric addresses only (the config normalised them); a name would need
  // a resolver call per connect.
  address_ok_ = mm::address::parse(spec_.address, sockaddr_, &error);
  if (!address_ok_) spdlog::error("pool {}: server {}: {}", pool_, spec_.address, error);
  for (unsigned i = 0; i < workers; ++i) counters_.push_back(std::make_unique<server_counters>());
  pool_group_ = pool_group_of(pool_);
}

void backend_server::set_last_error(std::string why) {
  std::lock_guard lock(error_mutex_);
  if (last_error_ != why) last_error_ = std::move(why);
}

std::string backend_server::last_error() const {
  std::lock_guard lock(error_mutex_);
  return last_error_;
}

bool backend_server::record_failure(failure_kind f) {
  if (f == failure_kind::Down || f == failure_kind::QueueFull || f == failure_kind::ShadowFull) {
    return false;  // not the server's fault
  }
  failures_.fetch_add(1, std::memory_order_relaxed);
  unsigned n = streak_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n < settings_.failure_limit && f != failure_kind::Connect) return false;
  bool was_up = true;
  if (!up_.compare_exchange_strong(was_up, false)) return false;
  down_cause_.store(static_cast<uint8_t>(f), std::memory_order_relaxed);
  transitions_.fetch_add(1, std::memory_order_relaxed);
  g_health_epoch.fetch_add(1, std::memory_order_release);
  spdlog::warn("pool {}: server {} marked down after {} ({} consecutive failures)", pool_, spec_.address, to_string(f),
               n);
  return true;
}

void backend_server::mark_up() {
  streak_.store(0, std::memory_order_relaxed);
  failures_.store(0, std::memory_order_relaxed);
  bool was_up = false;
  if (up_.compare_exchange_strong(was_up, true)) {
    transitions_.fetch_add(1, std::memory_order_relaxed);
    g_health_epoch.fetch_add(1, std::memory_order_release);
    spdlog::warn("pool {}: server {} is up again", pool_, spec_.address);
  }
}

void backend_server::retire() {
  if (retired_.exchange(true, std::memory_order_relaxed)) return;
  if (!up()) spdlog::warn("pool {}: {} was TKO, removed from config", pool_, spec_.address);
}

const char* backend_server::protocol_name() const {
  if (settings_.protocol != kinds::backend_protocol::Auto) return kinds::to_string(settings_.protocol);
  switch (learned_.load(std::memory_order_relaxed)) {
    case 1: return kinds::to_string(kinds::backend_protocol::Ascii);
    case 2: return kinds::to_string(kinds::backend_protocol::Meta);
    default: return kinds::to_string(kinds::backend_protocol::Auto);
  }
}

server_totals backend_server::sum_counters() const {
  server_totals out;
  for (const auto& c : counters_) {
    out.requests += c->requests.get();
    out.replies += c->replies.get();
    out.connects += c->connects.get();
    out.joined += c->joined.get();
    out.idle_closes += c->idle_closes.get();
    out.late_replies += c->late_replies.get();
    out.late_closes += c->late_closes.get();
    for (std::size_t i = 0; i < out.failures.size(); ++i) out.failures[i] += c->failures[i].get();
    for (std::size_t i = 0; i < out.results.size(); ++i) out.results[i] += c->results[i].get();
    c->latency.add_to(out.latency);
    out.latency_sum_us += c->latency.sum_us();
  }
  out.transitions = transitions();
  return out;
}

server_totals backend_server::totals() const {
  server_totals t = sum_counters();
  t -= baseline_;
  return t;
}

}  // namespace ithaca::proxy
