// SPDX-License-Identifier: MIT
// The step graph, its critical path and its replay on small steps whose answers are worked out
// by hand (times in ns; every rank's step starts at 0):
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

#include "analysis/graph/replay.hpp"
#include "analysis/graph/step_graph.hpp"
#include "analysis/graph/what_if.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

OpRecord op(const std::string& name, Category c, std::int64_t start, std::int64_t end,
            std::vector<std::int32_t> after = {}) {
  OpRecord r;
  r.name = name;
  r.category = c;
  r.stream = category_name(c);
  r.start_ns = start;
  r.end_ns = end;
  r.after = std::move(after);
  return r;
}

OpRecord allreduce(const std::string& comm, std::int64_t seq, std::int64_t start, std::int64_t end,
                   std::vector<std::int32_t> after = {}) {
  OpRecord r = op("ar", Category::kComm, start, end, std::move(after));
  r.collective = "allreduce";
  r.comm = comm;
  r.comm_size = 2;
  r.seq = seq;
  r.bytes = 1024;
  return r;
}

RankTimeline rank_of(int rank, std::vector<OpRecord> ops) {
  RankTimeline t;
  t.rank = rank;
  t.world_size = 2;
  StepRecord s;
  s.index = 3;
  for (const OpRecord& o : ops) s.end_ns = std::max(s.end_ns, o.end_ns);
  s.ops = std::move(ops);
  t.steps.push_back(std::move(s));
  return t;
}

std::vector<RankTimeline> two_ranks() {
  return {rank_of(0, {op("a", Category::kComp, 0, 10), allreduce("dp0", 0, 10, 30, {0}),
                      op("b", Category::kComp, 12, 20), op("c", Category::kComp, 30, 40, {1})}),
          rank_of(1, {op("a", Category::kComp, 0, 20), allreduce("dp0", 0, 20, 30, {0}),
                      op("b", Category::kComp, 20, 28), op("c", Category::kComp, 31, 36, {1})})};
}

StepGraph graph_of(const std::vector<RankTimeline>& ranks) {
  StepGraphBuilder b;
  for (const RankTimeline& t : ranks) b.add(t);
  std::vector<StepGraph> graphs = b.finish();
  EXPECT_EQ(graphs.size(), 1u);
  return graphs.at(0);
}

// "rank:category:name[:gap]" for each segment, in time order, with its length.
std::vector<std::pair<std::string, std::int64_t>> described(const StepGraph& g,
                                                            const CriticalPath& p) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const PathSegment& s : p.segments) {
    const GraphOp& o = g.ops[static_cast<std::size_t>(s.op)];
    out.emplace_back(std::to_string(o.rank) + ":" + segment_category(g, s) + ":" + o.name,
                     s.length_ns());
  }
  return out;
}

using Segments = std::vector<std::pair<std::string, std::int64_t>>;

TEST(StepGraph, StreamOrderWaitsAndMatching) {
  const StepGraph g = graph_of(two_ranks());
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
  const StepGraph g = graph_of(two_ranks());
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
  std::vector<RankTimeline> ranks = two_ranks();
  ranks[1].steps[0].ops[3] = op("c", Category::kComp, 31, 45, {1});
  const StepGraph g = graph_of(ranks);
  const CriticalPath p = critical_path(g, measured_times(g));
  EXPECT_EQ(described(g, p),
            (Segments{{"1:COMP:a", 20}, {"1:COMM:ar", 10}, {"1:gap:c", 1}, {"1:COMP:c", 14}}));
  EXPECT_EQ(p.length_ns(), 45);
}

TEST(CriticalPath, WithoutRecordedWaitsFollowsStreamsAndMatching) {
  // An import: no "after". c on rank 0 then follows b alone, and nothing ties ar to a.
  std::vector<RankTimeline> ranks = two_ranks();
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

TEST(Replay, MeasuredModelGivesTheMeasuredStep) {
  const StepGraph g = graph_of(two_ranks());
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
  const StepGraph g = graph_of(two_ranks());
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
      graph_of({rank_of(0, {allreduce("dp0", 0, 0, 10), allreduce("tp0", 0, 10, 20)}),
                rank_of(1, {allreduce("tp0", 0, 0, 10), allreduce("dp0", 0, 10, 20)})});
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
  // (the rule is on compute), at 50; rank 0's c runs [50,60]. Rank 1's b runs [40,56] and its c,
  // 1 after (its host gap) for 10: [57,67], the step's end. Path: rank 1's a, b, gap, c.
  const StepGraph g = graph_of(two_ranks());
  const ReplayModel slow = scaled_model(g, measured_model(g), {parse_scale_rule("rank1:comp=2")});
  EXPECT_EQ(slow.op_ns[4], 40);  // rank 1's a
  EXPECT_EQ(slow.op_ns[0], 10);  // rank 0's a, untouched
  EXPECT_EQ(step_outcome(g, replay(g, slow)).step_ns, 67);
  // A rule on rank 1's communication scales the whole collective on both ranks.
  const ReplayModel comm =
      scaled_model(g, measured_model(g), {parse_scale_rule("rank1:comm[dp]=3")});
  EXPECT_EQ(comm.op_ns[1], 30);
  EXPECT_EQ(comm.op_ns[5], 30);
  // ar ends at 20 + 30; rank 0's c runs [50,60], rank 1's [51,56].
  EXPECT_EQ(step_outcome(g, replay(g, comm)).step_ns, 60);
  const WhatIf w = what_if({g}, {parse_scale_rule("rank1:comp=2")});
  EXPECT_EQ(w.steps, 1);
  EXPECT_DOUBLE_EQ(w.measured.step_ns, 40.0);
  EXPECT_DOUBLE_EQ(w.replayed.step_ns, 40.0);
  EXPECT_DOUBLE_EQ(w.predicted.step_ns, 67.0);
  EXPECT_DOUBLE_EQ(w.predicted.path_ns, 67.0);
  EXPECT_DOUBLE_EQ(w.predicted.gap_ns, 1.0);
  ASSERT_FALSE(w.paths.critical_shares.empty());
  EXPECT_EQ(w.paths.critical_shares[0].rank, 1);  // rank 1's a: 40 of the path's 67
  EXPECT_EQ(w.paths.critical_shares[0].op, "a");
  EXPECT_DOUBLE_EQ(w.paths.critical_shares[0].mean_ns, 40.0);
}

TEST(WhatIf, SerializedRunsEachRanksOpsInFileOrderWithTheMeasuredGaps) {
  // Each op now also waits for the one before it in its rank's file: a, ar, b, c. ar still
  // arrives at 10 and 20 and ends at 30. Rank 0's b waits for ar: ready at 30, its measured gap
  // of 2 (it started at 12, ready at 10) puts it at [32,40], and c at [40,50]. Rank 1's b runs
  // [30,38] and its c, ready at 38, 1 later (its gap): [39,44]. The step: 50, against 40.
  const StepGraph g = graph_of(two_ranks());
  const WhatIf w = what_if({g}, {}, true);
  EXPECT_DOUBLE_EQ(w.replayed.step_ns, 40.0);
  EXPECT_DOUBLE_EQ(w.predicted.step_ns, 50.0);
  // Serialized, nothing overlaps the all-reduce: rank 0 sees it from 10 to 30, rank 1 from 20.
  ASSERT_TRUE(w.predicted.overlap.has_value());
  EXPECT_DOUBLE_EQ(*w.predicted.overlap, 0.0);
  // The serialized graph keeps the ops and adds only the order.
  const StepGraph s = serialized(g);
  ASSERT_EQ(s.ops.size(), g.ops.size());
  EXPECT_EQ(s.ops[2].preds, (std::vector<int>{0, 1}));  // rank 0's b: after a, then ar
  EXPECT_EQ(s.ops[3].preds, g.ops[3].preds);            // c already waited for b and ar
}

TEST(StepGraph, RefusesAWaitOnAnOpNotInTheStep) {
  std::vector<RankTimeline> ranks = two_ranks();
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
