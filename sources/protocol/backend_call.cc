// backend_call: one client request against one backend server. Which
// backend command serves which client command, flag by flag, is tabled in
// INTERNALS.md ("The router codec"). Never forwarded: noreply, binary quiet
// opcodes and (to ascii backends) meta q; every backend request gets a reply
// so that replies on a pipelined connection match requests in order, and the
// client's reply is suppressed at render time instead.
//
// This file: a call's start (what the backend protocol can carry, refused at once
// otherwise) and its failure. Encoding is in backend_call_encode.cc, the replies and the
// tally of what they said in backend_call_reply.cc.
#include "text_replies.h"
#include "backend_call.h"

#include "command_class.h"

#include "backend_encode.h"
#include "number.h"
#include "backend_call_conventions.h"

namespace ithaca::protocol {
namespace {

using call_detail::is_binary_quiet_get;
using call_detail::kLeaseTokenTag;

constexpr std::string_view kKeyNotText =
    "CLIENT_ERROR key not representable in the ascii protocol (needs a meta backend)";
constexpr std::string_view kMeNeedsMeta = "CLIENT_ERROR me needs a meta backend";
constexpr std::string_view kCasNeedsMeta = "CAS compare needs a meta backend";

// Meta flags an ascii backend can serve, per command. Return flags a command
// never prints (ms v, md f, ...) are no-ops in memcached and stay no-ops.
// Everything else (t h l N R E I, ms/ma/md C, ms/ma c, ma T) needs the item
// state only the meta protocol reports.
std::string_view ascii_servable_flags(command cmd) {
  switch (cmd) {
    case command::MetaGet: return "vfcksOqbTuPL";
    case command::MetaSet: return "FTCMkOqbvfsthluPL";
    case command::MetaDelete: return "kOqbvfstchluPL";
    case command::MetaArithmetic: return "DMJkOqbvfshluPL";
    default: return "";
  }
}

// The first flag of `req` an ascii backend cannot serve, or 0.
char unservable_meta_flag(const request& req) {
  const meta_flags& m = req.meta;
  const std::string_view ok = ascii_servable_flags(req.cmd);
  for (std::size_t i = 0; i < m.order_size; ++i) {
    if (ok.find(m.order[i]) == std::string_view::npos) return m.order[i];
  }
  // ascii append/prepend cannot compare a CAS.
  if (req.cmd == command::MetaSet && m.has('C') && (m.mode == 'A' || m.mode == 'P')) return 'C';
  return 0;
}

}  // namespace

// ---- start ------------------------------------------------------------------

// Begins one client request's conversation with one server: resets every
// field (calls live in free lists), decides the operation and how many steps
// it takes in `proto`, and refuses at once (Done, with the client's error in
// `result`) what that protocol cannot carry: a key ascii cannot send, a meta
// flag ascii cannot honour (leases go as meta commands over either). `keys` (indexes into the
// request's keys) is this server's share of a split multi-get; empty: all.
// [the worker of the backend connection; pure, no lock, allocates nothing for
// a single key]
backend_call::progress backend_call::start(const request& req, backend_protocol proto, routed_result& result,
                                           std::span<const std::uint32_t> keys) {
  req_ = &req;
  only_reads_ = can_fetch_again(req);
  result_ = &result;
  keys_ = keys;
  proto_ = proto;
  step_ = step::Done;
  binary_ = req.proto == protocol_kind::Binary;
  match_key_ = 0;
  lines_ = 0;
  rounds_ = 0;
  line_verb_ = line_verb::Get;
  last_line_start_ = 0;
  joined_next_ = false;
  hits_ = misses_ = errors_ = 0;
  has_passthrough_result_ = false;
  abandoned_ = false;

  if (proto == backend_protocol::Ascii && req.proto != protocol_kind::Ascii) {
    for (std::size_t i = 0; i < key_count(); ++i) {
      if (!text_safe_key(req.keys[key_index(i)])) return refuse(kKeyNotText, binary_status::InvalidArguments);
    }
  }
  if (req.proto == protocol_kind::Meta) return start_meta_client();

  switch (classify(req)) {
    case command_class::Retrieve:  // binary Touch too: it answers with flags and CAS
      op_ = req.cmd == command::LeaseGet ? op::LeaseGet : req.cmd == command::McMetaget ? op::Metaget : op::Retrieve;
      break;
    case command_class::Touch: op_ = op::Touch; break;
    case command_class::Store: op_ = req.cmd == command::LeaseSet ? op::LeaseSet : op::Store; break;
    case command_class::Arithmetic: op_ = op::Arith; break;
    case command_class::Delete: op_ = op::Delete; break;
    case command_class::Flush: op_ = op::Flush; break;
    default:
      // Commands the server answers itself never come here.
      return refuse("ERROR", binary_status::UnknownCommand);
  }

  if (proto == backend_protocol::Ascii) {
    // Binary commands that compare a CAS where ascii has no way to.
    const bool concat = req.cmd == command::Append || req.cmd == command::Prepend;
    if (binary_ && req.cas != 0 && (concat || op_ == op::Delete || op_ == op::Arith)) {
      return refuse(kCasNeedsMeta, binary_status::NotSupported);
    }
  }
  if (op_ == op::LeaseSet && (req.lease_token & kLeaseTokenTag) == 0) {
    // Not a token this codec handed out (0: no lease, 1: the wait token).
    result.outcome = routed_outcome::NotStored;
    return progress::Done;
  }
  if (op_ == op::Retrieve || op_ == op::LeaseGet || op_ == op::Metaget) {
    if (result.outcome == routed_outcome::Pending) result.outcome = routed_outcome::Hits;
    // A lease-get or metaget is an mg over either protocol (call_detail::kLeaseNeedsMeta).
    step_ = proto == backend_protocol::Ascii && op_ == op::Retrieve ? step::AsciiGet : step::MetaGet;
  } else {
    step_ = step::Single;
  }
  return progress::NextStep;
}

backend_call::progress backend_call::start_meta_client() {
  const request& req = *req_;
  op_ = op::Meta;
  if (proto_ == backend_protocol::Meta) {
    result_->outcome = routed_outcome::Raw;
    step_ = req.meta.has('q') ? step::QuietPassthrough : step::Passthrough;
    return progress::NextStep;
  }
  if (req.cmd == command::MetaDebug) return refuse(kMeNeedsMeta, binary_status::NotSupported);
  if (const char f = unservable_meta_flag(req); f != 0) {
    result_->outcome = routed_outcome::Refused;
    result_->text.assign("CLIENT_ERROR flag ");
    result_->text += f;
    result_->text.append(" needs a meta backend");
    return progress::Done;
  }
  switch (req.cmd) {
    case command::MetaGet:
      op_ = op::Retrieve;
      result_->outcome = routed_outcome::Hits;
      step_ = step::AsciiGet;
      return progress::NextStep;
    case command::MetaSet: op_ = op::Store; break;
    case command::MetaDelete: op_ = op::Delete; break;
    case command::MetaArithmetic: op_ = op::Arith; break;
    default: return refuse("ERROR", binary_status::UnknownCommand);
  }
  step_ = step::Single;
  return progress::NextStep;
}

backend_call::progress backend_call::refuse(std::string_view text, binary_status bstatus) {
  result_->outcome = routed_outcome::Refused;
  result_->text.assign(text);
  result_->bstatus = bstatus;
  step_ = step::Done;
  return progress::Done;
}

backend_call::progress backend_call::finish() {
  step_ = step::Done;
  return progress::Done;
}

// ---- failure ----------------------------------------------------------------

void backend_call::fail(call_failure why, call_failure down_cause, int connect_errno) {
  if (step_ == step::Done || req_ == nullptr) return;
  routed_result& r = *result_;
  const step was = step_;
  step_ = step::Done;
  if (was == step::FetchCas) return;  // the write happened; only its CAS is unknown (0)
  const request& req = *req_;
  const bool text_multi_get = req.proto == protocol_kind::Ascii && op_ == op::Retrieve && req.keys.size() > 1;
  if (text_multi_get || is_binary_quiet_get(req)) {
    // Keys of a multi-key get on a failed server are misses, marked so a
    // failover can ask for them alone.
    r.failed_keys += static_cast<std::uint32_t>(key_count());
    for (std::size_t i = 0; i < key_count(); ++i) {
      if (key_index(i) < r.key_count()) r.set_failed(key_index(i), true);
    }
    if (r.outcome == routed_outcome::Pending) r.outcome = routed_outcome::Hits;
    return;
  }
  r.outcome = routed_outcome::Failed;
  r.failure = why;
  r.down_cause = down_cause;
  r.connect_errno = why == call_failure::ConnectionError ? connect_errno : 0;
}

// ---- abandoned (timed out, its reply still due) ------------------------------

void backend_call::abandon(bool fail_client, call_failure why, call_failure down_cause) {
  if (abandoned_ || req_ == nullptr) return;
  const step framing = step_;
  own_key_count_ = key_count();
  own_keys_.clear();
  own_key_ends_.clear();
  if (framing == step::AsciiGet) {
    // Only the keys a VALUE may still answer (on_ascii_get looks from
    // match_key_ on); the ones before stay as empty names.
    for (std::size_t i = 0; i < own_key_count_; ++i) {
      if (i >= match_key_) own_keys_.append(req_->keys[key_index(i)]);
      own_key_ends_.push_back(static_cast<std::uint32_t>(own_keys_.size()));
    }
  }
  if (fail_client) fail(why, down_cause);
  step_ = framing;  // fail() ended it; the reply still comes
  abandoned_ = true;
  req_ = nullptr;
  result_ = nullptr;
  keys_ = {};
}

std::string_view backend_call::key_name(std::size_t i) const {
  if (!abandoned_) return req_->keys[key_index(i)];
  const std::uint32_t begin = i == 0 ? 0 : own_key_ends_[i - 1];
  return std::string_view(own_keys_).substr(begin, own_key_ends_[i] - begin);
}

}  // namespace ithaca::protocol
