// SPDX-License-Identifier: MIT
// StepBuilder: gradient synchronisation (DDP's buckets, ZeRO's gathers and reduce-scatters, the
// tied embeddings' sum) and the optimizer step.
#include "workloads/step_builder.hpp"

#include <algorithm>

namespace commprof {

// ZeRO: one flat shard per layer (FSDP's flat parameter), and one for each end's parameters.
int StepBuilder::zero_gather(const std::string& unit, std::uint64_t params, const char* phase,
                             int mb) {
  const std::uint64_t shard = params / static_cast<std::uint64_t>(d_);
  return plan_.collective(log::cat(unit, ".zero.", phase, ".ag.mb", mb), CollectiveKind::kAllGather,
                          Group::kDp, shard, shard * static_cast<std::uint64_t>(d_) * elem_, {});
}

// ZeRO of one layer: its dense parameters' gather over DP x CP (the op its compute waits for; -1
// where they are not sharded) and, in an MoE layer, its local experts' over expert DP, each
// group sharding its own set as Megatron-Core's distributed optimizer does.
int StepBuilder::zero_gather_layer(int l, const char* phase, int mb) {
  if (zero_experts() && c_.shape.moe_layer(l)) {
    const auto edp = static_cast<std::uint64_t>(edp_);
    const std::uint64_t shard = moe_expert_params_ / edp;
    expert_gathered_[l] =
        plan_.collective(log::cat("l", l, ".experts.zero.", phase, ".ag.mb", mb),
                         CollectiveKind::kAllGather, Group::kEdp, shard, shard * edp * elem_, {});
  }
  return zero() ? zero_gather(log::cat("l", l), dense_params(l), phase, mb) : -1;
}

// After a layer's last backward: its dense gradients reduce-scattered over DP x CP, an MoE
// layer's experts' over expert DP.
void StepBuilder::zero_reduce_layer(int l, int after) {
  if (zero()) zero_reduce(log::cat("l", l), dense_params(l), after);
  if (zero_experts() && c_.shape.moe_layer(l)) {
    const auto edp = static_cast<std::uint64_t>(edp_);
    const std::uint64_t shard = moe_expert_params_ / edp;
    zero_reduce_ =
        plan_.collective(log::cat("l", l, ".experts.zero.grad.rs"), CollectiveKind::kReduceScatter,
                         Group::kEdp, shard, shard * edp * elem_, {after});
  }
}

void StepBuilder::zero_reduce(const std::string& unit, std::uint64_t params, int after) {
  const std::uint64_t shard = params / static_cast<std::uint64_t>(d_);
  zero_reduce_ =
      plan_.collective(log::cat(unit, ".zero.grad.rs"), CollectiveKind::kReduceScatter, Group::kDp,
                       shard, shard * static_cast<std::uint64_t>(d_) * elem_, {after});
}

void StepBuilder::grad_ready(const std::string& param, int wgrad) {
  bucket_ready(param, wgrad, closing_param_, buckets_, "dp", Group::kDp);
}

// DDP: when the parameter that closes a bucket has its gradient, copy the bucket's gradients
// in (gradient_as_bucket_view=False), all-reduce it over `group`, copy them back.
void StepBuilder::bucket_ready(const std::string& param, int wgrad,
                               const std::map<std::string, std::size_t>& closing,
                               const std::vector<Bucket>& buckets, const char* prefix,
                               Group group) {
  last_grad_ = std::max(last_grad_, wgrad);
  const auto it = closing.find(param);
  if (it == closing.end()) return;
  const Bucket& bucket = buckets[it->second];
  const std::string name = log::cat(prefix, ".bucket", it->second);
  const int in = plan_.copy(name + ".copy_in", CopyKind::kDeviceToDevice, bucket.bytes, {wgrad});
  const std::uint64_t count = bucket.bytes / elem_;
  const int ar = plan_.collective(name + ".allreduce", CollectiveKind::kAllReduce, group, count,
                                  count * elem_, {in});
  last_dp_sync_ = std::max(
      last_dp_sync_, plan_.copy(name + ".copy_out", CopyKind::kDeviceToDevice, bucket.bytes, {ar}));
}

// Megatron's finalize_model_grads: after the DP synchronisation, the first and the last stage
// all-reduce the gradient of the embedding they share (_allreduce_embedding_grads).
void StepBuilder::tied_embedding_sync() {
  if (!tied_across_stages(c_) || !place_.in_embedding_group()) return;
  const std::uint64_t count = embedding_params();
  tied_sync_ =
      plan_.collective("embedding.tied_grad.ar", CollectiveKind::kAllReduce, Group::kEmbedding,
                       count, count * elem_, {last_dp_sync_, zero_reduce_, last_grad_});
}

void StepBuilder::optimizer() {
  const int shards = zero() ? d_ : 1;
  const std::vector<int> after = {last_dp_sync_, zero_reduce_, tied_sync_};
  if (c_.compute) {
    // The traced optimizer covers every layer's parameters on one GPU: this rank updates its
    // stage's layers, its TP part of them, and under ZeRO its DP shard.
    const double share = static_cast<double>(stage_layers_) / c_.shape.layers;
    const double ns = c_.compute->optimizer_ns * share / t_ / shards;
    const int op = plan_.compute("optimizer", static_cast<std::uint64_t>(ns), after);
    replay_gap(op, ComputePart::kOptimizer, 1 / share);
    return;
  }
  plan_.adamw("optimizer.adamw", optimizer_tensors(shards), after);
}

// Every parameter tensor of the rank, as torch's fused AdamW iterates them in the model's
// order: the embedding, the layers, the final norm, the LM head; under ZeRO each unit's
// parameters are one flat shard per rank (FSDP's flat parameter).
std::vector<std::uint64_t> StepBuilder::optimizer_tensors(int shards) const {
  const std::vector<std::uint64_t> layer = layer_parameter_tensors(c_.shape, t_);
  const EndParameters e = end_parameters(c_.shape, t_);
  const bool first = !chunks_.empty() && chunks_.front().embedding;
  bool last = false;
  for (const ModelChunk& ch : chunks_) last = last || ch.head;
  std::vector<std::uint64_t> tensors;
  auto unit = [&](const std::vector<std::uint64_t>& unit_tensors, int over) {
    std::uint64_t total = 0;
    for (std::uint64_t n : unit_tensors) total += n;
    if (total == 0) return;
    if (over > 1) {
      tensors.push_back(total / static_cast<std::uint64_t>(over));
    } else {
      for (std::uint64_t n : unit_tensors)
        if (n > 0) tensors.push_back(n);
    }
  };
  if (first) unit({e.embedding}, shards);
  // An MoE layer's dense parameters and its local experts' (each set sharded over its own group
  // under ZeRO: DP x CP and expert DP).
  std::vector<std::uint64_t> moe_dense, moe_experts;
  if (c_.shape.moe()) {
    moe_dense = moe_layer_dense_tensors(c_.shape, t_);
    moe_experts = moe_layer_expert_tensors(c_.shape, c_.layout.ep, c_.layout.expert_tp());
  }
  const int expert_shards = zero_experts() ? edp_ : 1;
  for (const ModelChunk& ch : chunks_) {
    for (int l = ch.first_layer; l < ch.first_layer + ch.layers; ++l) {
      if (!c_.shape.moe_layer(l)) {
        unit(layer, shards);
        continue;
      }
      unit(moe_dense, shards);
      unit(moe_experts, expert_shards);
    }
  }
  if (last) {
    // The final norm's weight (and LayerNorm's bias), then the head's weight.
    std::vector<std::uint64_t> head = {e.final_norm};
    if (!c_.shape.gated_ffn) head = {e.final_norm / 2, e.final_norm / 2};
    head.push_back(tied_across_stages(c_) ? e.embedding : e.head);
    unit(head, shards);
  }
  return tensors;
}

}  // namespace commprof
