// SPDX-License-Identifier: MIT
// Times of a step graph's ops, measured or replayed, and what a step's times add up to: the
// step's length, its exposed communication and overlap (the reducer's definitions).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/graph/step_graph.hpp"

namespace commprof {

/// Start and end of every op of a graph, by op, on rank 0's clock.
struct GraphTimes {
  std::vector<std::int64_t> start_ns, end_ns;
};

/// The times the files recorded.
GraphTimes measured_times(const StepGraph& g);

/// When `op` could start: its rank's step start or the latest end of its predecessors; `binding`
/// is that predecessor (-1: the step start).
std::int64_t ready_ns(const StepGraph& g, const GraphTimes& t, int op, int* binding = nullptr);
/// The same for an op whose rank's step start is known (the rank's entry not looked up).
std::int64_t ready_ns(const GraphTimes& t, const GraphOp& op, std::int64_t rank_start_ns,
                      int* binding = nullptr);

/// A step's times summed up, across its ranks.
struct StepOutcome {
  std::int64_t step_ns = 0;       ///< the last op's end − the earliest rank's step start
  double exposed_comm_ns = 0.0;   ///< mean over ranks of |COMM ∖ COMP|
  double comm_ns = 0.0;           ///< mean over ranks of |COMM|
  std::optional<double> overlap;  ///< mean over ranks where defined of |COMM ∩ COMP| / |COMM|
};
StepOutcome step_outcome(const StepGraph& g, const GraphTimes& t);

}  // namespace commprof
