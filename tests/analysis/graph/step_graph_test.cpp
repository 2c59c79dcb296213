// SPDX-License-Identifier: MIT
// The step graph and its critical path on small steps whose answers are worked out by hand (the
// transfers' pairing also through what replaying them gives; the replay and what-if themselves:
// tests/workloads/prediction/what_if_test.cpp); most use the two-rank step of
// tests/support/hand_timelines.hpp (times in ns):
//
//   rank 0: a COMP [0,10]  ar COMM [10,30] after a  b COMP [12,20]  c COMP [30,40] after ar
//   rank 1: a COMP [0,20]  ar COMM [20,30] after a  b COMP [20,28]  c COMP [31,36] after ar
//
// ar is one allreduce of dp0 (seq 0) on both ranks: rank 1 arrives last, at 20, and ar ends at
// 30 on both (its time: the shortest duration, rank 1's 10). The step ends with rank 0's c at
// 40, which waited for ar, which waited for rank 1's a: the critical path is rank 1's a (20,
// COMP), ar (10, COMM, through rank 1), rank 0's c (10, COMP): 40, the whole step. Rank 1 was
// late by 10 at ar, and its a took 10 longer than rank 0's: the straggler's cause.
#include "analysis/graph/critical_path.hpp"

#include <gtest/gtest.h>

#include "analysis/graph/critical_report.hpp"
#include "analysis/graph/step_graph.hpp"
#include "src/core/errors.hpp"
#include "support/hand_graphs.hpp"
#include "support/hand_timelines.hpp"
#include "workloads/prediction/replay.hpp"
#include "workloads/prediction/what_if.hpp"

namespace commprof {
namespace {

using test::described;
using test::graph_of;
using test::one_step_rank;
using test::Segments;
using test::timed_op;

TEST(StepGraph, StreamOrderWaitsAndMatching) {
  const StepGraph g = graph_of(test::two_rank_step());
  EXPECT_EQ(g.step, 3);
  ASSERT_EQ(g.ops.size(), 8u);
  ASSERT_EQ(g.collectives.size(), 1u);
  EXPECT_EQ(g.collectives[0].members, (std::vector<int>{1, 5}));
  EXPECT_EQ(g.collectives[0].time_ns, 10);  // rank 1's duration, the shorter
  EXPECT_EQ(g.ops_with_waits, 4);
  EXPECT_EQ(g.ops[2].preds, (std::vector<int>{0}));     // b after a on COMP
  EXPECT_EQ(g.ops[3].preds, (std::vector<int>{2, 1}));  // c after b, and ar's wait
  EXPECT_EQ(g.ops[1].preds, (std::vector<int>{0}));     // ar: first on COMM, waits for a
}

TEST(CriticalPath, RunsThroughTheLastArrival) {
  const StepGraph g = graph_of(test::two_rank_step());
  const CriticalPath p = critical_path(g, measured_times(g));
  EXPECT_EQ(p.start_ns, 0);
  EXPECT_EQ(p.end_ns, 40);
  EXPECT_EQ(described(g, p), (Segments{{"1:COMP:a", 20}, {"1:COMM:ar", 10}, {"0:COMP:c", 10}}));
  ASSERT_TRUE(p.straggler.has_value());
  EXPECT_EQ(p.straggler->rank, 1);
  EXPECT_EQ(p.straggler->late_ns, 10);
  EXPECT_EQ(g.ops[static_cast<std::size_t>(p.straggler->op)].name, "a");
  EXPECT_FALSE(p.straggler->gap);
  EXPECT_EQ(p.straggler->op_ns, 20);
  EXPECT_DOUBLE_EQ(p.straggler->excess_ns, 10.0);  // 20 against rank 0's 10
}

TEST(CriticalPath, CountsHostGapsOnTheirOwn) {
  // Rank 1's c now ends the step: it was ready at 30 (ar's end) and started at 31.
  std::vector<RankTimeline> ranks = test::two_rank_step();
  ranks[1].steps[0].ops[3] = timed_op("c", Category::kComp, 31, 45, {1});
  const StepGraph g = graph_of(ranks);
  const CriticalPath p = critical_path(g, measured_times(g));
  EXPECT_EQ(described(g, p),
            (Segments{{"1:COMP:a", 20}, {"1:COMM:ar", 10}, {"1:gap:c", 1}, {"1:COMP:c", 14}}));
  EXPECT_EQ(p.length_ns(), 45);
}

TEST(CriticalPath, WithoutRecordedWaitsFollowsStreamsAndMatching) {
  // An import: no "after". c on rank 0 then follows b alone, and nothing ties ar to a.
  std::vector<RankTimeline> ranks = test::two_rank_step();
  for (RankTimeline& t : ranks) {
    for (OpRecord& o : t.steps[0].ops) o.after.clear();
  }
  const StepGraph g = graph_of(ranks);
  EXPECT_EQ(g.ops_with_waits, 0);
  const CriticalPath p = critical_path(g, measured_times(g));
  // c (rank 0) follows b [12,20] on its stream: the 10 between is a host gap; b follows a.
  EXPECT_EQ(
      described(g, p),
      (Segments{
          {"0:COMP:a", 10}, {"0:gap:b", 2}, {"0:COMP:b", 8}, {"0:gap:c", 10}, {"0:COMP:c", 10}}));
}

std::vector<RankTimeline> transfer_ranks() {
  OpRecord send = timed_op("send_act", Category::kComm, 10, 14, {0});
  send.collective = "send";
  send.comm = "pp0";
  send.comm_size = 2;
  send.send_to = {1};
  OpRecord recv = timed_op("recv_act", Category::kComm, 2, 14);
  recv.collective = "recv";
  recv.comm = "pp0";
  recv.comm_size = 2;
  recv.recv_from = {0};
  return {one_step_rank(0, {timed_op("f", Category::kComp, 0, 10), send}),
          one_step_rank(1, {timed_op("x", Category::kComp, 0, 2), recv,
                            timed_op("g", Category::kComp, 14, 24, {1})})};
}

TEST(StepGraph, SendsPairWithTheirReceivesAndThePathCrossesThem) {
  const StepGraph g = graph_of(transfer_ranks());
  EXPECT_EQ(g.ops[1].partners, (std::vector<int>{3}));  // rank 0's send, rank 1's receive
  EXPECT_EQ(g.ops[3].partners, (std::vector<int>{1}));
  EXPECT_EQ(g.unmatched_transfers, 0);
  EXPECT_EQ(g.transfers_without_peers, 0);
  const CriticalPath p = critical_path(g, measured_times(g));
  EXPECT_EQ(described(g, p),
            (Segments{{"0:COMP:f", 10}, {"0:COMM:send_act", 4}, {"1:COMP:g", 10}}));
  // Rank 1's receive waited for rank 0's send: rank 0 arrived 8 after it (10 against 2), late
  // because of its f (10; no other rank runs an f, so all of it counts as excess).
  ASSERT_TRUE(p.straggler.has_value());
  EXPECT_EQ(p.straggler->collective, -1);
  EXPECT_EQ(p.straggler->transfer, 3);
  EXPECT_EQ(p.straggler->rank, 0);
  EXPECT_EQ(p.straggler->late_ns, 8);
  EXPECT_EQ(g.ops[static_cast<std::size_t>(p.straggler->op)].name, "f");
  EXPECT_DOUBLE_EQ(p.straggler->excess_ns, 10.0);
  Report r;
  add_critical_paths(r, {g});
  ASSERT_EQ(r.critical_steps.size(), 1u);
  EXPECT_EQ(r.critical_steps[0].straggler_rank, 0);
  EXPECT_EQ(r.critical_steps[0].straggler_at, "recv_act on rank 1 (with rank 0)");
  EXPECT_EQ(r.critical_steps[0].straggler_cause, "f (COMP)");
  // Replayed unchanged: the measured times. Rank 0's compute twice as long: f [0,20], the send
  // arrives at 20, the receive ends 4 later, and rank 1's g runs [24,34]. Without the pairing,
  // rank 1 would not wait for rank 0 at all and the step would stay at 24.
  const WhatIf w = what_if({g}, {parse_scale_rule("rank0:comp=2")});
  EXPECT_DOUBLE_EQ(w.replayed.step_ns, 24.0);
  EXPECT_DOUBLE_EQ(w.predicted.step_ns, 34.0);
  ASSERT_FALSE(w.paths.critical_shares.empty());
  EXPECT_EQ(w.paths.critical_shares[0].rank, 0);
  EXPECT_EQ(w.paths.critical_shares[0].op, "f");
  EXPECT_DOUBLE_EQ(w.paths.critical_shares[0].mean_ns, 20.0);
}

TEST(StepGraph, ATransferWithoutItsOtherSideOrWithoutPeersIsCounted) {
  std::vector<RankTimeline> ranks = transfer_ranks();
  ranks[1].steps[0].ops[1].recv_from = {};  // an import's receive: no peers recorded
  StepGraph g = graph_of(ranks);
  EXPECT_TRUE(g.ops[1].partners.empty());
  EXPECT_EQ(g.unmatched_transfers, 1);  // rank 0's send to 1, never received
  EXPECT_EQ(g.transfers_without_peers, 1);
  // Unpaired, each side ends its own measured time after it started: replay gives them back.
  const GraphTimes t = replay(g, measured_model(g));
  EXPECT_EQ(t.end_ns[1], 14);
  EXPECT_EQ(t.end_ns[3], 14);
}

TEST(StepGraph, RefusesAWaitOnAnOpNotInTheStep) {
  std::vector<RankTimeline> ranks = test::two_rank_step();
  ranks[1].steps[0].ops[2].after = {9};
  StepGraphBuilder b;
  b.add(ranks[0]);
  try {
    b.add(ranks[1]);
    FAIL() << "accepted 'after' 9 of a step of 4 ops";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "rank 1, step 3, op 2 ('b'): 'after' names op 9, which is not another op of the "
                 "step (it has 4)");
  }
}

}  // namespace
}  // namespace commprof
