// SPDX-License-Identifier: MIT
// Verification is only as good as its expected values: these tests replay every collective on
// host vectors (support/collective_model) from the inputs a bench run writes and require the
// closed-form expectations to match element for element, and to notice wrong results.
#include "src/collective/pattern.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "src/collective/collective_spec.hpp"
#include "support/collective_model.hpp"

namespace commprof {
namespace {

using K = CollectiveKind;
using testing::RankBuffers;

using testing::kAllDTypes;

TEST(Pattern, ReduceSumClosedFormEqualsBruteForce) {
  std::mt19937_64 rng(12345);
  for (std::uint64_t m = 1; m <= 9; ++m) {
    for (int n = 1; n <= 40; ++n) {
      for (int trial = 0; trial < 20; ++trial) {
        const std::uint64_t index = trial < 3 ? static_cast<std::uint64_t>(trial) : rng() >> 20;
        const std::uint64_t seed = trial < 6 ? static_cast<std::uint64_t>(trial) : rng() >> 20;
        double brute = 0;
        for (int r = 0; r < n; ++r) brute += reduce_input_value(r, index, seed, m);
        ASSERT_EQ(reduce_sum(n, index, seed, m), brute)
            << "n=" << n << " m=" << m << " index=" << index << " seed=" << seed;
      }
    }
  }
}

TEST(Pattern, ValuesStayBelowTheirModulus) {
  for (std::uint64_t m : {1ull, 2ull, 7ull, 251ull, 65521ull}) {
    for (int r : {0, 1, 5, 1023}) {
      for (std::uint64_t i : {0ull, 1ull, 999ull, 1ull << 40}) {
        EXPECT_LT(reduce_input_value(r, i, 3, m), static_cast<double>(m));
        EXPECT_LT(data_value(r, i, 3, m), static_cast<double>(m));
        EXPECT_GE(data_value(r, i, 3, m), 0.0);
      }
    }
  }
}

TEST(Pattern, FillValueFollowsItsKindAndFirstIndex) {
  FillPattern p{FillKind::kData, 3, 11, 65521, 100, 0.0};
  EXPECT_EQ(fill_value(p, 5), data_value(3, 105, 11, 65521));
  p.kind = FillKind::kReduceInput;
  p.modulus = 7;
  EXPECT_EQ(fill_value(p, 5), reduce_input_value(3, 105, 11, 7));
  p.kind = FillKind::kConstant;
  p.constant = -2.5;
  EXPECT_EQ(fill_value(p, 5), -2.5);
  ExpectPattern e;
  e.constant = 4.0;
  EXPECT_EQ(expected_value(e, 17), 4.0);
}

// Compute operands: standard normal values (mean 0, variance 1, the normal's tails), different for
// every rank and buffer, bounded, and scaled by the pattern's standard deviation.
TEST(Pattern, NormalValuesHaveTheStatisticsOfANormal) {
  constexpr std::uint64_t kCount = 200000;
  double sum = 0, sum_sq = 0, max_abs = 0;
  std::uint64_t beyond_2sd = 0;
  for (std::uint64_t i = 0; i < kCount; ++i) {
    const double z = normal_value(3, i, 7);
    sum += z;
    sum_sq += z * z;
    max_abs = std::max(max_abs, std::abs(z));
    beyond_2sd += std::abs(z) > 2.0;
  }
  const double mean = sum / kCount;
  EXPECT_NEAR(mean, 0.0, 0.01);  // 4.5 standard errors (1 / sqrt(200000) = 0.0022)
  EXPECT_NEAR(sum_sq / kCount - mean * mean, 1.0, 0.015);
  EXPECT_NEAR(static_cast<double>(beyond_2sd) / kCount, 0.0455, 0.003);  // P(|z| > 2)
  EXPECT_LT(max_abs, 8.6);
  std::uint64_t same_across_ranks = 0, same_across_buffers = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    same_across_ranks += normal_value(0, i, 7) == normal_value(1, i, 7);
    same_across_buffers += normal_value(0, i, 7) == normal_value(0, i, 8);
  }
  EXPECT_EQ(same_across_ranks, 0u);
  EXPECT_EQ(same_across_buffers, 0u);
  const FillPattern p = normal_fill(2, 5, 0.02);
  EXPECT_DOUBLE_EQ(fill_value(p, 11), 0.02 * normal_value(2, 11, 5));
}

TEST(Pattern, DataOfDifferentRanksDiffersInEveryElement) {
  // What lets allgather/alltoall/sendrecv checks tell which rank an element came from.
  for (DType t : kAllDTypes) {
    const std::uint64_t p = data_modulus(t);
    for (int a = 0; a < 16; ++a) {
      for (int b = a + 1; b < 16; ++b) {
        for (std::uint64_t i = 0; i < 64; ++i) {
          ASSERT_NE(data_value(a, i, 9, p), data_value(b, i, 9, p))
              << dtype_name(t) << " ranks " << a << "," << b << " index " << i;
        }
      }
    }
  }
}

// --- the model check: expected() against a simulation of the collective ---------------------

struct Scenario {
  K kind;
  int n;
  int root;
  DType dtype;
  std::uint64_t seed;
  std::uint64_t bytes;
  std::string describe() const {
    return std::string(collective_name(kind)) + " n=" + std::to_string(n) +
           " root=" + std::to_string(root) + " " + dtype_name(dtype) +
           " seed=" + std::to_string(seed) + " bytes=" + std::to_string(bytes);
  }
};

/// Wrong elements over all ranks with a defined output, as a bench run counts them.
std::uint64_t count_wrong(const Scenario& sc, const CollectiveSizes& s, const RankBuffers& recv) {
  const CollectiveSpec& spec = collective_spec(sc.kind);
  std::uint64_t wrong = 0;
  for (int r = 0; r < sc.n; ++r) {
    if (!spec.output_defined(r, sc.root)) continue;
    const ExpectPattern e = spec.expected(r, sc.n, sc.root, sc.dtype, sc.seed, s);
    const auto& out = recv[static_cast<std::size_t>(r)];
    for (std::uint64_t i = 0; i < s.recv_count; ++i) wrong += out[i] != expected_value(e, i);
  }
  return wrong;
}

void for_each_scenario(const std::function<void(const Scenario&)>& body) {
  for (K kind : all_collective_kinds()) {
    for (int n : {1, 2, 3, 4, 5, 7, 8}) {
      for (int root : {0, n - 1}) {
        if (root != 0 && !collective_spec(kind).rooted) continue;
        for (DType t : kAllDTypes) {
          for (std::uint64_t seed : {0ull, 1ull, 17ull, 65520ull}) {
            for (std::uint64_t bytes : {1024ull, 1000ull, 4112ull}) {
              body({kind, n, root, t, seed, bytes});
            }
          }
        }
      }
    }
  }
}

TEST(Pattern, ExpectedValuesMatchASimulationOfEveryCollective) {
  int scenarios = 0;
  for_each_scenario([&](const Scenario& sc) {
    const CollectiveSpec& spec = collective_spec(sc.kind);
    const CollectiveSizes s = spec.sizes(sc.bytes, sc.dtype, sc.n);
    if (s.count == 0) return;
    const RankBuffers sends = testing::make_inputs(spec, sc.n, sc.dtype, sc.seed, s);
    const RankBuffers recv = testing::simulate_collective(sc.kind, s, sc.root, sends);
    ASSERT_EQ(count_wrong(sc, s, recv), 0u) << sc.describe();
    ++scenarios;
  });
  EXPECT_GT(scenarios, 1000);
}

TEST(Pattern, InputsAndExpectedValuesAreExactAndNeverLookLikePoison) {
  // The bench poisons receive buffers with -1 before the checked call: no expected value may be
  // negative, and every value must be an integer the dtype holds exactly.
  for_each_scenario([&](const Scenario& sc) {
    const CollectiveSpec& spec = collective_spec(sc.kind);
    const CollectiveSizes s = spec.sizes(sc.bytes, sc.dtype, sc.n);
    const double limit = static_cast<double>(dtype_max_exact_integer(sc.dtype));
    for (int r = 0; r < sc.n; ++r) {
      const FillPattern in = spec.input(r, sc.n, sc.dtype, sc.seed);
      const ExpectPattern e = spec.expected(r, sc.n, sc.root, sc.dtype, sc.seed, s);
      for (std::uint64_t i = 0; i < std::max(s.send_count, s.recv_count); ++i) {
        const double v = fill_value(in, i);
        ASSERT_TRUE(v >= 0 && v <= limit && v == static_cast<double>(static_cast<std::int64_t>(v)))
            << sc.describe() << " input " << i << " = " << v;
        if (i < s.recv_count) {
          const double x = expected_value(e, i);
          ASSERT_TRUE(x >= 0 && x <= limit) << sc.describe() << " expected " << i << " = " << x;
        }
      }
    }
  });
}

// A check that passes everything is worthless: typical implementation mistakes must be caught.
TEST(Pattern, VerificationCatchesWrongResults) {
  for (int n : {2, 3, 4, 8}) {
    for (K kind : all_collective_kinds()) {
      const Scenario sc{kind, n, n - 1, DType::kFloat32, 5, 4096};
      const CollectiveSpec& spec = collective_spec(kind);
      const CollectiveSizes s = spec.sizes(sc.bytes, sc.dtype, n);
      const RankBuffers sends = testing::make_inputs(spec, n, sc.dtype, sc.seed, s);
      SCOPED_TRACE(sc.describe());

      // One rank's contribution lost (reductions) or replaced by another rank's data.
      RankBuffers bad_sends = sends;
      const int victim = spec.rooted ? sc.root : 1;
      auto& bad = bad_sends[static_cast<std::size_t>(victim)];
      if (spec.reduces) {
        std::fill(bad.begin(), bad.end(), 0.0);
      } else {
        bad = sends[static_cast<std::size_t>((victim + 1) % n)];
      }
      EXPECT_GT(count_wrong(sc, s, testing::simulate_collective(kind, s, sc.root, bad_sends)), 0u)
          << "rank " << victim << " sent wrong data and nobody noticed";

      // Elements in the wrong order.
      RankBuffers recv = testing::simulate_collective(kind, s, sc.root, sends);
      for (auto& out : recv) std::reverse(out.begin(), out.end());
      EXPECT_GT(count_wrong(sc, s, recv), 0u) << "reversed results passed";

      // A single element left poisoned is exactly one wrong element.
      recv = testing::simulate_collective(kind, s, sc.root, sends);
      recv[static_cast<std::size_t>(sc.root)][s.recv_count - 1] = -1.0;
      EXPECT_EQ(count_wrong(sc, s, recv), 1u);
    }
  }
}

TEST(Pattern, SendRecvDirectionIsChecked) {
  // Receiving from rank+1 instead of rank-1 makes every element wrong, on any ring of 3 or more.
  for (int n : {3, 4, 5}) {
    const Scenario sc{K::kSendRecv, n, 0, DType::kFloat32, 2, 1024};
    const CollectiveSpec& spec = collective_spec(sc.kind);
    const CollectiveSizes s = spec.sizes(sc.bytes, sc.dtype, n);
    const RankBuffers sends = testing::make_inputs(spec, n, sc.dtype, sc.seed, s);
    RankBuffers recv(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      recv[static_cast<std::size_t>(r)] = sends[static_cast<std::size_t>((r + 1) % n)];
    }
    EXPECT_EQ(count_wrong(sc, s, recv), static_cast<std::uint64_t>(n) * s.recv_count);
  }
}

// --- exactness of reductions in narrow types ------------------------------------------------

class ReductionExactness : public ::testing::TestWithParam<DType> {};

TEST_P(ReductionExactness, WorstCaseSumStaysBelowTheExactLimit) {
  // The documented contract of reduce_modulus and reduce_stride: c·(m−1) ≤ the dtype's largest
  // exact integer, c the number of contributing ranks, so a sum is exact in any order.
  const DType t = GetParam();
  for (int n = 1; n <= 1024; ++n) {
    const std::uint64_t m = reduce_modulus(t, n);
    const std::uint64_t stride = reduce_stride(t, n);
    const std::uint64_t contributors = (static_cast<std::uint64_t>(n) + stride - 1) / stride;
    ASSERT_GE(m, 2u);
    ASSERT_LE(m, 7u);
    ASSERT_LE(contributors * (m - 1), dtype_max_exact_integer(t))
        << dtype_name(t) << " n=" << n << " m=" << m << " stride=" << stride;
  }
}

TEST_P(ReductionExactness, SumsInTheNarrowTypeEqualTheClosedForm) {
  // Replays the reduction with the dtype's rounding after every addition, in three orders
  // (ring-like ascending, descending, pairwise tree), for n up to 1024.
  const DType t = GetParam();
  const int bits = testing::significand_bits(t);
  for (int n : {2, 3, 7, 8, 64, 100, 255, 256, 257, 300, 512, 513, 1000, 1024}) {
    const std::uint64_t m = reduce_modulus(t, n);
    const std::uint64_t stride = reduce_stride(t, n);
    for (std::uint64_t index = 0; index < 2 * m; ++index) {
      std::vector<double> values;
      for (int r = 0; r < n; ++r) values.push_back(reduce_input_value(r, index, 3, m, stride));
      const double expected = reduce_sum(n, index, 3, m, stride);
      double up = 0;
      double down = 0;
      for (int r = 0; r < n; ++r) up = testing::round_to_bits(up + values[std::size_t(r)], bits);
      for (int r = n - 1; r >= 0; --r) {
        down = testing::round_to_bits(down + values[std::size_t(r)], bits);
      }
      std::vector<double> tree = values;
      while (tree.size() > 1) {
        std::vector<double> next;
        for (std::size_t i = 0; i < tree.size(); i += 2) {
          next.push_back(i + 1 < tree.size() ? testing::round_to_bits(tree[i] + tree[i + 1], bits)
                                             : tree[i]);
        }
        tree.swap(next);
      }
      ASSERT_EQ(up, expected) << dtype_name(t) << " n=" << n << " m=" << m << " index " << index;
      ASSERT_EQ(down, expected) << dtype_name(t) << " n=" << n << " index " << index;
      ASSERT_EQ(tree[0], expected) << dtype_name(t) << " n=" << n << " index " << index;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(NarrowTypes, ReductionExactness,
                         ::testing::Values(DType::kBFloat16, DType::kFloat16, DType::kFloat32),
                         [](const ::testing::TestParamInfo<DType>& p) {
                           return std::string(dtype_name(p.param));
                         });

}  // namespace
}  // namespace commprof
