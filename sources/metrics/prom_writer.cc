#include "prom_writer.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace ithaca::metrics {

namespace {
const char* type_name(metric_type t) {
  switch (t) {
    case metric_type::Counter: return "counter";
    case metric_type::Gauge: return "gauge";
    case metric_type::Histogram: return "histogram";
  }
  return "untyped";
}

// HELP text escapes only backslash and line feed.
std::string escape_help(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}
}  // namespace

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15) {
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    // Prefer the shortest form that reads back the same.
    for (int digits = 6; digits < 17; ++digits) {
      char shorter[40];
      std::snprintf(shorter, sizeof(shorter), "%.*g", digits, v);
      if (std::strtod(shorter, nullptr) == v) {
        return shorter;
      }
    }
  }
  return buf;
}

std::string escape_label(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

prom_writer::family& prom_writer::find(std::string_view name, metric_type type, std::string_view help) {
  for (family& f : families_) {
    if (f.name == name) return f;
  }
  families_.push_back(family{std::string(name), type, std::string(help), {}});
  return families_.back();
}

void prom_writer::add(std::string_view name, metric_type type, std::string_view help, const labels& l, double value,
                      std::string_view suffix) {
  family& f = find(name, type, help);
  std::string& s = f.samples;
  s.append(name).append(suffix);
  if (!l.empty()) {
    s += '{';
    for (size_t i = 0; i < l.size(); ++i) {
      if (i) s += ',';
      s.append(l[i].first).append("=\"").append(escape_label(l[i].second)).append("\"");
    }
    s += '}';
  }
  s += ' ';
  s += format_value(value);
  s += '\n';
}

void prom_writer::histogram(std::string_view name, std::string_view help, const labels& l,
                            const std::vector<std::pair<double, uint64_t>>& cumulative, double sum, uint64_t count) {
  labels with_le = l;
  with_le.emplace_back("le", "");
  for (const auto& [bound, n] : cumulative) {
    with_le.back().second = format_value(bound);
    add(name, metric_type::Histogram, help, with_le, static_cast<double>(n), "_bucket");
  }
  with_le.back().second = "+Inf";
  add(name, metric_type::Histogram, help, with_le, static_cast<double>(count), "_bucket");
  add(name, metric_type::Histogram, help, l, sum, "_sum");
  add(name, metric_type::Histogram, help, l, static_cast<double>(count), "_count");
}

std::string prom_writer::render() const {
  std::string out;
  for (const family& f : families_) {
    out.append("# HELP ").append(f.name).append(" ").append(escape_help(f.help)).append("\n");
    out.append("# TYPE ").append(f.name).append(" ").append(type_name(f.type)).append("\n");
    out += f.samples;
  }
  return out;
}

}  // namespace ithaca::metrics
