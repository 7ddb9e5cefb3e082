// The text exposition format: families grouped, escaping, numbers, histograms.
#include <doctest/doctest.h>

#include "prom_writer.h"

using namespace ithaca::metrics;

TEST_CASE("samples of a family stay together under one HELP and TYPE") {
  prom_writer w;
  w.add("a_total", metric_type::Counter, "A.", {{"k", "1"}}, 1);
  w.add("b", metric_type::Gauge, "B.", {}, 2.5);
  w.add("a_total", metric_type::Counter, "A.", {{"k", "2"}}, 3);
  CHECK(w.render() ==
        "# HELP a_total A.\n# TYPE a_total counter\na_total{k=\"1\"} 1\na_total{k=\"2\"} 3\n"
        "# HELP b B.\n# TYPE b gauge\nb 2.5\n");
}

TEST_CASE("label values and help are escaped") {
  prom_writer w;
  w.add("x", metric_type::Gauge, "line\\one\ntwo", {{"v", "a\"b\\c\nd"}}, 1);
  CHECK(w.render() == "# HELP x line\\\\one\\ntwo\n# TYPE x gauge\nx{v=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST_CASE("numbers: integers exact, fractions shortest, infinities") {
  CHECK(format_value(0) == "0");
  CHECK(format_value(18446744073709.0) == "18446744073709");
  CHECK(format_value(0.000048) == "4.8e-05");
  CHECK(format_value(1.5) == "1.5");
  CHECK(format_value(1.0 / 0.0) == "+Inf");
  CHECK(format_value(0.1 + 0.2) == "0.30000000000000004");
}

TEST_CASE("a histogram has cumulative buckets, +Inf, _sum and _count") {
  prom_writer w;
  w.histogram("lat_seconds", "L.", {{"p", "a"}}, {{0.001, 2}, {0.01, 5}}, 0.02, 6);
  CHECK(w.render() ==
        "# HELP lat_seconds L.\n# TYPE lat_seconds histogram\n"
        "lat_seconds_bucket{p=\"a\",le=\"0.001\"} 2\n"
        "lat_seconds_bucket{p=\"a\",le=\"0.01\"} 5\n"
        "lat_seconds_bucket{p=\"a\",le=\"+Inf\"} 6\n"
        "lat_seconds_sum{p=\"a\"} 0.02\n"
        "lat_seconds_count{p=\"a\"} 6\n");
}
