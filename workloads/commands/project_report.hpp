// SPDX-License-Identifier: MIT
// What `commprof project` prints: the projection (text, or JSON of schema commprof.projection
// v1), the sweep's ranking, and the validation's predicted against measured figures.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "workloads/prediction/projection.hpp"

namespace commprof {

/// What the projection rests on, said once above its figures.
struct ProjectionBasis {
  std::vector<std::string> inputs;
  std::string links;  ///< --links FILE, "" the run's own fit
  int gpus_per_node = 0;
  std::string gpus_per_node_why;
};

/// One communicator kind's collectives in the validation run's step: the communication
/// library's own estimate (NCCL's ncclGroupSimulateEnd), beside the projection's and what the
/// run measured. Times are sums over the step's instances, each from its last arrival.
struct EstimateRow {
  std::string group;
  std::int64_t calls = 0;      ///< instances in the step
  std::int64_t estimated = 0;  ///< of them, those the model estimated
  double estimate_ns = 0.0;    ///< Σ of the model's estimates
  double measured_ns = 0.0;    ///< Σ of their measured times, mean over the measured steps
};

/// One run of the target (--validate): where its files are, and what it measured.
struct MeasuredValidation {
  std::string out_dir;
  WhatIfFigures figures;
};

/// The target run (--validate; --validate-runs times): every run's figures, and the one the
/// projection is compared with: the run of median step (of an even count, the lower middle).
struct Validation {
  std::string out_dir;  ///< the compared run's
  int steps = 0, warmup_steps = 0;
  WhatIfFigures measured;  ///< the compared run's
  std::vector<MeasuredValidation> runs;
  std::string estimate_model;          ///< "" where the backend has none
  std::string no_estimate_why;         ///< then why
  std::vector<EstimateRow> estimates;  ///< by communicator kind
  /// Sets out_dir and measured from the run of median step; runs must not be empty.
  void choose_median();
};

/// (predicted − measured) / measured in %, nullopt where measured is 0.
std::optional<double> error_pct(double predicted, double measured);

void write_projection_text(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b,
                           const Projection& p, const Validation* v);
void write_projection_json(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b,
                           const Projection& p, const Validation* v);
void write_sweep_text(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b, int gpus,
                      const std::vector<Projection>& ranked,
                      const std::vector<std::string>& refused);
void write_sweep_json(std::ostream& os, const MeasuredRun& run, const ProjectionBasis& b, int gpus,
                      const std::vector<Projection>& ranked,
                      const std::vector<std::string>& refused);

}  // namespace commprof
