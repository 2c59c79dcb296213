// SPDX-License-Identifier: MIT
#include "workloads/layout.hpp"

#include <gtest/gtest.h>

#include "src/core/errors.hpp"

namespace commprof {
namespace {

TEST(Layout, TwoByTwoByTwoGroupMembershipOfEveryRank) {
  // Megatron's order: TP fastest, then DP, then PP. rank = tp + 2·(dp + 2·pp).
  const ParallelLayout l{2, 2, 2};
  const std::vector<std::vector<int>> tp = {{0, 1}, {0, 1}, {2, 3}, {2, 3},
                                            {4, 5}, {4, 5}, {6, 7}, {6, 7}};
  const std::vector<std::vector<int>> dp = {{0, 2}, {1, 3}, {0, 2}, {1, 3},
                                            {4, 6}, {5, 7}, {4, 6}, {5, 7}};
  const std::vector<std::vector<int>> pp = {{0, 4}, {1, 5}, {2, 6}, {3, 7},
                                            {0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (int r = 0; r < 8; ++r) {
    const RankPlace p = place_rank(l, r);
    EXPECT_EQ(p.tp_group, tp[static_cast<std::size_t>(r)]) << "rank " << r;
    EXPECT_EQ(p.dp_group, dp[static_cast<std::size_t>(r)]) << "rank " << r;
    EXPECT_EQ(p.pp_group, pp[static_cast<std::size_t>(r)]) << "rank " << r;
    EXPECT_EQ(p.tp_rank, r % 2);
    EXPECT_EQ(p.dp_rank, (r / 2) % 2);
    EXPECT_EQ(p.pp_rank, r / 4);
    // Each rank's position in its groups is its coordinate.
    EXPECT_EQ(p.tp_group[static_cast<std::size_t>(p.tp_rank)], r);
    EXPECT_EQ(p.dp_group[static_cast<std::size_t>(p.dp_rank)], r);
    EXPECT_EQ(p.pp_group[static_cast<std::size_t>(p.pp_rank)], r);
  }
  // Group ids: ranks of one group share the id, ranks of different groups do not.
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      const RankPlace pa = place_rank(l, a);
      const RankPlace pb = place_rank(l, b);
      EXPECT_EQ(pa.tp_group == pb.tp_group, pa.tp_group_id == pb.tp_group_id);
      EXPECT_EQ(pa.dp_group == pb.dp_group, pa.dp_group_id == pb.dp_group_id);
      EXPECT_EQ(pa.pp_group == pb.pp_group, pa.pp_group_id == pb.pp_group_id);
    }
  }
}

// 8 layers, 8 heads sharing `kv` key/value heads, ffn 64.
ModelShape shape_for_layout(int kv = 0) {
  ModelShape s;
  s.layers = 8;
  s.hidden = 64;
  s.heads = 8;
  s.kv_heads = kv;
  s.ffn = 64;
  return s;
}

TEST(Layout, RejectsWhatDoesNotFit) {
  const ModelShape s = shape_for_layout();
  EXPECT_THROW(validate_layout({2, 2, 2}, 4, s), ConfigError);  // 8 ranks ≠ 4
  EXPECT_THROW(validate_layout({3, 1, 1}, 3, s), ConfigError);  // heads % tp
  EXPECT_NO_THROW(validate_layout({1, 1, 3}, 3, s));  // layers split over stages: stage_split
  EXPECT_THROW(validate_layout({0, 1, 1}, 1, s), ConfigError);
  EXPECT_NO_THROW(validate_layout({2, 1, 2}, 4, s));
  try {
    validate_layout({2, 2, 2}, 4, s);
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("the job has 4"), std::string::npos) << e.what();
  }
}

// Megatron keeps whole key/value heads on a TP rank: 8 heads sharing 2 split over 2 ranks, not 4.
TEST(Layout, KeyValueHeadsSplitWholeOverTensorParallelRanks) {
  const ModelShape s = shape_for_layout(2);
  EXPECT_NO_THROW(validate_layout({2, 1, 1}, 2, s));
  try {
    validate_layout({4, 1, 1}, 4, s);
    ADD_FAILURE() << "4 TP ranks accepted for 2 key/value heads";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--kv-heads 2 is not divisible by --tp 4"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace commprof
