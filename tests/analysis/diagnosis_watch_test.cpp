// SPDX-License-Identifier: MIT
// What `diagnose --watch` says at each refresh (analysis/diagnosis_watch.hpp): a collective in
// flight at one snapshot is normal; the same one still not complete at the next refresh, with a
// rank file rewritten in between, is a stall; without a rewrite, the job stopped writing.
#include "analysis/diagnosis_watch.hpp"

#include <gtest/gtest.h>

namespace commprof::diagnosis {
namespace {

Problem not_finished(std::int64_t seq) {
  Problem p;
  p.kind = "launched_not_finished";
  p.comm = "dp0";
  p.function = "allreduce";
  p.seq = seq;
  p.ranks = "0 1";
  p.verdict =
      "launched on every member, not finished on ranks 0 1: dp0 allreduce #" + std::to_string(seq);
  return p;
}

TEST(StallTracker, ACollectiveInFlightAtOneSnapshotIsNoStall) {
  StallTracker t;
  // A healthy job: a different collective in flight at each flush.
  for (std::int64_t seq = 5; seq < 9; ++seq)
    EXPECT_TRUE(t.refresh({not_finished(seq)}, true).empty());
  EXPECT_TRUE(t.refresh({}, true).empty());
  EXPECT_FALSE(t.said_any());
}

TEST(StallTracker, TheSameCollectiveAtTheNextRefreshIsAStallSaidOnce) {
  StallTracker t;
  EXPECT_TRUE(t.refresh({not_finished(7)}, true).empty());
  const std::vector<std::string> lines = t.refresh({not_finished(7)}, true);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "stall: launched on every member, not finished on ranks 0 1: dp0 allreduce #7");
  EXPECT_TRUE(t.refresh({not_finished(7)}, true).empty());  // once
  EXPECT_TRUE(t.said_any());
}

TEST(StallTracker, WithoutARewriteTheJobStoppedWriting) {
  StallTracker t;
  t.refresh({not_finished(3)}, false);
  const std::vector<std::string> lines = t.refresh({not_finished(3)}, false);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("no rank file rewritten since the last refresh (the job ended or its "
                           "processes died): launched on every member",
                           0),
            0u)
      << lines[0];
}

TEST(StallTracker, ACollectiveThatCompletedAndAStragglerSaidAtOnce) {
  StallTracker t;
  t.refresh({not_finished(3)}, true);
  t.refresh({}, true);                                      // #3 completed
  EXPECT_TRUE(t.refresh({not_finished(3)}, true).empty());  // seen anew: not yet a stall
  Problem s;
  s.kind = "straggler";
  s.step = 4;
  s.ranks = "2";
  s.verdict = "straggler in step 4: rank 2";
  const std::vector<std::string> lines = t.refresh({s}, true);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "straggler: straggler in step 4: rank 2");
  EXPECT_TRUE(t.refresh({s}, true).empty());
}

}  // namespace
}  // namespace commprof::diagnosis
