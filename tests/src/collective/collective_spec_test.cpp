// SPDX-License-Identifier: MIT
#include "src/collective/collective_spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "support/collective_model.hpp"

namespace commprof {
namespace {

using K = CollectiveKind;

using testing::kAllDTypes;

bool divided(K kind) {
  return kind == K::kAllGather || kind == K::kReduceScatter || kind == K::kAllToAll;
}

// --- busbw factors (nccl-tests doc/PERFORMANCE.md) ----------------------------------------------

struct FactorCase {
  K kind;
  double n1, n2, n3, n8;
};

TEST(CollectiveSpec, BusbwFactorForEveryCollective) {
  const FactorCase cases[] = {
      {K::kAllReduce, 0.0, 1.0, 4.0 / 3.0, 1.75},
      {K::kAllGather, 0.0, 0.5, 2.0 / 3.0, 0.875},
      {K::kReduceScatter, 0.0, 0.5, 2.0 / 3.0, 0.875},
      {K::kAllToAll, 0.0, 0.5, 2.0 / 3.0, 0.875},
      {K::kBroadcast, 1.0, 1.0, 1.0, 1.0},
      {K::kReduce, 1.0, 1.0, 1.0, 1.0},
      {K::kSendRecv, 1.0, 1.0, 1.0, 1.0},
  };
  for (const FactorCase& c : cases) {
    const CollectiveSpec& spec = collective_spec(c.kind);
    SCOPED_TRACE(spec.name);
    EXPECT_DOUBLE_EQ(spec.busbw_factor(1), c.n1);
    EXPECT_DOUBLE_EQ(spec.busbw_factor(2), c.n2);
    EXPECT_DOUBLE_EQ(spec.busbw_factor(3), c.n3);
    EXPECT_DOUBLE_EQ(spec.busbw_factor(8), c.n8);
  }
}

TEST(CollectiveSpec, MetadataMatchesTheKind) {
  for (K kind : all_collective_kinds()) {
    const CollectiveSpec& spec = collective_spec(kind);
    EXPECT_EQ(spec.kind, kind);
    EXPECT_STREQ(spec.name, collective_name(kind));
    const bool reduces = kind == K::kAllReduce || kind == K::kReduceScatter || kind == K::kReduce;
    EXPECT_EQ(spec.reduces, reduces) << spec.name;
    EXPECT_EQ(spec.rooted, kind == K::kBroadcast || kind == K::kReduce) << spec.name;
  }
  EXPECT_STREQ(collective_spec(K::kAllReduce).factor_formula, "2(n-1)/n");
  EXPECT_STREQ(collective_spec(K::kAllGather).factor_formula, "(n-1)/n");
  EXPECT_STREQ(collective_spec(K::kReduceScatter).factor_formula, "(n-1)/n");
  EXPECT_STREQ(collective_spec(K::kAllToAll).factor_formula, "(n-1)/n");
  EXPECT_STREQ(collective_spec(K::kBroadcast).factor_formula, "1");
  EXPECT_STREQ(collective_spec(K::kReduce).factor_formula, "1");
  EXPECT_STREQ(collective_spec(K::kSendRecv).factor_formula, "1");
}

TEST(CollectiveSpec, OnlyReduceLeavesNonRootOutputsUndefined) {
  for (K kind : all_collective_kinds()) {
    const CollectiveSpec& spec = collective_spec(kind);
    for (int root : {0, 2}) {
      for (int rank = 0; rank < 4; ++rank) {
        EXPECT_EQ(spec.output_defined(rank, root), kind != K::kReduce || rank == root)
            << spec.name << " rank " << rank << " root " << root;
      }
    }
  }
}

// --- byte accounting ------------------------------------------------------------------------

void expect_sizes(K kind, std::uint64_t bytes, DType t, int n, std::uint64_t count,
                  std::uint64_t send, std::uint64_t recv, std::uint64_t size) {
  const CollectiveSizes s = collective_spec(kind).sizes(bytes, t, n);
  SCOPED_TRACE(std::string(collective_name(kind)) + " " + std::to_string(bytes) + " B " +
               dtype_name(t) + " n=" + std::to_string(n));
  EXPECT_EQ(s.count, count);
  EXPECT_EQ(s.send_count, send);
  EXPECT_EQ(s.recv_count, recv);
  EXPECT_EQ(s.bytes, size);
}

TEST(CollectiveSpec, UndividedCollectivesMoveTheWholeBuffer) {
  for (K kind : {K::kAllReduce, K::kBroadcast, K::kReduce, K::kSendRecv}) {
    expect_sizes(kind, 1000, DType::kFloat32, 3, 250, 250, 250, 1000);
    expect_sizes(kind, 1002, DType::kFloat32, 3, 250, 250, 250, 1000);  // whole elements only
    expect_sizes(kind, 1 << 20, DType::kFloat64, 8, 131072, 131072, 131072, 1 << 20);
    expect_sizes(kind, 6, DType::kBFloat16, 1, 3, 3, 3, 6);
  }
}

TEST(CollectiveSpec, AllGatherCountsElementsSentAndSizesTheReceiveBuffer) {
  // 250 floats / 3 ranks = 83, rounded down to 16 bytes (4 floats): 80 per rank.
  expect_sizes(K::kAllGather, 1000, DType::kFloat32, 3, 80, 80, 240, 960);
  expect_sizes(K::kAllGather, 1024, DType::kFloat32, 4, 64, 64, 256, 1024);
  expect_sizes(K::kAllGather, 1024, DType::kFloat32, 8, 32, 32, 256, 1024);
  // 125 doubles / 3 = 41, rounded to 2 doubles: 40.
  expect_sizes(K::kAllGather, 1000, DType::kFloat64, 3, 40, 40, 120, 960);
  // 500 halves / 3 = 166, rounded to 8: 160.
  expect_sizes(K::kAllGather, 1000, DType::kFloat16, 3, 160, 160, 480, 960);
}

TEST(CollectiveSpec, ReduceScatterCountsElementsReceivedAndSizesTheSendBuffer) {
  expect_sizes(K::kReduceScatter, 1000, DType::kFloat32, 3, 80, 240, 80, 960);
  expect_sizes(K::kReduceScatter, 1000, DType::kFloat64, 3, 40, 120, 40, 960);
  expect_sizes(K::kReduceScatter, 4096, DType::kInt32, 8, 128, 1024, 128, 4096);
}

TEST(CollectiveSpec, AllToAllCountsElementsPerPeer) {
  expect_sizes(K::kAllToAll, 1000, DType::kFloat32, 3, 80, 240, 240, 960);
  expect_sizes(K::kAllToAll, 1000, DType::kInt64, 3, 40, 120, 120, 960);
  expect_sizes(K::kAllToAll, 1 << 20, DType::kFloat32, 4, 65536, 262144, 262144, 1 << 20);
}

TEST(CollectiveSpec, TooSmallForTheRanksGivesCountZero) {
  // 100 B of float on 8 ranks: 25/8 = 3 elements, less than one 16-byte unit.
  for (K kind : {K::kAllGather, K::kReduceScatter, K::kAllToAll}) {
    expect_sizes(kind, 100, DType::kFloat32, 8, 0, 0, 0, 0);
    expect_sizes(kind, 15, DType::kFloat64, 1, 0, 0, 0, 0);
  }
  for (K kind : all_collective_kinds()) {
    expect_sizes(kind, 3, DType::kFloat32, 2, 0, 0, 0, 0);  // less than one element
    expect_sizes(kind, 0, DType::kFloat64, 2, 0, 0, 0, 0);
  }
}

// nccl-tests' rule, restated: chunk = (bytes / s / n) & ~(16 / s - 1). A documentation invariant
// (the product computes it the same way); the hand-worked sizes above are the oracle.
TEST(CollectiveSpec, AccountingInvariantsOverManySizes) {
  for (K kind : all_collective_kinds()) {
    const CollectiveSpec& spec = collective_spec(kind);
    for (DType t : kAllDTypes) {
      const std::uint64_t s = dtype_size(t);
      for (int n = 1; n <= 9; ++n) {
        for (std::uint64_t bytes = 0; bytes < 5000; bytes += 37) {
          const CollectiveSizes z = spec.sizes(bytes, t, n);
          const auto nn = static_cast<std::uint64_t>(n);
          SCOPED_TRACE(std::string(spec.name) + " " + std::to_string(bytes) + " B " +
                       dtype_name(t) + " n=" + std::to_string(n));
          ASSERT_EQ(z.bytes, std::max(z.send_count, z.recv_count) * s);
          ASSERT_LE(z.bytes, bytes);
          if (divided(kind)) {
            const std::uint64_t chunk = (bytes / s / nn) & ~(16 / s - 1);
            ASSERT_EQ(z.count, chunk);
            ASSERT_EQ((z.count * s) % 16, 0u);
            ASSERT_EQ(z.bytes, z.count * nn * s);
            ASSERT_LE(z.count, bytes / s / nn);
            ASSERT_GT(z.count + 16 / s, bytes / s / nn);  // rounded down by less than 16 bytes
          } else {
            ASSERT_EQ(z.count, bytes / s);
            ASSERT_EQ(z.send_count, z.count);
            ASSERT_EQ(z.recv_count, z.count);
          }
        }
      }
    }
  }
}

// --- verification moduli --------------------------------------------------------------------

TEST(CollectiveSpec, DataModulusIsAPrimeBelowTheExactLimit) {
  auto prime = [](std::uint64_t p) {
    if (p < 2) return false;
    for (std::uint64_t d = 2; d * d <= p; ++d) {
      if (p % d == 0) return false;
    }
    return true;
  };
  for (DType t : kAllDTypes) {
    const std::uint64_t p = data_modulus(t);
    EXPECT_TRUE(prime(p)) << dtype_name(t) << ": " << p;
    EXPECT_LE(p - 1, dtype_max_exact_integer(t)) << dtype_name(t);
    EXPECT_GT(p, 200u) << dtype_name(t) << ": too few distinct values to locate errors";
  }
}

}  // namespace
}  // namespace commprof
