// SPDX-License-Identifier: MIT
// The step graph replayed with other durations, as a discrete-event simulation over the same
// dependencies: an op starts a fixed host gap after it is ready (its rank's step start, the op
// before it on its stream and the ops it waited for have ended), a plain op ends its duration
// later, and a collective ends on all its members together, its time after its last member
// arrived. Replaying the measured model gives back the measured step up to the collectives'
// end skew; changing the model answers "what if" (commprof whatif).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/graph/graph_times.hpp"
#include "analysis/graph/step_graph.hpp"

namespace commprof {

/// What the replay takes as given, in ns.
struct ReplayModel {
  std::vector<std::int64_t> op_ns;          ///< by op: its duration (collective members: unused)
  std::vector<std::int64_t> gap_ns;         ///< by op: the host gap before it
  std::vector<std::int64_t> collective_ns;  ///< by collective: its time once all have arrived
};

/// The model the files measured: each op's duration, each gap (start − ready, not below 0),
/// each collective's shortest member duration.
ReplayModel measured_model(const StepGraph& g);

/// The times `model` gives. Throws Error when the graph has a cycle (ranks that issued their
/// collectives in different orders, or waits that loop), naming the step and an op stuck.
GraphTimes replay(const StepGraph& g, const ReplayModel& model);

}  // namespace commprof
