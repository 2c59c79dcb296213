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

#include "analysis/graph/what_if.hpp"
#include "collectives/links/link_model.hpp"
#include "workloads/projection/measured_rates.hpp"
#include "workloads/run_config_json.hpp"

namespace commprof {

struct MeasuredRun {
  std::vector<std::string> files;
  RunConfigRead config;  ///< rank 0's header; every file must agree
  MeasuredRates rates;
  /// Fitted from the run's own collectives, one fit per collective and communicator kind.
  LinkModel own_links;
  WhatIf figures;  ///< measured and replayed as measured (what_if with no change)
};

/// Reads a `commprof run` result (a directory or rank files). Throws ConfigError when the inputs
/// are not one run's rank files, were not written by `commprof run`, learned their compute from
/// a trace (--compute-from), or hold no measured step with per-op timing.
MeasuredRun load_measured_run(const std::vector<std::string>& inputs);
/// The same from timelines already read; `source` names the first file in errors.
MeasuredRun measured_run(std::vector<RankTimeline> ranks, const std::string& source);

/// "tp=2,pp=2,dp=2[,cp=…,ep=…,etp=…]" → a layout; missing degrees are 1. Throws ConfigError.
ParallelLayout parse_layout(const std::string& text);
std::string layout_text(const ParallelLayout& l);  ///< "tp=2,pp=2,dp=2" (cp, ep where > 1)

/// The measured run's workload at `layout`: its kind (dp, tp or pp where only that degree is
/// above 1, else hybrid), the pipeline split even. Throws ConfigError naming what does not fit
/// (validate_layout, validate_workload).
WorkloadConfig target_workload(const MeasuredRun& run, const ParallelLayout& layout);

struct ProjectionOptions {
  int gpus_per_node = 0;             ///< 0: every target rank on one node
  const LinkModel* links = nullptr;  ///< nullptr: the run's own collectives' fit
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
  /// Where a rate or a link fit was borrowed (a class the run did not measure, a collective
  /// from another communicator kind's fit).
  std::vector<std::string> notes;
};

/// Predicts one step of `layout`. Throws ConfigError naming what is missing (a layout that does
/// not fit the model, an op class or collective no rate or fit covers).
Projection project(const MeasuredRun& run, const ParallelLayout& layout,
                   const ProjectionOptions& options);

/// Every tp × pp × dp layout of `gpus` ranks (cp and ep as the run's), each projected, fastest
/// first; those that do not fit the model are returned in `refused` with the reason.
std::vector<Projection> sweep_layouts(const MeasuredRun& run, int gpus,
                                      const ProjectionOptions& options,
                                      std::vector<std::string>* refused);

}  // namespace commprof
