#include "conn_registry.h"

namespace ithaca::server {

uint64_t conn_registry::add(conn_info info) {
  uint64_t id;
  {
    std::lock_guard lock(mutex_);
    id = next_id_++;
    conns_.emplace(id, std::move(info));
  }
  current_.fetch_add(1, std::memory_order_relaxed);
  total_.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void conn_registry::remove(uint64_t id) {
  {
    std::lock_guard lock(mutex_);
    conns_.erase(id);
  }
  current_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace ithaca::server
