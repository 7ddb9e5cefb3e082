// The Prometheus text exposition format (version 0.0.4): metric families,
// each with its HELP and TYPE lines once, then its samples together, in the
// order families were first added. Label values are escaped (\\, \", \n).
// A plain value type, filled and rendered by one thread (the metrics machine).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ithaca::metrics {

enum class metric_type { Counter, Gauge, Histogram };

using labels = std::vector<std::pair<std::string, std::string>>;

class prom_writer {
 public:
  // Adds one sample of family `family`. `suffix` is appended to the family's
  // name for the sample ("_bucket", "_sum", "_count" of a histogram). The
  // first sample of a family fixes its type and help.
  void add(std::string_view family, metric_type type, std::string_view help, const labels& l, double value,
           std::string_view suffix = {});

  // One histogram: cumulative counts per upper bound (in the metric's unit),
  // then +Inf (= count), _sum and _count.
  void histogram(std::string_view family, std::string_view help, const labels& l,
                 const std::vector<std::pair<double, uint64_t>>& cumulative, double sum, uint64_t count);

  std::string render() const;
  bool empty() const { return families_.empty(); }

 private:
  struct family {
    std::string name;
    metric_type type;
    std::string help;
    std::string samples;  // rendered sample lines
  };
  family& find(std::string_view name, metric_type type, std::string_view help);
  std::vector<family> families_;
};

// A number as the format writes it: integers without a fraction, others
// with enough digits to read back the same double; +Inf, -Inf, NaN.
std::string format_value(double v);
// Escapes a label value: backslash, double quote and line feed.
std::string escape_label(std::string_view v);

}  // namespace ithaca::metrics
