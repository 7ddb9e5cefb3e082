#include "worker_backends.h"

namespace ithaca::proxy {

backend_conn& worker_backends::conn(const std::shared_ptr<backend_server>& server, std::uint64_t client_tag) {
  std::vector<std::unique_ptr<backend_conn>>& list = conns_[server.get()];
  const std::size_t n = server->settings().connections;
  if (list.size() < n) list.resize(n);
  std::unique_ptr<backend_conn>& c = list[n == 1 ? 0 : client_tag % n];
  // A connection whose writer has closed it for good (its server retired by
  // a reload, idle a moment) would strand a request in its queue: nobody
  // sends it, and it ends as a silent miss when the object goes. A batch
  // still running on the old tree gets a fresh connection instead; the old
  // one had nothing in flight, so no order is lost.
  if (c && !c->finished() && !c->accepting()) draining_.push_back(std::move(c));
  if (!c || c->finished()) c = std::make_unique<backend_conn>(server, worker_, *this);
  return *c;
}

const distribution* worker_backends::placement(const std::shared_ptr<const pool>& p) {
  live_placement& lp = placements_[p.get()];
  const uint64_t epoch = health_epoch();
  if (lp.epoch != epoch || lp.owner.expired()) {
    lp.owner = p;
    lp.epoch = epoch;
    lp.live = p->live_distribution();
  }
  return lp.live.get();
}

void worker_backends::preconnect(const pool& p) {
  for (const std::shared_ptr<backend_server>& s : p.servers()) {
    if (!s->settings().preconnect) continue;
    for (unsigned i = 0; i < s->settings().connections; i++) conn(s, i).connect_now();
  }
}

void worker_backends::sweep() {
  std::erase_if(draining_, [](const std::unique_ptr<backend_conn>& c) { return c->finished(); });
  for (auto it = placements_.begin(); it != placements_.end();) {
    it = it->second.owner.expired() ? placements_.erase(it) : std::next(it);
  }
  for (auto it = conns_.begin(); it != conns_.end();) {
    bool all_done = true;
    for (auto& c : it->second) {
      if (!c) continue;
      if (c->server().retired()) c->close_when_idle();
      if (!c->finished()) all_done = false;
    }
    if (all_done && !it->second.empty() && it->second.front() && it->second.front()->server().retired()) {
      it = conns_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace ithaca::proxy
