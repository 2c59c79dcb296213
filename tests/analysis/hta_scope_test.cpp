// SPDX-License-Identifier: MIT
// The overlap and temporal breakdown as HTA computes them, on hand-built steps whose answers are
// worked out below: which steps are pooled, the rounding to whole microseconds, the span.
#include "analysis/hta_scope.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "src/timeline/op_record.hpp"

namespace commprof {
namespace {

OpRecord op(Category category, std::int64_t start_ns, std::int64_t end_ns) {
  OpRecord o;
  o.category = category;
  o.start_ns = start_ns;
  o.end_ns = end_ns;
  return o;
}

constexpr Category kComp = Category::kComp;
constexpr Category kComm = Category::kComm;
constexpr Category kMem = Category::kMem;

// Step 1: COMP [1,5) us, COMM [3,9), MEM [9,10). Step 2: COMP [20,22), COMM [21,23).
// Pooled: |COMM| = 6 + 2 = 8 us, |COMP| = 4 + 2 = 6, |COMM ∩ COMP| = [3,5) + [21,22) = 3,
// |∪ all| = [1,10) + [20,23) = 12, span = 23 − 1 = 22 us.
void add_two_steps(HtaScope& scope) {
  scope.add_step(
      std::vector<OpRecord>{op(kComp, 1000, 5000), op(kComm, 3000, 9000), op(kMem, 9000, 10000)});
  scope.add_step(std::vector<OpRecord>{op(kComp, 20000, 22000), op(kComm, 21000, 23000)});
}

TEST(HtaScope, TheLastStepIsLeftOutAndTheRestPooledIntoOneRatio) {
  HtaScope scope;
  add_two_steps(scope);
  // The last step: all communication hidden, and long; HTA leaves it out.
  scope.add_step(std::vector<OpRecord>{op(kComp, 30000, 90000), op(kComm, 30000, 90000)});
  const HtaFigures f = scope.figures();
  EXPECT_EQ(f.steps, 2);
  EXPECT_EQ(f.steps_of, 3);
  EXPECT_EQ(f.comm_ns, 8000);
  EXPECT_EQ(f.comp_ns, 6000);
  EXPECT_EQ(f.comm_comp_ns, 3000);
  EXPECT_EQ(f.busy_ns, 12000);
  EXPECT_EQ(f.span_ns, 22000);
  EXPECT_DOUBLE_EQ(*f.overlap(), 3.0 / 8.0);  // the mean of the steps' ratios would be 0.58
  EXPECT_DOUBLE_EQ(*f.idle(), 10.0 / 22.0);
  EXPECT_DOUBLE_EQ(*f.compute(), 6.0 / 22.0);
  EXPECT_DOUBLE_EQ(*f.non_compute(), 6.0 / 22.0);
}

TEST(HtaScope, OneStepIsPooledWhole) {
  HtaScope scope;
  scope.add_step(std::vector<OpRecord>{op(kComp, 0, 4000), op(kComm, 2000, 10000)});
  const HtaFigures f = scope.figures();
  EXPECT_EQ(f.steps, 1);
  EXPECT_EQ(f.steps_of, 1);
  EXPECT_DOUBLE_EQ(*f.overlap(), 2.0 / 8.0);
  EXPECT_DOUBLE_EQ(*f.idle(), 0.0);
  EXPECT_DOUBLE_EQ(*f.compute(), 0.4);
  EXPECT_DOUBLE_EQ(*f.non_compute(), 0.6);
}

// Ops of one step run past the next one's first ops (kernels are placed by launch): the pool is
// the union across steps, not a sum of the steps' unions.
TEST(HtaScope, StepsThatOverlapInTimeCountTheirCommonTimeOnce) {
  HtaScope scope;
  scope.add_step(std::vector<OpRecord>{op(kComm, 0, 10000)});
  scope.add_step(std::vector<OpRecord>{op(kComm, 5000, 12000), op(kComp, 8000, 11000)});
  scope.add_step(std::vector<OpRecord>{});
  const HtaFigures f = scope.figures();
  EXPECT_EQ(f.comm_ns, 12000);
  EXPECT_EQ(f.comm_comp_ns, 3000);
  EXPECT_DOUBLE_EQ(*f.overlap(), 0.25);
}

// Start rounded up, end down, to whole microseconds: [0.5, 3.5) us is [1, 3); [1.2, 1.8) rounds
// to less than nothing and is left out; [8, 8.5) rounds to an instant, which still ends the span.
TEST(HtaScope, OpsAreRoundedInwardToWholeMicroseconds) {
  HtaScope scope;
  scope.add_step(std::vector<OpRecord>{op(kComm, 500, 3500), op(kComp, 1200, 1800),
                                       op(kComp, 2999, 7001), op(kMem, 8000, 8500)});
  const HtaFigures f = scope.figures();
  EXPECT_EQ(f.comm_ns, 2000);    // [1, 3)
  EXPECT_EQ(f.comp_ns, 4000);    // [3, 7)
  EXPECT_EQ(f.comm_comp_ns, 0);  // they only touch at 3 us
  EXPECT_EQ(f.span_ns, 7000);    // [1, 8)
  EXPECT_EQ(f.busy_ns, 6000);
  EXPECT_DOUBLE_EQ(*f.overlap(), 0.0);
  EXPECT_DOUBLE_EQ(*f.idle(), 1.0 / 7.0);
  // Negative times round the same way: [-2.5, -0.5) us is [-2, -1).
  HtaScope before;
  before.add_step(std::vector<OpRecord>{op(kComm, -2500, -500)});
  EXPECT_EQ(before.figures().comm_ns, 1000);
  EXPECT_EQ(before.figures().span_ns, 1000);
}

TEST(HtaScope, WithoutCommunicationOrOpsTheRatiosAreUndefined) {
  HtaScope none;
  EXPECT_EQ(none.figures().steps, 0);
  EXPECT_FALSE(none.figures().overlap());
  EXPECT_FALSE(none.figures().idle());
  HtaScope no_comm;
  no_comm.add_step(std::vector<OpRecord>{op(kComp, 0, 5000)});
  EXPECT_FALSE(no_comm.figures().overlap());
  EXPECT_DOUBLE_EQ(*no_comm.figures().compute(), 1.0);
}

}  // namespace
}  // namespace commprof
