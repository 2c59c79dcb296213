// SPDX-License-Identifier: MIT
// The replay of a step graph and `whatif`'s scale rules, on the two-rank step of
// tests/support/hand_timelines.hpp whose answers are worked out by hand (times in ns):
//
//   rank 0: a COMP [0,10]  ar COMM [10,30] after a  b COMP [12,20]  c COMP [30,40] after ar
//   rank 1: a COMP [0,20]  ar COMM [20,30] after a  b COMP [20,28]  c COMP [31,36] after ar
//
// ar is one allreduce of dp0 (seq 0) on both ranks: rank 1 arrives last, at 20, and ar ends at
// 30 on both; the step ends with rank 0's c at 40 (tests/analysis/graph/step_graph_test.cpp has
// its critical path).
#include "workloads/prediction/what_if.hpp"

#include <gtest/gtest.h>

#include "analysis/graph/critical_path.hpp"
#include "analysis/graph/step_graph.hpp"
#include "src/core/errors.hpp"
#include "support/hand_graphs.hpp"
#include "support/hand_timelines.hpp"
#include "workloads/prediction/replay.hpp"

namespace commprof {
namespace {

using test::allreduce_op;
using test::described;
using test::graph_of;
using test::one_step_rank;
using test::Segments;

TEST(Replay, MeasuredModelGivesTheMeasuredStep) {
  const StepGraph g = graph_of(test::two_rank_step());
  const GraphTimes measured = measured_times(g);
  const GraphTimes replayed = replay(g, measured_model(g));
  EXPECT_EQ(replayed.start_ns, measured.start_ns);
  EXPECT_EQ(replayed.end_ns, measured.end_ns);
  const StepOutcome o = step_outcome(g, measured);
  EXPECT_EQ(o.step_ns, 40);
  // Rank 0: COMM [10,30] less COMP [0,10] [12,20] [30,40] = 12; rank 1: [20,30] less [0,28] = 2.
  EXPECT_DOUBLE_EQ(o.exposed_comm_ns, 7.0);
  ASSERT_TRUE(o.overlap.has_value());
  EXPECT_DOUBLE_EQ(*o.overlap, (8.0 / 20 + 8.0 / 10) / 2);
}

TEST(Replay, AFasterStragglerMovesThePath) {
  // Rank 1's a as fast as rank 0's: both arrive at 10, ar ends at 20, rank 0's c runs [20,30],
  // rank 1's c keeps its host gap of 1 and runs [21,26]; the step ends at 30 and its path is
  // rank 0's own. Its c waited for b and ar, both ending at 20: a tie goes to the stream's own
  // order (b, then a, with b's host gap of 2).
  const StepGraph g = graph_of(test::two_rank_step());
  ReplayModel m = measured_model(g);
  m.op_ns[4] = 10;  // rank 1's a
  const GraphTimes t = replay(g, m);
  EXPECT_EQ(t.end_ns[1], 20);
  EXPECT_EQ(t.end_ns[5], 20);
  EXPECT_EQ(t.start_ns[3], 20);
  EXPECT_EQ(t.start_ns[7], 21);
  EXPECT_EQ(t.end_ns[7], 26);
  EXPECT_EQ(step_outcome(g, t).step_ns, 30);
  const CriticalPath p = critical_path(g, t);
  EXPECT_EQ(described(g, p),
            (Segments{{"0:COMP:a", 10}, {"0:gap:b", 2}, {"0:COMP:b", 8}, {"0:COMP:c", 10}}));
  EXPECT_FALSE(p.straggler.has_value());  // both arrived together
}

TEST(Replay, CollectivesInDifferentOrdersCannotBeReplayed) {
  // Rank 0 issues dp0's then tp0's collective on one stream, rank 1 the other way round: each
  // waits for the other forever.
  const StepGraph g =
      graph_of({one_step_rank(0, {allreduce_op("dp0", 0, 0, 10), allreduce_op("tp0", 0, 10, 20)}),
                one_step_rank(1, {allreduce_op("tp0", 0, 0, 10), allreduce_op("dp0", 0, 10, 20)})});
  try {
    replay(g, measured_model(g));
    FAIL() << "replayed a deadlock";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step 3 cannot be replayed: 4 of its 4 ops"),
              std::string::npos)
        << e.what();
  }
}

TEST(WhatIf, ScaleRulesParse) {
  const ScaleRule a = parse_scale_rule("rank3:comm[dp]=0.5");
  EXPECT_EQ(a.rank, 3);
  EXPECT_EQ(a.kind, "comm");
  EXPECT_EQ(a.group, "dp");
  EXPECT_DOUBLE_EQ(a.factor, 0.5);
  const ScaleRule b = parse_scale_rule("gap=0");
  EXPECT_EQ(b.rank, -1);
  EXPECT_EQ(b.kind, "gap");
  EXPECT_DOUBLE_EQ(b.factor, 0.0);
  for (const char* bad : {"comp", "comp=x", "comp=-1", "gpu=2", "comp[dp]=1", "comm[]=1",
                          "rankx:comp=1", "rank3comp=1", "comp=1.5x"}) {
    EXPECT_THROW(parse_scale_rule(bad), ConfigError) << bad;
  }
}

TEST(WhatIf, RulesScaleTheirOpsAndACollectiveByItsSlowestMember) {
  // Rank 1's compute twice as long: a [0,40], so ar's last arrival is at 40 and it ends 10 later
  // (the rule is on compute), at 50; rank 0's c runs [50,60]. Rank 1's b runs [40,56] and its c
  // for 10: [56,66], the step's end: its host gap of 1 (ready at 30, started at 31) is absorbed,
  // as c is ready 26 later than measured and the host had issued it by 31. Path: rank 1's a, b,
  // c.
  const StepGraph g = graph_of(test::two_rank_step());
  const ReplayModel slow = scaled_model(g, measured_model(g), {parse_scale_rule("rank1:comp=2")});
  EXPECT_EQ(slow.op_ns[4], 40);  // rank 1's a
  EXPECT_EQ(slow.op_ns[0], 10);  // rank 0's a, untouched
  EXPECT_EQ(step_outcome(g, replay(g, slow)).step_ns, 66);
  // A rule on rank 1's communication scales the whole collective on both ranks.
  const ReplayModel comm =
      scaled_model(g, measured_model(g), {parse_scale_rule("rank1:comm[dp]=3")});
  EXPECT_EQ(comm.op_ns[1], 30);
  EXPECT_EQ(comm.op_ns[5], 30);
  // ar ends at 20 + 30; rank 0's c runs [50,60], rank 1's [50,55] (its gap absorbed).
  EXPECT_EQ(step_outcome(g, replay(g, comm)).step_ns, 60);
  const WhatIf w = what_if({g}, {parse_scale_rule("rank1:comp=2")});
  EXPECT_EQ(w.steps, 1);
  EXPECT_DOUBLE_EQ(w.measured.step_ns, 40.0);
  EXPECT_DOUBLE_EQ(w.replayed.step_ns, 40.0);
  EXPECT_DOUBLE_EQ(w.predicted.step_ns, 66.0);
  EXPECT_DOUBLE_EQ(w.predicted.path_ns, 66.0);
  EXPECT_DOUBLE_EQ(w.predicted.gap_ns, 0.0);
  ASSERT_FALSE(w.paths.critical_shares.empty());
  EXPECT_EQ(w.paths.critical_shares[0].rank, 1);  // rank 1's a: 40 of the path's 66
  EXPECT_EQ(w.paths.critical_shares[0].op, "a");
  EXPECT_DOUBLE_EQ(w.paths.critical_shares[0].mean_ns, 40.0);
  // Kept whole where the op became ready no later than measured: gaps scaled up stay.
  const WhatIf gaps = what_if({g}, {parse_scale_rule("gap=3")});
  EXPECT_DOUBLE_EQ(gaps.predicted.step_ns, 40.0);  // rank 0's c ends the step, rank 1's [33,38]
}

TEST(WhatIf, SerializedRunsEachRanksOpsInFileOrderWithTheMeasuredGaps) {
  // Each op now also waits for the one before it in its rank's file: a, ar, b, c. ar still
  // arrives at 10 and 20 and ends at 30. Rank 0's b waits for ar: ready at 30, 20 later than
  // measured, which absorbs its gap of 2 (the host issued it at 12): [30,38], and c [38,48].
  // Rank 1's b runs [30,38] and its c, ready at 38, 8 later than measured (its gap of 1
  // absorbed): [38,43]. The step: 48, against 40.
  const StepGraph g = graph_of(test::two_rank_step());
  const WhatIf w = what_if({g}, {}, true);
  EXPECT_DOUBLE_EQ(w.replayed.step_ns, 40.0);
  EXPECT_DOUBLE_EQ(w.predicted.step_ns, 48.0);
  // Serialized, nothing overlaps the all-reduce: rank 0 sees it from 10 to 30, rank 1 from 20.
  ASSERT_TRUE(w.predicted.overlap.has_value());
  EXPECT_DOUBLE_EQ(*w.predicted.overlap, 0.0);
  // The serialized graph keeps the ops and adds only the order.
  const StepGraph s = serialized(g);
  ASSERT_EQ(s.ops.size(), g.ops.size());
  EXPECT_EQ(s.ops[2].preds, (std::vector<int>{0, 1}));  // rank 0's b: after a, then ar
  EXPECT_EQ(s.ops[3].preds, g.ops[3].preds);            // c already waited for b and ar
}

// A pipeline's transfer between two ranks: rank 0 computes f [0,10] and sends its output to
// rank 1 [10,14]; rank 1 posts its receive early [2,14] and computes g [14,24] on it. The send
// and the receive pair (send_to 1, recv_from 0): both end 4 after the last side arrived (rank 0,
// at 10). The path: rank 0's f (10), its send (4, the side that arrived last), rank 1's g (10).

}  // namespace
}  // namespace commprof
