// SPDX-License-Identifier: MIT
// Where each rank sits in a tp × dp × pp job, Megatron's order: TP varies fastest, then DP,
// then PP (world rank = tp_rank + tp·(dp_rank + dp·pp_rank)). Ranks of one TP group are
// neighbours, so on a node they share NVLink.
#pragma once

#include <string>
#include <vector>

#include "workloads/model_shape.hpp"

namespace commprof {

struct ParallelLayout {
  int tp = 1;
  int dp = 1;
  int pp = 1;
  int world() const { return tp * dp * pp; }
};

/// One rank's coordinates and the groups it belongs to.
struct RankPlace {
  int rank = 0;
  int tp_rank = 0, dp_rank = 0, pp_rank = 0;
  /// World ranks of this rank's groups, in group-rank order.
  std::vector<int> tp_group, dp_group, pp_group;
  /// Group ids: every rank of one group has the same id (the colour of the split).
  int tp_group_id = 0, dp_group_id = 0, pp_group_id = 0;
  /// Megatron's embedding group: the first and the last pipeline stage of this rank's TP and DP
  /// place, which all-reduce the gradient of tied embeddings; empty for the other stages and
  /// without pipeline parallelism. Its id is the pipeline group's.
  std::vector<int> embedding_group;
  bool in_embedding_group() const { return !embedding_group.empty(); }
};

RankPlace place_rank(const ParallelLayout& layout, int rank);

/// Checks degrees against the world size and the model (heads, key/value heads and ffn divisible
/// by tp); throws ConfigError naming what does not fit. How the layers split over the pipeline
/// stages is checked with the schedule (validate_workload).
void validate_layout(const ParallelLayout& layout, int world_size, const ModelShape& shape);

/// "tp2 x dp2 x pp1"
std::string describe(const ParallelLayout& layout);

}  // namespace commprof
