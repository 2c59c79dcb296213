// SPDX-License-Identifier: MIT
// The size sweep of `commprof bench` (nccl-tests' -b/-e/-f) and its bandwidth arithmetic.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "collectives/bench/bench.hpp"

namespace commprof {
namespace {

using Sizes = std::vector<std::uint64_t>;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

TEST(SweepSizes, MultipliesFromMinWhileNotAboveMax) {
  EXPECT_EQ(sweep_sizes(1024, 16384, 4), (Sizes{1024, 4096, 16384}));
  EXPECT_EQ(sweep_sizes(1024, 262144, 4), (Sizes{1024, 4096, 16384, 65536, 262144}));
  EXPECT_EQ(sweep_sizes(1024, 4096, 2), (Sizes{1024, 2048, 4096}));
}

TEST(SweepSizes, MinEqualToMaxIsOneSize) {
  EXPECT_EQ(sweep_sizes(1024, 1024, 4), (Sizes{1024}));
  EXPECT_EQ(sweep_sizes(1, 1, 2), (Sizes{1}));
  EXPECT_EQ(sweep_sizes(kMax, kMax, 2), (Sizes{kMax}));
}

TEST(SweepSizes, NonPowerSizesAndAMaxBetweenSteps) {
  EXPECT_EQ(sweep_sizes(1000, 100000, 10), (Sizes{1000, 10000, 100000}));
  EXPECT_EQ(sweep_sizes(1000, 99999, 10), (Sizes{1000, 10000}));
  EXPECT_EQ(sweep_sizes(3, 100, 3), (Sizes{3, 9, 27, 81}));
  EXPECT_EQ(sweep_sizes(1000, 1999, 2), (Sizes{1000}));
}

TEST(SweepSizes, MinAboveMaxIsEmptyAndZeroMinStartsAtOne) {
  EXPECT_TRUE(sweep_sizes(4096, 1024, 2).empty());
  EXPECT_EQ(sweep_sizes(0, 8, 2), (Sizes{1, 2, 4, 8}));
}

TEST(SweepSizes, StopsBeforeOverflowNear2To64) {
  const Sizes powers = sweep_sizes(1, kMax, 2);
  ASSERT_EQ(powers.size(), 64u);
  EXPECT_EQ(powers.back(), 1ull << 63);

  const Sizes threes = sweep_sizes(1, kMax, 3);
  ASSERT_EQ(threes.size(), 41u);  // 3^40 < 2^64 < 3^41
  for (std::size_t i = 1; i < threes.size(); ++i) EXPECT_EQ(threes[i], threes[i - 1] * 3);

  EXPECT_EQ(sweep_sizes(1ull << 63, kMax, 2), (Sizes{1ull << 63}));
  EXPECT_EQ(sweep_sizes(kMax / 2 + 1, kMax, 1000), (Sizes{kMax / 2 + 1}));
  EXPECT_EQ(sweep_sizes(kMax - 1, kMax, 2), (Sizes{kMax - 1}));
}

TEST(AlgbwGbps, IsBytesPerSecondOver1e9) {
  EXPECT_DOUBLE_EQ(algbw_gbps(1'000'000'000, 1e6), 1.0);  // 1 GB in 1 s
  EXPECT_DOUBLE_EQ(algbw_gbps(1024, 10.0), 0.1024);
  EXPECT_DOUBLE_EQ(algbw_gbps(1 << 20, 0.0), 0.0);  // no division by zero
  EXPECT_DOUBLE_EQ(algbw_gbps(1 << 20, -1.0), 0.0);
}

TEST(BenchReport, TotalWrongIgnoresUncheckedRows) {
  BenchReport report;
  report.rows.resize(4);
  report.rows[0].wrong = 0;
  report.rows[1].wrong = 5;
  report.rows[2].wrong = -1;  // not checked
  report.rows[3].wrong = 2;
  EXPECT_EQ(report.total_wrong(), 7);
  EXPECT_EQ(BenchReport{}.total_wrong(), 0);
}

}  // namespace
}  // namespace commprof
