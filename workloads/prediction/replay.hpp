// SPDX-License-Identifier: MIT
// The step graph replayed with other durations, as a discrete-event simulation over the same
// dependencies: an op starts its host gap after it is ready (its rank's step start, the op
// before it on its stream and the ops it waited for have ended), less however much later than
// measured it became ready (the host had issued it by its measured start: a later ready time
// absorbs the launch delay rather than adding to it), a plain op ends its duration
// later, and a collective's members end once the last member has arrived, each its own measured
// time after that arrival (the shortest is the report's collective time; the others hold the
// end skew the transport gave that rank). Replaying the measured model gives back the measured
// step exactly; changing the model answers "what if" (commprof whatif).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/graph/graph_times.hpp"
#include "analysis/graph/step_graph.hpp"

namespace commprof {

/// What the replay takes as given, in ns.
struct ReplayModel {
  /// By op: its duration; of a collective's member, its time from the last member's arrival to
  /// its own end.
  std::vector<std::int64_t> op_ns;
  std::vector<std::int64_t> gap_ns;  ///< by op: the host gap before it
  /// By op: when it was ready in the measured step; a replay that makes it ready later takes
  /// that lateness off its gap. Empty: every gap is kept whole.
  std::vector<std::int64_t> ready_ns;
};

/// The model the files measured: each op's duration (a collective member's from the last
/// arrival, not below 0), each gap (start − ready, not below 0).
ReplayModel measured_model(const StepGraph& g);

/// The times `model` gives. Throws Error when the graph has a cycle (ranks that issued their
/// collectives in different orders, or waits that loop), naming the step and an op stuck.
GraphTimes replay(const StepGraph& g, const ReplayModel& model);

}  // namespace commprof
