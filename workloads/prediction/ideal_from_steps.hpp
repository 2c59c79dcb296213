// SPDX-License-Identifier: MIT
// commprof's own step graphs (step_graph.hpp) as an IdealGraph (ideal_replay.hpp), for
// `whatif --ideal` on rank files: every rank's ops of a step are the nodes (a step is one
// instance), their stream order and recorded waits the dependencies, a matched collective or a
// send with its receive a group. An op's ideal is the mean (compute, memory) or median
// (communication) of the same op - same category, name, collective and communicator - over
// ranks and steps, as Lin et al. (OSDI'25) idealise an op kind.
#pragma once

#include <vector>

#include "analysis/graph/step_graph.hpp"
#include "workloads/prediction/ideal_replay.hpp"

namespace commprof {

/// The graph of the steps shaped like the first (the same ops on every rank); `skipped` counts
/// the others. Throws Error when there is no step.
IdealGraph ideal_graph_from_steps(const std::vector<StepGraph>& steps, std::size_t* skipped);

}  // namespace commprof
