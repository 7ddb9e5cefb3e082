// Routes that answer without a server: `null` (mcrouter's NullRoute: a get
// misses, a store is NOT_STORED, the rest NOT_FOUND) and `error` (mcrouter's
// ErrorRoute: every request gets its SERVER_ERROR line). Both answer into
// the result, so any composite may hold them (a failover's last resort, an
// operation selector that refuses deletes).
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
  // `message`: the line after "SERVER_ERROR " (or a whole error line).
  error_route(std::string name, std::string message);
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

error_route::error_route(std::string name, std::string message) : route(std::move(name)) {
  const bool whole = message.starts_with("SERVER_ERROR") || message.starts_with("CLIENT_ERROR");
  line_ = whole ? std::move(message) : "SERVER_ERROR " + message;
}

dispatch_status error_route::dispatch(request_slot& slot, dispatch_env&) const {
  counters().requests.fetch_add(1, std::memory_order_relaxed);
  refuse(slot.req, slot.result, line_, protocol::binary_status::InternalError);
  return dispatch_status::Pending;  // no calls: ready at once, in order
}

// ---- the kinds: null takes nothing; error its message.

namespace {

// mcrouter's results of an ErrorRoute's reply that ithaca gives: its
// SERVER_ERROR line is mc_res_local_error.
constexpr const char* kResults[] = {"mc_res_local_error"};
struct error_options final : config::route_options {
  std::string message;          // "" = "error route"
  int result = 0;               // kResults: mcrouter's
  bool enable_logging = false;  // mcrouter's; ithaca logs no error route replies
};

constexpr config::option_spec kErrorOptions[] = {
    config::text_option<&error_options::message>("message", "response",
                                                 "the text after \"SERVER_ERROR \" in the reply, one line"),
    config::choice_option<&error_options::result>(nullptr, "result", kResults,
                                                  "mcrouter's result of the reply (ithaca's SERVER_ERROR line)"),
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

const route* build_error(tree_builder& b, const config::route_config& r) {
  const std::string& message = config::options_of<error_options>(r).message;
  return b.add<error_route>(b.name_of(r), message.empty() ? std::string("error route") : message);
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
    [](config::route_format) -> std::shared_ptr<config::route_options> { return std::make_shared<error_options>(); },
    config::route_kind_info::collapse::None,
    finish_error,
    "response",
};

}  // namespace

extern constinit const kind_module kNullKind{kNullInfo, build_null};
extern constinit const kind_module kErrorKind{kErrorInfo, build_error};

}  // namespace ithaca::route
