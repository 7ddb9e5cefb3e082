#include "request_slot.h"

#include <algorithm>

#include "command_class.h"

namespace ithaca::flow {

namespace {

// Copies the request's keys (and its value, `with_value`) into `into` and
// points the request at the copies. The views point elsewhere (the client's
// input, a parent's request), never into `into` itself.
void copy_views(protocol::request& req, std::string& into, bool with_value) {
  // A routing prefix is copied before each key, as it lay in the client's
  // input: a pool that keeps it widens the key's view (request.h).
  const std::size_t prefix = req.routing_prefix.size();
  std::size_t bytes = with_value ? req.value.size() : 0;
  for (std::size_t i = 0; i < req.keys.size(); i++) bytes += prefix + req.keys[i].size();
  into.clear();
  into.reserve(bytes);  // no reallocation below: the views stay valid
  for (std::size_t i = 0; i < req.keys.size(); i++) {
    into.append(req.routing_prefix);
    const std::size_t at = into.size();
    into.append(req.keys[i]);
    req.keys.set(i, std::string_view(into.data() + at, req.keys[i].size()));
  }
  if (prefix > 0) {
    req.routing_prefix = req.keys.empty() ? std::string_view() : std::string_view(req.keys[0].data() - prefix, prefix);
  }
  if (!with_value) return;
  const std::size_t at = into.size();
  into.append(req.value);
  req.value = std::string_view(into.data() + at, req.value.size());
}

}  // namespace

std::uint64_t request_slot::client_tag() const { return queue_ ? queue_->id() : 0; }

request_slot* request_slot::client_request() {
  request_slot* s = this;
  while (s->own_ == ownership::Child && s->parent_ != nullptr) s = s->parent_;
  return s->own_ == ownership::Queue ? s : nullptr;
}

inflight_queue::inflight_queue() {
  thread_local std::uint64_t next_id = 0;
  id_ = next_id++;
}

void request_slot::reset() {
  release_reply();
  st = state::Parsing;
  action = exec_action::Continue;
  silent = false;
  reply_in_deferred = false;
  calls_pending_ = 0;
  frames_.clear();
  for (std::size_t i = 0; i < children_used_; ++i) children_[i]->reset();
  children_used_ = 0;
  some_ = some::Off;
}

bool frame_owner::child_answered(request_slot&, request_slot&) const { return true; }

bool frame_owner::wants_resume(const request_slot&, const slot_frame&) const { return true; }

std::unique_ptr<request_slot> request_slot::release_child(std::size_t i) {
  std::unique_ptr<request_slot> c = std::move(children_[i]);
  children_[i] = std::make_unique<request_slot>();
  children_[i]->own_ = ownership::Child;
  children_[i]->parent_ = this;
  c->parent_ = nullptr;
  c->held_release();
  return c;
}

void request_slot::copy_request() {
  copy_views(req, owned_, true);
  // Nothing else of a data command is read by a route or a backend call.
  req.args = {};
  req.meta.opaque = {};
}

std::vector<std::unique_ptr<request_slot>> request_slot::detach_to(slot_home& home) {
  std::vector<std::unique_ptr<request_slot>> out;
  if (calls_pending_ == 0) {
    // Its calls are done; it waits only to be resumed: it is not resumed,
    // and what it still has out (its own stragglers) goes on without it.
    if (home_ != nullptr) home_->cancel_resume(*this);
    for (std::size_t i = 0; i < children_used_; ++i) {
      if (children_[i]->reported_) continue;
      if (children_[i]->calls_pending_ == 0) {
        if (children_[i]->home_ != nullptr) children_[i]->home_->cancel_resume(*children_[i]);
        continue;
      }
      out.push_back(release_child(i));
    }
    return out;
  }
  detach_tree(home);
  own_ = ownership::Detached;
  parent_ = nullptr;
  return out;
}

void request_slot::detach_tree(slot_home& home) {
  // Each slot copies its own request (a child's may be a subset of its
  // parent's keys, or a request of its own): the client's input goes away.
  copy_request();
  queue_ = nullptr;
  home_ = &home;
  for (std::size_t i = 0; i < children_used_; ++i) {
    if (!children_[i]->reported_) children_[i]->detach_tree(home);
  }
}

request_slot& request_slot::child(std::size_t i) {
  while (children_.size() <= i) {
    auto c = std::make_unique<request_slot>();
    c->own_ = ownership::Child;
    c->parent_ = this;
    children_.push_back(std::move(c));
  }
  request_slot& c = *children_[i];
  c.queue_ = queue_;
  c.home_ = home_;
  c.req = req;
  c.shadow = shadow;
  c.calls_pending_ = 0;
  c.reported_ = false;
  c.frames_.clear();
  children_used_ = std::max(children_used_, i + 1);
  return c;
}

request_slot& request_slot::child_for_keys(std::size_t i, std::span<const std::uint32_t> which) {
  request_slot& c = child(i);
  c.key_map.clear();
  if (which.empty()) {
    for (std::size_t k = 0; k < req.keys.size(); ++k) c.key_map.push_back(static_cast<std::uint32_t>(k));
    return c;
  }
  c.req.keys.clear();
  for (const std::uint32_t k : which) {
    c.req.keys.push_back(req.keys[k]);
    c.key_map.push_back(k);
  }
  return c;
}

std::unique_ptr<request_slot> request_slot::detached(const protocol::request& r, slot_home& home) {
  auto s = std::make_unique<request_slot>();
  s->own_ = ownership::Detached;
  s->home_ = &home;
  s->req = r;
  s->copy_request();
  return s;
}

void request_slot::account_reply() {
  if (queue_ == nullptr) return;  // orphaned or detached: nobody waits for it
  if (own_ == ownership::Child) {
    // Counted (a composite's children hold replies too), never dropped: only
    // a client's own slot can be fetched again at the head.
    const std::size_t now = result.bytes_held();
    queue_->held_ = queue_->held_ - accounted_ + now;
    accounted_ = now;
    return;
  }
  const std::size_t now = result.bytes_held();
  queue_->held_ = queue_->held_ - accounted_ + now;
  accounted_ = now;
  if (queue_->held_ <= inflight_queue::kHeldLimit || &queue_->head() == this || !protocol::can_fetch_again(req) ||
      queue_->last_unrepeatable_ > seq_)
    return;
  release_reply();
  refetch_ = true;
  ++queue_->dropped_;
}

void request_slot::release_reply() {
  held_release();
  result.release_values();
}

void request_slot::note_dispatch() {
  seq_ = ++queue_->dispatched_;
  if (!protocol::can_fetch_again(req)) queue_->last_unrepeatable_ = seq_;
}

void request_slot::call_done() {
  if (calls_pending_ == 0 || --calls_pending_ > 0) return;
  if (own_ == ownership::Orphan) {
    delete this;  // its client is gone (see inflight_queue::~inflight_queue)
    return;
  }
  while (!frames_.empty() && !frames_.back().owner->wants_resume(*this, frames_.back())) frames_.pop_back();
  if (!frames_.empty()) {
    home_->resume_later(*this);
    return;
  }
  finish();
}

void request_slot::finish() {
  if (own_ == ownership::Child) {
    reported_ = true;
    request_slot& p = *parent_;
    switch (p.some_) {
      case some::Off: p.call_done(); return;
      case some::Waiting:
        if (p.frames_.back().owner->child_answered(p, *this)) {
          p.some_ = some::Enough;
          p.call_done();
        }
        return;
      case some::Enough: return;  // a straggler: the parent answered without it
    }
  } else {
    home_->finished(*this);  // may free a detached slot: nothing after this
  }
}

bool request_slot::orphan() {
  std::size_t pending_children = 0;
  for (std::size_t i = 0; i < children_used_; ++i) {
    std::unique_ptr<request_slot>& c = children_[i];
    if (c->reported_) continue;
    ++pending_children;  // counted in this slot's calls until it reports
    if (c->calls_pending_ > 0 && c->orphan()) {
      c->parent_ = nullptr;
      c.release();  // freed by its last call_done()
    }
    // (A child waiting only to be resumed goes with this slot.)
  }
  children_.erase(std::remove(children_.begin(), children_.end(), nullptr), children_.end());
  children_used_ = 0;
  frames_.clear();  // nothing resumes for a client that is gone
  held_release();
  own_ = ownership::Orphan;
  queue_ = nullptr;
  home_ = nullptr;
  calls_pending_ -= static_cast<std::uint32_t>(std::min<std::size_t>(pending_children, calls_pending_));
  if (calls_pending_ == 0) return false;
  // Its keys and value, copied out of the client's input (which the session
  // reuses at once): a call of it not yet encoded (waiting behind a server's
  // in-flight cap) is encoded from them. A view left into that input sent
  // another request's bytes as this set's value.
  copy_request();
  return true;
}

void request_slot::held_release() {
  if (queue_ != nullptr) {
    queue_->held_ -= accounted_;
    if (refetch_) --queue_->dropped_;
  }
  accounted_ = 0;
  refetch_ = false;
}

inflight_queue::~inflight_queue() {
  for (std::size_t i = 0; i < count_; i++) {
    std::unique_ptr<request_slot>& s = ring_[index(i)];
    if (s->orphan()) s.release();  // freed by its last call_done()
  }
}

void inflight_queue::abandon() {
  for (std::size_t i = 0; i < ring_.size(); i++) {
    std::unique_ptr<request_slot>& s = ring_[index(i)];
    if (i >= count_) {
      s->reset();
      continue;
    }
    // orphan() hands the children still out their own lives; the slot itself
    // lives on only if its own calls are still out. Either way it is no
    // longer this queue's: a fresh slot takes its place.
    if (s->orphan()) {
      s.release();  // freed by its last call_done()
    } else {
      s.reset();
    }
    s = std::make_unique<request_slot>();
    s->queue_ = this;
    s->home_ = this;
  }
  head_ = 0;
  count_ = 0;
  held_ = 0;
  dropped_ = 0;
  dispatched_ = 0;
  last_unrepeatable_ = 0;
  resumes_.clear();
  resume_next_ = 0;
  parts_hit_ = false;
}

void inflight_queue::resume_later(request_slot& s) {
  resumes_.push_back(&s);
  wake();
}

void inflight_queue::cancel_resume(request_slot& s) {
  for (std::size_t i = resume_next_; i < resumes_.size(); ++i) {
    if (resumes_[i] == &s) resumes_[i] = nullptr;
  }
}

void inflight_queue::finished(request_slot& s) {
  s.st = request_slot::state::Ready;
  wake();
}

request_slot* inflight_queue::next_resume() {
  while (resume_next_ < resumes_.size()) {
    if (request_slot* s = resumes_[resume_next_++]) return s;  // (null: cancelled)
  }
  resumes_.clear();
  resume_next_ = 0;
  return nullptr;
}

void inflight_queue::grow() {
  // Re-lay the ring in order so the head is at 0, then add a slot.
  std::vector<std::unique_ptr<request_slot>> next;
  next.reserve(ring_.size() + 1);
  for (std::size_t i = 0; i < ring_.size(); i++) next.push_back(std::move(ring_[index(i)]));
  ring_ = std::move(next);
  head_ = 0;
  auto s = std::make_unique<request_slot>();
  s->queue_ = this;
  s->home_ = this;
  ring_.push_back(std::move(s));
}

request_slot& inflight_queue::tail() {
  if (count_ == ring_.size()) grow();
  return *ring_[index(count_)];
}

void inflight_queue::push_tail() { ++count_; }

void inflight_queue::pop_head() {
  ring_[head_]->reset();
  head_ = (head_ + 1) % ring_.size();
  --count_;
}

void inflight_queue::trim() {
  if (count_ != 0 || ring_.size() <= kKeepSlots) return;
  ring_.resize(kKeepSlots);
  head_ = 0;
}

}  // namespace ithaca::flow
