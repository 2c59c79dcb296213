// SPDX-License-Identifier: MIT
// Several measured runs of one source (the same model, workload, layout and options) made into
// one: every figure the projection takes from a run (compute rate per op class and per kind, host
// gaps, collectives' link-model points, the ranks' compute speeds, the overlap slowdown's factors)
// is the median of the runs' own figures.
//
// Why the median of each run's figure, not one figure over the pooled ops: on a shared machine a
// run's ops are not independent samples. What moves a run's rates is the run as a whole (the CPU
// share its ranks got, the cores they landed on), so every op of a slow run is slow together;
// pooling the ops weighs the runs by their op counts and lets one slow run pull every rate. The
// run is the unit that varies, so the runs' figures are the samples, and their median ignores one
// outlying run of three where a mean would move by a third of its distance.
#pragma once

#include <string>
#include <vector>

#include "workloads/prediction/overlap_slowdown.hpp"

namespace commprof {

struct MeasuredRun;

/// One figure combined over the source runs: the median the projection uses, and the runs'
/// range.
struct CombinedFigure {
  std::string name;  ///< "rate qkv.fwd/flop", "host gap COMP", …
  std::string unit;  ///< "TFLOP/s", "GB/s", "us", "x", "ratio"
  int runs = 0;      ///< runs that measured it
  double median = 0.0, min = 0.0, max = 0.0;
  /// Spread as max / min − 1 (figures that are positive: rates, times, speeds); false: max − min
  /// (a slowdown, which may be 0 or negative).
  bool relative = true;
  double spread() const;
};

/// The median of `v` (the mean of the two middle values of an even count); 0 when empty.
double median_of(std::vector<double> v);
/// A figure of `values` (one per run that measured it), with `scale` applied to every value.
CombinedFigure combined_figure(const std::string& name, const std::string& unit,
                               const std::vector<double>& values, double scale = 1.0,
                               bool relative = true);

/// Throws ConfigError unless `other` is a run of the same source as `first` (its configuration
/// apart from steps and op timing, and its hosts), naming the first field that differs and
/// both values. `first_name`, `other_name`: what the messages call them (their inputs).
void check_same_source(const MeasuredRun& first, const std::string& first_name,
                       const MeasuredRun& other, const std::string& other_name);

/// One run of `runs` (at least one; each a run of the same source, check_same_source), its
/// figures the median over them, each recorded in `combined`, and every run kept in `sources`.
/// One run is returned as it is.
MeasuredRun combine_runs(std::vector<MeasuredRun> runs);

/// The overlap slowdown of several runs, measured on each (one per run, in `each`): each factor
/// and alone rate the median over the runs that measured it, ops summed; the runs' figures
/// appended to `figures` where given.
OverlapSlowdown combine_slowdowns(const std::vector<OverlapSlowdown>& each,
                                  std::vector<CombinedFigure>* figures);

}  // namespace commprof
