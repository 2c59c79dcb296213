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

// Megatron-Core's order with context parallelism, and the experts folded onto the same ranks
// (tp2 × cp2 × dp2, ep2 with expert TP as TP), worked out by hand: dense rank = t + 2·(c + 2·d),
// expert rank = t' + 2·(e + 2·d').
TEST(Layout, ContextAndExpertGroupsFoldOntoTheSameRanks) {
  ParallelLayout l;
  l.tp = 2;
  l.cp = 2;
  l.dp = 2;
  l.ep = 2;
  ASSERT_EQ(l.world(), 8);
  ASSERT_EQ(l.expert_tp(), 2);
  ASSERT_EQ(l.expert_dp(), 2);
  using G = std::vector<std::vector<int>>;
  const G tp = {{0, 1}, {0, 1}, {2, 3}, {2, 3}, {4, 5}, {4, 5}, {6, 7}, {6, 7}};
  const G cp = {{0, 2}, {1, 3}, {0, 2}, {1, 3}, {4, 6}, {5, 7}, {4, 6}, {5, 7}};
  // The dense gradients' group is DP × CP: every rank of the same TP place, cp fastest.
  const G dp = {{0, 2, 4, 6}, {1, 3, 5, 7}, {0, 2, 4, 6}, {1, 3, 5, 7},
                {0, 2, 4, 6}, {1, 3, 5, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}};
  const G ep = {{0, 2}, {1, 3}, {0, 2}, {1, 3}, {4, 6}, {5, 7}, {4, 6}, {5, 7}};
  const G edp = {{0, 4}, {1, 5}, {2, 6}, {3, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
  const G tp_ep = {{0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3}, {0, 1, 2, 3},
                   {4, 5, 6, 7}, {4, 5, 6, 7}, {4, 5, 6, 7}, {4, 5, 6, 7}};
  std::vector<RankPlace> places;
  for (int r = 0; r < 8; ++r) {
    const RankPlace p = place_rank(l, r);
    const auto i = static_cast<std::size_t>(r);
    EXPECT_EQ(p.tp_group, tp[i]) << "rank " << r;
    EXPECT_EQ(p.cp_group, cp[i]) << "rank " << r;
    EXPECT_EQ(p.dp_group, dp[i]) << "rank " << r;
    EXPECT_EQ(p.ep_group, ep[i]) << "rank " << r;
    EXPECT_EQ(p.etp_group, tp[i]) << "rank " << r;
    EXPECT_EQ(p.edp_group, edp[i]) << "rank " << r;
    EXPECT_EQ(p.tp_ep_group, tp_ep[i]) << "rank " << r;
    EXPECT_EQ(p.dp_group[static_cast<std::size_t>(p.grad_dp_rank(l))], r);
    EXPECT_EQ(p.cp_group[static_cast<std::size_t>(p.cp_rank)], r);
    EXPECT_EQ(p.ep_group[static_cast<std::size_t>(p.ep_rank)], r);
    EXPECT_EQ(p.edp_group[static_cast<std::size_t>(p.edp_rank)], r);
    EXPECT_EQ(p.tp_ep_group[static_cast<std::size_t>(p.tp_ep_rank(l))], r);
    places.push_back(p);
  }
  for (const RankPlace& a : places) {
    for (const RankPlace& b : places) {
      EXPECT_EQ(a.cp_group == b.cp_group, a.cp_group_id == b.cp_group_id);
      EXPECT_EQ(a.dp_group == b.dp_group, a.dp_group_id == b.dp_group_id);
      EXPECT_EQ(a.ep_group == b.ep_group, a.ep_group_id == b.ep_group_id);
      EXPECT_EQ(a.etp_group == b.etp_group, a.etp_group_id == b.etp_group_id);
      EXPECT_EQ(a.edp_group == b.edp_group, a.edp_group_id == b.edp_group_id);
      EXPECT_EQ(a.tp_ep_group == b.tp_ep_group, a.tp_ep_group_id == b.tp_ep_group_id);
    }
  }
  // Folding with expert TP 1 and EP 4 on the same 8 ranks: each stage's 8 ranks hold 2 copies
  // of the experts, EP over neighbours.
  l.etp = 1;
  l.ep = 4;
  ASSERT_EQ(l.expert_dp(), 2);
  const RankPlace p5 = place_rank(l, 5);
  EXPECT_EQ(p5.ep_group, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(p5.edp_group, (std::vector<int>{1, 5}));
  EXPECT_EQ(p5.etp_group, (std::vector<int>{5}));
  EXPECT_EQ(p5.tp_ep_group, p5.ep_group);
  EXPECT_EQ(describe(l), "tp2 x dp2 x pp1 x cp2 x ep4 (etp1, edp2)");
}

// Expert TP wider than attention's (tp 2 x dp 4 on 8 ranks, expert TP 4 x EP 2), as Megatron-Core's
// expert rank generator (order tp-ep-dp-pp, expert TP as its tp) lays it: expert rank
// t' + 4·e, so an expert-TP group spans two attention TP groups (and two dense DP ranks), and
// the EP groups pair ranks 4 apart.
TEST(Layout, ExpertTensorParallelismWiderThanAttentions) {
  ParallelLayout l;
  l.tp = 2;
  l.dp = 4;
  l.ep = 2;
  l.etp = 4;
  ASSERT_EQ(l.expert_dp(), 1);
  const RankPlace p6 = place_rank(l, 6);
  EXPECT_EQ(p6.tp_group, (std::vector<int>{6, 7}));
  EXPECT_EQ(p6.etp_group, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(p6.etp_rank, 2);
  EXPECT_EQ(p6.ep_group, (std::vector<int>{2, 6}));
  EXPECT_EQ(p6.ep_rank, 1);
  EXPECT_EQ(p6.edp_group, (std::vector<int>{6}));
  EXPECT_EQ(p6.tp_ep_group, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(p6.tp_ep_rank(l), 6);
  EXPECT_EQ(describe(l), "tp2 x dp4 x pp1 x ep2 (etp4, edp1)");
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
  // The experts' TP × EP must divide a stage's ranks; CP splits the sequence in 2·cp chunks.
  ParallelLayout folded;
  folded.tp = 2;
  folded.dp = 3;
  folded.ep = 2;
  try {
    validate_layout(folded, 6, s);
    ADD_FAILURE() << "etp 2 x ep 2 accepted on 6 ranks";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("the experts' --etp 2 x --ep 2 = 4 ranks do not divide a "
                                         "pipeline stage's --tp 2 x --cp 1 x --dp 3 = 6 ranks"),
              std::string::npos)
        << e.what();
  }
  ParallelLayout context;
  context.cp = 4;
  ModelShape odd = s;
  odd.seq = 36;  // 8 chunks of 4.5 tokens
  EXPECT_THROW(validate_layout(context, 4, odd), ConfigError);
  odd.seq = 40;
  EXPECT_NO_THROW(validate_layout(context, 4, odd));
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

TEST(Layout, ParsesAndWritesTheLayoutText) {
  const ParallelLayout l = parse_layout("tp=2,pp=2,dp=2");
  EXPECT_EQ(l.world(), 8);
  EXPECT_EQ(layout_text(l), "tp=2,pp=2,dp=2");
  EXPECT_EQ(parse_layout("dp=8").dp, 8);
  for (const char* bad : {"", "tp=0", "tp=2,tp=2", "xp=2", "tp", "tp=two"}) {
    EXPECT_THROW(parse_layout(bad), ConfigError) << bad;
  }
}

}  // namespace
}  // namespace commprof
