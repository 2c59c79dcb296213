// SPDX-License-Identifier: MIT
// Private to the workloads layer: the builder of one rank's step (build_plan), its parts in
// files of their own: step_builder.cpp (the passes through the layers, TP collectives,
// --compute-from), step_ends.cpp (embedding, LM head and loss), step_moe.cpp (MoE layers),
// step_cp.cpp (context-parallel attention), step_transfers.cpp (pipeline transfers),
// step_gradients.cpp (DDP buckets, ZeRO, tied embeddings, the optimizer).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/core/log.hpp"
#include "workloads/moe.hpp"
#include "workloads/op_plan.hpp"
#include "workloads/workload_config.hpp"

namespace commprof {

/// Builds one rank's step: the pipeline schedule's forward and backward passes through the
/// stage's chunks (the embedding before the first chunk's layers, the final norm, LM head and
/// loss after the last's), with TP collectives inside them, DP gradient synchronisation hooked on
/// each chunk's last backward pass, the tied embeddings' gradient summed between the first and
/// last stage, and the optimizer step at the end.
class StepBuilder {
 public:
  StepBuilder(const WorkloadConfig& c, const RankPlace& place, std::uint64_t step);

  OpPlan build();

 private:
  struct Calibrated {
    int dy = -1;     // the input gradient (what the layer below waits for)
    int first = -1;  // the layer's first compute op
    int last = -1;   // its last (every weight gradient is ready after it)
  };

  bool sp() const { return t_ > 1 && c_.sequence_parallel; }
  bool zero() const { return d_ > 1 && c_.dp_mode == DpMode::kZero; }
  // ZeRO of the MoE layers' experts, sharded over expert DP (their own group).
  bool zero_experts() const { return c_.shape.moe() && edp_ > 1 && c_.dp_mode == DpMode::kZero; }
  bool zero_any() const { return zero() || zero_experts(); }
  std::string lname(int layer, const char* what, int mb) const {
    return log::cat("l", layer, ".", what, ".mb", mb);
  }
  std::string ename(const char* what, int mb) const { return log::cat(what, ".mb", mb); }
  static bool is_ffn(const LayerGemm& g) { return g.name.rfind("ffn", 0) == 0; }
  bool fused_attention() const { return c_.attention == AttentionMode::kFused; }
  PlannedAttention attention(bool backward) const {
    return layer_attention(c_.shape, t_, backward);
  }

  // step_builder.cpp: the passes through a chunk's layers.
  int forward(const ModelChunk& chunk, int mb, int input);
  int layer_forward(int l, int mb, int x, int params);
  int backward(const ModelChunk& chunk, int mb, int grad_in, bool last_pass);
  Calibrated layer_backward(int l, int mb, int dy, int params, int h2d, bool last_pass);
  int tp_reduce(const std::string& name, int after);
  int tp_gather(const std::string& name, int after);
  void offload(int l, int mb, int after);
  int pass(const std::string& name, const PassBytes& bytes, int after, int also = -1);
  // step_builder.cpp: --compute-from.
  std::uint64_t calibrated_ns(int l, bool backward, bool ffn) const;
  void replay_gap(int op, ComputePart part, double per);
  double traced_layer_passes() const;
  int forward_calibrated(int l, int mb, int x, int params);
  Calibrated backward_calibrated(int l, int mb, int dy, int params, int h2d, bool last_pass);
  // step_moe_calibrated.cpp: MoE layers, and layers of different weight, under --compute-from.
  void calibrate_layers();
  double traced_layer_ns(int l, bool backward) const;
  /// Layer l's attention (its GEMMs and core) in one direction, as traced on one GPU.
  double attention_ns(int l, bool backward) const {
    return traced_layer_ns(l, backward) *
           (c_.shape.moe_layer(l) ? moe_shares_.attn : traced_attn_share_);
  }
  std::uint64_t expert_ns(int l, bool backward, const MoeDispatch& d) const;
  int moe_forward_calibrated(int l, int mb, int x, int params);
  int moe_backward_calibrated(int l, int mb, int dy, int h2d, bool last_pass);

  // step_ends.cpp: the model's ends.
  // --compute-from a trace whose ends were told apart: its ends' kernels run as the ends' ops.
  bool calibrated_ends() const { return c_.compute && c_.compute->has_ends(); }
  std::uint64_t ends_ns(double per_step, int divide) const;
  int embedding_forward(int mb, int after);
  int head_forward(int mb, int x);
  int head_backward(int mb, int dy, bool last_pass);
  void head_gradient_done(int grad);
  int embedding_backward(int mb, int dy, bool last_pass);
  std::uint64_t embedding_params() const { return end_parameters(c_.shape, t_).embedding; }
  // The LM head's weight on the last stage: its own, or tied embeddings' copy there.
  std::uint64_t head_params() const {
    const EndParameters e = end_parameters(c_.shape, t_);
    return e.final_norm + (tied_across_stages(c_) ? e.embedding : e.head);
  }

  // step_moe.cpp: Megatron-Core's MoELayer with the alltoall token dispatcher.
  const MoeDispatch& dispatch_of(int l);
  int alltoallv(const std::string& name, const std::shared_ptr<const PeerSplits>& splits,
                std::uint64_t send_elements, int after);
  // An expert's rows as its GEMMs take them: rounded up to a multiple of 8. commprof's GEMMs are
  // column-major with the rows as the leading dimension, which cuBLAS's tensor-core kernels need
  // 16-byte aligned (8 bf16 elements); a framework's grouped GEMM, row-major, has no such need
  // and does not slow down on odd rows (Mixtral on 2 H200s, rows as routed: 2.3x the step of
  // aligned rows, docs/BENCHMARKS.md). At most 7 rows more per expert.
  static int gemm_rows(std::uint64_t rows) { return static_cast<int>((rows + 7) / 8 * 8); }
  int etp_exchange(const std::string& name, bool gather, const MoeDispatch& d, int after);
  int moe_forward(int l, int mb, int x, int params);
  int routing_counts(int l, int mb, int after);
  PassBytes shared_act(bool backward) const;
  int moe_backward(int l, int mb, int dy, int h2d, bool last_pass);
  void expert_grad_ready(const std::string& param, int wgrad);
  // ZeRO: the gather of layer l's local experts their GEMMs wait for (-1: not sharded).
  int expert_params(int l) const {
    const auto it = expert_gathered_.find(l);
    return zero_experts() && it != expert_gathered_.end() ? it->second : -1;
  }

  // step_cp.cpp: attention under context parallelism.
  int attention_forward(int l, int mb, int after);
  int attention_backward(int l, int mb, int dy, int h2d);
  int attention_op(int l, const std::string& name, const PlannedAttention& call,
                   const std::vector<int>& deps);
  int attention_calibrated_cp(int l, int mb, int x, int params);
  int attention_backward_calibrated_cp(int l, int mb, int dy, int params, int h2d, bool last_pass,
                                       int* first);
  PlannedAttention block(const CpBlock& b, bool backward) const;
  std::string step_name(int l, const char* what, int mb, bool backward, std::size_t step) const {
    return lname(l, what, mb) + (backward ? ".bwd" : ".fwd") + log::cat(".step", step);
  }
  int ring_transfer(const std::string& name, bool gradient, const std::vector<int>& deps);
  int ring_forward(int l, int mb, int after);
  int ring_backward(int l, int mb, int dy, int h2d);
  int ulysses(int l, int mb, int after, int h2d, bool backward);
  int gathered(int l, int mb, int after, int h2d, bool backward);

  // step_transfers.cpp: the pipeline's sends and receives.
  void with_world(int id, const std::vector<int>& group);
  int transfer(const PipeItem& it, int produced);

  // step_gradients.cpp: gradient synchronisation and the optimizer.
  int zero_gather(const std::string& unit, std::uint64_t params, const char* phase, int mb);
  void zero_reduce(const std::string& unit, std::uint64_t params, int after);
  int zero_gather_layer(int l, const char* phase, int mb);
  void zero_reduce_layer(int l, int after);
  // A layer's parameters sharded over DP x CP: an MoE layer's dense ones.
  std::uint64_t dense_params(int l) const {
    return c_.shape.moe_layer(l) ? moe_dense_params_ : layer_params();
  }
  std::uint64_t layer_params() const { return layer_parameters(c_.shape, t_); }
  void grad_ready(const std::string& param, int wgrad);
  void bucket_ready(const std::string& param, int wgrad,
                    const std::map<std::string, std::size_t>& closing,
                    const std::vector<Bucket>& buckets, const char* prefix, Group group);
  void tied_embedding_sync();
  void optimizer();
  std::vector<std::uint64_t> optimizer_tensors(int shards) const;

  const WorkloadConfig& c_;
  const RankPlace& place_;
  std::uint64_t step_ = 0;  // the training step: MoE layers route each step anew
  OpPlan plan_;
  // with_world's copies, one per group (keyed by the place's vector).
  std::map<const std::vector<int>*, std::shared_ptr<const std::vector<int>>> group_world_;
  int t_ = 1;
  int cp_ = 1;
  ModelShape local_;  // the shape outside attention: s/cp tokens per micro-batch
  int d_ = 1;
  int edp_ = 1;  // expert DP: the ranks that sum an expert's gradients
  std::size_t elem_ = 4;
  std::vector<LayerGemm> gemms_;
  LayerPasses passes_;
  EndPasses ends_;
  LayerGemm head_;
  double attn_share_ = 0.5;  // attention's part of a layer's GEMM FLOPs
  // --compute-from: an MoE layer's parts of its one-GPU FLOPs (attention; router and shared
  // experts, the latter over TP; routed experts), the rows the traced GPU's experts ran, and each
  // layer's weight against the mean layer (empty: every layer alike).
  struct MoeShares {
    double attn = 0, dense = 0, experts = 0;
  } moe_shares_;
  double moe_traced_rows_ = 1;
  double traced_attn_share_ = 0.5;  // attention's part of the traced (whole) layer's FLOPs
  // --compute-from under CP: attention's GEMM FLOPs as its QKV projection, its core (scores and
  // context) and its output projection, each a share of the whole.
  struct AttnParts {
    double qkv = 0, core = 0, out = 0;
  } attn_parts_;
  std::vector<double> layer_weight_;

  std::uint64_t tokens_ = 0;
  std::uint64_t tokens_hidden_ = 0;
  std::vector<ModelChunk> chunks_;
  int stage_layers_ = 0;
  std::vector<GradParam> grads_;
  std::vector<Bucket> buckets_;
  std::map<std::string, std::size_t> closing_param_;
  std::unique_ptr<Routing> routing_;     // MoE layers: the routing of --routing
  PassBytes moe_grad_accum_;             // an MoE layer's gradients accumulated: read 2P, write P
  std::map<int, MoeDispatch> dispatch_;  // per MoE layer
  std::uint64_t moe_dense_params_ = 0;   // an MoE layer's dense parameters on the rank
  std::uint64_t moe_expert_params_ = 0;  // its local experts'
  std::map<int, int> expert_gathered_;   // ZeRO: per MoE layer, the experts' last gather
  std::vector<GradParam> expert_grads_;
  std::vector<Bucket> expert_buckets_;
  std::map<std::string, std::size_t> expert_closing_;
  std::map<std::pair<int, int>, int> offloaded_;
  int last_dp_sync_ = -1;
  int zero_reduce_ = -1;
  int last_grad_ = -1;  // the last op that finished a gradient (the tied sync waits for it)
  int tied_sync_ = -1;
};

}  // namespace commprof
