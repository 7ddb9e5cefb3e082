#include "introspect_info.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <map>
#include <utility>

#include "pool_route.h"

namespace ithaca::route {

namespace {

// JSON as folly's pretty, key-sorted serializer prints it (two spaces a
// level, "key": value, [] and {} when empty), for the values these answers
// hold: strings, lists of strings, values already JSON.
std::string info_json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out.push_back(kHex[(c >> 4) & 0xf]);
      out.push_back(kHex[c & 0xf]);
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

std::string info_json_list(const std::vector<std::string>& items, int indent) {
  if (items.empty()) return "[]";
  const std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  std::string out = "[\n";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += pad + info_json_string(items[i]) + (i + 1 < items.size() ? ",\n" : "\n");
  }
  return out + std::string(static_cast<std::size_t>(indent), ' ') + "]";
}

// An object of values already JSON, sorted by key.
std::string info_json_object(std::map<std::string, std::string> fields) {
  if (fields.empty()) return "{}";
  std::string out = "{\n";
  std::size_t i = 0;
  for (const auto& [k, v] : fields) {
    out += "  " + info_json_string(k) + ": " + v + (++i < fields.size() ? ",\n" : "\n");
  }
  return out + "}";
}

const proxy::pool* info_pool_named(const route_tree* tree, std::string_view name) {
  if (tree == nullptr) return nullptr;
  for (const auto& p : tree->pools()) {
    if (p->name() == name) return p.get();
  }
  return nullptr;
}

std::string info_options(const std::vector<std::string_view>& args, const commands::server_context& ctx) {
  if (args.size() > 1) return "ERROR: options: 0 or 1 args expected";
  const commands::service_info* info = ctx.info;
  if (args.size() == 1) {
    // mcrouter's option dictionary holds its version too.
    if (args[0] == "version") return std::string(ctx.version) + " ithaca";
    if (info != nullptr) {
      for (const auto& [name, value] : info->options) {
        if (name == args[0]) return value;
      }
    }
    return "ERROR: options: option " + std::string(args[0]) + " not found";
  }
  std::string out;
  if (info != nullptr) {
    for (const auto& [name, value] : info->options) out += name + " " + value + "\n";
  }
  if (!out.empty()) out.pop_back();  // mcrouter strips the last newline
  return out;
}

std::string info_verbosity(const std::vector<std::string_view>& args, const commands::server_context& ctx) {
  if (args.empty()) return std::to_string(ctx.stats.verbosity());
  if (args.size() > 1) return "ERROR: expected at most 1 argument, got " + std::to_string(args.size());
  std::uint32_t level = 0;
  const std::string_view a = args[0];
  const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), level);
  if (ec != std::errc() || end != a.data() + a.size()) {
    return "ERROR: verbosity: not a level: " + std::string(a);
  }
  const std::uint32_t before = ctx.stats.verbosity();
  ctx.stats.set_verbosity(level);
  return std::to_string(before) + " -> " + std::to_string(level);
}

std::string info_pools(const route_tree* tree) {
  std::map<std::string, std::string> fields;
  if (tree != nullptr) {
    for (const auto& p : tree->pools()) {
      std::vector<std::string> names;
      for (std::size_t i = 0; i < p->servers().size(); ++i) names.push_back(pool_destination_name(*p, i));
      fields[p->name()] = info_json_list(names, 2);
    }
  }
  return info_json_object(std::move(fields));
}

}  // namespace

std::optional<std::string> service_info_answer(std::string_view cmd, const std::vector<std::string_view>& args,
                                               const route_tree* tree, const commands::server_context& ctx) {
  const commands::service_info* info = ctx.info;
  const bool has_file = !ctx.config_file.empty();
  if (cmd == "version") return std::string(ctx.version) + " ithaca";
  if (cmd == "config_file") {
    if (!has_file) return "ERROR: no config file found!";
    return std::string(ctx.config_file);
  }
  if (cmd == "config_age") {
    const std::int64_t age = static_cast<std::int64_t>(std::time(nullptr)) - ctx.config_loaded_at;
    return std::to_string(age < 0 ? 0 : age);
  }
  if (cmd == "config_md5_digest") {
    if (info == nullptr || info->md5.empty()) return "ERROR: no config md5 digest found!";
    return info->md5;
  }
  if (cmd == "config_sources_info") {
    std::map<std::string, std::string> fields;
    if (info != nullptr && !info->md5.empty()) {
      fields["config_file"] = info_json_string(info->config_file);
      fields["mcrouter_config"] = info_json_string(info->md5);
    }
    return info_json_object(std::move(fields));
  }
  if (cmd == "preprocessed_config") {
    if (info == nullptr || !has_file) return "ERROR: Can not load config from " + std::string(ctx.config_file);
    std::string text = info->preprocessed;
    if (!text.empty() && text.back() == '\n') text.pop_back();  // mcrouter strips the last newline
    return text;
  }
  if (cmd == "options") return info_options(args, ctx);
  if (cmd == "hostid") return std::to_string(info != nullptr ? info->hostid : 0);
  if (cmd == "pools") return info_pools(tree);
  if (cmd == "verbosity") return info_verbosity(args, ctx);
  if (cmd == "global_params") {
    std::map<std::string, std::string> fields;
    if (info != nullptr) fields.insert(info->global_params.begin(), info->global_params.end());
    return info_json_object(std::move(fields));
  }
  if (cmd == "failure_domains") {
    if (args.size() != 1) return "ERROR: failure_domains: 1 arg expected";
    std::map<std::string, std::string> fields;
    if (const proxy::pool* p = info_pool_named(tree, args[0])) {
      for (const auto& s : p->servers()) fields[s->address()] = info_json_string("0()");
    }
    return info_json_object(std::move(fields));
  }
  if (cmd == "get_bucket") {
    if (args.size() != 1) return "ERROR: get_bucket: 1 arg (key) expected";
    return std::string();  // no bucketized route records a bucket
  }
  return std::nullopt;
}

}  // namespace ithaca::route
