// backend_call, its replies: each reply piece matched to the call's keys or step, the
// multi-step cases (binary incr over ascii, a store's trailing gets for its CAS), and the
// tally of what the answer said.
#include "text_replies.h"
#include "backend_call.h"

#include "command_class.h"

#include "backend_encode.h"
#include "number.h"
#include "backend_call_conventions.h"

namespace ithaca::protocol {
namespace {

using call_detail::kLeaseTokenTag;
using call_detail::kNoVivify;

// Rounds of incr -> add -> incr before a binary incr gives up (each lost
// round means another client created and deleted the key in between).
constexpr unsigned kMaxIncrRounds = 3;
constexpr std::uint64_t kWaitToken = 1;  // mcrouter: "hot miss, retry shortly"

bool parse_digits(std::string_view t, std::uint64_t& out) {
  if (t.empty()) return false;
  for (const char c : t) {
    if (c < '0' || c > '9') return false;
  }
  auto v = parse_u64(t);
  if (!v) return false;
  out = *v;
  return true;
}

std::uint64_t meta_number(const reply_piece& piece, char letter) {
  std::string_view token;
  std::uint64_t v = 0;
  if (piece.meta_flag(letter, token)) parse_digits(token, v);
  return v;
}

// A signed meta return flag (t is -1 for "never expires"); 0 when absent.
std::int64_t meta_signed(const reply_piece& piece, char letter) {
  std::string_view token;
  if (!piece.meta_flag(letter, token)) return 0;
  const bool negative = !token.empty() && token.front() == '-';
  std::uint64_t v = 0;
  if (!parse_digits(negative ? token.substr(1) : token, v)) return 0;
  return negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
}

}  // namespace

// ---- replies ----------------------------------------------------------------

backend_call::progress backend_call::on_piece(const reply_piece& piece) {
  switch (step_) {
    case step::AsciiGet: return on_ascii_get(piece);
    case step::MetaGet: return on_meta_get(piece);
    case step::Single:
    case step::IncrRetry: return on_single(piece);
    case step::Passthrough:
      if (piece.kind != piece_kind::Meta && piece.kind != piece_kind::Error) return bad_reply();
      note_passthrough(piece);
      result_->raw.append(piece.raw);
      return finish();
    case step::QuietPassthrough:
      if (piece.kind != piece_kind::Meta && piece.kind != piece_kind::Error) return bad_reply();
      if (piece.kind == piece_kind::Meta && piece.code == "MN") return finish();
      note_passthrough(piece);
      result_->raw.append(piece.raw);
      return progress::More;
    case step::IncrAdd: return on_incr_add(piece);
    case step::FetchCas: return on_fetch_cas(piece);
    case step::Done: break;
  }
  return bad_reply();
}

backend_call::progress backend_call::pass() {
  step_ = step::Done;
  return progress::Passed;
}

// Also an abandoned call's reply (abandon()): none of the cases below reads
// the request or the result but on_ascii_get, which is careful to.
backend_call::progress backend_call::on_orphan_piece(const reply_piece& piece) {
  switch (step_) {
    case step::AsciiGet: return on_ascii_get(piece);  // reads only the keys
    case step::MetaGet:
      // One reply per mg sent.
      return ++match_key_ < key_count() ? progress::More : finish();
    case step::QuietPassthrough:
      return piece.kind == piece_kind::Meta && piece.code == "MN" ? finish() : progress::More;
    case step::FetchCas: return piece.kind == piece_kind::Value ? progress::More : finish();
    default:
      // One piece (a line or a meta reply) ends every other request.
      return finish();
  }
}

backend_call::progress backend_call::bad_reply() {
  fail(call_failure::BadReply);
  return progress::BadReply;
}

// VALUE pieces come in request order, misses skipped: each is matched to the
// next key of this call with the same name (so "get a a" fills both).
// An abandoned call (abandon()) matches by its own copy of the keys and
// stores nothing.
backend_call::progress backend_call::on_ascii_get(const reply_piece& piece) {
  switch (piece.kind) {
    case piece_kind::Value: {
      std::size_t k = match_key_;
      while (k < key_count() && key_name(k) != piece.key) ++k;
      if (k == key_count()) {
        // Not one of ours: the next call's on a shared line (our
        // keys left are misses).
        if (joined_next_ && lines_ == 1) return pass();
        return bad_reply();
      }
      if (result_ != nullptr) {
        result_->set_hit_raw(key_index(k), piece.flags, piece.cas, piece.has_cas, piece.data, piece.raw);
      }
      ++hits_;
      match_key_ = k + 1;
      return progress::More;
    }
    case piece_kind::Error:
      if (result_ != nullptr) result_->set_text(routed_outcome::ErrorLine, piece.line);
      ++errors_;
      [[fallthrough]];
    case piece_kind::End:
      if (--lines_ > 0) return progress::More;
      if (joined_next_) return pass();  // the line's END (or error) is the next call's too
      return finish();
    default: return bad_reply();
  }
}

// A server's error line as the client sees it: a lease's meta command
// answered ERROR (a server without meta commands) says why.
std::string_view backend_call::lease_error(std::string_view line) const {
  if (line != kReplyError) return line;
  if (op_ == op::LeaseGet || op_ == op::LeaseSet) return call_detail::kLeaseNeedsMeta;
  return op_ == op::Metaget ? call_detail::kMetagetNeedsMeta : line;
}

backend_call::progress backend_call::on_meta_get(const reply_piece& piece) {
  const std::size_t index = key_index(match_key_);
  if (piece.kind == piece_kind::Error) {
    result_->set_text(routed_outcome::ErrorLine, lease_error(piece.line));
    ++errors_;
  } else if (piece.kind != piece_kind::Meta) {
    return bad_reply();
  } else if ((piece.code == "VA" || piece.code == "HD") && op_ == op::Metaget) {
    // The remaining TTL (-1: never) in `number`, as the renderer wants it.
    result_->set_hit(index, 0, 0, {});
    result_->number = static_cast<std::uint64_t>(meta_signed(piece, 't'));
    ++hits_;
  } else if (piece.code == "VA" || piece.code == "HD") {
    const auto flags = static_cast<std::uint32_t>(meta_number(piece, 'f'));
    const std::uint64_t cas = meta_number(piece, 'c');
    if (op_ == op::LeaseGet && (piece.meta_flag('W') || piece.meta_flag('Z') || piece.meta_flag('X'))) {
      // W: this reader fills the key, its token is the CAS; Z (or a
      // stale value without W): another reader does, wait. A stale
      // value is shown to both.
      result_->outcome = routed_outcome::LeaseToken;
      result_->number = piece.meta_flag('W') ? (cas | kLeaseTokenTag) : kWaitToken;
      if (piece.meta_flag('X')) {
        result_->set_hit(index, flags, cas, piece.data);
        ++hits_;
      } else {
        ++misses_;  // a lease-get miss: the token is for filling it
      }
    } else {
      result_->set_hit(index, flags, cas, piece.data);
      ++hits_;
    }
  } else if (piece.code == "EN") {
    ++misses_;
  } else {
    return bad_reply();
  }
  if (++match_key_ < key_count()) return progress::More;
  return finish();
}

backend_call::progress backend_call::on_single(const reply_piece& piece) {
  switch (piece.kind) {
    case piece_kind::Error:
      if (piece.line == kReplyNonNumeric && op_ == op::Arith) {
        result_->outcome = routed_outcome::NonNumeric;
      } else {
        result_->set_text(routed_outcome::ErrorLine, lease_error(piece.line));
      }
      return finish();
    case piece_kind::Line:
      if (!outcome_of_line(piece.line)) return bad_reply();
      break;
    case piece_kind::Meta:
      if (!outcome_of_meta(piece)) return bad_reply();
      break;
    default: return bad_reply();
  }
  return after_single();
}

// The multi-step cases of binary clients over ascii backends.
backend_call::progress backend_call::after_single() {
  const request& req = *req_;
  if (!binary_ || proto_ != backend_protocol::Ascii) return finish();
  const routed_outcome o = result_->outcome;
  if (op_ == op::Arith && o == routed_outcome::NotFound && static_cast<std::uint32_t>(req.exptime) != kNoVivify &&
      rounds_ < kMaxIncrRounds) {
    ++rounds_;
    step_ = step::IncrAdd;
    return progress::NextStep;
  }
  const bool stored =
      (op_ == op::Store && o == routed_outcome::Stored) || (op_ == op::Arith && o == routed_outcome::Number);
  if (stored && !req.noreply) {
    // The binary reply carries the item's new CAS, which ascii does not
    // return: read it (another client's write in between shows its CAS).
    step_ = step::FetchCas;
    return progress::NextStep;
  }
  return finish();
}

bool backend_call::outcome_of_line(std::string_view line) {
  routed_result& r = *result_;
  std::uint64_t n = 0;
  if (line == "STORED" && op_ == op::Store) {
    r.outcome = routed_outcome::Stored;
  } else if (line == "NOT_STORED" && op_ == op::Store) {
    r.outcome = routed_outcome::NotStored;
  } else if (line == "EXISTS" && op_ == op::Store) {
    r.outcome = routed_outcome::Exists;
  } else if (line == "NOT_FOUND" && op_ != op::Flush) {
    r.outcome = routed_outcome::NotFound;
  } else if (line == "DELETED" && op_ == op::Delete) {
    r.outcome = routed_outcome::Deleted;
  } else if (line == "TOUCHED" && op_ == op::Touch) {
    r.outcome = routed_outcome::Touched;
  } else if (line == "OK" && op_ == op::Flush) {
    r.outcome = routed_outcome::Ok;
  } else if (op_ == op::Arith && parse_digits(line, n)) {
    r.outcome = routed_outcome::Number;
    r.number = n;
  } else {
    return false;
  }
  return true;
}

bool backend_call::outcome_of_meta(const reply_piece& piece) {
  routed_result& r = *result_;
  const std::string_view code = piece.code;
  r.cas = meta_number(piece, 'c');
  if (code == "NF" && op_ != op::Touch) {
    r.outcome = routed_outcome::NotFound;
  } else if (code == "EX" && op_ != op::Touch) {
    r.outcome = routed_outcome::Exists;
  } else if (code == "NS" && (op_ == op::Store || op_ == op::LeaseSet)) {
    r.outcome = routed_outcome::NotStored;
  } else if (code == "HD" && (op_ == op::Store || op_ == op::LeaseSet)) {
    r.outcome = routed_outcome::Stored;
  } else if (code == "HD" && op_ == op::Delete) {
    r.outcome = routed_outcome::Deleted;
  } else if (code == "HD" && op_ == op::Touch) {
    r.outcome = routed_outcome::Touched;
  } else if (code == "EN" && op_ == op::Touch) {
    r.outcome = routed_outcome::NotFound;
  } else if (code == "VA" && op_ == op::Arith) {
    if (!parse_digits(piece.data, r.number)) return false;
    r.outcome = routed_outcome::Number;
  } else {
    return false;
  }
  return true;
}

backend_call::progress backend_call::on_incr_add(const reply_piece& piece) {
  if (piece.kind == piece_kind::Error) {
    result_->set_text(routed_outcome::ErrorLine, piece.line);
    return finish();
  }
  if (piece.kind != piece_kind::Line) return bad_reply();
  if (piece.line == "STORED") {
    // Created with the initial value, returned as is (no delta applied).
    result_->outcome = routed_outcome::Number;
    result_->number = req_->initial;
    if (req_->noreply) return finish();
    step_ = step::FetchCas;
    return progress::NextStep;
  }
  if (piece.line != "NOT_STORED") return bad_reply();
  step_ = step::IncrRetry;  // created by someone else meanwhile: incr it
  return progress::NextStep;
}

backend_call::progress backend_call::on_fetch_cas(const reply_piece& piece) {
  switch (piece.kind) {
    case piece_kind::Value:
      if (piece.key == req_->key()) result_->cas = piece.cas;
      return progress::More;
    case piece_kind::End:
    case piece_kind::Error: return finish();  // gone again: the reply says CAS 0
    default: return bad_reply();
  }
}

// ---- what the answer said ---------------------------------------------------

namespace {
// A meta reply's result, by the command it answers.
reply_result meta_reply_result(command cmd, std::string_view code) {
  if (code == "EN" || code == "NF") return reply_result::NotFound;
  if (code == "NS") return reply_result::NotStored;
  if (code == "EX") return reply_result::Exists;
  switch (cmd) {
    case command::MetaGet: return reply_result::Found;  // VA or HD
    case command::MetaSet: return reply_result::Stored;
    case command::MetaDelete: return reply_result::Deleted;
    case command::MetaArithmetic: return reply_result::Number;
    default: return reply_result::Ok;  // mn, me
  }
}

// What a meta command answers with when q left nothing but MN.
reply_result quiet_success(command cmd) {
  switch (cmd) {
    case command::MetaGet: return reply_result::NotFound;  // q hides EN
    case command::MetaSet: return reply_result::Stored;    // ... and HD
    case command::MetaDelete: return reply_result::Deleted;
    case command::MetaArithmetic: return reply_result::Number;
    default: return reply_result::Ok;
  }
}
}  // namespace

void backend_call::note_passthrough(const reply_piece& piece) {
  has_passthrough_result_ = true;
  passthrough_result_ =
      piece.kind == piece_kind::Error ? error_result(piece.line) : meta_reply_result(req_->cmd, piece.code);
}

reply_tally backend_call::tally() const {
  reply_tally t{};
  auto count = [&t](reply_result r, std::uint32_t n = 1) { t[static_cast<std::size_t>(r)] += n; };
  if (op_ == op::Retrieve || op_ == op::LeaseGet) {
    count(reply_result::Found, hits_);
    // Every error line of the call counts as the kind of its last one.
    if (errors_ != 0) count(error_result(result_->text), errors_);
    if (proto_ == backend_protocol::Meta) {
      count(reply_result::NotFound, misses_);
    } else if (errors_ == 0) {
      // The keys of an ascii get line without a VALUE are misses.
      const auto keys = static_cast<std::uint32_t>(key_count());
      count(reply_result::NotFound, keys > hits_ ? keys - hits_ : 0);
    }
    return t;
  }
  if (op_ == op::Meta) {
    count(has_passthrough_result_ ? passthrough_result_ : quiet_success(req_->cmd));
    return t;
  }
  switch (result_->outcome) {
    case routed_outcome::Stored: count(reply_result::Stored); break;
    case routed_outcome::NotStored: count(reply_result::NotStored); break;
    case routed_outcome::Exists: count(reply_result::Exists); break;
    case routed_outcome::NotFound: count(reply_result::NotFound); break;
    case routed_outcome::Deleted: count(reply_result::Deleted); break;
    case routed_outcome::Touched: count(reply_result::Touched); break;
    case routed_outcome::Ok: count(reply_result::Ok); break;
    case routed_outcome::Number: count(reply_result::Number); break;
    // memcached's "CLIENT_ERROR cannot increment or decrement non-numeric value"
    case routed_outcome::NonNumeric: count(reply_result::ClientError); break;
    case routed_outcome::ErrorLine: count(error_result(result_->text)); break;
    default: break;
  }
  return t;
}

}  // namespace ithaca::protocol
