// `slabs reassign SRC DST` and `slabs automove ...`, answered as memcached 1.6.45 answers
// them (proto_text.c process_slabs_command / process_slabs_automove_command; slabs_mover.c
// do_slabs_reassign), with its parsing: the sub-command may be any prefix of its word
// ("slabs re 1 2" reassigns), numbers are mcmc's (digits only, a '-' for signed ones), and
// a last word "noreply" silences every answer, errors included.
//
// What they mean here: memcached's memory is pages owned by size classes, and a page
// moves from one class to another only by a reassign (or the automover doing one).
// ithaca's memory is one region shared by every class (item_region.h) (slab_classes.h: the classes
// are only how it counts): an item of any class takes memory where it frees, the moment it
// is stored, so what a reassign asks for (room in DST at SRC's expense) is always already
// so. A reassign of valid, distinct classes therefore answers OK at once: nothing is moved,
// nothing evicted, no item's CAS changes, and there is no mover to be BUSY. The checks
// that do mean something are memcached's: the same class twice is SAME, a class id outside
// 0..largest is BADCLASS (0 is memcached's global page pool, a valid destination; -1 as
// source means "any class", which is as true here). Never NOSPARE: no class holds pages,
// so none runs out of them. automove 0|1|2, ratio, freeratio and window are validated as
// memcached does and accepted; with nothing to move they change nothing.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "number.h"
#include "reply.h"
#include "command_words.h"
#include "server_commands.h"
#include "text_replies.h"

namespace ithaca::commands {

namespace {

constexpr std::string_view kOk = "OK";
constexpr size_t kMaxDoubleChars = 31;  // mc_toktod's buffer
constexpr uint32_t kWindowMin = 3;
constexpr uint32_t kWindowMax = 1800;

// mc_toktod: the token copied into a 32-byte buffer, then safe_strtod.
std::optional<double> token_double(std::string_view t) {
  if (t.size() > kMaxDoubleChars) return std::nullopt;
  return protocol::parse_f64(t);
}

std::string_view reassign(std::string_view src_word, std::string_view dst_word, unsigned largest) {
  const auto src = protocol::parse_strict_i32(src_word);
  const auto dst = protocol::parse_strict_i32(dst_word);
  if (!src || !dst) return protocol::kReplyBadFormat;
  if (*src == *dst) return protocol::kReplySlabsSame;
  // -1: memcached picks a source class itself; any class will do here.
  const bool src_ok = *src == -1 || (*src >= 0 && static_cast<unsigned>(*src) <= largest);
  const bool dst_ok = *dst >= 0 && static_cast<unsigned>(*dst) <= largest;
  if (!src_ok || !dst_ok) return protocol::kReplySlabsBadClass;
  return kOk;  // why at once, see the top of this file
}

// `w` are the words after "slabs"; w[0] is a prefix of "automove", w.size() >= 2.
std::string_view automove(const std::vector<std::string_view>& w) {
  const std::string_view sub = w[1];
  if (is_prefix_of(sub, "ratio") || is_prefix_of(sub, "freeratio")) {
    return w.size() < 3 || !token_double(w[2]) ? protocol::kReplyError : kOk;
  }
  if (is_prefix_of(sub, "window")) {
    const auto window = w.size() < 3 ? std::nullopt : protocol::parse_strict_u32(w[2]);
    if (!window) return protocol::kReplyBadFormat;
    if (*window < kWindowMin || *window > kWindowMax) return protocol::kReplySlabsWindow;
    return kOk;
  }
  const auto level = protocol::parse_strict_u32(sub);
  if (!level) return protocol::kReplyBadFormat;
  return *level <= 2 ? kOk : protocol::kReplyError;
}

}  // namespace

exec_action execute_slabs(const protocol::request& req, protocol::out_buffer& out, server_context& ctx) {
  // memcached's tokens: "slabs" and then these words.
  const std::vector<std::string_view> w = words_of(req.args);
  const bool noreply = !w.empty() && w.back() == "noreply";
  std::string_view reply = protocol::kReplyError;
  if (w.size() == 3 && is_prefix_of(w[0], "reassign")) {
    reply = reassign(w[1], w[2], ctx.stats.slab_class_largest());
  } else if (w.size() >= 2 && is_prefix_of(w[0], "automove")) {
    reply = automove(w);
  }
  if (!noreply) protocol::encode_ascii_line(out, reply);
  return exec_action::Continue;
}

}  // namespace ithaca::commands
