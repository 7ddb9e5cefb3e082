// Client authentication as the request layer sees it (memcached -S and -Y):
// a connection's own state, and who checks a user's password.
//
// The state belongs to one client connection (server/client.h keeps it in
// the connection, never in a session or a worker), so one client's login
// never lets another in. The tables the passwords are checked against are
// the server's (server/auth_store.h), re-read on SIGHUP.
#pragma once

#include <string_view>

namespace ithaca::commands {

// One connection's authentication. [its worker; only the session serving it]
struct conn_auth {
  // -Y: the token `set` was right; -S: SASL PLAIN said so. Until then a -Y
  // connection gets "CLIENT_ERROR unauthenticated" and a -S one "Auth
  // failure." (and is closed) for any command but SASL's and version.
  bool authenticated = false;
  // -S: SASL_AUTH was answered "continue"; a SASL_STEP may finish it.
  bool sasl_started = false;
};

// Checks SASL PLAIN's user and password against the running password file.
// [any worker; takes only a leaf lock for one pointer copy; never suspends]
class sasl_checker {
 public:
  virtual ~sasl_checker() = default;
  virtual bool check_sasl(std::string_view user, std::string_view password) const = 0;
};

}  // namespace ithaca::commands
