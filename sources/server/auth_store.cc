#include "auth_store.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "machinarium.h"

namespace ithaca::server {

namespace {

std::string host_name() {
  char name[1025] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
}

}  // namespace

auth_store::auth_store() : cell_(std::make_shared<const tables>()) {}

bool auth_store::open(const config::server_config& server, std::string* error, std::vector<std::string>* notes) {
  auto t = std::make_shared<tables>();
  if (!server.auth_file.empty() && !config::load_ascii_auth(server.auth_file, t->ascii, error, notes)) return false;
  if (server.sasl && !config::load_sasl_pwdb(server.sasl_pwdb, t->sasl, error)) return false;
  ascii_path_ = server.auth_file;
  sasl_path_ = server.sasl ? server.sasl_pwdb : std::string();
  realm_ = host_name();
  cell_.publish(std::move(t));
  return true;
}

bool auth_store::check_ascii(std::string_view user, std::string_view password) const {
  return cell_.load()->ascii.check(user, password);
}

// The user as memcached's Cyrus SASL hands it to the pwdb check ("alice" and
// "alice@HOST" both become "alice@HOST"), or without the realm.
bool auth_store::check_sasl(std::string_view user, std::string_view password) const {
  const std::shared_ptr<const tables> t = cell_.load();
  std::string_view base = user;
  if (!realm_.empty() && base.size() > realm_.size() + 1 && base.ends_with(realm_) &&
      base[base.size() - realm_.size() - 1] == '@') {
    base.remove_suffix(realm_.size() + 1);
  }
  if (base.find('@') == std::string_view::npos && !realm_.empty() &&
      t->sasl.check(std::string(base) + "@" + realm_, password)) {
    return true;
  }
  return t->sasl.check(base, password);
}

void auth_store::reload(mm::millis timeout, std::string_view trigger) {
  if (!ascii_enabled() && !sasl_enabled()) return;
  // The pool thread may outlive a timed-out wait: it owns what it touches.
  struct result {
    tables next;
    bool ascii_ok = false;
    bool sasl_ok = false;
    std::string ascii_error;
    std::string sasl_error;
    std::vector<std::string> notes;
  };
  auto r = std::make_shared<result>();
  mm::wait_status w = mm::blocking_call(
      [r, ascii = ascii_path_, sasl = sasl_path_] {
        if (!ascii.empty()) r->ascii_ok = config::load_ascii_auth(ascii, r->next.ascii, &r->ascii_error, &r->notes);
        if (!sasl.empty()) r->sasl_ok = config::load_sasl_pwdb(sasl, r->next.sasl, &r->sasl_error);
      },
      timeout);
  if (w != mm::wait_status::Ok) {
    spdlog::error("{}: the password files were not read within {} ms; the running ones stay", trigger, timeout);
    return;
  }
  const std::shared_ptr<const tables> running = cell_.load();
  auto next = std::make_shared<tables>();
  if (ascii_enabled()) {
    if (r->ascii_ok) {
      next->ascii = std::move(r->next.ascii);
      for (const std::string& n : r->notes) spdlog::warn("auth file {}: {}", ascii_path_, n);
      spdlog::info("{}: auth file {} reloaded ({} entries)", trigger, ascii_path_, next->ascii.entries.size());
    } else {
      next->ascii = running->ascii;
      spdlog::error("{}: {}; the running entries stay", trigger, r->ascii_error);
    }
  }
  if (sasl_enabled()) {
    if (r->sasl_ok) {
      next->sasl = std::move(r->next.sasl);
      spdlog::info("{}: sasl database {} reloaded", trigger, sasl_path_);
    } else {
      next->sasl = running->sasl;
      spdlog::error("{}: {}; the running entries stay", trigger, r->sasl_error);
    }
  }
  cell_.publish(std::move(next));
}

}  // namespace ithaca::server
