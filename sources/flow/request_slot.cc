#include "request_slot.h"

#include "command_class.h"

namespace ithaca::flow {

std::uint64_t request_slot::client_tag() const { return queue_ ? queue_->id() : 0; }

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
}

void request_slot::keep_keys() {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < req.keys.size(); i++) bytes += req.keys[i].size();
  kept_keys_.clear();
  kept_keys_.reserve(bytes);  // no reallocation below: the views stay valid
  for (std::size_t i = 0; i < req.keys.size(); i++) {
    const std::size_t at = kept_keys_.size();
    kept_keys_.append(req.keys[i]);
    req.keys.set(i, std::string_view(kept_keys_).substr(at, req.keys[i].size()));
  }
}

void request_slot::account_reply() {
  if (orphaned()) return;
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
  if (queue_ != nullptr) {
    queue_->held_ -= accounted_;
    if (refetch_) --queue_->dropped_;
  }
  accounted_ = 0;
  refetch_ = false;
  result.release_values();
}

void request_slot::note_dispatch() {
  seq_ = ++queue_->dispatched_;
  if (!protocol::can_fetch_again(req)) queue_->last_unrepeatable_ = seq_;
}

void request_slot::call_done() {
  if (calls_pending_ == 0 || --calls_pending_ > 0) return;
  if (orphaned()) {
    delete this;  // its client is gone (see inflight_queue::~inflight_queue)
    return;
  }
  st = state::Ready;
  queue_->wake();
}

inflight_queue::~inflight_queue() {
  for (std::size_t i = 0; i < count_; i++) {
    std::unique_ptr<request_slot>& s = ring_[index(i)];
    if (s->st == request_slot::state::Pending && s->calls_pending_ > 0) {
      held_ -= s->accounted_;
      s->accounted_ = 0;
      if (s->refetch_) --dropped_;
      s->refetch_ = false;
      s->queue_ = nullptr;
      s->keep_keys();
      s.release();  // freed by its last call_done()
    }
  }
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
