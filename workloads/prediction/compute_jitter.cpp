// SPDX-License-Identifier: MIT
#include "workloads/prediction/compute_jitter.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "analysis/graph/critical_path.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

// The element nearest the q-th quantile of a sorted, non-empty vector.
template <class T>
T percentile_of_sorted(const std::vector<T>& sorted, double q) {
  return sorted[static_cast<std::size_t>(std::lround(q * static_cast<double>(sorted.size() - 1)))];
}

}  // namespace

JitterReplay replay_with_jitter(const StepGraph& g, const ReplayModel& model,
                                const std::vector<double>& samples, int draws, std::uint64_t seed) {
  if (samples.empty()) throw Error("replay_with_jitter: no jitter samples");
  if (draws < 1) throw Error("replay_with_jitter: draws must be at least 1");
  int ranks = 0;
  for (const GraphOp& op : g.ops) ranks = std::max(ranks, op.rank + 1);
  // mt19937_64's sequence is fixed by the standard (its distributions are not): the index is
  // taken modulo the sample count, whose bias over 2^64 is nothing a prediction sees.
  std::mt19937_64 rng(seed);
  std::vector<double> factor(static_cast<std::size_t>(ranks), 1.0);
  ReplayModel drawn = model;
  JitterReplay out;
  out.draws = draws;
  std::vector<std::int64_t> steps;
  double overlap_sum = 0.0;
  int overlap_n = 0;
  for (int d = 0; d < draws; ++d) {
    for (double& f : factor) f = samples[static_cast<std::size_t>(rng() % samples.size())];
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
      if (g.ops[i].category != Category::kComp) continue;
      drawn.op_ns[i] = static_cast<std::int64_t>(std::llround(
          static_cast<double>(model.op_ns[i]) * factor[static_cast<std::size_t>(g.ops[i].rank)]));
    }
    const GraphTimes t = replay(g, drawn);
    const StepOutcome o = step_outcome(g, t);
    steps.push_back(o.step_ns);
    out.mean.exposed_comm_ns += o.exposed_comm_ns;
    out.mean.comm_ns += o.comm_ns;
    if (o.overlap) {
      overlap_sum += *o.overlap;
      ++overlap_n;
    }
    out.path_ns += static_cast<double>(critical_path(g, t).length_ns());
  }
  double step_sum = 0.0;
  for (const std::int64_t s : steps) step_sum += static_cast<double>(s);
  out.mean.step_ns = static_cast<std::int64_t>(std::llround(step_sum / draws));
  out.mean.exposed_comm_ns /= draws;
  out.mean.comm_ns /= draws;
  if (overlap_n > 0) out.mean.overlap = overlap_sum / overlap_n;
  out.path_ns /= draws;
  std::sort(steps.begin(), steps.end());
  out.step_p10_ns = percentile_of_sorted(steps, 0.1);
  out.step_p90_ns = percentile_of_sorted(steps, 0.9);
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  out.sample_p10 = percentile_of_sorted(sorted, 0.1);
  out.sample_p90 = percentile_of_sorted(sorted, 0.9);
  return out;
}

}  // namespace commprof
