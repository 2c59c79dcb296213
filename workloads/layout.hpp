// SPDX-License-Identifier: MIT
// Where each rank sits in a job, in Megatron-Core's rank order (its RankGenerator, order
// "tp-cp-ep-dp-pp"). The dense layers' groups: TP varies fastest, then CP, then DP, then PP
// (world rank = tp_rank + tp·(cp_rank + cp·(dp_rank + dp·pp_rank))). The MoE layers' groups
// fold onto the same ranks (MoE parallel folding): within one pipeline stage's tp·cp·dp ranks,
// expert-TP varies fastest, then EP, then expert-DP (edp = tp·cp·dp / (etp·ep)). Ranks of one TP
// group are neighbours, so on a node they share NVLink.
#pragma once

#include <string>
#include <vector>

#include "workloads/model_shape.hpp"

namespace commprof {

struct ParallelLayout {
  int tp = 1;
  int dp = 1;
  int pp = 1;
  int cp = 1;   ///< context parallel: each rank holds 1/cp of the sequence
  int ep = 1;   ///< expert parallel: the MoE layers' experts spread over ep ranks
  int etp = 0;  ///< the experts' tensor parallelism; 0: as --tp (Megatron-Core's default)
  int world() const { return tp * cp * dp * pp; }
  int expert_tp() const { return etp > 0 ? etp : tp; }
  /// Expert data parallelism: the ranks of one stage holding the same experts (valid once
  /// validate_layout passed: etp·ep divides tp·cp·dp).
  int expert_dp() const { return tp * cp * dp / (expert_tp() * ep); }
  /// The ranks that hold the same dense parameters and sum their gradients: DP × CP.
  int grad_dp() const { return dp * cp; }
};

/// One rank's coordinates and the groups it belongs to.
struct RankPlace {
  int rank = 0;
  int tp_rank = 0, cp_rank = 0, dp_rank = 0, pp_rank = 0;
  int etp_rank = 0, ep_rank = 0, edp_rank = 0;
  /// World ranks of this rank's groups, in group-rank order. dp_group is the dense gradients'
  /// group, DP × CP (Megatron-Core reduces over the data-parallel group with context
  /// parallelism): its rank order is cp fastest, then dp (grad_dp_rank).
  std::vector<int> tp_group, cp_group, dp_group, pp_group;
  /// The MoE layers' groups: expert TP, EP (the all-to-alls), expert DP (the experts'
  /// gradients), and expert TP × EP (the all-gather of the routing counts).
  std::vector<int> etp_group, ep_group, edp_group, tp_ep_group;
  /// Group ids: every rank of one group has the same id (the colour of the split); ids of one
  /// kind are distinct.
  int tp_group_id = 0, cp_group_id = 0, dp_group_id = 0, pp_group_id = 0;
  int etp_group_id = 0, ep_group_id = 0, edp_group_id = 0, tp_ep_group_id = 0;
  /// Megatron's embedding group: the first and the last pipeline stage of this rank's TP and DP
  /// place, which all-reduce the gradient of tied embeddings; empty for the other stages and
  /// without pipeline parallelism. Its id is the pipeline group's.
  std::vector<int> embedding_group;
  bool in_embedding_group() const { return !embedding_group.empty(); }
  /// This rank's place in dp_group.
  int grad_dp_rank(const ParallelLayout& l) const { return cp_rank + l.cp * dp_rank; }
  /// This rank's place in tp_ep_group.
  int tp_ep_rank(const ParallelLayout& l) const { return etp_rank + l.expert_tp() * ep_rank; }
};

RankPlace place_rank(const ParallelLayout& layout, int rank);

/// Checks degrees against the world size and the model (heads, key/value heads and ffn divisible
/// by tp; the experts' folding: etp·ep divides tp·cp·dp, ep divides the experts); throws
/// ConfigError naming what does not fit. How the layers split over the pipeline stages is
/// checked with the schedule (validate_workload).
void validate_layout(const ParallelLayout& layout, int world_size, const ModelShape& shape);

/// "tp2 x dp2 x pp1", with " x cp2", " x ep4 (etp1, edp2)" where those are used.
std::string describe(const ParallelLayout& layout);

/// "tp=2,pp=2,dp=2[,cp=…,ep=…,etp=…]" → a layout; missing degrees are 1. Throws ConfigError.
ParallelLayout parse_layout(const std::string& text);
std::string layout_text(const ParallelLayout& l);  ///< "tp=2,pp=2,dp=2" (cp, ep where > 1)

}  // namespace commprof
