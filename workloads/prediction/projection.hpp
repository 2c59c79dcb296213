// SPDX-License-Identifier: MIT
// `commprof project`'s model: a measured run (its configuration from the rank files' header, its
// rates, its collectives) and the step of another layout predicted from it. The target's plans
// (workloads/workload.hpp) make one step graph (target_graph.hpp); compute ops last their work
// over the measured rate of their class, collectives the link model's time, each op starts the
// run's mean host gap of its stream after it is ready; analysis/graph's discrete-event replay
// gives the step, its exposed communication and overlap.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/links/link_model.hpp"
#include "workloads/prediction/measured_rates.hpp"
#include "workloads/prediction/overlap_slowdown.hpp"
#include "workloads/prediction/source_runs.hpp"
#include "workloads/prediction/what_if.hpp"
#include "workloads/run_config_json.hpp"

namespace commprof {

struct MeasuredRun {
  std::vector<std::string> files;
  RunConfigRead config;  ///< rank 0's header; every file must agree
  MeasuredRates rates;
  /// Fitted from the run's own collectives, one fit per collective and communicator kind.
  LinkModel own_links;
  WhatIf figures;  ///< measured and replayed as measured (what_if with no change)
  /// Every measured op with its overlap (overlap_slowdown.hpp), the baseline's after the run's.
  std::vector<OpObservation> observations;
  std::vector<std::string> baseline_files;  ///< --baseline's rank files, if one was read
  std::int64_t baseline_steps = 0;
  /// Several runs of one source combined (source_runs.hpp): each run as read (its files in
  /// `files`), and every figure above that is their median, with the runs' range. Empty for one
  /// run. `figures` is then the run's of median measured step.
  std::vector<MeasuredRun> sources;
  std::vector<CombinedFigure> combined;
};

/// The run's own link model: a fit of its collectives' points with its link probe's (the first
/// source run's, where it made one) beside them. Empty when there is neither.
LinkModel own_link_model(const std::vector<LinkSample>& own, const std::optional<LinkModel>& probe,
                         const std::string& what);

/// Reads a `commprof run` result (a directory or rank files). Throws ConfigError when the inputs
/// are not one run's rank files, were not written by `commprof run`, learned their compute from
/// a trace (--compute-from), or hold no measured step with per-op timing.
MeasuredRun load_measured_run(const std::vector<std::string>& inputs);
/// The same from timelines already read; `source` names the first file in errors.
MeasuredRun measured_run(std::vector<RankTimeline> ranks, const std::string& source);
/// `commprof project`'s inputs: two or more directories are as many runs of one source, read
/// each and combined (combine_runs); otherwise one run's directory or rank files. Throws
/// ConfigError as load_measured_run does, where directories and rank files are mixed, and where
/// the runs are not of one source (naming the field that differs).
MeasuredRun load_source_runs(const std::vector<std::string>& inputs);

/// Adds a baseline: the same source (model, options and layout) run again, typically with
/// --no-overlap, whose ops are all alone: their times are the reference an overlapped op of the
/// run is measured against (of each source run, where several were combined). Throws
/// ConfigError when it is not a run of the same source.
void add_baseline(MeasuredRun& run, const std::vector<std::string>& inputs);
/// The same from timelines already read; `source` names the first file in errors.
void add_baseline(MeasuredRun& run, std::vector<RankTimeline> ranks, const std::string& source);

/// The measured run's workload at `layout`: its kind (dp, tp or pp where only that degree is
/// above 1, else hybrid), the pipeline split even. Throws ConfigError naming what does not fit
/// (validate_layout, validate_workload).
WorkloadConfig target_workload(const MeasuredRun& run, const ParallelLayout& layout);

struct ProjectionOptions {
  int gpus_per_node = 0;             ///< 0: every target rank on one node
  const LinkModel* links = nullptr;  ///< nullptr: the run's own collectives' fit
  /// Apply the measured overlap slowdown (overlap_slowdown.hpp) to the ops that overlap in the
  /// target's replay; false: every op its alone time.
  bool overlap_slowdown = true;
  /// Give target rank r the compute speed the run measured on its rank r mod (the run's ranks)
  /// (MeasuredRates::rank_compute): a rank slower on the same work holds up what waits for it.
  bool rank_spread = true;
  /// Replays drawn with the measured step-to-step compute jitter (compute_jitter.hpp); the
  /// figures are their means. 0: one replay at each rank's mean speed.
  int jitter_draws = 32;
};

/// What the overlap slowdown did to one category's ops in the predicted step.
struct AppliedSlowdown {
  std::int64_t ops = 0;         ///< with a factor
  std::int64_t overlapped = 0;  ///< of them, overlapped in the target (φ ≥ kAloneOverlap)
  double mean_overlap = 0.0;    ///< over the overlapped
  double base_ns = 0.0;         ///< Σ their times without the slowdown (alone ratio included)
  double applied_ns = 0.0;      ///< Σ with it
};

/// One communicator kind's collectives in the predicted step.
struct ProjectedComm {
  std::string group;        ///< "dp", "tp", …
  std::string collectives;  ///< their names, "allreduce,p2p"
  std::int64_t calls = 0;   ///< instances in the step (each over its communicator's ranks)
  double time_ns = 0.0;     ///< Σ of their times from the last arrival
  double bus_bytes = 0.0;   ///< Σ S × busbw factor
  bool inter_node = false;
  double busbw_gbps() const { return time_ns > 0 ? bus_bytes / time_ns : 0.0; }
};

struct Projection {
  ParallelLayout layout;
  int ranks = 0;
  int nodes = 1;
  std::int64_t ops = 0;  ///< in the step, all ranks
  StepOutcome outcome;   ///< step, exposed communication, COMM busy, overlap
  std::int64_t path_ns = 0;
  std::vector<ProjectedComm> comms;
  /// The measured factors (empty where overlap_slowdown was off) and what they did: the step
  /// replayed with every op alone, the fixed-point iterations, the ops they changed.
  OverlapSlowdown slowdown;
  bool slowdown_applied = false;
  bool rank_spread_applied = false;
  /// The jitter's draws (0: not applied) and what they changed: the step of one replay at the
  /// ranks' mean speeds, the draws' 10th and 90th percentile step, the samples' spread.
  int jitter_draws = 0;
  std::int64_t step_steady_ns = 0;
  std::int64_t step_p10_ns = 0, step_p90_ns = 0;
  double jitter_p10 = 1.0, jitter_p90 = 1.0;
  std::size_t jitter_samples = 0;
  std::int64_t step_alone_ns = 0;
  int iterations = 0;
  bool converged = true;
  AppliedSlowdown applied_comp, applied_comm;
  /// From several source runs: each factor's runs and range (the factors above are medians).
  std::vector<CombinedFigure> slowdown_figures;
  /// Where a rate or a link fit was borrowed (a class the run did not measure, a collective
  /// from another communicator kind's fit).
  std::vector<std::string> notes;
};

/// Predicts one step of `layout`. Throws ConfigError naming what is missing (a layout that does
/// not fit the model, an op class or collective no rate or fit covers).
Projection project(const MeasuredRun& run, const ParallelLayout& layout,
                   const ProjectionOptions& options);

/// Every tp × pp × cp × dp layout of `gpus` ranks, and for a model with experts every ep that
/// divides tp × cp × dp (etp as the run's), each projected, fastest first; those that do not fit
/// the model, or whose communication no fit covers, are returned in `refused` with the reason.
std::vector<Projection> sweep_layouts(const MeasuredRun& run, int gpus,
                                      const ProjectionOptions& options,
                                      std::vector<std::string>* refused);

}  // namespace commprof
