// backend_call: one client request against one backend server. Which
// backend command serves which client command, flag by flag, is tabled in
// INTERNALS.md ("The router codec"). Never forwarded: noreply, binary quiet
// opcodes and (to ascii backends) meta q; every backend request gets a reply
// so that replies on a pipelined connection match requests in order, and the
// client's reply is suppressed at render time instead.
#include "text_replies.h"
#include "backend_call.h"

#include "command_class.h"

#include "backend_encode.h"
#include "number.h"

namespace ithaca::protocol {
namespace {

// memcached closes a connection that sends more than 2048 bytes without a
// newline unless the line starts with "get " or "gets "; gat lines are not
// spared, so every retrieval line is kept below that.
constexpr std::size_t kMaxGetLine = 2000;
// Rounds of incr -> add -> incr before a binary incr gives up (each lost
// round means another client created and deleted the key in between).
constexpr unsigned kMaxIncrRounds = 3;
// Binary incr/decr expiration that means "do not create a missing item".
constexpr std::uint32_t kNoVivify = 0xffffffff;
// lease-get over meta: how long the placeholder a miss creates (mg N) lives,
// i.e. how long other readers are told to wait: the store's default lease_interval.
constexpr std::int64_t kLeaseTtl = 10;
constexpr std::uint64_t kWaitToken = 1;  // mcrouter: "hot miss, retry shortly"
// A lease token over meta is the placeholder's CAS with this bit set: a fresh
// memcached hands out CAS 1 and 2, which mcrouter reserves (1: wait), so the
// bare CAS cannot be the token. lease-set takes the bit off again; a token
// without it was not handed out here and is refused.
constexpr std::uint64_t kLeaseTokenTag = std::uint64_t{1} << 62;

constexpr std::string_view kKeyNotText = "CLIENT_ERROR key not representable in the ascii protocol (needs a meta backend)";
constexpr std::string_view kLeaseNeedsMeta = "SERVER_ERROR lease-get and lease-set need a meta backend";
constexpr std::string_view kMeNeedsMeta = "CLIENT_ERROR me needs a meta backend";
constexpr std::string_view kCasNeedsMeta = "CAS compare needs a meta backend";

bool is_binary_quiet_get(const request& req) {
    return req.proto == protocol_kind::Binary && req.noreply &&
           (req.cmd == command::Get || req.cmd == command::Gat);
}

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

// An exptime (or flush delay) in the form the backend's text and meta
// parsers give the client's meaning. memcached 1.6 reads a binary exptime as
// an unsigned 32-bit number: 0, up to 30 days relative, else an absolute
// unix time, so 2^31 and above is a time between 2038 and 2106 (the item
// lives; Dalli's absolute times in the past expire it, as in text). Text and
// meta read theirs as a signed 32-bit number, where 2^31 and above wraps
// negative: expired on arrival. No text or meta form reaches past 2038, so a
// binary time from 2^31 on becomes the latest one they can say, 2^31-1 (the
// item lives for years either way). Below 2^31 all three mean the same, and
// text and meta TTLs were already read as memcached reads them (parse_i32).
std::int64_t backend_exptime(const request& req, std::int64_t exptime) {
    constexpr std::int64_t kLatestText = 0x7fffffff;
    if (req.proto == protocol_kind::Binary && exptime > kLatestText) return kLatestText;
    return exptime;
}

std::uint64_t meta_number(const reply_piece& piece, char letter) {
    std::string_view token;
    std::uint64_t v = 0;
    if (piece.meta_flag(letter, token)) parse_digits(token, v);
    return v;
}

}  // namespace

// ---- start ------------------------------------------------------------------

// Begins one client request's conversation with one server: resets every
// field (calls live in free lists), decides the operation and how many steps
// it takes in `proto`, and refuses at once (Done, with the client's error in
// `result`) what that protocol cannot carry: a key ascii cannot send, a meta
// flag ascii cannot honour, a lease over ascii. `keys` (indexes into the
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

    if (proto == backend_protocol::Ascii && req.proto != protocol_kind::Ascii) {
        for (std::size_t i = 0; i < key_count(); ++i) {
            if (!text_safe_key(req.keys[key_index(i)])) return refuse(kKeyNotText, binary_status::InvalidArguments);
        }
    }
    if (req.proto == protocol_kind::Meta) return start_meta_client();

    switch (classify(req)) {
        case command_class::Retrieve:  // binary Touch too: it answers with flags and CAS
            op_ = req.cmd == command::LeaseGet ? op::LeaseGet : op::Retrieve;
            break;
        case command_class::Touch:
            op_ = op::Touch;
            break;
        case command_class::Store:
            op_ = req.cmd == command::LeaseSet ? op::LeaseSet : op::Store;
            break;
        case command_class::Arithmetic:
            op_ = op::Arith;
            break;
        case command_class::Delete:
            op_ = op::Delete;
            break;
        case command_class::Flush:
            op_ = op::Flush;
            break;
        default:
            // Commands the server answers itself never come here.
            return refuse("ERROR", binary_status::UnknownCommand);
    }

    if (proto == backend_protocol::Ascii) {
        if (op_ == op::LeaseGet || op_ == op::LeaseSet) return refuse(kLeaseNeedsMeta, binary_status::NotSupported);
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
    if (op_ == op::Retrieve || op_ == op::LeaseGet) {
        if (result.outcome == routed_outcome::Pending) result.outcome = routed_outcome::Hits;
        step_ = proto == backend_protocol::Ascii ? step::AsciiGet : step::MetaGet;
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

// ---- encode -----------------------------------------------------------------

reply_shape backend_call::encode(std::string& out) {
    const request& req = *req_;
    switch (step_) {
        case step::AsciiGet:
            encode_get_lines(out);
            return reply_shape::Values;
        case step::MetaGet:
            encode_mg_lines(out);
            return reply_shape::Meta;
        case step::Single:
        case step::IncrRetry:
            return encode_single(out);
        case step::Passthrough:
            append_meta_passthrough(out, req);
            return reply_shape::Meta;
        case step::QuietPassthrough:
            // q hides the nominal reply: mn marks where the reply ends.
            append_meta_passthrough(out, req);
            out += "mn\r\n";
            return reply_shape::Meta;
        case step::IncrAdd: {
            // memcached's binary incr creates the item with flags 0 and the
            // initial value in decimal.
            std::string digits;
            append_decimal(digits, req.initial);
            append_ascii_store(out, "add", req.key(), 0, backend_exptime(req, req.exptime), digits);
            return reply_shape::Line;
        }
        case step::FetchCas:
            out += "gets ";
            out.append(req.key());
            out += "\r\n";
            return reply_shape::Values;
        case step::Done:
            break;
    }
    return reply_shape::Line;
}

// get/gets/gat/gats over this call's keys, as many lines as kMaxGetLine needs.
void backend_call::encode_get_lines(std::string& out) {
    const request& req = *req_;
    line_verb_ = request_verb();
    const bool touch = line_verb_ == line_verb::Touch;
    const bool cas = with_cas();
    const std::string_view verb = touch ? (cas ? "gats" : "gat") : (cas ? "gets" : "get");
    std::size_t i = 0;
    while (i < key_count()) {
        const std::size_t line_start = out.size();
        last_line_start_ = line_start;
        out.append(verb);
        if (touch) {
            out += ' ';
            append_signed(out, backend_exptime(req, req.exptime));
        }
        std::size_t in_line = 0;
        while (i < key_count()) {
            const std::string_view key = req.keys[key_index(i)];
            if (in_line > 0 && out.size() - line_start + 1 + key.size() > kMaxGetLine) break;
            out += ' ';
            out.append(key);
            ++in_line;
            ++i;
        }
        out += "\r\n";
        ++lines_;
    }
}

// The get line's verb for this request: with cas for gets/gats, binary
// clients (their replies carry CAS) and meta `c`; touching for gat/gats,
// binary touch and meta `T`.
bool backend_call::with_cas() const {
    const request& req = *req_;
    if (req.proto == protocol_kind::Meta) return req.meta.has('c');
    return req.cmd == command::Gets || req.cmd == command::Gats || binary_;
}

backend_call::line_verb backend_call::request_verb() const {
    const request& req = *req_;
    const bool touch = req.proto == protocol_kind::Meta
                           ? req.meta.has('T')
                           : req.cmd == command::Gat || req.cmd == command::Gats || req.cmd == command::Touch;
    if (touch) return line_verb::Touch;
    return with_cas() ? line_verb::Gets : line_verb::Get;
}

bool backend_call::join_line(backend_call& prev, std::string& out) {
    if (step_ != step::AsciiGet || !prev.line_open()) return false;
    const request& req = *req_;
    const line_verb verb = request_verb();
    if (verb == line_verb::Touch || verb != prev.line_verb_) return false;
    std::size_t line = out.size() - prev.last_line_start_;  // with its "\r\n"
    for (std::size_t i = 0; i < key_count(); ++i) line += 1 + req.keys[key_index(i)].size();
    if (line - 2 > kMaxGetLine) return false;
    out.resize(out.size() - 2);
    for (std::size_t i = 0; i < key_count(); ++i) {
        out += ' ';
        out.append(req.keys[key_index(i)]);
    }
    out += "\r\n";
    line_verb_ = prev.line_verb_;
    last_line_start_ = prev.last_line_start_;
    lines_ = 1;
    prev.joined_next_ = true;
    return true;
}

// One mg per key: classic and binary retrievals and lease-get over meta.
void backend_call::encode_mg_lines(std::string& out) {
    const request& req = *req_;
    const bool cas = req.cmd == command::Gets || req.cmd == command::Gats || binary_ || op_ == op::LeaseGet;
    const bool touch = req.cmd == command::Gat || req.cmd == command::Gats || req.cmd == command::Touch;
    const bool value = req.cmd != command::Touch;
    for (std::size_t i = 0; i < key_count(); ++i) {
        out += "mg";
        if (append_meta_key(out, req.keys[key_index(i)])) out += " b";
        out += " f";
        if (value) out += " v";
        if (cas) out += " c";
        if (touch) {
            out += " T";
            append_signed(out, backend_exptime(req, req.exptime));
        }
        if (op_ == op::LeaseGet) {
            out += " N";
            append_signed(out, kLeaseTtl);
        }
        out += "\r\n";
    }
}

reply_shape backend_call::encode_single(std::string& out) {
    const request& req = *req_;
    if (op_ == op::Flush) {
        // Meta has no flush: both backends take the classic command.
        out += "flush_all";
        if (req.has_flush_delay) {
            out += ' ';
            append_signed(out, backend_exptime(req, req.flush_delay));
        }
        out += "\r\n";
        return reply_shape::Line;
    }
    if (proto_ == backend_protocol::Ascii) {
        encode_ascii_single(out);
        return reply_shape::Line;
    }
    encode_meta_single(out);
    return reply_shape::Meta;
}

// A single-key request, or the current step of a multi-step one (binary
// incr's add/incr/gets rounds, a store's trailing gets for its CAS), as one
// classic ascii command appended to `out`, without `noreply` (every request
// sent gets a reply, so replies stay matched on the pipelined connection).
// Expiry goes through backend_exptime (memcached reads a text TTL as signed
// 32 bits). [the backend connection's worker; pure, appends only]
void backend_call::encode_ascii_single(std::string& out) {
    const request& req = *req_;
    const bool meta = req.proto == protocol_kind::Meta;
    switch (op_) {
        case op::Store: {
            std::string_view verb = "set";
            bool with_cas = req.cmd == command::Cas;
            std::uint32_t flags = req.flags;
            std::int64_t exptime = backend_exptime(req, req.exptime);
            std::uint64_t cas = req.cas;
            if (meta) {
                const meta_flags& m = req.meta;
                flags = m.client_flags;
                exptime = m.has('T') ? m.ttl : 0;
                cas = m.compare_cas;
                // memcached turns set and replace with a CAS into cas; add
                // ignores it; append/prepend with C were refused.
                with_cas = m.has('C') && (m.mode == 0 || m.mode == 'S' || m.mode == 'R');
                verb = m.mode == 'E' ? "add" : m.mode == 'R' ? "replace" : m.mode == 'A' ? "append"
                     : m.mode == 'P' ? "prepend" : "set";
            } else {
                switch (req.cmd) {
                    case command::Add: verb = "add"; break;
                    case command::Replace: verb = "replace"; break;
                    case command::Append: verb = "append"; break;
                    case command::Prepend: verb = "prepend"; break;
                    default: break;
                }
                // A binary Set/Add/Replace with a CAS is a cas, as in memcached.
                if (binary_ && cas != 0 && (req.cmd == command::Set || req.cmd == command::Add ||
                                            req.cmd == command::Replace)) {
                    with_cas = true;
                }
            }
            if (with_cas) verb = "cas";
            append_ascii_store(out, verb, req.key(), flags, exptime, req.value, with_cas ? &cas : nullptr);
            return;
        }
        case op::Arith: {
            const bool decr = meta ? (req.meta.mode == 'D' || req.meta.mode == '-') : req.cmd == command::Decr;
            out += decr ? "decr " : "incr ";
            out.append(req.key());
            out += ' ';
            append_decimal(out, req.delta);
            out += "\r\n";
            return;
        }
        case op::Delete:
            out += "delete ";
            out.append(req.key());
            out += "\r\n";
            return;
        case op::Touch:
            out += "touch ";
            out.append(req.key());
            out += ' ';
            append_signed(out, backend_exptime(req, req.exptime));
            out += "\r\n";
            return;
        default:
            return;
    }
}

// Classic and binary commands (and lease-set) as meta commands.
// Thread and bounds as encode_ascii_single: one meta command appended to
// `out`; a key a text line cannot carry goes base64 with `b`; `q` only with
// the `mn` behind it (a meta client's quiet mode), never the client's
// noreply.
void backend_call::encode_meta_single(std::string& out) {
    const request& req = *req_;
    switch (op_) {
        case op::Store:
        case op::LeaseSet: {
            out += "ms";
            const bool b = append_meta_key(out, req.key());
            out += ' ';
            append_decimal(out, req.value.size());
            if (b) out += " b";
            const bool concat = req.cmd == command::Append || req.cmd == command::Prepend;
            if (!concat) {
                out += " F";
                append_decimal(out, req.flags);
                out += " T";
                append_signed(out, backend_exptime(req, req.exptime));
            }
            // A binary Set/Add/Replace with a CAS is a cas (set + compare),
            // as in memcached; append/prepend compare and keep their mode.
            const bool compare = op_ == op::LeaseSet || req.cmd == command::Cas || (binary_ && req.cas != 0);
            if (!compare || concat) {
                switch (req.cmd) {
                    case command::Add: out += " ME"; break;
                    case command::Replace: out += " MR"; break;
                    case command::Append: out += " MA"; break;
                    case command::Prepend: out += " MP"; break;
                    default: break;
                }
            }
            if (compare) {
                out += " C";
                append_decimal(out, op_ == op::LeaseSet ? (req.lease_token & ~kLeaseTokenTag) : req.cas);
            }
            if (binary_) out += " c";
            out += "\r\n";
            out.append(req.value);
            out += "\r\n";
            return;
        }
        case op::Arith: {
            out += "ma";
            if (append_meta_key(out, req.key())) out += " b";
            out += " v D";
            append_decimal(out, req.delta);
            if (req.cmd == command::Decr) out += " MD";
            if (binary_) {
                out += " c";
                if (static_cast<std::uint32_t>(req.exptime) != kNoVivify) {
                    out += " N";
                    append_signed(out, backend_exptime(req, req.exptime));
                    out += " J";
                    append_decimal(out, req.initial);
                }
                if (req.cas != 0) {
                    out += " C";
                    append_decimal(out, req.cas);
                }
            }
            out += "\r\n";
            return;
        }
        case op::Delete:
            out += "md";
            if (append_meta_key(out, req.key())) out += " b";
            if (binary_ && req.cas != 0) {
                out += " C";
                append_decimal(out, req.cas);
            }
            out += "\r\n";
            return;
        case op::Touch:
            out += "mg";
            if (append_meta_key(out, req.key())) out += " b";
            out += " T";
            append_signed(out, backend_exptime(req, req.exptime));
            out += "\r\n";
            return;
        default:
            return;
    }
}

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

backend_call::progress backend_call::on_orphan_piece(const reply_piece& piece) {
    switch (step_) {
        case step::AsciiGet:
            return on_ascii_get(piece);  // reads only the keys
        case step::MetaGet:
            // One reply per mg sent.
            return ++match_key_ < key_count() ? progress::More : finish();
        case step::QuietPassthrough:
            return piece.kind == piece_kind::Meta && piece.code == "MN" ? finish() : progress::More;
        case step::FetchCas:
            return piece.kind == piece_kind::Value ? progress::More : finish();
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
backend_call::progress backend_call::on_ascii_get(const reply_piece& piece) {
    const request& req = *req_;
    switch (piece.kind) {
        case piece_kind::Value: {
            std::size_t k = match_key_;
            while (k < key_count() && req.keys[key_index(k)] != piece.key) ++k;
            if (k == key_count()) {
                // Not one of ours: the next call's on a shared line (our
                // keys left are misses).
                if (joined_next_ && lines_ == 1) return pass();
                return bad_reply();
            }
            result_->set_hit_raw(key_index(k), piece.flags, piece.cas, piece.has_cas, piece.data, piece.raw);
            ++hits_;
            match_key_ = k + 1;
            return progress::More;
        }
        case piece_kind::Error:
            result_->set_text(routed_outcome::ErrorLine, piece.line);
            ++errors_;
            [[fallthrough]];
        case piece_kind::End:
            if (--lines_ > 0) return progress::More;
            if (joined_next_) return pass();  // the line's END (or error) is the next call's too
            return finish();
        default:
            return bad_reply();
    }
}

backend_call::progress backend_call::on_meta_get(const reply_piece& piece) {
    const std::size_t index = key_index(match_key_);
    if (piece.kind == piece_kind::Error) {
        result_->set_text(routed_outcome::ErrorLine, piece.line);
        ++errors_;
    } else if (piece.kind != piece_kind::Meta) {
        return bad_reply();
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
                result_->set_text(routed_outcome::ErrorLine, piece.line);
            }
            return finish();
        case piece_kind::Line:
            if (!outcome_of_line(piece.line)) return bad_reply();
            break;
        case piece_kind::Meta:
            if (!outcome_of_meta(piece)) return bad_reply();
            break;
        default:
            return bad_reply();
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
    const bool stored = (op_ == op::Store && o == routed_outcome::Stored) || (op_ == op::Arith && o == routed_outcome::Number);
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
        case piece_kind::Error:
            return finish();  // gone again: the reply says CAS 0
        default:
            return bad_reply();
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
        case command::MetaSet: return reply_result::Stored;     // ... and HD
        case command::MetaDelete: return reply_result::Deleted;
        case command::MetaArithmetic: return reply_result::Number;
        default: return reply_result::Ok;
    }
}
}  // namespace

void backend_call::note_passthrough(const reply_piece& piece) {
    has_passthrough_result_ = true;
    passthrough_result_ = piece.kind == piece_kind::Error ? reply_result::Error : meta_reply_result(req_->cmd, piece.code);
}

reply_tally backend_call::tally() const {
    reply_tally t{};
    auto count = [&t](reply_result r, std::uint32_t n = 1) { t[static_cast<std::size_t>(r)] += n; };
    if (op_ == op::Retrieve || op_ == op::LeaseGet) {
        count(reply_result::Found, hits_);
        count(reply_result::Error, errors_);
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
        case routed_outcome::NonNumeric:
        case routed_outcome::ErrorLine: count(reply_result::Error); break;
        default: break;
    }
    return t;
}

// ---- failure ----------------------------------------------------------------

void backend_call::fail(call_failure why) {
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
}

}  // namespace ithaca::protocol
