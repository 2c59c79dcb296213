// SPDX-License-Identifier: MIT
// The overlap slowdown against answers worked out by hand: overlap shares of ops on a timeline
// drawn here, and factors from ops whose times were chosen to give round answers.
#include "workloads/prediction/overlap_slowdown.hpp"

#include <gtest/gtest.h>

#include "collectives/links/link_model.hpp"

namespace commprof {
namespace {

GraphOp op(int rank, Category c, std::int64_t start, std::int64_t end) {
  GraphOp o;
  o.rank = rank;
  o.category = c;
  o.start_ns = start;
  o.end_ns = end;
  return o;
}

// Rank 0: COMP [0, 100) and [200, 300), COMM [50, 150) and [250, 400). Rank 1: COMP [0, 100)
// alone, and a COMM op of rank 0's time that must not count for rank 1.
TEST(OverlapSlowdown, OverlapSharesAreTheOtherKindsCoverOnTheSameRank) {
  StepGraph g;
  g.ops = {op(0, Category::kComp, 0, 100),  op(0, Category::kComp, 200, 300),
           op(0, Category::kComm, 50, 150), op(0, Category::kComm, 250, 400),
           op(0, Category::kMem, 0, 400),   op(1, Category::kComp, 0, 100)};
  g.ranks = {{0, 0, 0, 5}, {1, 0, 5, 1}};
  const GraphTimes t = measured_times(g);
  // Own times: the COMM ops' from their last arrival, 100 and 60 (window [340, 400)).
  const std::vector<std::int64_t> own = {100, 100, 100, 60, 400, 100};
  const std::vector<double> phi = overlap_fractions(g, t, own);
  EXPECT_DOUBLE_EQ(phi[0], 0.5);  // COMP [0,100) beside COMM [50,150): 50 of 100
  EXPECT_DOUBLE_EQ(phi[1], 0.5);  // COMP [200,300) beside COMM [250,400): 50 of 100
  EXPECT_DOUBLE_EQ(phi[2], 0.5);  // COMM [50,150) beside COMP [0,100): 50 of 100
  EXPECT_DOUBLE_EQ(phi[3], 0.0);  // its window [340,400) has no COMP beside it
  EXPECT_DOUBLE_EQ(phi[4], 0.0);  // MEM ops are not measured
  EXPECT_DOUBLE_EQ(phi[5], 0.0);  // rank 1's COMP: rank 0's COMM is not beside it
  // The whole of COMM op 3 ([250,400)): 50 of 150 beside COMP [200,300).
  const std::vector<std::int64_t> whole = {100, 100, 100, 150, 400, 100};
  EXPECT_DOUBLE_EQ(overlap_fractions(g, t, whole)[3], 50.0 / 150.0);
}

OpObservation comp(const std::string& cls, double work, double ns, double overlap) {
  OpObservation o;
  o.cls = cls;
  o.work = work;
  o.ns = ns;
  o.overlap = overlap;
  return o;
}

OpObservation comm(std::uint64_t bytes, double ns, double overlap) {
  OpObservation o;
  o.comm = true;
  o.collective = CollectiveKind::kAllReduce;
  o.group = "dp";
  o.bytes = bytes;
  o.comm_size = 2;
  o.ns = ns;
  o.overlap = overlap;
  return o;
}

// allreduce on 2 ranks: 5 µs × 2 ring steps + S × 1 / 10 GB/s.
LinkModel links() {
  LinkModel m;
  LinkFit f;
  f.collective = CollectiveKind::kAllReduce;
  f.latency_us = 5.0;
  f.busbw_gbps = 10.0;
  m.fits.push_back(f);
  return m;
}

TEST(OverlapSlowdown, ComputeSlowdownIsMeasuredAgainstTheClassAloneRate) {
  // gemm: alone 1000 FLOPs in 500 ns (2 FLOP/ns); overlapped half its time, 1000 FLOPs in
  // 600 ns: reference 500 ns, slowdown (600 − 500) / (0.5 × 500) = 0.4.
  // wgrad is never alone: 1000 FLOPs in 700 ns fully overlapped.
  std::vector<OpObservation> ops = {
      comp("gemm/flop", 1000, 500, 0.0), comp("gemm/flop", 1000, 600, 0.5),
      comp("wgrad/flop", 1000, 700, 1.0), comp("norm/byte", 400, 100, 0.02)};
  OverlapSlowdown s = measure_slowdown(ops, LinkModel{});
  EXPECT_DOUBLE_EQ(s.alone_rate.at("gemm/flop"), 2.0);
  const SlowdownFactor& gemm = s.comp.at("gemm/flop");
  EXPECT_EQ(gemm.alone_ops, 1);
  EXPECT_EQ(gemm.overlapped_ops, 1);
  EXPECT_TRUE(gemm.measured_slowdown);
  EXPECT_NEAR(gemm.slowdown, 0.4, 1e-12);
  EXPECT_NEAR(gemm.factor(1.0), 1.4, 1e-12);
  EXPECT_DOUBLE_EQ(gemm.mean_overlap, 0.5);
  // Pooled over the FLOP classes that had both: gemm's alone, and with one overlapped op gemm
  // takes the pool (the same 0.4 here). wgrad, never alone, takes it too: its alone time is
  // 700 / 1.4 = 500 ns, 2 FLOP/ns.
  EXPECT_NEAR(s.comp_pooled.at("flop").slowdown, 0.4, 1e-12);
  EXPECT_NEAR(s.comp_factor("gemm/flop").slowdown, 0.4, 1e-12);
  EXPECT_NEAR(s.alone_rate.at("wgrad/flop"), 2.0, 1e-12);
  EXPECT_NEAR(s.comp_factor("wgrad/flop").slowdown, 0.4, 1e-12);
  // Under 5% overlap counts as alone: norm's rate is its own; its kind (bytes) measured no
  // slowdown, so none applies.
  EXPECT_DOUBLE_EQ(s.alone_rate.at("norm/byte"), 4.0);
  EXPECT_FALSE(s.comp.at("norm/byte").measured_slowdown);
  EXPECT_DOUBLE_EQ(s.comp_factor("norm/byte").slowdown, 0.0);

  // A class with kMinClassOps overlapped ops keeps its own: big, alone at 2 FLOP/ns, 100 ops of
  // 1000 FLOPs fully overlapped in 1000 ns: (1000 − 500) / 500 = 1. The FLOP pool becomes
  // (100 × 500 + 100) / (100 × 500 + 0.5 × 500) = 50100 / 50250, which gemm takes.
  ops.push_back(comp("big/flop", 1000, 500, 0.0));
  for (int i = 0; i < kMinClassOps; ++i) ops.push_back(comp("big/flop", 1000, 1000, 1.0));
  s = measure_slowdown(ops, LinkModel{});
  EXPECT_NEAR(s.comp_factor("big/flop").slowdown, 1.0, 1e-12);
  EXPECT_NEAR(s.comp_factor("gemm/flop").slowdown, 50100.0 / 50250.0, 1e-12);
  EXPECT_NEAR(s.comp.at("gemm/flop").slowdown, 0.4, 1e-12);  // measured, not applied
}

TEST(OverlapSlowdown, CommunicationIsMeasuredAgainstTheLinkModel) {
  // 1 MB (10⁶ B) on 2 ranks: 10 µs + 100 µs = 110 µs by the link model. Alone in 132 µs: alone
  // ratio 1.2; overlapped half its time in 158.4 µs: (158.4 − 1.2 × 110) / (0.5 × 1.2 × 110)
  // = 26.4 / 66 = 0.4.
  const std::vector<OpObservation> ops = {comm(1000000, 132000, 0.0), comm(1000000, 158400, 0.5)};
  const OverlapSlowdown s = measure_slowdown(ops, links());
  const CommKey key{CollectiveKind::kAllReduce, "dp", size_class(1000000), false};
  const SlowdownFactor* f = s.comm_factor(key);
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->alone, 1.2, 1e-12);
  EXPECT_NEAR(f->slowdown, 0.4, 1e-12);
  EXPECT_EQ(f->alone_ops, 1);
  EXPECT_EQ(f->overlapped_ops, 1);
  // Another size of dp's all-reduce takes the communicator kind's factor over every size (here
  // the same two ops); another collective none.
  const SlowdownFactor* other =
      s.comm_factor({CollectiveKind::kAllReduce, "dp", size_class(64), false});
  ASSERT_NE(other, nullptr);
  EXPECT_NEAR(other->slowdown, 0.4, 1e-12);
  EXPECT_EQ(s.comm_factor({CollectiveKind::kAllGather, "dp", size_class(64), false}), nullptr);
  // A size class of overlapped ops only takes the alone ratio of its kind: 2 MB, 210 µs by the
  // model, 302.4 µs at overlap 1: (302.4 − 1.2 × 210) / (1.2 × 210) = 50.4 / 252 = 0.2.
  std::vector<OpObservation> more = ops;
  more.push_back(comm(2000000, 302400, 1.0));
  const OverlapSlowdown t = measure_slowdown(more, links());
  const SlowdownFactor* big =
      t.comm_factor({CollectiveKind::kAllReduce, "dp", size_class(2000000), false});
  ASSERT_NE(big, nullptr);
  EXPECT_NEAR(big->alone, 1.2, 1e-12);
  EXPECT_NEAR(big->slowdown, 0.2, 1e-12);
  // Without a fit the ops are counted and left out.
  EXPECT_EQ(measure_slowdown(ops, LinkModel{}).comm_without_fit, 2);
}

// One rank, a COMP op and a COMM op of 100 µs each, both ready at 0: fully overlapped at first.
// COMP slows by 0.5 per unit of overlap, COMM by 0.2. Replay 1: COMP 150, COMM 120 µs. Then COMP
// is overlapped 120/150 = 0.8 of its time, damped with the 1 it was given: 0.9, 145 µs; then
// (120/145 + 0.9) / 2: 143.190; 142.546; 142.319; 142.239 (within 0.1% of the step before:
// settled after 6 replays). The fixed point solves A = 100 (1 + 0.5 × 120 / A):
// A = 50 + √(2500 + 6000) = 142.195 µs. COMM stays 120 µs.
TEST(OverlapSlowdown, TheReplayAppliesTheSlowdownToAFixedPoint) {
  StepGraph g;
  g.ops = {op(0, Category::kComp, 0, 0), op(0, Category::kComm, 0, 0)};
  g.ops[0].stream = "COMP";
  g.ops[1].stream = "COMM";
  g.ranks = {{0, 0, 0, 2}};
  const SlowdownReplay r = replay_with_slowdown(g, {0, 0}, {100000.0, 100000.0}, {0.5, 0.2});
  EXPECT_EQ(r.step_alone_ns, 100000);
  EXPECT_TRUE(r.settled);
  EXPECT_EQ(r.replays, 6);
  EXPECT_EQ(r.model.op_ns[0], 142239);
  EXPECT_EQ(r.model.op_ns[1], 120000);
  EXPECT_NEAR(static_cast<double>(r.model.op_ns[0]), 142195.0, 100.0);
  EXPECT_EQ(step_outcome(g, r.times).step_ns, 142239);
  // Without slopes: one replay of the base times, nothing iterated.
  const SlowdownReplay plain = replay_with_slowdown(g, {0, 0}, {100000.0, 100000.0}, {0.0, 0.0});
  EXPECT_EQ(plain.replays, 0);
  EXPECT_EQ(step_outcome(g, plain.times).step_ns, 100000);
}

TEST(OverlapSlowdown, SizeClassesArePowersOfTwo) {
  EXPECT_EQ(size_class(1), 0);
  EXPECT_EQ(size_class(1023), 9);
  EXPECT_EQ(size_class(1024), 10);
  EXPECT_EQ(size_class_name(10), "[1 KiB, 2 KiB)");
  EXPECT_EQ(size_class_name(size_class(3u << 20)), "[2 MiB, 4 MiB)");
}

}  // namespace
}  // namespace commprof
