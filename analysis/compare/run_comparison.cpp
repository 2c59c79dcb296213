// SPDX-License-Identifier: MIT
#include "analysis/compare/run_comparison.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string families_list() {
  std::string out;
  for (const std::string& f : run_metric_families()) out += (out.empty() ? "" : ", ") + f;
  return out;
}

// The change a threshold measures: % of the base, or percentage points of a ratio.
double change_for(const Threshold& t, const MetricComparison& c) {
  if (t.points) return 100.0 * c.delta;
  if (c.relative) return 100.0 * *c.relative;
  if (c.delta == 0) return 0.0;
  return c.delta > 0 ? std::numeric_limits<double>::infinity()
                     : -std::numeric_limits<double>::infinity();
}

}  // namespace

Threshold parse_threshold(const std::string& text) {
  auto fail = [&](const std::string& why) {
    return ConfigError("invalid --fail-if '" + text + "': " + why +
                       " (expected METRIC>LIMIT or METRIC<LIMIT, LIMIT a signed number and % or "
                       "pp, e.g. 'step>+5%', 'busbw[dp]<-3%', 'overlap<-2pp')");
  };
  Threshold t;
  t.text = text;
  const auto op = text.find_first_of("<>");
  if (op == std::string::npos) throw fail("no < or >");
  t.above = text[op] == '>';
  std::string metric = trim(text.substr(0, op));
  const auto open = metric.find('[');
  if (open != std::string::npos) {
    if (metric.back() != ']') throw fail("a label opened with [ must end with ]");
    t.label = metric.substr(open + 1, metric.size() - open - 2);
    metric = trim(metric.substr(0, open));
    if (t.label.empty()) throw fail("empty label []");
  }
  if (metric.empty()) throw fail("no metric before " + std::string(1, text[op]));
  const auto& families = run_metric_families();
  if (std::find(families.begin(), families.end(), metric) == families.end()) {
    throw fail("unknown metric '" + metric + "'; the metrics are " + families_list());
  }
  t.family = metric;
  const std::string limit = trim(text.substr(op + 1));
  if (limit.empty()) throw fail("no limit after " + std::string(1, text[op]));
  const char* begin = limit.c_str();
  char* end = nullptr;
  errno = 0;
  t.limit = std::strtod(begin, &end);
  if (end == begin || errno == ERANGE || !std::isfinite(t.limit)) throw fail("no number");
  const std::string unit = trim(end);
  if (unit == "%") {
    t.points = false;
  } else if (unit == "pp") {
    if (!is_ratio_family(t.family)) {
      throw fail("pp (percentage points) applies to ratios (overlap, hidden), not to '" + t.family +
                 "'; use %");
    }
    t.points = true;
  } else {
    throw fail(unit.empty() ? "the limit has no unit" : "unknown unit '" + unit + "'");
  }
  return t;
}

Comparison compare_runs(RunMetrics base, RunMetrics next,
                        const std::vector<Threshold>& thresholds) {
  Comparison out;
  out.thresholds = thresholds;
  std::map<std::string, std::size_t> row_of;
  for (const RunMetric& m : base.metrics) {
    MetricComparison c;
    c.base_metric = c.new_metric = m;
    c.in_base = true;
    row_of[m.key()] = out.rows.size();
    out.rows.push_back(c);
  }
  for (const RunMetric& m : next.metrics) {
    const auto it = row_of.find(m.key());
    if (it == row_of.end()) {
      MetricComparison c;
      c.base_metric = c.new_metric = m;
      c.in_new = true;
      out.rows.push_back(c);
      continue;
    }
    MetricComparison& c = out.rows[it->second];
    c.new_metric = m;
    c.in_new = true;
  }
  std::vector<bool> threshold_used(thresholds.size(), false);
  for (MetricComparison& c : out.rows) {
    if (!(c.in_base && c.in_new)) continue;
    const RunMetric& b = c.base_metric;
    const RunMetric& n = c.new_metric;
    c.delta = n.value - b.value;
    if (b.value != 0) c.relative = c.delta / std::abs(b.value);
    if (b.spread && n.spread && b.samples >= 2 && n.samples >= 2) {
      const double se = std::sqrt(*b.spread * *b.spread / static_cast<double>(b.samples) +
                                  *n.spread * *n.spread / static_cast<double>(n.samples));
      c.noise = 2.0 * se;
    }
    for (std::size_t i = 0; i < thresholds.size(); ++i) {
      const Threshold& t = thresholds[i];
      if (!t.matches(b)) continue;
      threshold_used[i] = true;
      const double change = change_for(t, c);
      if (t.above ? change > t.limit : change < t.limit) c.crossed.push_back(t.text);
    }
    if (!c.crossed.empty()) ++out.crossed;
  }
  for (std::size_t i = 0; i < thresholds.size(); ++i) {
    if (!threshold_used[i]) out.unmatched.push_back(thresholds[i].text);
  }
  out.base = std::move(base);
  out.next = std::move(next);
  return out;
}

}  // namespace commprof
