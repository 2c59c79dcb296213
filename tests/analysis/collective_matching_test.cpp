// SPDX-License-Identifier: MIT
// Matching collectives across 3 ranks with known skew and clock offsets.
#include "analysis/collective_matching.hpp"

#include <gtest/gtest.h>

namespace commprof {
namespace {

OpRecord coll(const std::string& kind, const std::string& comm, int n, std::int64_t seq,
              std::uint64_t bytes, std::int64_t start, std::int64_t end) {
  OpRecord o;
  o.name = kind;
  o.category = Category::kComm;
  o.stream = "COMM";
  o.collective = kind;
  o.comm = comm;
  o.comm_size = n;
  o.seq = seq;
  o.bytes = bytes;
  o.start_ns = start;
  o.end_ns = end;
  return o;
}

TEST(CollectiveMatcher, ThreeRanksWithKnownSkew) {
  CollectiveMatcher m;
  // seq 0: rank starts (on rank 0's clock) 100, 130, 160; all end at 1160.
  // Rank 2's clock runs 1000 ns behind rank 0's: offset +1000 maps it back.
  m.add(0, coll("allreduce", "world", 3, 0, 3000, 100, 1160), 0);
  m.add(1, coll("allreduce", "world", 3, 0, 3000, 130, 1160), 0);
  m.add(2, coll("allreduce", "world", 3, 0, 3000, 160 - 1000, 1160 - 1000), 1000);
  // seq 1: rank 0 is last (starts 2050), others at 2000; transfer 1000 ns.
  m.add(0, coll("allreduce", "world", 3, 1, 3000, 2050, 3050), 0);
  m.add(1, coll("allreduce", "world", 3, 1, 3000, 2000, 3050), 0);
  m.add(2, coll("allreduce", "world", 3, 1, 3000, 2000 - 1000, 3050 - 1000), 1000);
  // A non-collective COMM op and a COMP op are ignored.
  OpRecord copy = coll("", "world", 3, -1, 10, 0, 5);
  m.add(0, copy, 0);
  m.finish(3);

  ASSERT_EQ(m.instances().size(), 2u);
  const CollectiveInstance& a = m.instances()[0];
  EXPECT_EQ(a.ranks_seen, 3);
  EXPECT_TRUE(a.consistent);
  EXPECT_EQ(a.start_skew_ns(), 60);
  EXPECT_EQ(a.first_rank, 0);
  EXPECT_EQ(a.last_rank, 2);
  EXPECT_EQ(a.end_skew_ns(), 0);
  EXPECT_EQ(a.min_duration_ns, 1000);
  EXPECT_EQ(a.max_duration_ns, 1060);
  EXPECT_EQ(a.mean_duration_ns, 1030.0);
  EXPECT_EQ(a.time_ns(), 1000);
  EXPECT_EQ(a.wait_caused_ns, 60 + 30 + 0);
  EXPECT_EQ(m.wait_of(0, 0), 60);
  EXPECT_EQ(m.wait_of(0, 1), 30);
  EXPECT_EQ(m.wait_of(0, 2), 0);
  // 3000 B in 1000 ns = 3 GB/s; allreduce busbw factor 2(n−1)/n = 4/3 → 4 GB/s.
  EXPECT_DOUBLE_EQ(a.algbw_gbps(), 3.0);
  EXPECT_DOUBLE_EQ(a.busbw_gbps(), 4.0);

  const CollectiveInstance& b = m.instances()[1];
  EXPECT_EQ(b.last_rank, 0);
  EXPECT_EQ(b.first_rank, 1);  // ties go to the lower rank
  EXPECT_EQ(b.wait_caused_ns, 100);

  const auto& w = m.rank_waits();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].wait_ns, 60);
  EXPECT_EQ(w[0].times_last, 1);
  EXPECT_EQ(w[0].wait_caused_ns, 100);
  EXPECT_EQ(w[1].wait_ns, 30 + 50);
  EXPECT_EQ(w[1].times_last, 0);
  EXPECT_EQ(w[1].times_first, 1);
  EXPECT_EQ(w[2].wait_ns, 0 + 50);
  EXPECT_EQ(w[2].times_last, 1);
  EXPECT_EQ(w[2].wait_caused_ns, 90);
  EXPECT_EQ(w[0].collectives, 2);
}

TEST(CollectiveMatcher, SubCommunicatorsUseTheirOwnSize) {
  CollectiveMatcher m;
  // allgather on a 2-rank "tp0": busbw factor (n−1)/n = 1/2, not the world's 3/4.
  m.add(0, coll("allgather", "tp0", 2, 0, 2000, 0, 1000), 0);
  m.add(1, coll("allgather", "tp0", 2, 0, 2000, 0, 1000), 0);
  m.add(2, coll("allgather", "tp1", 2, 0, 2000, 0, 500), 0);
  m.finish(4);
  ASSERT_EQ(m.instances().size(), 2u);
  EXPECT_DOUBLE_EQ(m.instances()[0].busbw_gbps(), 1.0);
  EXPECT_EQ(m.instances()[1].ranks_seen, 1);  // incomplete: rank 3 never recorded it
  EXPECT_EQ(m.wait_of(1, 3), -1);
}

TEST(CollectiveMatcher, DisagreementIsFlagged) {
  CollectiveMatcher m;
  m.add(0, coll("allreduce", "world", 2, 7, 100, 0, 10), 0);
  m.add(1, coll("allreduce", "world", 2, 7, 200, 0, 10), 0);
  m.finish(2);
  EXPECT_FALSE(m.instances()[0].consistent);
}

// An alltoallv's ranks send different bytes by design (their routing): still one consistent
// instance, of the most any rank sent; a kind that differs is still flagged.
TEST(CollectiveMatcher, AlltoallvRanksSendWhatTheirRoutingGives) {
  CollectiveMatcher m;
  m.add(0, coll("alltoallv", "ep0", 2, 0, 4000, 0, 1000), 0);
  m.add(1, coll("alltoallv", "ep0", 2, 0, 6000, 0, 1000), 0);
  m.add(0, coll("alltoallv", "ep0", 2, 1, 4000, 2000, 3000), 0);
  m.add(1, coll("allgather", "ep0", 2, 1, 4000, 2000, 3000), 0);
  m.finish(2);
  ASSERT_EQ(m.instances().size(), 2u);
  EXPECT_TRUE(m.instances()[0].consistent);
  EXPECT_EQ(m.instances()[0].bytes, 6000u);
  EXPECT_FALSE(m.instances()[1].consistent);
}

TEST(BusbwFactor, ReusesCollectiveSpecs) {
  EXPECT_DOUBLE_EQ(busbw_factor_for("allreduce", 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor_for("reducescatter", 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor_for("broadcast", 4), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor_for("send", 2), 1.0);
  EXPECT_LT(busbw_factor_for("frobnicate", 4), 0.0);
}

}  // namespace
}  // namespace commprof
