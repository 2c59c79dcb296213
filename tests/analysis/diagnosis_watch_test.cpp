// SPDX-License-Identifier: MIT
// What `diagnose --watch` says at each refresh (analysis/diagnosis_watch.hpp): a collective in
// flight at one snapshot is normal; the same one still not complete once a rank file changed
// after it was first seen is a stall; files unchanged for the quiet time since say the job
// stopped writing; refreshes faster than the job's flushes say nothing in between.
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

// Times in seconds: the files flushed every 1 s (at 100, 101, ...), refreshes every 0.5 s.
constexpr double kQuiet = 2.0;

TEST(StallTracker, ACollectiveInFlightAtOneSnapshotIsNoStall) {
  StallTracker t(kQuiet);
  // A healthy job: a different collective in flight at each flush.
  for (std::int64_t seq = 5; seq < 9; ++seq)
    EXPECT_TRUE(t.refresh({not_finished(seq)}, 100.0 + static_cast<double>(seq),
                          100.2 + static_cast<double>(seq))
                    .empty());
  EXPECT_TRUE(t.refresh({}, 110, 110.2).empty());
  EXPECT_FALSE(t.said_any());
}

TEST(StallTracker, TheSameCollectiveAfterTheFilesChangedIsAStallSaidOnce) {
  StallTracker t(kQuiet);
  EXPECT_TRUE(t.refresh({not_finished(7)}, 100, 100.1).empty());
  // The next refresh comes before the next flush: not yet known.
  EXPECT_TRUE(t.refresh({not_finished(7)}, 100, 100.6).empty());
  const std::vector<std::string> lines = t.refresh({not_finished(7)}, 101, 101.1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "stall: launched on every member, not finished on ranks 0 1: dp0 allreduce #7");
  EXPECT_TRUE(t.refresh({not_finished(7)}, 102, 102.1).empty());  // once
  EXPECT_TRUE(t.said_any());
}

TEST(StallTracker, FilesUnchangedForTheQuietTimeSayTheJobStoppedWriting) {
  StallTracker t(kQuiet);
  t.refresh({not_finished(3)}, 100, 100.1);
  EXPECT_TRUE(t.refresh({not_finished(3)}, 100, 101.5).empty()) << "1.5 s: not yet";
  const std::vector<std::string> lines = t.refresh({not_finished(3)}, 100, 102.0);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("no rank file rewritten for 2.0 s (the job ended or its processes "
                           "died): launched on every member",
                           0),
            0u)
      << lines[0];
  EXPECT_TRUE(t.refresh({not_finished(3)}, 103, 103.1).empty()) << "said once";
}

TEST(StallTracker, ACollectiveThatCompletedAndAStragglerSaidAtOnce) {
  StallTracker t(kQuiet);
  t.refresh({not_finished(3)}, 100, 100.1);
  t.refresh({}, 101, 101.1);                                      // #3 completed
  EXPECT_TRUE(t.refresh({not_finished(3)}, 102, 102.1).empty());  // seen anew: not yet a stall
  Problem s;
  s.kind = "straggler";
  s.step = 4;
  s.ranks = "2";
  s.verdict = "straggler in step 4: rank 2";
  const std::vector<std::string> lines = t.refresh({s}, 103, 103.1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "straggler: straggler in step 4: rank 2");
  EXPECT_TRUE(t.refresh({s}, 104, 104.1).empty());
}

}  // namespace
}  // namespace commprof::diagnosis
