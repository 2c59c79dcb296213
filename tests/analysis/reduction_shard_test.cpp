// SPDX-License-Identifier: MIT
// A process's shard of a shared reduction (reduction_shard.hpp): every field comes back from its
// message, and process 0's merge of two shards, worked out by hand.
#include "analysis/reduction_shard.hpp"

#include <gtest/gtest.h>

#include "support/wire_round_trip.hpp"

namespace commprof {
namespace {

ReductionShard some_shard() {
  ReductionShard s;
  s.problems = {{7, {"rank-9.json", "no steps"}}, {2, {"rank-4.json", "cut short"}}};
  s.timings = {{1, "allreduce", 11, 12, 13, 14}};
  UnfinishedCollectives::RankState& r = s.unfinished[5];
  r.comms = {"dp0", "tp1"};
  r.last = {{"dp0", 15}};
  r.unfinished = {{{"dp0", 16}, "allreduce"}};
  s.waits = {{3, "", 17, 18, 19, 20, 21}};
  return s;
}

TEST(ReductionShard, EveryFieldComesBack) {
  const ReductionShard out = test::round_trip(some_shard());
  ASSERT_EQ(out.problems.size(), 2u);
  EXPECT_EQ(out.problems[0].index, 7u);
  EXPECT_EQ(out.problems[0].problem.file, "rank-9.json");
  EXPECT_EQ(out.problems[0].problem.message, "no steps");
  EXPECT_EQ(out.problems[1].index, 2u);
  ASSERT_EQ(out.timings.size(), 1u);
  const ReductionShard::Timing& t = out.timings[0];
  EXPECT_EQ(t.category, 1);
  EXPECT_EQ(t.name, "allreduce");
  EXPECT_EQ(t.count, 11);
  EXPECT_EQ(t.total_ns, 12);
  EXPECT_EQ(t.overlapped_count, 13);
  EXPECT_EQ(t.overlapped_total_ns, 14);
  ASSERT_EQ(out.unfinished.size(), 1u);
  const UnfinishedCollectives::RankState& r = out.unfinished.at(5);
  EXPECT_EQ(r.comms, (std::set<std::string>{"dp0", "tp1"}));
  EXPECT_EQ(r.last, (std::map<std::string, std::int64_t>{{"dp0", 15}}));
  ASSERT_EQ(r.unfinished.size(), 1u);
  EXPECT_EQ(r.unfinished.begin()->first.comm, "dp0");
  EXPECT_EQ(r.unfinished.begin()->first.seq, 16);
  EXPECT_EQ(r.unfinished.begin()->second, "allreduce");
  ASSERT_EQ(out.waits.size(), 1u);
  EXPECT_EQ(out.waits[0].rank, 3);
  EXPECT_EQ(out.waits[0].times_first, 21);
  test::expect_cut_messages_refused(some_shard());
}

// Two shards: problems come out in file order (2, 7, 9), the timings of one name and the waits
// of one rank add up, and rank 5's unfinished all-reduce #16 on dp0 is set against rank 6,
// which finished dp0 up to #20.
TEST(ReductionShard, MergeAddsShardsUp) {
  ReductionShard other;
  other.problems = {{9, {"rank-11.json", "bad header"}}};
  other.timings = {{1, "allreduce", 1, 2, 3, 4}, {0, "gemm", 5, 6, 0, 0}};
  other.unfinished[6].last = {{"dp0", 20}};
  other.waits = {{3, "", 1, 1, 1, 1, 1}, {0, "", 2, 3, 4, 5, 6}};
  Report rep;
  std::vector<RankWait> waits;
  UnfinishedCollectives unfinished;
  merge_shards({wire::encode(some_shard()), wire::encode(other)}, rep, waits, unfinished);
  ASSERT_EQ(rep.problems.size(), 3u);
  EXPECT_EQ(rep.problems[0].file, "rank-4.json");
  EXPECT_EQ(rep.problems[1].file, "rank-9.json");
  EXPECT_EQ(rep.problems[2].file, "rank-11.json");
  const OpTiming& ar = rep.op_timings.at({1, "allreduce"});
  EXPECT_EQ(ar.count, 12);
  EXPECT_EQ(ar.total_ns, 14.0);
  EXPECT_EQ(ar.overlapped_count, 16);
  EXPECT_EQ(ar.overlapped_total_ns, 18.0);
  EXPECT_EQ(rep.op_timings.at({0, "gemm"}).count, 5);
  ASSERT_EQ(waits.size(), 4u);  // ranks 0 to 3, 1 and 2 without collectives
  EXPECT_EQ(waits[0].collectives, 2);
  EXPECT_EQ(waits[1].rank, 1);
  EXPECT_EQ(waits[1].collectives, 0);
  EXPECT_EQ(waits[3].collectives, 18);
  EXPECT_EQ(waits[3].wait_ns, 19);
  EXPECT_EQ(waits[3].times_first, 22);
  EXPECT_EQ(
      unfinished.findings(),
      std::vector<std::string>{"hang: dp0 allreduce #16 unfinished on rank 5; finished on 6"});
}

TEST(ReductionShard, AMessageOfAnotherKindIsRefused) {
  Report rep;
  std::vector<RankWait> waits;
  UnfinishedCollectives unfinished;
  EXPECT_THROW(merge_shards({wire::encode(std::string("not a shard"))}, rep, waits, unfinished),
               Error);
  EXPECT_THROW(merge_shards({"\x02"}, rep, waits, unfinished), Error);
}

}  // namespace
}  // namespace commprof
