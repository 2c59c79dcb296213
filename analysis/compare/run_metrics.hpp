// SPDX-License-Identifier: MIT
// A run as a flat list of named metrics: what `commprof compare` sets side by side. Taken from a
// reduced Report (rank files) or from a report JSON (schema commprof.report v1) with the same
// result, so a CI job can keep either.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report.hpp"

namespace commprof {

enum class MetricUnit { kNanoseconds, kRatio, kGBps };

/// One metric of a run. `family` is what thresholds name: a per-rank field's (step, comp, comm,
/// mem, overlap, hidden, exposed, idle, busy: analysis/report_fields.hpp), busbw or straggler;
/// `label` tells metrics of one family apart (a communicator group such as "dp", or "allreduce
/// n=4 64 MiB"); empty when the family has one.
struct RunMetric {
  std::string family;
  std::string label;
  MetricUnit unit = MetricUnit::kNanoseconds;
  bool higher_is_better = false;
  double value = 0.0;
  /// The step-to-step standard deviation behind `value` (pooled over ranks: the root of the
  /// mean of the ranks' variances); empty when the run has fewer than two steps per rank or
  /// the metric is not a per-step mean.
  std::optional<double> spread;
  std::int64_t samples = 0;  ///< steps per rank behind `value` (the fewest of any rank)
  std::string note;          ///< e.g. which rank is the straggler
  std::string key() const { return label.empty() ? family : family + "[" + label + "]"; }
};

struct RunMetrics {
  std::string source;
  int ranks = 0;
  int steps = 0;  ///< measured steps of the rank with the fewest
  std::vector<RunMetric> metrics;
  std::vector<std::string> warnings;  ///< files that could not be read, and the like
};

/// Every family a threshold may name, in the order reports list them.
const std::vector<std::string>& run_metric_families();
/// True for families whose values are fractions (their thresholds may use pp).
bool is_ratio_family(const std::string& family);

/// The metrics of a reduced run.
RunMetrics run_metrics_from_report(const Report& report, const std::string& source);
/// The metrics of a report JSON's text. Throws Error naming `source` when it is not a
/// commprof.report v1 document or lacks a field the metrics need.
RunMetrics run_metrics_from_report_json(const std::string& text, const std::string& source);
/// A directory of rank files, rank files, or one report JSON (told apart by its "schema").
/// Throws Error when nothing in `path` can be read.
RunMetrics load_run_metrics(const std::string& path);

}  // namespace commprof
