// SPDX-License-Identifier: MIT
// The mixture-of-experts layers of a model shape, as Megatron-Core's MoE layer with its
// `alltoall` token dispatcher runs them (docs/workloads.md, "Mixture of experts"): what one rank
// of an expert-parallel group routes, sends, receives and computes in one layer and micro-batch.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "collectives/routing.hpp"
#include "src/collective/peer_splits.hpp"
#include "workloads/model_shape.hpp"

namespace commprof {

/// One MoE layer's token dispatch on one rank of an EP group, from the routing of every rank of
/// the group (each a pure function of layer and rank, so every rank computes all of it): the
/// dispatch all-to-allv (rows of `hidden` elements to the ranks holding their experts), the
/// combine that brings them back (the dispatch reversed), and the rows each local expert
/// computes. With a capacity factor every (source rank, expert) pair sends exactly `capacity`
/// rows, padded or cut (GShard, DeepSpeed-MoE): fixed-size all-to-alls, tokens over it dropped.
///
/// With expert TP (etp > 1), each ETP rank of an EP rank's experts dispatches its own tokens
/// over its own EP group, then the ETP ranks all-gather the rows they received, with uneven
/// sizes, so that every one of them runs the local experts (their FFN split etp ways) on all
/// the rows; after the experts, a reduce-scatter with the same sizes sums their partial outputs
/// and hands each rank back its own rows for the combine (Megatron-Core's
/// MoEAlltoAllTokenDispatcher: dispatch_postprocess's gather_from_sequence_parallel_region and
/// combine_preprocess's reduce_scatter_to_sequence_parallel_region over the expert-TP group, with
/// output_splits_tp as their split sizes).
struct MoeDispatch {
  std::shared_ptr<const PeerSplits> dispatch;
  std::shared_ptr<const PeerSplits> combine;
  std::uint64_t send_elements = 0;         ///< what this rank sends in the dispatch
  std::uint64_t recv_elements = 0;         ///< what it receives: its share of its experts' load
  std::vector<std::uint64_t> expert_rows;  ///< per local expert, rows it computes (every ETP
                                           ///< rank's, after the gather)
  /// Per rank of this rank's expert-TP group, the rows it received in its dispatch (Megatron's
  /// output_splits_tp): the uneven gather's and scatter's sizes. One entry at etp 1.
  std::vector<std::uint64_t> etp_rows;
  std::uint64_t gathered_elements = 0;  ///< Σ etp_rows · hidden: the gather's output
  std::uint64_t capacity = 0;           ///< rows per (source, expert); 0: dropless
  std::uint64_t dropped = 0;            ///< this rank's routed copies over capacity
  double imbalance = 1.0;               ///< max over mean of what the EP ranks receive
};

/// The dispatch of layer `layer` at training step `step` on EP rank `ep_rank` of `ep` and
/// expert-TP rank `etp_rank` of `etp`, each rank routing `tokens` tokens (its part of the
/// micro-batch) to shape.top_k of shape.experts experts; EP rank p holds experts
/// [p·E/ep, (p+1)·E/ep). The routing source of the rank at (etp_rank t, ep_rank e) is its place
/// in the expert TP × EP group, t + etp·e (Megatron-Core all-gathers the counts over that group
/// in that order). The routing of each step is its own (the loads move between steps). Throws
/// ConfigError when ep does not divide the experts.
MoeDispatch moe_dispatch(const ModelShape& shape, const Routing& routing, int layer, int ep,
                         int ep_rank, std::uint64_t tokens, std::uint64_t step = 0, int etp = 1,
                         int etp_rank = 0);

/// Megatron-Core's MoE layer (its router, then the experts) needs: the router's forward GEMM
/// tokens × E × h; each expert's FFN on `rows` rows: up rows × F·(2 if gated) × h, down
/// rows × h × F (F = moe_ffn / etp: expert TP splits the FFN's columns).
struct MoeGemms {
  int router_m = 0, router_n = 0, router_k = 0;
  int expert_up_n = 0, expert_down_k = 0;  ///< per expert; m = its rows
  int shared_up_n = 0, shared_down_k = 0;  ///< the shared experts' FFN on the rank (/tp); 0: none
};
MoeGemms moe_gemms(const ModelShape& shape, int tp, std::uint64_t tokens, int etp = 1);

/// The memory-bound passes of one MoE layer and micro-batch on one rank, over T tokens routed
/// to K experts each, rows of h elements of E bytes, as Megatron-Core's unfused permute and
/// unpermute (index_select, a product with the probabilities, scatter_add_) and PyTorch's
/// autograd of them run (docs/workloads.md gives the formulas; R = T·K·h·E, the routed rows):
struct MoePasses {
  /// Router scores (fp32, T × experts) to probabilities and the top K: read 4·T·X, write
  /// 4·T·X + 12·T·K (probabilities and int64 indices).
  PassBytes topk_fwd;
  PassBytes topk_bwd;     ///< the gradient of the scores: read 4·T·X + 4·T·K, write 4·T·X
  PassBytes permute_fwd;  ///< tokens gathered into expert order: read T·h·E + 8·T·K, write R
  /// The rows' gradients added back per token into zeros: read R + 8·T·K, write 2·T·h·E, of
  /// which R added into T·h·E by atomic scatter-add (AccessPattern::kScatterAdd)
  PassBytes permute_bwd;
  /// The experts' rows times their probabilities: read R + 4·T·K, write R, unvectorised
  /// (a broadcast operand: AccessPattern::kStrided)
  PassBytes unpermute_probs_fwd;
  /// The weighted rows added per token into zeros: as permute_bwd
  PassBytes unpermute_fwd;
  PassBytes unpermute_bwd;  ///< the gradient gathered per row: read T·h·E + 8·T·K, write R
  /// The product's gradients (grad · probabilities unvectorised: read R + E·T·K, write R; grad
  /// · rows, then summed over h): read 4R + E·T·K, write 2R + E·T·K
  PassBytes unpermute_probs_bwd;
};
MoePasses moe_passes(const ModelShape& shape, std::uint64_t tokens);

/// The expert FFN's activation on `rows` rows (as a dense layer's act_fwd / act_bwd with F/etp).
PassBytes expert_act_fwd(const ModelShape& shape, std::uint64_t rows, int etp);
PassBytes expert_act_bwd(const ModelShape& shape, std::uint64_t rows, int etp);

/// Parameter tensors of one MoE layer on one rank, in a PyTorch layer's registration order,
/// split as their gradients are summed: the dense ones over DP × CP (the two norms, the
/// attention's, the router's weight E × h, the shared experts' up and down over TP), the local
/// experts' over expert DP (E/ep experts, each its up and down with F over expert TP). Biases
/// where the preset has them.
std::vector<std::uint64_t> moe_layer_dense_tensors(const ModelShape& shape, int tp);
std::vector<std::uint64_t> moe_layer_expert_tensors(const ModelShape& shape, int ep, int etp);

}  // namespace commprof
