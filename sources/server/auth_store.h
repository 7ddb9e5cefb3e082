// The password tables client authentication checks (memcached -Y and -S),
// read from their files at start and again on each SIGHUP.
//
// -Y's file: memcached reads it at start (an error ends the start, in its
// words) and again on SIGHUP, keeping the running entries when the new
// read fails; so does ithaca (logging why). -S's password database:
// memcached built with --enable-sasl-pwdb reads it at every authentication;
// ithaca reads it at start (an unreadable one ends the start) and on
// SIGHUP, so a worker never touches the file system. Either way the file
// need not be named in a config file: a SIGHUP without --config re-reads them.
//
// SASL users: memcached's Cyrus SASL hands its password check the user with
// "@" and the host name appended (the realm memcached gives it) when the
// client's has no "@", so a pwdb written for memcached reads
// "alice@HOST:password". Both that and the plain "alice:password" are taken,
// for a client that says "alice" or "alice@HOST".
//
// Threads: the pooler publishes (start, SIGHUP); client sessions on any
// worker read, only when a client authenticates: one copy of a shared_ptr
// under the snapshot cell's leaf mutex, never held across a suspension.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "auth.h"
#include "auth_files.h"
#include "config.h"
#include "machinarium.h"
#include "snapshot.h"

namespace ithaca::server {

class auth_store final : public commands::sasl_checker {
 public:
  auth_store();

  // Reads the files `server` names (server.auth_file with -Y, server.sasl_pwdb
  // with -S). False with *error: -Y's in memcached's words ("Could not open
  // authfile [F] for reading, error ..."). *notes: what memcached would drop
  // without a word. [main thread, before the workers start; blocking reads]
  bool open(const config::server_config& server, std::string* error, std::vector<std::string>* notes);

  bool ascii_enabled() const { return !ascii_path_.empty(); }
  bool sasl_enabled() const { return !sasl_path_.empty(); }
  // The files read ("" when off): what the config watcher also watches.
  const std::string& ascii_path() const { return ascii_path_; }
  const std::string& sasl_path() const { return sasl_path_; }

  // -Y: an entry with this user and password. [any worker]
  bool check_ascii(std::string_view user, std::string_view password) const;
  // -S: the pwdb has this user (with "@HOST" or without it) and password.
  // [any worker]
  bool check_sasl(std::string_view user, std::string_view password) const override;

  // A reload (SIGHUP, or a watched file changed: `trigger` starts its log
  // lines): reads the files again on the blocking pool (at most `timeout`),
  // and publishes what was read; a file that cannot be read is logged and
  // its running table stays. [pooler, the reload coroutine; suspends]
  void reload(mm::millis timeout, std::string_view trigger);

 private:
  struct tables {
    config::ascii_auth_table ascii;
    config::sasl_pwdb_table sasl;
  };
  std::string ascii_path_;  // "" = -Y off
  std::string sasl_path_;   // "" = -S off
  std::string realm_;       // gethostname(), as memcached gives Cyrus SASL
  snapshot_cell<tables> cell_;
};

}  // namespace ithaca::server
