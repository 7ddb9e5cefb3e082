#include "server_commands.h"

#include "reply.h"
#include "text_replies.h"

namespace ithaca::commands {

namespace {

using protocol::ascii_status;
using protocol::binary_status;
using protocol::command;

// memcached's bounds for cache_memlimit, in megabytes.
constexpr uint32_t kMemlimitMinMb = 8;
constexpr uint32_t kMemlimitMaxMb = 1000000000;

void binary_ok(protocol::out_buffer& out, const protocol::request& req, std::string_view value = {}) {
  protocol::encode_binary(out, req.opcode, req.opaque, binary_status::NoError, 0, {}, {}, value);
}

exec_action binary_command(const protocol::request& req, protocol::out_buffer& out, server_context& ctx) {
  switch (req.cmd) {
    case command::Quit:
      if (!req.noreply) binary_ok(out, req);
      ctx.quit = true;
      return exec_action::Close;
    case command::Noop: binary_ok(out, req); return exec_action::Continue;
    case command::Version: binary_ok(out, req, ctx.version); return exec_action::Continue;
    case command::Stat: return execute_stats(req, out, ctx);
    case command::SaslListMechs:
    case command::SaslAuth:
    case command::SaslStep:
      if (ctx.sasl != nullptr && ctx.auth != nullptr) return execute_sasl(req, out, ctx);
      protocol::encode_binary_error(out, req, binary_status::UnknownCommand);
      return exec_action::Continue;
    default:
      // Verbosity: memcached 1.6.18 answers even a well-formed packet with
      // "Unknown command" and leaves its verbosity alone; so do we.
      protocol::encode_binary_error(out, req, binary_status::UnknownCommand);
      return exec_action::Continue;
  }
}

// cache_memlimit <megabytes>: sets the store's live memory limit (what a
// SIGHUP with a new cache.memory_limit also sets; the later of the two wins).
// Lowering it evicts through the next stores and GC sweeps, as memcached does.
void cache_memlimit(const protocol::request& req, protocol::out_buffer& out, server_context& ctx) {
  std::string_view reply;
  if (req.memlimit_mb < kMemlimitMinMb) {
    reply = protocol::kReplyMemlimitTooSmall;
  } else if (req.memlimit_mb > kMemlimitMaxMb) {
    reply = protocol::kReplyMemlimitNotBytes;
  } else if (!ctx.stats.set_memory_limit(uint64_t{req.memlimit_mb} << 20)) {
    reply = protocol::kReplyMemlimitFailed;  // past the item region's reservation
  }
  if (req.noreply) return;
  if (reply.empty()) return protocol::encode_ascii_status(out, ascii_status::Ok);
  protocol::encode_ascii_line(out, reply);
}

}  // namespace

void refuse_flush_all(const protocol::request& req, protocol::out_buffer& out, server_context& ctx) {
  if (req.proto == protocol::protocol_kind::Binary) {
    protocol::encode_binary_error(out, req, binary_status::AuthError);  // quiet or not
    return;
  }
  ctx.counters.cmd_flush.add();
  if (!req.noreply) protocol::encode_ascii_line(out, protocol::kReplyFlushNotAllowed);
}

exec_action execute_server_command(const protocol::request& req, protocol::out_buffer& out, server_context& ctx) {
  if (req.proto == protocol::protocol_kind::Binary) return binary_command(req, out, ctx);
  switch (req.cmd) {
    case command::Version: protocol::encode_ascii_version(out, ctx.version); break;
    case command::Verbosity:
      ctx.stats.set_verbosity(req.verbosity);
      if (!req.noreply) protocol::encode_ascii_status(out, ascii_status::Ok);
      break;
    case command::Stats: return execute_stats(req, out, ctx);
    case command::CacheMemlimit: cache_memlimit(req, out, ctx); break;
    case command::Slabs: return execute_slabs(req, out, ctx);
    case command::RefreshCerts: {
      // memcached: "OK", or the reason the files could not be loaded.
      std::string error;
      if (ctx.stats.refresh_certs(error)) {
        protocol::encode_ascii_status(out, ascii_status::Ok);
      } else {
        protocol::encode_ascii_line(out, error);
      }
      break;
    }
    case command::Watch:
    case command::Lru:
    case command::LruCrawler: return execute_admin(req, out, ctx);
    case command::Quit: ctx.quit = true; return exec_action::Close;
    case command::Shutdown:
      if (ctx.enable_shutdown) return exec_action::Shutdown;
      // memcached without -A, whatever the arguments.
      protocol::encode_ascii_line(out, protocol::kReplyShutdownDisabled);
      break;
    case command::MetaNoop:
      ctx.counters.cmd_meta.add();
      protocol::encode_meta(out, protocol::meta_code::MN, req, nullptr);
      break;
    default:
      // What memcached says to a command it does not know.
      protocol::encode_ascii_status(out, ascii_status::Error);
      break;
  }
  return exec_action::Continue;
}

}  // namespace ithaca::commands
