// SPDX-License-Identifier: MIT
// `commprof whatif`: the step graphs replayed with changed durations. A change is a scale rule,
// [rankR:]KIND[[GROUP]]=FACTOR: KIND is comp, comm or mem (ops of that category) or gap (host
// gaps); GROUP (comm only) a communicator's kind ("dp", every dp communicator) or name ("dp0");
// rankR limits it to one rank. Rules that match one op multiply. A collective's time (each
// member's, from the last arrival) is scaled by the largest factor any of its members' ranks
// gets (one slow rank slows the transfer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/graph/step_graph.hpp"
#include "analysis/report.hpp"
#include "workloads/prediction/replay.hpp"

namespace commprof {

struct ScaleRule {
  std::string text;   ///< as given
  int rank = -1;      ///< -1: every rank
  std::string kind;   ///< "comp", "comm", "mem" or "gap"
  std::string group;  ///< comm only: a communicator kind or name; "" every communicator
  double factor = 1.0;
};

/// Parses one rule; throws ConfigError naming it and what is wrong.
ScaleRule parse_scale_rule(const std::string& text);

/// `model` of `g` with `rules` applied.
ReplayModel scaled_model(const StepGraph& g, ReplayModel model,
                         const std::vector<ScaleRule>& rules);

/// A run's figures, means over its measured steps, in ns (overlap a ratio).
struct WhatIfFigures {
  double step_ns = 0.0;  ///< the last op's end − the earliest rank's step start
  double exposed_comm_ns = 0.0;
  double comm_ns = 0.0;
  std::optional<double> overlap;  ///< over the steps where it is defined
  double path_ns = 0.0;           ///< the critical path
  double gap_ns = 0.0;            ///< of it, host gaps
};

struct WhatIf {
  std::int64_t steps = 0;
  WhatIfFigures measured;   ///< the files' times
  WhatIfFigures replayed;   ///< the measured model replayed unchanged: the model's own error
  WhatIfFigures predicted;  ///< the model with the rules applied
  /// The predicted critical paths (critical_steps, critical_shares, critical_note).
  Report paths;
};

/// `g` with every rank's ops one after another, in the order its file lists them (the plan's
/// order for commprof's runs): what `run --no-overlap` does to the same plan.
StepGraph serialized(StepGraph g);

/// Replays every graph measured and changed (`serialize`: as serialized() makes it, with the
/// measured durations and gaps). Throws Error where a graph cannot be replayed.
WhatIf what_if(const std::vector<StepGraph>& graphs, const std::vector<ScaleRule>& rules,
               bool serialize = false);

}  // namespace commprof
