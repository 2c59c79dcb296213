// SPDX-License-Identifier: MIT
// Each rank's compute speed on the same work, against a hand-worked answer.
#include "workloads/prediction/measured_rates.hpp"

#include <gtest/gtest.h>

namespace commprof {
namespace {

RankTimeline rank_with_gemm(int rank, std::int64_t ns) {
  RankTimeline t;
  t.rank = rank;
  t.world_size = 2;
  t.host = "node0";
  StepRecord s;
  s.index = 0;
  s.end_ns = ns;
  OpRecord op;
  op.name = "l0.qkv.mb0.fwd";
  op.category = Category::kComp;
  op.stream = "COMP";
  op.flops = 1000;
  op.end_ns = ns;
  s.ops.push_back(op);
  t.steps.push_back(s);
  return t;
}

// The same GEMM (1000 FLOPs) took 500 ns on rank 0 and 1000 ns on rank 1: the class rate is
// 2000 / 1500 FLOP/ns, so each rank's op should take 750 ns; rank 0 computes at 500 / 750 = 2/3
// of that time, rank 1 at 1000 / 750 = 4/3.
TEST(MeasuredRates, EachRanksComputeIsMeasuredOnTheSameWork) {
  const std::vector<RankTimeline> ranks = {rank_with_gemm(0, 500), rank_with_gemm(1, 1000)};
  StepGraphBuilder b;
  for (const RankTimeline& t : ranks) b.add(t);
  const MeasuredRates m = learn_rates(ranks, b.finish());
  EXPECT_NEAR(m.by_class.at("qkv.fwd/flop").per_ns(), 2000.0 / 1500.0, 1e-12);
  ASSERT_EQ(m.rank_compute.size(), 2u);
  EXPECT_NEAR(m.rank_compute[0], 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(m.rank_compute[1], 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(m.step_spread, 1.0, 1e-12);  // 1000 / 500 − 1
}

// Rank 0's GEMM took 500 ns in one step and 1500 in the next, rank 1's 1000 in both: the class
// rate is 4000 FLOPs over 4000 ns, both ranks compute at 1 on the whole (2000 / 2000 ns), and
// the steps' jitter is each step over its rank's speed: 0.5 and 1.5 on rank 0, 1 and 1 on rank 1.
TEST(MeasuredRates, EachStepsComputeJitterIsItsSpeedOverItsRanks) {
  std::vector<RankTimeline> ranks = {rank_with_gemm(0, 500), rank_with_gemm(1, 1000)};
  for (RankTimeline& t : ranks) {
    StepRecord next = t.steps.front();
    next.index = 1;
    const std::int64_t ns = t.rank == 0 ? 1500 : 1000;
    next.start_ns = 10000;
    next.end_ns = 10000 + ns;
    next.ops.front().start_ns = 10000;
    next.ops.front().end_ns = 10000 + ns;
    t.steps.push_back(next);
  }
  StepGraphBuilder b;
  for (const RankTimeline& t : ranks) b.add(t);
  const MeasuredRates m = learn_rates(ranks, b.finish());
  EXPECT_NEAR(m.by_class.at("qkv.fwd/flop").per_ns(), 1.0, 1e-12);
  ASSERT_EQ(m.rank_compute.size(), 2u);
  EXPECT_NEAR(m.rank_compute[0], 1.0, 1e-12);
  EXPECT_NEAR(m.rank_compute[1], 1.0, 1e-12);
  ASSERT_EQ(m.compute_jitter.size(), 4u);
  EXPECT_NEAR(m.compute_jitter[0], 0.5, 1e-12);
  EXPECT_NEAR(m.compute_jitter[1], 1.5, 1e-12);
  EXPECT_NEAR(m.compute_jitter[2], 1.0, 1e-12);
  EXPECT_NEAR(m.compute_jitter[3], 1.0, 1e-12);
}

}  // namespace
}  // namespace commprof
