// mcrouter's config preprocessor ("JSONM", its ConfigPreprocessor): a JSON
// config with comments, `macros` (macroDef with params and defaults,
// constDef), `vars`, `%name%` substitution in strings and keys, `@name(args)`
// calls of macros and of mcrouter's built-ins (@int, @str, @if, @select,
// @merge, @import, ..., and the object forms {"type": "foreach"}, transform,
// process), with mcrouter's escapes (\@ \% \( \) \, \\), expanded into plain
// JSON, as mcrouter expands it before it reads routes and pools.
//
// Lines: every value of the result carries the source line it came from.
// A value that replaced something in the file (a call, a %var%) takes the
// line of what it replaced, which is what mcrouter's metadata map gives
// (it copies the parse's position of an object member onto the member's
// expanded value); the values inside a macro's result, which mcrouter's map
// does not know, keep the lines of the macro's definition. Values imported
// with @import carry the line of the @import call.
//
// Internal to the config library (mcrouter_reader.cc; the unit test).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "jsonm_value.h"

namespace ithaca::config::jsonm {

struct options {
  // Constants every macro sees (mcrouter's global params: service-name, ...).
  std::map<std::string, value> globals;
  // @import(path): the text at `path`; throws (any std::exception) when it
  // cannot be read. None: every @import fails (or takes its default).
  std::function<std::string(const std::string& path)> import;
  // mcrouter's nestedLimit: how deep macros and values may nest.
  size_t nested_limit = 250;
};

// Parses `text` (JSON with comments and macros) and expands it: the
// top-level `macros` are defined (and removed), the rest expanded. Throws
// error with the message mcrouter would give (each enclosing call and
// property named) and the line of the innermost value it was expanding.
value expand_config(std::string_view text, const options& opts);

// The same for a value already parsed.
value expand_config(value config, const options& opts);

// True when the text may need the preprocessor: it has `"macros"` or
// `"consts"` keys, or a string with `@` or `%`. A config without any of them
// expands to itself, and keeps the plain reader's path.
bool may_use_jsonm(std::string_view text);

}  // namespace ithaca::config::jsonm
