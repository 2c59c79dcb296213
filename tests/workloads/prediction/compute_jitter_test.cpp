// SPDX-License-Identifier: MIT
// The jitter's replays against order statistics worked out by hand. Each of n ranks computes
// 100 ns and then joins one all-reduce that takes no time of its own: the step is the slowest
// rank's compute. With factors drawn from {1, 2}, the step is 100 ns only when every rank drew 1
// (probability 2^-n), else 200: its mean is 200 − 100 / 2^n, 175 ns on 2 ranks, 193.75 on 4.
#include "workloads/prediction/compute_jitter.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/graph/step_graph.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/rank_file.hpp"
#include "workloads/prediction/replay.hpp"

namespace commprof {
namespace {

StepGraph compute_then_allreduce(int n) {
  StepGraphBuilder b;
  for (int r = 0; r < n; ++r) {
    RankTimeline t;
    t.rank = r;
    t.world_size = n;
    t.host = "node0";
    StepRecord s;
    s.index = 0;
    s.end_ns = 100;
    OpRecord a;
    a.name = "a";
    a.category = Category::kComp;
    a.stream = "COMP";
    a.end_ns = 100;
    OpRecord ar;
    ar.name = "ar";
    ar.category = Category::kComm;
    ar.stream = "COMM";
    ar.start_ns = ar.end_ns = 100;
    ar.after = {0};
    ar.collective = "allreduce";
    ar.comm = "dp0";
    ar.comm_size = n;
    ar.seq = 0;
    ar.bytes = 1024;
    s.ops = {a, ar};
    t.steps.push_back(s);
    b.add(t);
  }
  std::vector<StepGraph> graphs = b.finish();
  EXPECT_EQ(graphs.size(), 1u);
  return graphs.at(0);
}

TEST(ComputeJitter, TheStepIsTheMeanOfTheSlowestRanksDraw) {
  for (const int n : {2, 4}) {
    const StepGraph g = compute_then_allreduce(n);
    const ReplayModel model = measured_model(g);
    EXPECT_EQ(replay(g, model).end_ns.back(), 100);
    const JitterReplay j = replay_with_jitter(g, model, {1.0, 2.0}, 20000);
    const double want = 200.0 - 100.0 / (1 << n);
    // 20,000 draws: the mean's standard error is below 0.4 ns on either.
    EXPECT_NEAR(static_cast<double>(j.mean.step_ns), want, 2.0) << n << " ranks";
    EXPECT_EQ(j.draws, 20000);
    EXPECT_EQ(j.step_p10_ns, n == 2 ? 100 : 200);  // 25% of 2-rank draws are 100 ns, 6% of 4
    EXPECT_EQ(j.step_p90_ns, 200);
    EXPECT_NEAR(j.path_ns, want, 2.0);  // the path is the slowest rank's compute
  }
}

TEST(ComputeJitter, WithoutJitterEveryDrawIsTheReplay) {
  const StepGraph g = compute_then_allreduce(3);
  const JitterReplay j = replay_with_jitter(g, measured_model(g), {1.0}, 5);
  EXPECT_EQ(j.mean.step_ns, 100);
  EXPECT_EQ(j.step_p10_ns, 100);
  EXPECT_EQ(j.step_p90_ns, 100);
  EXPECT_DOUBLE_EQ(j.mean.comm_ns, 0.0);
}

TEST(ComputeJitter, TheSameSeedGivesTheSameDraws) {
  const StepGraph g = compute_then_allreduce(4);
  const ReplayModel model = measured_model(g);
  const std::vector<double> samples = {0.5, 0.8, 0.9, 1.0, 1.1, 1.3, 1.7, 1.9};
  const JitterReplay a = replay_with_jitter(g, model, samples, 200);
  const JitterReplay b = replay_with_jitter(g, model, samples, 200);
  EXPECT_EQ(a.mean.step_ns, b.mean.step_ns);
  EXPECT_EQ(a.step_p10_ns, b.step_p10_ns);
  EXPECT_EQ(a.step_p90_ns, b.step_p90_ns);
  EXPECT_EQ(a.path_ns, b.path_ns);
  // Another seed draws another sequence: the mean path over 200 draws of the slowest of 4 ranks
  // (each 100 ns times one of 8 factors) differs.
  const JitterReplay c = replay_with_jitter(g, model, samples, 200, kJitterSeed + 1);
  EXPECT_NE(a.path_ns, c.path_ns);
  EXPECT_THROW(replay_with_jitter(g, model, {}, 5), Error);
  EXPECT_THROW(replay_with_jitter(g, model, {1.0}, 0), Error);
}

}  // namespace
}  // namespace commprof
