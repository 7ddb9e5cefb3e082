// Routes that answer without a server: `null` (mcrouter's NullRoute: a get
// misses, a store is NOT_STORED, the rest NOT_FOUND) and `error` (mcrouter's
// ErrorRoute: every request gets its error line, SERVER_ERROR or CLIENT_ERROR). Both answer into
// the result, so any composite may hold them (a failover's last resort, an
// operation selector that refuses deletes).
#include <array>
#include <string>
#include <string_view>

#include "route.h"
#include "route_kind.h"
#include "route_kind_reader.h"
#include "route_util.h"

namespace ithaca::route {

namespace {

class null_route final : public route {
 public:
  explicit null_route(std::string name) : route(std::move(name)) {}
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "null"; }
};

class error_route final : public route {
 public:
  // `line`: the whole reply line, "SERVER_ERROR ..." or "CLIENT_ERROR ...".
  error_route(std::string name, std::string line);
  dispatch_status dispatch(request_slot& slot, dispatch_env& env) const override;
  const char* kind() const override { return "error"; }
  // mcrouter's "error|log|mc_res_local_error|MESSAGE" (the result ithaca
  // gives; logging as mcrouter's default).
  std::string handle_name() const override {
    std::string_view message = line_;
    if (message.starts_with("SERVER_ERROR ")) message.remove_prefix(13);
    std::string out = "error|log|mc_res_local_error";
    if (!message.empty()) out.append("|").append(message);
    return out;
  }

 private:
  std::string line_;
};

}  // namespace

dispatch_status null_route::dispatch(request_slot& slot, dispatch_env&) const {
  counters().requests.fetch_add(1, std::memory_order_relaxed);
  default_reply(slot.req, slot.result);
  return dispatch_status::Pending;  // no calls: ready at once, in order
}

error_route::error_route(std::string name, std::string line) : route(std::move(name)), line_(std::move(line)) {}

dispatch_status error_route::dispatch(request_slot& slot, dispatch_env&) const {
  counters().requests.fetch_add(1, std::memory_order_relaxed);
  refuse(slot.req, slot.result, line_, protocol::binary_status::InternalError);
  return dispatch_status::Pending;  // no calls: ready at once, in order
}

// ---- the kinds: null takes nothing; error its message.

namespace {

// mcrouter's error results (carbon's Result from mc_res_ooo on, without
// mc_res_waiting: what its ErrorRoute takes), each with the line mcrouter's
// ascii server sends for it when the route has no `response`
// (AsciiSerialized.cpp errorResultStr).
struct error_result {
  const char* name;
  const char* line;
};
constexpr error_result kErrorResults[] = {
    {"mc_res_local_error", "SERVER_ERROR local error"},  // first: the default
    {"mc_res_ooo", "SERVER_ERROR out of order"},
    {"mc_res_timeout", "SERVER_ERROR timeout"},
    {"mc_res_connect_timeout", "SERVER_ERROR connection timeout"},
    {"mc_res_connect_error", "SERVER_ERROR connection error"},
    {"mc_res_busy", "SERVER_ERROR 307 busy"},
    {"mc_res_try_again", "SERVER_ERROR 302 try again"},
    {"mc_res_shutdown", "SERVER_ERROR 301 shutdown"},
    {"mc_res_tko", "SERVER_ERROR unavailable"},
    {"mc_res_bad_command", "CLIENT_ERROR bad command"},
    {"mc_res_bad_key", "CLIENT_ERROR bad key"},
    {"mc_res_bad_flags", "CLIENT_ERROR bad flags"},
    {"mc_res_bad_exptime", "CLIENT_ERROR bad exptime"},
    {"mc_res_bad_lease_id", "CLIENT_ERROR bad lease_id"},
    {"mc_res_bad_cas_id", "CLIENT_ERROR bad cas_id"},
    {"mc_res_bad_value", "SERVER_ERROR bad value"},
    {"mc_res_aborted", "SERVER_ERROR aborted"},
    {"mc_res_client_error", "CLIENT_ERROR"},
    {"mc_res_remote_error", "SERVER_ERROR remote error"},
    {"mc_res_deadline_exceeded", "SERVER_ERROR request deadline exceeded"},
    {"mc_res_permission_denied", "SERVER_ERROR permission denied"},
    {"mc_res_hot_key", "SERVER_ERROR hot key"},
    {"mc_res_overloaded", "SERVER_ERROR overloaded"},
};
constexpr auto kErrorResultNames = [] {
  std::array<const char*, std::size(kErrorResults)> names{};
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = kErrorResults[i].name;
  return names;
}();
constexpr int kErrorClientError = 17;  // mc_res_client_error: its text follows CLIENT_ERROR
static_assert(std::string_view(kErrorResults[kErrorClientError].name) == "mc_res_client_error");

struct error_options final : config::route_options {
  std::string message;          // "": the result's own line (YAML: "SERVER_ERROR error route")
  int result = 0;               // kErrorResults
  bool enable_logging = false;  // mcrouter's; ithaca logs no error route replies
  bool mcrouter = false;        // read from an mcrouter file (what no message means)
};

constexpr config::option_spec kErrorOptions[] = {
    config::text_option<&error_options::message>("message", "response",
                                                 "the text after \"SERVER_ERROR \" in the reply, one line"),
    config::choice_option<&error_options::result>(
        "result", "result", kErrorResultNames,
        "mcrouter's error result (mc_res_busy, ...): without a message its line (SERVER_ERROR 307 busy); "
        "mc_res_client_error makes the message a CLIENT_ERROR"),
    config::flag_option<&error_options::enable_logging>(nullptr, "enable_logging", "mcrouter's: log each reply"),
};

void finish_error(config::route_kind_reader& reader, config::route_config& r) {
  const auto& o = config::options_of<error_options>(r);
  const bool yaml = reader.format() == config::route_format::Yaml;
  if (o.message.find_first_of("\r\n") != std::string::npos) {
    if (yaml) {
      reader.fail_at("message", "message: one line, without CR or LF");
    } else {
      reader.fail("ErrorRoute: response has a line break");
    }
  }
}

const route* build_null(tree_builder& b, const config::route_config& r) { return b.add<null_route>(b.name_of(r)); }

// The reply line, as mcrouter's ascii server writes it: its result's own
// line without a message, else "SERVER_ERROR message" ("CLIENT_ERROR
// message" for mc_res_client_error).
std::string error_line(const error_options& o) {
  if (o.message.empty()) {
    return o.mcrouter || o.result != 0 ? kErrorResults[o.result].line : "SERVER_ERROR error route";
  }
  if (o.message.starts_with("SERVER_ERROR") || o.message.starts_with("CLIENT_ERROR")) return o.message;
  return (o.result == kErrorClientError ? "CLIENT_ERROR " : "SERVER_ERROR ") + o.message;
}

const route* build_error(tree_builder& b, const config::route_config& r) {
  return b.add<error_route>(b.name_of(r), error_line(config::options_of<error_options>(r)));
}

constexpr config::route_kind_info kNullInfo{
    "null", "NullRoute", "answers as if nothing were there (a get misses, a store is NOT_STORED)",
    {},     {},          [](config::route_format) { return std::make_shared<config::route_options>(); },
};
constexpr config::route_kind_info kErrorInfo{
    "error",
    "ErrorRoute",
    "answers every request with its SERVER_ERROR line",
    {},
    kErrorOptions,
    [](config::route_format f) -> std::shared_ptr<config::route_options> {
      auto o = std::make_shared<error_options>();
      o->mcrouter = f == config::route_format::Mcrouter;
      return o;
    },
    config::route_kind_info::collapse::None,
    finish_error,
    "response",
};

}  // namespace

extern constinit const kind_module kNullKind{kNullInfo, build_null};
extern constinit const kind_module kErrorKind{kErrorInfo, build_error};

}  // namespace ithaca::route
