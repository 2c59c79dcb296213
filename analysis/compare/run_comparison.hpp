// SPDX-License-Identifier: MIT
// `commprof compare`'s arithmetic: two runs' metrics side by side, whether each difference is
// beyond step-to-step noise, and which of the user's thresholds it crosses.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "analysis/compare/run_metrics.hpp"

namespace commprof {

/// A regression threshold as typed: "step>+5%", "busbw<-3%", "overlap<-2pp",
/// "busbw[dp]<-10%". The metric is a family (every metric of it) or family[label] (one).
/// `>` fires when the change is above the limit, `<` when below. % is relative to the base;
/// pp (percentage points) is the difference of two ratios and only applies to ratio families.
struct Threshold {
  std::string text;
  std::string family;
  std::string label;  ///< empty: every metric of the family
  bool above = true;  ///< '>' (true) or '<'
  double limit = 0.0;
  bool points = false;  ///< pp instead of %
  bool matches(const RunMetric& m) const {
    return m.family == family && (label.empty() || m.label == label);
  }
};

/// Parses one threshold; throws ConfigError naming the text and what is wrong in it.
Threshold parse_threshold(const std::string& text);

struct MetricComparison {
  RunMetric base_metric, new_metric;  ///< family, label and unit from whichever exists
  bool in_base = false, in_new = false;
  double delta = 0.0;              ///< new − base, in the metric's unit (both present)
  std::optional<double> relative;  ///< delta / base; empty when base is 0
  /// Two standard errors of the difference of the two means (Welch): a change inside it is
  /// within the step-to-step noise. Empty when either run lacks a spread.
  std::optional<double> noise;
  bool beyond_noise() const { return noise && std::abs(delta) > *noise; }
  bool worse() const { return base_metric.higher_is_better ? delta < 0 : delta > 0; }
  std::vector<std::string> crossed;  ///< the thresholds (as typed) this change crosses
};

struct Comparison {
  RunMetrics base, next;
  std::vector<MetricComparison> rows;  ///< base's order, then metrics only the new run has
  std::vector<Threshold> thresholds;
  std::vector<std::string> unmatched;  ///< thresholds that matched no metric of both runs
  int crossed = 0;                     ///< rows with at least one threshold crossed
};

Comparison compare_runs(RunMetrics base, RunMetrics next, const std::vector<Threshold>& thresholds);

}  // namespace commprof
