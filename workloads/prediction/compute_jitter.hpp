// SPDX-License-Identifier: MIT
// The step-to-step jitter of a rank's compute, applied to a projected step. A run measures, for
// every rank and step, how fast that rank computed in that step against its usual speed
// (MeasuredRates::compute_jitter). Where a step waits for its slowest rank (a data-parallel
// all-reduce, a tensor-parallel one after every layer), the step is set by whichever rank was slow
// that time, and a target with more ranks draws more often from the slow end: with samples {1, 2}
// equally likely, 4 ranks all at 1 happen in 1 step of 16, 8 ranks in 1 of 256. One replay at the
// mean speed misses that; the replay is therefore repeated with each rank's compute scaled by a
// factor drawn from the samples, and the figures are the draws' means (Monte Carlo over the
// order statistics the measurement shows).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/graph/graph_times.hpp"
#include "analysis/graph/step_graph.hpp"
#include "workloads/prediction/replay.hpp"

namespace commprof {

/// The seed of every projection's draws: the same inputs give the same prediction.
inline constexpr std::uint64_t kJitterSeed = 0x636f6d6d70726f66ULL;  // "commprof"

struct JitterReplay {
  int draws = 0;
  StepOutcome mean;      ///< each figure the mean over the draws (overlap: over draws defining it)
  double path_ns = 0.0;  ///< the critical path's length, mean over the draws
  /// The draws' steps: 10th and 90th percentile, what one step of the target may vary by.
  std::int64_t step_p10_ns = 0, step_p90_ns = 0;
  /// The samples drawn from: 10th and 90th percentile.
  double sample_p10 = 1.0, sample_p90 = 1.0;
};

/// Replays `model` over `g` `draws` times; in each, every rank's COMP ops take their time in
/// `model` times one factor drawn for that rank, with replacement, from `samples` (not empty, each
/// above 0). Draws from one seed: deterministic. Throws as replay() does.
JitterReplay replay_with_jitter(const StepGraph& g, const ReplayModel& model,
                                const std::vector<double>& samples, int draws,
                                std::uint64_t seed = kJitterSeed);

}  // namespace commprof
