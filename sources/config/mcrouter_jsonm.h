// mcrouter's preprocessor (jsonm_preprocessor.h) as ithaca runs it on an
// mcrouter config file: the global params mcrouter passes, @import of files
// beside the config, and errors as file:line: message. Internal to the
// config library (mcrouter_reader.cc, cli.cc's --preprocessed).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "jsonm_value.h"

namespace ithaca::config {

// The constants mcrouter gives every config (ProxyConfigBuilder's global
// params), with mcrouter's defaults where ithaca has no such setting:
// default-route "/././" (default-region ".", default-cluster "."),
// router-name and service-name "unknown", service-router-capable 0,
// router-info-name "Memcache", num-proxies (ithaca's workers), hostid (a
// 32-bit hash of this host's first address that is neither loopback nor
// link-local; mcrouter's hashes it differently, so the value differs).
// What of the command line reaches them: the worker count (-t), the default
// route (--route-prefix; "": mcrouter's "/././") and --config-params
// (name:value pairs, strings; a name mcrouter already sets keeps its value).
// This host's id (the `hostid` constant above); LatestRoute's order of
// servers is drawn from it. [any thread; reads the interfaces each call]
uint32_t mcrouter_hostid();

struct mcrouter_params {
  unsigned workers = 4;
  std::string default_route;
  std::vector<std::pair<std::string, std::string>> config_params;
};
std::map<std::string, jsonm::value> mcrouter_global_params(const mcrouter_params& p);

// Expands the mcrouter config `text` read from `path`. @import(p) reads the
// file p relative to path's folder ("file:p": p as given, absolute or
// relative to the working directory), as mcrouter's ConfigApi does; nothing
// refuses a path outside the folder (mcrouter does not). False with
// mcrouter's message (on one line) and the line of the file it is about
// (0: none). *imported (if given) gets the path of every file an @import
// asked for, read or not (one whose @import took its default may appear
// later: the config watch watches for it).
bool mcrouter_expand(const std::string& text, const std::string& path, const mcrouter_params& params, jsonm::value& out,
                     std::string* message, int* line, std::vector<std::string>* imported = nullptr);

}  // namespace ithaca::config
