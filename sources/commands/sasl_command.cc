// SASL on the binary protocol (memcached -S, proto_bin.c's SASL commands),
// with PLAIN as the one mechanism, checked against the password file as
// memcached built with --enable-sasl-pwdb checks it. What memcached does
// through Cyrus SASL, and so what a client sees:
//  - SASL_LIST_MECHS: the mechanisms, space-separated ("PLAIN");
//  - SASL_AUTH PLAIN with the client's message: "Authenticated" (status 0)
//    or "Auth failure." (0x20); without one, "continue" (0x21, empty), and
//    the message comes in a SASL_STEP;
//  - an unknown mechanism, a SASL_STEP with no exchange under way, a message
//    that is not PLAIN's: "Auth failure.".
// Every one of the three starts the connection's authentication over
// (memcached's init_sasl_conn clears `authenticated`, even to list the
// mechanisms). An answer, right or wrong, counts in auth_cmds; a wrong one
// in auth_errors too; "continue" in neither.
// [a client coroutine on its worker; no lock of its own, never suspends]
#include <algorithm>
#include <cctype>

#include "binary_format.h"
#include "reply.h"
#include "sasl_plain.h"
#include "server_commands.h"

namespace ithaca::commands {

namespace {

using protocol::binary_status;
using protocol::command;

constexpr std::string_view kAuthenticated = "Authenticated";  // memcached's body on success

bool is_plain(std::string_view mech) {
  constexpr std::string_view kPlain = "PLAIN";
  return std::equal(mech.begin(), mech.end(), kPlain.begin(), kPlain.end(),
                    [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; });
}

// PLAIN's message checked; the answer written and counted.
exec_action finish(const protocol::request& req, protocol::out_buffer& out, server_context& ctx, bool ok) {
  ctx.counters.auth_cmds.add();
  if (ok) {
    ctx.auth->authenticated = true;
    protocol::encode_binary(out, req.opcode, req.opaque, binary_status::NoError, 0, {}, {}, kAuthenticated);
  } else {
    ctx.counters.auth_errors.add();
    protocol::encode_binary_error(out, req, binary_status::AuthError);
  }
  return exec_action::Continue;
}

// Cyrus's PLAIN: three parts; an authorization identity other than the
// authenticated one is refused (no proxy policy is configured).
bool plain_ok(std::string_view message, const sasl_checker& check) {
  protocol::sasl_plain_message m;
  if (!protocol::split_sasl_plain(message, m) || m.authcid.empty()) return false;
  if (!m.authzid.empty() && m.authzid != m.authcid) return false;
  return check.check_sasl(m.authcid, m.password);
}

}  // namespace

bool allowed_unauthenticated(uint8_t op) {
  using protocol::opcode;
  switch (static_cast<opcode>(op)) {
    case opcode::SaslListMechs:
    case opcode::SaslAuth:
    case opcode::SaslStep:
    case opcode::Version: return true;
    default: return false;
  }
}

exec_action execute_sasl(const protocol::request& req, protocol::out_buffer& out, server_context& ctx) {
  conn_auth& a = *ctx.auth;
  a.authenticated = false;
  switch (req.cmd) {
    case command::SaslListMechs:
      protocol::encode_binary(out, req.opcode, req.opaque, binary_status::NoError, 0, {}, {},
                              protocol::kSaslMechanisms);
      return exec_action::Continue;
    case command::SaslAuth:
      a.sasl_started = false;
      if (!is_plain(req.key())) return finish(req, out, ctx, false);
      if (req.value.empty()) {
        // PLAIN without the initial response: the server asks for it.
        a.sasl_started = true;
        protocol::encode_binary(out, req.opcode, req.opaque, binary_status::AuthContinue, 0, {}, {}, {});
        return exec_action::Continue;
      }
      return finish(req, out, ctx, plain_ok(req.value, *ctx.sasl));
    case command::SaslStep: {
      const bool started = a.sasl_started;
      a.sasl_started = false;
      return finish(req, out, ctx, started && plain_ok(req.value, *ctx.sasl));
    }
    default: protocol::encode_binary_error(out, req, binary_status::UnknownCommand); return exec_action::Continue;
  }
}

}  // namespace ithaca::commands
