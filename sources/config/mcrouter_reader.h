// An mcrouter JSON config, read as it is (README "An mcrouter config"): its
// `pools`, `route` or `routes`, `named_handles`, the short forms
// ("PoolRoute|name", "Pool|name", "AllSyncRoute|Pool|name") and route objects
// with mcrouter's type and option names, mapped onto the same router_config
// ithaca's YAML gives. What ithaca cannot do as mcrouter would (JSONM macros,
// a route type or an option it lacks) is refused with file:line: message,
// never ignored. mcrouter's own defaults apply: Ch3 placement (WeightedCh3
// with `weights`), server_timeout 1 s, ascii, the hash stop "|#|".
// Internal to the config library (load.cc dispatches to it).
#pragma once

#include <string>
#include <string_view>

#include "config.h"
#include "yaml_section.h"

namespace ithaca::config {

// True for a file named *.json, or text whose first thing (after blanks and
// comments) is `{` followed by a double-quoted key: an mcrouter config, not
// ithaca's YAML (which starts with a bare key or a # comment) -- unless the
// object has one of ithaca's own sections (listen, server, cache, logging,
// replication): that is ithaca's config written as JSON.
bool looks_like_mcrouter_json(std::string_view text, std::string_view path);

// mcrouter's JSON allows `//` and `/* */` comments; yaml-cpp reads JSON once
// they are blanked. Returns `text` with every comment replaced by spaces
// (newlines kept, so line numbers stay right) and tabs outside strings by
// spaces; nothing inside a string is touched. False with *line (1-based)
// and *why on a comment left open or a `#` outside a string (an #include,
// which YAML would silently take for a comment).
bool blank_json_comments(std::string_view text, std::string& out, int* line, std::string* why);

// Reads the mcrouter config `text` into c.router (format "mcrouter").
// Errors go to ctx as file:line: message.
void read_mcrouter_config(const std::string& text, load_context& ctx, config& c);

}  // namespace ithaca::config
