// SPDX-License-Identifier: MIT
// The idealised replay (workloads/prediction/ideal_replay.*) on hand-made graphs whose answers
// follow from the definitions: S = mean(step, measured) / mean(step, ideal), attribution = the
// ideal with one set of ops at its measured durations.
#include "workloads/prediction/ideal_replay.hpp"

#include <gtest/gtest.h>

namespace commprof {
namespace {

// Two data-parallel ranks, one step: a compute each, then an all-reduce across both ranks.
// Rank 1 computes for 3 s, rank 0 for 1 s; the all-reduce transfers 1 s on both.
IdealGraph two_rank_step() {
  IdealGraph g;
  g.dp = 2;
  g.steps = {7};
  g.has_stages = true;
  g.nodes = {{"compute", "compute", "compute", 0, -1, false, -1, {}},
             {"allreduce", "allreduce", "allreduce", 0, -1, true, 0, {0}}};
  g.groups = {{{1}, true}};
  g.duration = {{1.0, 3.0}, {0.0, 0.0}};
  // starts and ends as measured: the all-reduce starts at 1 and 3, ends at 4 on both.
  set_transfers(g, {{0, 0}, {1, 3}}, {{1, 3}, {4, 4}});
  return g;
}

TEST(IdealReplay, TransferIsEndMinusTheGroupsLatestStartAcrossRanks) {
  const IdealGraph g = two_rank_step();
  EXPECT_DOUBLE_EQ(g.transfer[1][0], 1.0);
  EXPECT_DOUBLE_EQ(g.transfer[1][1], 1.0);
}

TEST(IdealReplay, SlowdownIsMeasuredOverTheMeanAndAttributesTheSlowRank) {
  const IdealResult r = ideal_analysis(two_rank_step());
  // Measured: max(1, 3) + 1 = 4 s. Ideal: compute at the mean 2 s on both, + 1 s = 3 s.
  EXPECT_DOUBLE_EQ(r.nodelay_s, 4.0);
  EXPECT_DOUBLE_EQ(r.ideal_s, 3.0);
  EXPECT_DOUBLE_EQ(r.slowdown, 4.0 / 3.0);
  std::map<std::string, double> by;
  for (const IdealShare& s : r.shares) by[s.dimension + ":" + s.key] = s.slowdown;
  // Rank 1 alone measured (3 s) holds everyone: 4/3; rank 0 alone (1 s) changes nothing: 1.
  EXPECT_DOUBLE_EQ(by.at("dp_rank:1"), 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(by.at("dp_rank:0"), 1.0);
  EXPECT_DOUBLE_EQ(by.at("op_kind:compute"), 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(by.at("op_kind:allreduce"), 1.0);
  EXPECT_DOUBLE_EQ(by.at("stage:0"), 4.0 / 3.0);
  EXPECT_EQ(r.shares.front().key, "compute");  // largest first within a dimension
}

TEST(IdealReplay, CommunicationIsIdealisedWithTheMedian) {
  IdealGraph g;
  g.dp = 3;
  g.steps = {0};
  g.nodes = {{"send", "send", "send", 0, -1, true, -1, {}}};
  g.duration = {{1.0, 1.0, 7.0}};  // median 1, mean 3
  g.transfer = {{0, 0, 0}};
  const IdealResult r = ideal_analysis(g);
  EXPECT_DOUBLE_EQ(r.ideal_s, 1.0);
  EXPECT_DOUBLE_EQ(r.slowdown, 7.0);
}

TEST(IdealReplay, ACycleIsAnErrorNotAHang) {
  IdealGraph g;
  g.dp = 1;
  g.steps = {0};
  g.nodes = {{"a", "k", "k", 0, -1, false, -1, {1}}, {"b", "k", "k", 0, -1, false, -1, {0}}};
  g.duration = {{1}, {1}};
  g.transfer = {{0}, {0}};
  EXPECT_THROW(replay_steps(g, g.duration, g.transfer), std::exception);
}

}  // namespace
}  // namespace commprof
