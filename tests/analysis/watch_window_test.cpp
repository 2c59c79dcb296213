// SPDX-License-Identifier: MIT
// commprof watch's window (analysis/watch_window.hpp): percentiles within their bin's 1% of the
// samples', busbw at the median, the rank most often last, and parts that merge to the same
// table whatever the split, also after the wire.
#include "analysis/watch_window.hpp"

#include <gtest/gtest.h>

#include "analysis/wire_codec.hpp"

namespace commprof {
namespace {

OpView allreduce(std::int64_t seq, std::int64_t start_ns, std::int64_t duration_ns,
                 std::uint64_t bytes = 1 << 20) {
  OpView op;
  op.category = Category::kComm;
  op.collective = "allreduce";
  op.comm = "dp0";
  op.comm_size = 2;
  op.seq = seq;
  op.bytes = bytes;
  op.start_ns = start_ns;
  op.end_ns = start_ns + duration_ns;
  return op;
}

TEST(WatchWindow, PercentilesOfTheCallsWithinOnePercent) {
  WatchPart part;
  // 100 calls of rank 0, 1 to 100 us: p50 50 us, p95 95 us, p99 99 us (nearest rank).
  for (int i = 1; i <= 100; ++i) part.add(0, 0, allreduce(i, i * 1'000'000, i * 1000));
  const std::vector<WatchRow> rows = watch_rows(part);
  ASSERT_EQ(rows.size(), 1u);
  const WatchRow& r = rows[0];
  EXPECT_EQ(r.calls, 100);
  EXPECT_EQ(r.bytes, 100u << 20);
  EXPECT_EQ(r.bucket_bytes, 1u << 20);
  EXPECT_NEAR(r.p50_ns, 50e3, 0.01 * 50e3);
  EXPECT_NEAR(r.p95_ns, 95e3, 0.01 * 95e3);
  EXPECT_NEAR(r.p99_ns, 99e3, 0.01 * 99e3);
  // 1 MiB at the median over 2 ranks: S / t x 2(n-1)/n = S / t.
  EXPECT_NEAR(r.busbw_gbps, (1 << 20) / r.p50_ns, 1e-9);
  EXPECT_EQ(r.slowest_rank, -1);  // no instance seen on two ranks
}

TEST(WatchWindow, TheRankMostOftenLastAfterItsClockOffset) {
  WatchPart part;
  // Rank 1's clock runs 1 ms behind rank 0's: its offset adds 1 ms. It starts seq 1 and 2 after
  // rank 0 on rank 0's clock, seq 3 before.
  part.add(0, 0, allreduce(1, 10'000'000, 5000));
  part.add(1, 1'000'000, allreduce(1, 9'500'000, 5000));  // 10.5 ms: last
  part.add(0, 0, allreduce(2, 20'000'000, 5000));
  part.add(1, 1'000'000, allreduce(2, 19'200'000, 5000));  // 20.2 ms: last
  part.add(0, 0, allreduce(3, 30'000'000, 5000));
  part.add(1, 1'000'000, allreduce(3, 28'000'000, 5000));  // 29 ms: rank 0 last
  const std::vector<WatchRow> rows = watch_rows(part);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].slowest_rank, 1);
  EXPECT_EQ(rows[0].times_last, 2);
}

TEST(WatchWindow, PartsMergeToTheSameTableAfterTheWire) {
  WatchPart whole, a, b;
  for (int i = 0; i < 40; ++i) {
    const int rank = i % 4;
    // Instance i / 4 on the 4 ranks, of one size each; the ranks' starts staggered.
    const OpView op = allreduce(i / 4, 1'000'000 * (i / 4) + 7000 * ((i * 7) % 4), 1000 + 37 * i,
                                (i / 4) % 3 == 0 ? 4096 : 1 << 20);
    whole.add(rank, 0, op);
    (rank < 2 ? a : b).add(rank, 0, op);
  }
  a.stalls.push_back({3, "dp0", "allreduce", 12, 61.5});
  WatchPart merged = wire::decode<WatchPart>(wire::encode(a));
  merged.merge(wire::decode<WatchPart>(wire::encode(b)));
  const std::vector<WatchRow> want = watch_rows(whole), got = watch_rows(merged);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(got.size(), 2u);  // the 4 KiB and the 1 MiB buckets
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].bucket_bytes, want[i].bucket_bytes);
    EXPECT_EQ(got[i].calls, want[i].calls);
    EXPECT_EQ(got[i].bytes, want[i].bytes);
    EXPECT_EQ(got[i].p50_ns, want[i].p50_ns);
    EXPECT_EQ(got[i].p99_ns, want[i].p99_ns);
    EXPECT_EQ(got[i].slowest_rank, want[i].slowest_rank);
    EXPECT_EQ(got[i].times_last, want[i].times_last);
  }
  ASSERT_EQ(merged.stalls.size(), 1u);
  EXPECT_EQ(merged.stalls[0].seq, 12);
  EXPECT_DOUBLE_EQ(merged.stalls[0].age_s, 61.5);
}

TEST(WatchWindow, BinsAreTwoPercentWide) {
  for (double ns : {1.0, 999.0, 1e6, 3.7e9}) {
    const double centre = watch_bin_ns(watch_bin_of(ns));
    EXPECT_NEAR(centre, ns, 0.011 * ns) << ns;
  }
}

}  // namespace
}  // namespace commprof
