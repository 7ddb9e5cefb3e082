#include "live_settings.h"

namespace ithaca::server {

namespace {

// The numeric settings, for the change list.
struct numeric_field {
  const char* name;
  config::value_kind kind;
  uint64_t live_settings::*member;
};

constexpr numeric_field kNumeric[] = {
    {"cache.memory_limit", config::value_kind::Size, &live_settings::memory_limit},
    {"cache.item_size_max", config::value_kind::Size, &live_settings::item_size_max},
    {"router.max_value_size", config::value_kind::Size, &live_settings::max_value_size},
    {"cache.large_value_threshold", config::value_kind::Size, &live_settings::large_value_threshold},
    {"cache.large_value_disk_limit", config::value_kind::Size, &live_settings::large_value_disk_limit},
    {"cache.lease_interval", config::value_kind::Duration, &live_settings::lease_interval_ms},
    {"cache.gc_interval", config::value_kind::Duration, &live_settings::gc_interval_ms},
    {"server.max_connections", config::value_kind::Integer, &live_settings::max_connections},
    {"server.idle_timeout", config::value_kind::Duration, &live_settings::idle_timeout_ms},
    {"server.reqs_per_event", config::value_kind::Integer, &live_settings::reqs_per_event},
    {"replication.ack_timeout", config::value_kind::Duration, &live_settings::ack_timeout_ms},
};

}  // namespace

live_settings live_settings_of(const config::config& c) {
  live_settings l;
  l.memory_limit = c.cache.memory_limit;
  l.item_size_max = c.cache.item_size_max;
  l.max_value_size = c.router.max_value_size;
  l.large_value_threshold = c.cache.large_value_threshold;
  l.large_value_disk_limit = c.cache.large_value_disk_limit;
  l.lease_interval_ms = c.cache.lease_interval_ms;
  l.gc_interval_ms = c.cache.gc_interval_ms;
  l.max_connections = c.server.max_connections;
  l.idle_timeout_ms = c.server.idle_timeout_ms;
  l.enable_shutdown = c.server.enable_shutdown;
  l.enable_watch = c.server.enable_watch;
  l.enable_dumping = c.server.enable_dumping;
  l.enable_flush_all = c.server.enable_flush_all;
  l.reqs_per_event = c.server.reqs_per_event;
  l.evictions = c.cache.evictions;
  l.log_level = c.logging.level;
  l.ack = c.replication.ack;
  l.ack_timeout_ms = c.replication.ack_timeout_ms;
  l.store_routes = !c.router.has_route;
  return l;
}

void overlay(const live_settings& l, config::config& c) {
  c.cache.memory_limit = l.memory_limit;
  c.cache.item_size_max = l.item_size_max;
  c.router.max_value_size = l.max_value_size;
  c.cache.large_value_threshold = l.large_value_threshold;
  c.cache.large_value_disk_limit = l.large_value_disk_limit;
  c.cache.lease_interval_ms = l.lease_interval_ms;
  c.cache.gc_interval_ms = l.gc_interval_ms;
  c.server.max_connections = static_cast<unsigned>(l.max_connections);
  c.server.idle_timeout_ms = l.idle_timeout_ms;
  c.server.enable_shutdown = l.enable_shutdown;
  c.server.enable_watch = l.enable_watch;
  c.server.enable_dumping = l.enable_dumping;
  c.server.enable_flush_all = l.enable_flush_all;
  c.server.reqs_per_event = static_cast<unsigned>(l.reqs_per_event);
  c.cache.evictions = l.evictions;
  c.logging.level = l.log_level;
  c.replication.ack = l.ack;
  c.replication.ack_timeout_ms = l.ack_timeout_ms;
}

std::vector<std::string> live_changes(const live_settings& before, const live_settings& after) {
  std::vector<std::string> out;
  for (const numeric_field& f : kNumeric) {
    if (before.*f.member == after.*f.member) continue;
    out.push_back(std::string(f.name) + " " + config::format_value(f.kind, before.*f.member) + " -> " +
                  config::format_value(f.kind, after.*f.member));
  }
  if (before.enable_shutdown != after.enable_shutdown) {
    out.push_back(std::string("server.enable_shutdown ") + (before.enable_shutdown ? "true" : "false") + " -> " +
                  (after.enable_shutdown ? "true" : "false"));
  }
  if (before.enable_watch != after.enable_watch) {
    out.push_back(std::string("server.enable_watch ") + (before.enable_watch ? "true" : "false") + " -> " +
                  (after.enable_watch ? "true" : "false"));
  }
  if (before.enable_dumping != after.enable_dumping) {
    out.push_back(std::string("server.enable_dumping ") + (before.enable_dumping ? "true" : "false") + " -> " +
                  (after.enable_dumping ? "true" : "false"));
  }
  if (before.enable_flush_all != after.enable_flush_all) {
    out.push_back(std::string("server.enable_flush_all ") + (before.enable_flush_all ? "true" : "false") + " -> " +
                  (after.enable_flush_all ? "true" : "false"));
  }
  if (before.evictions != after.evictions) {
    out.push_back(std::string("cache.evictions ") + (before.evictions ? "true" : "false") + " -> " +
                  (after.evictions ? "true" : "false"));
  }
  if (before.ack != after.ack) {
    out.push_back(std::string("replication.ack ") + config::to_string(before.ack) + " -> " +
                  config::to_string(after.ack));
  }
  if (before.log_level != after.log_level) {
    out.push_back(std::string("logging.level ") + config::to_string(before.log_level) + " -> " +
                  config::to_string(after.log_level));
  }
  return out;
}

}  // namespace ithaca::server
