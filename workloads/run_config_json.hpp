// SPDX-License-Identifier: MIT
// The run's configuration as the rank files' header records it ("config"), and back: `commprof
// run` writes it, `commprof project` reads a run's to make the plans of another layout.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "collectives/links/link_model.hpp"
#include "workloads/op_timing.hpp"
#include "workloads/workload.hpp"

namespace commprof {

/// What a run records beside the workload: its steps and how its ops were timed.
struct RunSettings {
  int steps = 10;
  int warmup_steps = 2;
  OpTimingMode timing = OpTimingMode::kAuto;
  int sample_every = 4;
  /// The link probe's model (workloads/commands/link_probe.hpp), where the run made one.
  std::optional<LinkModel> link_probe;
};

/// The header's "config" of a run of `w` (its layout in w.layout).
nlohmann::ordered_json run_config_json(const WorkloadConfig& w, const RunSettings& s);

struct RunConfigRead {
  WorkloadConfig workload;  ///< layout as run; the pipeline split even (stage_layers not kept)
  RunSettings settings;
  /// The run learned its compute from a trace (--compute-from): its ops' durations came from
  /// the profile, which the header summarises but does not hold.
  bool compute_from = false;
};

/// The inverse of run_config_json. Throws ConfigError naming `source` and the field when the
/// object is not a `commprof run` configuration (another command's, or a field missing or of
/// the wrong type).
RunConfigRead run_config_from_json(const nlohmann::ordered_json& j, const std::string& source);

}  // namespace commprof
