// SPDX-License-Identifier: MIT
#include "collectives/alltoallv_layout.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "collectives/bench/bench.hpp"
#include "src/core/errors.hpp"
#include "support/collective_model.hpp"
#include "tests/support/temp_dir.hpp"

namespace commprof {
namespace {

// A routing file of one layer with these counts, removed when the test ends.
class RoutingFileTest : public ::testing::Test {
 protected:
  Routing file_routing(const std::string& counts, int experts) {
    path_ = test::own_temp_path(std::string("alltoallv_layout_") +
                                ::testing::UnitTest::GetInstance()->current_test_info()->name()) +
            ".txt";
    std::ofstream(path_) << "layer 0: " << counts << '\n';
    return Routing(parse_routing("file:" + path_), experts);
  }
  void TearDown() override {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  std::string path_;
};

using AllToAllvLayoutTest = RoutingFileTest;

// 2 ranks, 4 experts (0-1 on rank 0, 2-3 on rank 1), top-1, 2 elements per token, 8 tokens per
// rank, float. The file's shares 5:1:1:1 send 5 + 1 = 6 tokens of each rank to rank 0 and 2 to
// rank 1, so each rank sends 8 tokens × 2 = 16 elements: rank 0 keeps 12 and sends 4, rank 1
// sends 12 and keeps 4.
//   S = 16 elements × 4 B = 64 B, every rank's send total;
//   received: rank 0 24 elements (96 B), rank 1 8 (32 B): imbalance 96 / 64 = 1.5;
//   off-rank: rank 0 sends 16 B, receives 48 B; rank 1 sends 48 B, receives 16 B: busiest 48 B;
//   busbw factor 48 / 64 = 0.75 (an equal split would give (n−1)/n = 0.5);
//   in 1 us: algbw 64 B / 1 us = 0.064 GB/s, busbw 0.048 GB/s.
TEST_F(AllToAllvLayoutTest, BytesAndBusbwByHand) {
  const Routing routing = file_routing("5 1 1 1", 4);
  MoeShape shape;
  shape.experts = 4;
  shape.top_k = 1;
  shape.hidden = 2;
  EXPECT_EQ(AllToAllvLayout::tokens_for(shape, 64, DType::kFloat32), 8u);
  EXPECT_EQ(AllToAllvLayout::tokens_for(shape, 71, DType::kFloat32), 8u);
  EXPECT_EQ(AllToAllvLayout::tokens_for(shape, 7, DType::kFloat32), 0u);
  const AllToAllvLayout layout(routing, shape, 2, 8);
  EXPECT_EQ(layout.elements(0, 0), 12u);
  EXPECT_EQ(layout.elements(0, 1), 4u);
  EXPECT_EQ(layout.elements(1, 0), 12u);
  EXPECT_EQ(layout.elements(1, 1), 4u);
  const CollectiveSizes s = layout.sizes(DType::kFloat32);
  EXPECT_EQ(s.count, 16u);
  EXPECT_EQ(s.send_count, 16u);
  EXPECT_EQ(s.recv_count, 24u);
  EXPECT_EQ(s.bytes, 64u);
  EXPECT_EQ(layout.recv_total(0), 24u);
  EXPECT_EQ(layout.recv_total(1), 8u);
  EXPECT_EQ(layout.busiest_offrank_bytes(DType::kFloat32), 48u);
  EXPECT_DOUBLE_EQ(layout.busbw_factor(), 0.75);
  EXPECT_DOUBLE_EQ(layout.imbalance(), 1.5);
  EXPECT_DOUBLE_EQ(algbw_gbps(s.bytes, 1.0), 0.064);
  EXPECT_DOUBLE_EQ(algbw_gbps(s.bytes, 1.0) * layout.busbw_factor(), 0.048);
  // Rank 1's block from rank 0 starts at 0 in its receive buffer, its own block at 4; it holds
  // rank 0's data from where rank 0's block for rank 1 starts (after its 12 for rank 0).
  EXPECT_EQ(layout.recv_offset(1, 0), 0u);
  EXPECT_EQ(layout.recv_offset(1, 1), 4u);
  EXPECT_EQ(layout.send_offset(0, 1), 12u);
  const ExpectPattern e = layout.expected(1, 0, DType::kFloat32, 7);
  EXPECT_EQ(e.kind, ExpectKind::kData);
  EXPECT_EQ(e.source, 0);
  EXPECT_EQ(e.first_index, 12u);
  EXPECT_EQ(expected_value(e, 0), fill_value(layout.input(0, DType::kFloat32, 7), 12));
}

// An equal split is alltoall: factor (n−1)/n, no imbalance. 4 ranks, 8 experts, top-2,
// 4 tokens: 8 copies per rank, one per expert, two per rank.
TEST(AllToAllvLayout, UniformSplitIsAlltoall) {
  MoeShape shape;
  shape.experts = 8;
  shape.top_k = 2;
  const AllToAllvLayout layout(Routing(parse_routing("uniform"), 8), shape, 4, 4);
  for (int r = 0; r < 4; ++r) {
    for (int p = 0; p < 4; ++p) EXPECT_EQ(layout.elements(r, p), 2u);
  }
  EXPECT_DOUBLE_EQ(layout.busbw_factor(), 0.75);
  EXPECT_DOUBLE_EQ(layout.imbalance(), 1.0);
  EXPECT_DOUBLE_EQ(layout.busbw_factor(),
                   collective_spec(CollectiveKind::kAllToAll).busbw_factor(4));
}

// Each rank builds its own layout, as the bench's ranks do; what rank r sends p is what p
// expects from r, at offsets that tile both buffers exactly.
TEST(AllToAllvLayout, EveryRanksSplitsAgreeWithItsPeers) {
  MoeShape shape;  // 64 experts, top-6
  shape.hidden = 3;
  const int n = 4;
  std::vector<PeerSplits> splits;
  for (int r = 0; r < n; ++r) {
    const AllToAllvLayout own(Routing(parse_routing("zipf"), 64), shape, n, 1000);
    splits.push_back(peer_splits(own, r));
  }
  for (int r = 0; r < n; ++r) {
    std::size_t send_at = 0;
    std::size_t recv_at = 0;
    for (int p = 0; p < n; ++p) {
      const auto pr = static_cast<std::size_t>(r);
      const auto pp = static_cast<std::size_t>(p);
      EXPECT_EQ(splits[pr].send_counts[pp], splits[pp].recv_counts[pr]) << r << " -> " << p;
      EXPECT_EQ(splits[pr].send_displs[pp], send_at);
      EXPECT_EQ(splits[pr].recv_displs[pp], recv_at);
      send_at += splits[pr].send_counts[pp];
      recv_at += splits[pr].recv_counts[pp];
    }
    EXPECT_EQ(send_at, 1000u * 6 * 3);  // every rank sends tokens × top-k × hidden
  }
}

// The patterns the bench fills and checks, against an independent model of MPI_Alltoallv: every
// element each rank receives is what its block's pattern says, over 3 ranks and zipf counts.
TEST(AllToAllvLayout, ExpectedPatternsMatchAModelOfTheExchange) {
  MoeShape shape;
  shape.experts = 12;
  shape.top_k = 3;
  shape.hidden = 2;
  const int n = 3;
  const AllToAllvLayout layout(Routing(parse_routing("zipf:1"), 12), shape, n, 50);
  const auto nn = static_cast<std::size_t>(n);
  std::vector<std::vector<std::size_t>> counts(nn, std::vector<std::size_t>(nn));
  testing::RankBuffers sends(nn);
  for (int q = 0; q < n; ++q) {
    for (int p = 0; p < n; ++p)
      counts[static_cast<std::size_t>(q)][static_cast<std::size_t>(p)] = layout.elements(q, p);
    const FillPattern in = layout.input(q, DType::kFloat32, 5);
    for (std::uint64_t i = 0; i < layout.send_total(q); ++i) {
      sends[static_cast<std::size_t>(q)].push_back(fill_value(in, i));
    }
  }
  const testing::RankBuffers recv = testing::simulate_alltoallv(counts, sends);
  for (int r = 0; r < n; ++r) {
    const auto& got = recv[static_cast<std::size_t>(r)];
    ASSERT_EQ(got.size(), layout.recv_total(r));
    for (int q = 0; q < n; ++q) {
      const ExpectPattern e = layout.expected(r, q, DType::kFloat32, 5);
      for (std::uint64_t i = 0; i < layout.elements(q, r); ++i) {
        ASSERT_EQ(got[layout.recv_offset(r, q) + i], expected_value(e, i))
            << "rank " << r << " from " << q << " element " << i;
      }
    }
  }
}

TEST(AllToAllvLayout, RefusesExpertsThatDoNotDivideAmongTheRanks) {
  MoeShape shape;
  try {
    AllToAllvLayout(Routing(parse_routing("uniform"), 64), shape, 3, 10);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "64 experts do not divide evenly among 3 expert-parallel ranks");
  }
}

}  // namespace
}  // namespace commprof
