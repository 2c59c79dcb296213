// SPDX-License-Identifier: MIT
// Matching collectives across 3 ranks with known skew and clock offsets.
#include "analysis/collective_matching.hpp"

#include <gtest/gtest.h>

#include <string>

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

// An uneven alltoallv on 4 ranks, worked out by hand. Bytes rank a sends rank b (row a, column b;
// what b receives from a is the same entry):
//            to 0  to 1  to 2  to 3 | sent  to others | received  from others
//   rank 0    900    10    10    10 |  930        30  |     1800         900
//   rank 1    300   100   100   100 |  600       500  |      210         110
//   rank 2    300    50    50    50 |  450       400  |      210         160
//   rank 3    300    50    50    50 |  450       400  |      210         160
// The most any rank sent is rank 0's 930 B (the instance's bytes), nearly all to itself; the
// busiest rank off-rank is rank 0 again, receiving 900 B from the others, more than any rank
// sends them (rank 1: 500 B). The shortest rank's duration is 1000 ns, so busbw = 900 B / 1000 ns
// = 0.9 GB/s, where 930 × 3/4 / 1000 = 0.6975 GB/s is what (n-1)/n of bytes would say.
constexpr std::uint64_t kUneven[4][4] = {
    {900, 10, 10, 10}, {300, 100, 100, 100}, {300, 50, 50, 50}, {300, 50, 50, 50}};

OpRecord uneven_alltoallv(int r, bool per_peer) {
  OpRecord o = coll("alltoallv", "ep0", 4, 0, 0, 100 * r, 100 * r + 1000 + 500 * r);
  for (int p = 0; p < 4; ++p) {
    o.bytes += kUneven[r][p];
    o.recv_bytes += kUneven[p][r];
    if (!per_peer) continue;
    o.peer_send_bytes.push_back(kUneven[r][p]);
    o.peer_recv_bytes.push_back(kUneven[p][r]);
  }
  if (per_peer) o.comm_rank = r;
  return o;
}

TEST(CollectiveMatcher, UnevenAlltoallvBusbwFromTheBusiestRanksOffRankBytes) {
  CollectiveMatcher m;
  for (int r = 0; r < 4; ++r) m.add(r, uneven_alltoallv(r, true), 0);
  m.finish(4);
  ASSERT_EQ(m.instances().size(), 1u);
  const CollectiveInstance& c = m.instances()[0];
  EXPECT_EQ(c.bytes, 930u);
  EXPECT_EQ(c.offrank_bytes, 900u);
  EXPECT_EQ(c.time_ns(), 1000);
  EXPECT_TRUE(c.offrank_known());
  EXPECT_EQ(c.busbw_basis(), kBasisPerPeer);
  EXPECT_DOUBLE_EQ(c.algbw_gbps(), 0.93);
  EXPECT_DOUBLE_EQ(c.busbw_gbps(), 0.9);
}

// Files without bytes per peer (imports, the profiler plugin, earlier files), or one rank without
// its comm_rank: busbw falls back to bytes × (n-1)/n, and says so.
TEST(CollectiveMatcher, AlltoallvWithoutBytesPerPeerFallsBackToTheFactor) {
  for (const int without : {-1, 2}) {
    SCOPED_TRACE("rank without bytes per peer: " + std::to_string(without));
    CollectiveMatcher m;
    for (int r = 0; r < 4; ++r) {
      OpRecord o = uneven_alltoallv(r, true);
      if (without < 0 || r == without) o.comm_rank = -1;
      m.add(r, o, 0);
    }
    m.finish(4);
    const CollectiveInstance& c = m.instances().at(0);
    EXPECT_FALSE(c.offrank_known());
    EXPECT_EQ(c.busbw_basis(), kBasisFactor);
    EXPECT_DOUBLE_EQ(c.busbw_gbps(), 930.0 * 3.0 / 4.0 / 1000.0);
  }
  // Other collectives: their factor, whatever their ops carry; none for an unknown one.
  CollectiveMatcher m;
  OpRecord allgather = coll("allgather", "world", 2, 0, 100, 0, 10);
  allgather.peer_send_bytes = allgather.peer_recv_bytes = {50, 50};
  allgather.comm_rank = 0;
  m.add(0, allgather, 0);
  m.add(0, coll("allreduce", "world", 2, 1, 100, 0, 10), 0);
  m.add(0, coll("frobnicate", "world", 2, 2, 100, 0, 10), 0);
  m.finish(1);
  EXPECT_EQ(m.instances().at(0).busbw_basis(), "(n-1)/n");
  EXPECT_DOUBLE_EQ(m.instances()[0].busbw_gbps(), 100.0 / 10.0 / 2.0);
  EXPECT_EQ(m.instances().at(1).busbw_basis(), "2(n-1)/n");
  EXPECT_EQ(m.instances().at(2).busbw_basis(), "");
}

// The matcher split over processes (partials, merge) gives the same off-rank bytes as one.
TEST(CollectiveMatcher, OffRankBytesSurviveMerging) {
  CollectiveMatcher one;
  for (int r = 0; r < 4; ++r) one.add(r, uneven_alltoallv(r, true), 0, r);
  one.finish(4);
  CollectiveMatcher low, high, merged;
  for (int r = 0; r < 4; ++r) (r < 2 ? low : high).add(r, uneven_alltoallv(r, true), 0, r);
  merged.merge(high.partials(1).at(0));
  merged.merge(low.partials(1).at(0));
  merged.finish(4);
  ASSERT_EQ(merged.instances().size(), 1u);
  EXPECT_EQ(merged.instances()[0].offrank_bytes, one.instances()[0].offrank_bytes);
  EXPECT_EQ(merged.instances()[0].offrank_ranks, 4);
  EXPECT_DOUBLE_EQ(merged.instances()[0].busbw_gbps(), 0.9);
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
