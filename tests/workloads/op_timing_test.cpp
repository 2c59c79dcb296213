// SPDX-License-Identifier: MIT
// How a run's op timing is chosen (docs/RELIABILITY.md): auto falls back to pair where some rank
// cannot record device activity (under nsys or ncu, which hold CUPTI), and an explicit activity or
// sampled request is refused there rather than silently changed.
#include <gtest/gtest.h>

#include "workloads/op_timing.hpp"

namespace commprof {
namespace {

TEST(OpTiming, AutoSamplesWhereEveryRankRecordsAndFallsBackToPairElsewhere) {
  const OpTimingChoice everywhere = choose_op_timing(OpTimingMode::kAuto, true);
  EXPECT_EQ(everywhere.mode, OpTimingMode::kSampled);
  EXPECT_FALSE(everywhere.refused);
  EXPECT_FALSE(everywhere.fell_back);
  const OpTimingChoice somewhere_not = choose_op_timing(OpTimingMode::kAuto, false);
  EXPECT_EQ(somewhere_not.mode, OpTimingMode::kPair);
  EXPECT_FALSE(somewhere_not.refused);
  EXPECT_TRUE(somewhere_not.fell_back);
}

TEST(OpTiming, ExplicitActivityOrSampledIsRefusedWhereSomeRankCannotRecord) {
  for (OpTimingMode m : {OpTimingMode::kActivity, OpTimingMode::kSampled}) {
    EXPECT_TRUE(choose_op_timing(m, false).refused) << op_timing_name(m);
    EXPECT_FALSE(choose_op_timing(m, false).fell_back) << op_timing_name(m);
    const OpTimingChoice ok = choose_op_timing(m, true);
    EXPECT_FALSE(ok.refused) << op_timing_name(m);
    EXPECT_EQ(ok.mode, m);
  }
}

TEST(OpTiming, ModesWithoutActivityNeedNothing) {
  for (OpTimingMode m : {OpTimingMode::kPair, OpTimingMode::kShared, OpTimingMode::kStep}) {
    for (bool everywhere : {true, false}) {
      const OpTimingChoice c = choose_op_timing(m, everywhere);
      EXPECT_EQ(c.mode, m);
      EXPECT_FALSE(c.refused);
      EXPECT_FALSE(c.fell_back);
    }
  }
  EXPECT_EQ(parse_op_timing("sampled"), OpTimingMode::kSampled);
  EXPECT_STREQ(op_timing_name(OpTimingMode::kSampled), "sampled");
}

}  // namespace
}  // namespace commprof
