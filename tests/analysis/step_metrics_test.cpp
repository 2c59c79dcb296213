// SPDX-License-Identifier: MIT
// Per-step metrics on synthetic steps worked out by hand.
#include "analysis/step_metrics.hpp"

#include <gtest/gtest.h>

namespace commprof {
namespace {

OpRecord op(Category c, std::int64_t start, std::int64_t end, const std::string& stream = "") {
  OpRecord o;
  o.category = c;
  o.stream = stream.empty() ? category_name(c) : stream;
  o.name = "op";
  o.start_ns = start;
  o.end_ns = end;
  return o;
}

TEST(StepMetrics, HandWorkedStep) {
  // Window [0, 100). COMP [0,40) and [60,80); COMM [30,70); MEM [90,95).
  // |COMP| = 60, |COMM| = 40, COMM∩COMP = [30,40)+[60,70) = 20, exposed = [40,60) = 20,
  // busy = [0,80)+[90,95) = 85, idle = 15, overlap = 20/40, hidden = 20/min(40,60).
  StepRecord s;
  s.start_ns = 0;
  s.end_ns = 100;
  s.ops = {op(Category::kComp, 60, 80), op(Category::kComm, 30, 70), op(Category::kComp, 0, 40),
           op(Category::kMem, 90, 95)};
  const StepMetrics m = compute_step_metrics(s);
  EXPECT_EQ(m.wall_ns, 100);
  EXPECT_EQ(m.comp_ns, 60);
  EXPECT_EQ(m.comm_ns, 40);
  EXPECT_EQ(m.mem_ns, 5);
  EXPECT_EQ(m.busy_ns, 85);
  EXPECT_EQ(m.comm_comp_ns, 20);
  EXPECT_EQ(m.exposed_comm_ns, 20);
  EXPECT_EQ(m.idle_ns, 15);
  ASSERT_TRUE(m.overlap.has_value());
  EXPECT_EQ(*m.overlap, 0.5);
  ASSERT_TRUE(m.hidden_fraction.has_value());
  EXPECT_EQ(*m.hidden_fraction, 0.5);
}

// Sampled op timing: steps without ops give the step time, steps with ops the per-op figures.
TEST(StepMetrics, PlainStepsGiveTheStepTimeTimedStepsTheBusyTimes) {
  RankTimeline t;
  auto step = [&](int index, std::int64_t wall, bool with_ops) {
    StepRecord s;
    s.index = index;
    s.start_ns = index * 1000;
    s.end_ns = s.start_ns + wall;
    if (with_ops) s.ops = {op(Category::kComp, s.start_ns, s.start_ns + wall / 2)};
    t.steps.push_back(s);
  };
  step(0, 110, true);  // timed: 10% slower than the plain ones
  step(1, 100, false);
  step(2, 100, false);
  step(3, 130, true);
  step(4, 100, false);
  const RankSummary r = summarise_rank(t, "test");
  EXPECT_EQ(r.steps, 5);
  EXPECT_EQ(r.timed_steps, 2);
  EXPECT_DOUBLE_EQ(r.wall_ns.mean, 100);  // the plain steps'
  EXPECT_EQ(r.wall_ns.count, 3);
  EXPECT_DOUBLE_EQ(r.timed_wall_ns.mean, 120);
  EXPECT_DOUBLE_EQ(r.comp_ns.mean, 60);  // (55 + 65) / 2: the timed steps only
  EXPECT_EQ(r.comp_ns.count, 2);
  EXPECT_EQ(r.idle_ns.count, 2);
  // Every step with ops (activity, pair, shared): as before, all of them.
  RankTimeline all;
  all.steps = {t.steps[0], t.steps[3]};
  EXPECT_DOUBLE_EQ(summarise_rank(all, "test").wall_ns.mean, 120);
  // No step with ops (--op-timing step): a step time and no busy time at all (n/a, not 0).
  RankTimeline none;
  none.steps = {t.steps[1], t.steps[2]};
  const RankSummary n = summarise_rank(none, "test");
  EXPECT_DOUBLE_EQ(n.wall_ns.mean, 100);
  EXPECT_EQ(n.comp_ns.count, 0);
}

TEST(StepMetrics, SeveralStreamsOfOneCategoryCountOnce) {
  // Two COMM streams: [0,50) and [25,75) → |COMM| = 75, not 100. COMP [0,100) hides all of it.
  StepRecord s;
  s.start_ns = 0;
  s.end_ns = 100;
  s.ops = {op(Category::kComm, 0, 50, "COMM"), op(Category::kComm, 25, 75, "COMM2"),
           op(Category::kComp, 0, 100)};
  const StepMetrics m = compute_step_metrics(s);
  EXPECT_EQ(m.comm_ns, 75);
  EXPECT_EQ(m.comm_comp_ns, 75);
  EXPECT_EQ(m.exposed_comm_ns, 0);
  EXPECT_EQ(*m.overlap, 1.0);
  EXPECT_EQ(*m.hidden_fraction, 1.0);  // min(|COMM|, |COMP|) = 75
  EXPECT_EQ(m.idle_ns, 0);
}

TEST(StepMetrics, NoCommunicationGivesNoOverlapNotNaN) {
  StepRecord s;
  s.start_ns = 0;
  s.end_ns = 10;
  s.ops = {op(Category::kComp, 0, 10)};
  const StepMetrics m = compute_step_metrics(s);
  EXPECT_FALSE(m.overlap.has_value());
  EXPECT_FALSE(m.hidden_fraction.has_value());
  EXPECT_EQ(m.exposed_comm_ns, 0);
}

TEST(StepMetrics, SerializedCommIsFullyExposed) {
  // COMM touches COMP on both sides but never overlaps it.
  StepRecord s;
  s.start_ns = 0;
  s.end_ns = 30;
  s.ops = {op(Category::kComp, 0, 10), op(Category::kComm, 10, 20), op(Category::kComp, 20, 30)};
  const StepMetrics m = compute_step_metrics(s);
  EXPECT_EQ(*m.overlap, 0.0);
  EXPECT_EQ(*m.hidden_fraction, 0.0);
  EXPECT_EQ(m.exposed_comm_ns, 10);
  EXPECT_EQ(m.idle_ns, 0);
}

TEST(StepMetrics, OpsOutsideTheStepWidenItsWindow) {
  StepRecord s;
  s.start_ns = 10;
  s.end_ns = 20;
  s.ops = {op(Category::kComp, 5, 25), op(Category::kMem, 25, 25)};
  const StepMetrics m = compute_step_metrics(s);
  EXPECT_EQ(m.wall_ns, 20);
  EXPECT_EQ(m.idle_ns, 0);
}

TEST(RankSummary, AveragesMeasuredStepsOnly) {
  RankTimeline t;
  t.rank = 1;
  t.world_size = 2;
  t.host = "n1";
  StepRecord warm;
  warm.warmup = true;
  warm.end_ns = 1000;
  warm.ops = {op(Category::kComm, 0, 1000)};
  StepRecord a;  // wall 100, COMM 40 of which 10 hidden: overlap 0.25
  a.start_ns = 1000;
  a.end_ns = 1100;
  a.ops = {op(Category::kComp, 1000, 1070), op(Category::kComm, 1060, 1100)};
  StepRecord b;  // wall 300, COMP only: overlap undefined
  b.start_ns = 2000;
  b.end_ns = 2300;
  b.ops = {op(Category::kComp, 2000, 2100)};
  t.steps = {warm, a, b};
  const RankSummary s = summarise_rank(t, "rank-1.json");
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.warmup_steps, 1);
  EXPECT_EQ(s.wall_ns.mean, 200.0);
  EXPECT_EQ(s.wall_ns.min, 100.0);
  EXPECT_EQ(s.wall_ns.max, 300.0);
  EXPECT_EQ(s.idle_ns.mean, (0.0 + 200.0) / 2);
  EXPECT_EQ(s.overlap.count, 1);
  EXPECT_EQ(s.overlap.mean, 0.25);
  EXPECT_EQ(s.exposed_comm_ns.max, 30.0);
  EXPECT_EQ(s.exposed_comm_ns.min, 0.0);
}

}  // namespace
}  // namespace commprof
