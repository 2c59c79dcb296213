// SPDX-License-Identifier: MIT
#include "workloads/workload.hpp"

#include <algorithm>
#include <map>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/core/name_table.hpp"
#include "workloads/dp_buckets.hpp"

namespace commprof {

namespace {
constexpr NamedValue<WorkloadKind> kWorkloadNames[] = {{WorkloadKind::kDp, "dp"},
                                                       {WorkloadKind::kTp, "tp"},
                                                       {WorkloadKind::kPp, "pp"},
                                                       {WorkloadKind::kHybrid, "hybrid"}};
constexpr NamedValue<DpMode> kDpModeNames[] = {{DpMode::kDdp, "ddp"}, {DpMode::kZero, "zero"}};
constexpr NamedValue<AttentionMode> kAttentionNames[] = {{AttentionMode::kFused, "fused"},
                                                         {AttentionMode::kGemm, "gemm"}};
}  // namespace

AttentionMode parse_attention_mode(const std::string& text) {
  return parse_name(kAttentionNames, text, "unknown --attention");
}

const char* attention_mode_name(AttentionMode m) { return name_of(kAttentionNames, m); }

WorkloadKind parse_workload(const std::string& text) {
  return parse_name(kWorkloadNames, text, "unknown workload");
}

const char* workload_name(WorkloadKind k) { return name_of(kWorkloadNames, k); }

DpMode parse_dp_mode(const std::string& text) {
  return parse_name(kDpModeNames, text, "unknown --dp-mode");
}

namespace {

int stage_first_layer(const WorkloadConfig& c, int pp_rank) {
  return pp_rank * (c.shape.layers / c.layout.pp);
}

// Builds one rank's step: the pipeline schedule's forward and backward passes through the
// stage's layers, with TP collectives inside layers, DP gradient synchronisation hooked on the
// last backward pass, and the optimizer step at the end.
class StepBuilder {
 public:
  StepBuilder(const WorkloadConfig& c, const RankPlace& place) : c_(c), place_(place) {
    plan_.dtype = c.shape.dtype;
    t_ = c.layout.tp;
    d_ = c.layout.dp;
    elem_ = dtype_size(c.shape.dtype);
    gemms_ = layer_forward_gemms(c.shape, t_);
    passes_ = layer_passes(c.shape, t_, t_ > 1 && c.sequence_parallel);
    tokens_hidden_ = static_cast<std::uint64_t>(c.shape.micro_batch) * c.shape.seq * c.shape.hidden;
    double attn_flops = 0, all_flops = 0;
    for (const LayerGemm& g : gemms_) {
      all_flops += g.flops();
      if (!is_ffn(g)) attn_flops += g.flops();
    }
    attn_share_ = all_flops > 0 ? attn_flops / all_flops : 0.5;
    first_layer_ = stage_first_layer(c, place.pp_rank);
    layer_count_ = c.shape.layers / c.layout.pp;
    if (d_ > 1 && c.dp_mode == DpMode::kDdp) {
      grads_ = stage_gradients_reversed(c, place.pp_rank);
      const auto cap = static_cast<std::uint64_t>(c.bucket_mb * (1 << 20));
      const std::uint64_t first = cap == kDdpDefaultCapBytes ? kDdpFirstBucketBytes : cap;
      buckets_ = assign_buckets(grads_, first, cap);
      for (std::size_t b = 0; b < buckets_.size(); ++b) {
        closing_param_[grads_[buckets_[b].params.back()].name] = b;
      }
    }
  }

  OpPlan build() {
    const auto items =
        pipeline_schedule(c_.schedule, c_.layout.pp, place_.pp_rank, c_.shape.micro_batches);
    int last_backward = -1;
    for (const PipeItem& it : items) {
      if (it.kind == PipeItem::Kind::kBackward) last_backward = it.micro_batch;
    }
    int produced = -1;  // output of the last forward/backward pass (what a transfer sends)
    int received = -1;  // the last transfer that received something (what a pass consumes)
    for (const PipeItem& it : items) {
      switch (it.kind) {
        case PipeItem::Kind::kForward:
          produced = forward(it.micro_batch, received);
          break;
        case PipeItem::Kind::kBackward:
          produced = backward(it.micro_batch, received, it.micro_batch == last_backward);
          break;
        case PipeItem::Kind::kTransfer:
          received = transfer(it, produced);
          break;
      }
    }
    optimizer();
    return c_.no_overlap ? serialized(plan_) : std::move(plan_);
  }

 private:
  std::string lname(int layer, const char* what, int mb) const {
    return log::cat("l", layer, ".", what, ".mb", mb);
  }

  // TP collective after a row-parallel GEMM (forward) or on an input gradient (backward).
  int tp_reduce(const std::string& name, int after) {
    if (t_ == 1) return after;
    if (c_.sequence_parallel) {
      return plan_.collective(name + ".rs", CollectiveKind::kReduceScatter, Group::kTp,
                              tokens_hidden_ / t_, tokens_hidden_ * elem_, {after});
    }
    return plan_.collective(name + ".ar", CollectiveKind::kAllReduce, Group::kTp, tokens_hidden_,
                            tokens_hidden_ * elem_, {after});
  }
  // Sequence parallelism gathers the sequence-sharded activations before a column-parallel GEMM.
  int tp_gather(const std::string& name, int after) {
    if (t_ == 1 || !c_.sequence_parallel) return after;
    return plan_.collective(name + ".ag", CollectiveKind::kAllGather, Group::kTp,
                            tokens_hidden_ / t_, tokens_hidden_ * elem_, {after});
  }

  std::uint64_t zero_shard(int /*layer*/) const {
    return layer_parameters(c_.shape, t_) / static_cast<std::uint64_t>(d_);
  }
  int zero_gather(int layer, const char* phase, int mb) {
    const std::uint64_t shard = zero_shard(layer);
    return plan_.collective(log::cat("l", layer, ".zero.", phase, ".ag.mb", mb),
                            CollectiveKind::kAllGather, Group::kDp, shard,
                            shard * static_cast<std::uint64_t>(d_) * elem_, {});
  }

  int forward(int mb, int input) {
    const bool zero = d_ > 1 && c_.dp_mode == DpMode::kZero;
    std::map<int, int> gathered;
    if (zero) gathered[first_layer_] = zero_gather(first_layer_, "fwd", mb);
    int x = input;
    for (int l = first_layer_; l < first_layer_ + layer_count_; ++l) {
      // FSDP's forward prefetch: the next layer's parameters are gathered while this one runs.
      if (zero && l + 1 < first_layer_ + layer_count_)
        gathered[l + 1] = zero_gather(l + 1, "fwd", mb);
      const int params = zero ? gathered[l] : -1;
      if (c_.compute) {
        x = forward_calibrated(l, mb, x, params);
        offload(l, mb, x);
        continue;
      }
      // Pre-norm: x + attn(norm1(x)), then + mlp(norm2(·)); under sequence parallelism the norms
      // and residual adds run on the rank's part of the sequence, before the gathers.
      int y = pass(lname(l, "ln1", mb) + ".fwd", passes_.norm_fwd, x);
      y = tp_gather(lname(l, "attn", mb), y);
      for (const LayerGemm& g : gemms_) {
        if (g.name == "ffn_up") {
          y = pass(lname(l, "ln2", mb) + ".fwd", passes_.norm_fwd, y);
          y = tp_gather(lname(l, "ffn", mb), y);
        }
        if (fused_attention() && g.name == "attn_scores") continue;  // inside the fused kernel
        if (fused_attention() && g.name == "attn_context") {
          y = plan_.attention(lname(l, "attention", mb) + ".fwd", attention(false), {y});
        } else {
          y = plan_.gemm(lname(l, g.name.c_str(), mb) + ".fwd", g.m, g.n, g.k, {y, params});
        }
        if (g.name == "attn_context") {
          y = pass(lname(l, "attn_layout", mb) + ".fwd", passes_.attn_layout_fwd, y);
        }
        if (g.name == "out_proj") {
          y = tp_reduce(lname(l, "attn", mb), y);
          y = pass(lname(l, "residual1", mb) + ".fwd", passes_.residual_fwd, y);
        }
        if (g.name == "ffn_up") y = pass(lname(l, "act", mb) + ".fwd", passes_.act_fwd, y);
        if (g.name == "ffn_down") {
          y = tp_reduce(lname(l, "ffn", mb), y);
          y = pass(lname(l, "residual2", mb) + ".fwd", passes_.residual_fwd, y);
        }
      }
      offload(l, mb, y);
      x = y;
    }
    return x;
  }

  int backward(int mb, int grad_in, bool last_pass) {
    const bool zero = d_ > 1 && c_.dp_mode == DpMode::kZero;
    const int top = first_layer_ + layer_count_ - 1;
    std::map<int, int> gathered;
    if (zero) gathered[top] = zero_gather(top, "bwd", mb);
    int prefetch_after = -1;
    int dy = grad_in;
    for (int l = top; l >= first_layer_; --l) {
      int h2d = -1;
      if (c_.offload) {
        // Prefetch one layer ahead: layer l's activations come back once layer l+1's
        // backward has begun.
        h2d = plan_.copy(lname(l, "act", mb) + ".h2d", CopyKind::kHostToDevice,
                         activation_bytes(c_.shape), {offloaded_[{l, mb}], prefetch_after});
      }
      if (zero && l - 1 >= first_layer_) gathered[l - 1] = zero_gather(l - 1, "bwd", mb);
      const int params = zero ? gathered[l] : -1;
      int first_gemm = -1;
      int last_wgrad = -1;
      if (c_.compute) {
        const Calibrated b = backward_calibrated(l, mb, dy, params, h2d, last_pass);
        dy = b.dy;
        first_gemm = b.first;
        last_wgrad = b.last;
      } else {
        for (auto g = gemms_.rbegin(); g != gemms_.rend(); ++g) {
          const std::string base = lname(l, g->name.c_str(), mb);
          if (g->name == "ffn_down") dy = tp_gather(lname(l, "ffn.bwd", mb), dy);
          if (g->name == "out_proj") dy = tp_gather(lname(l, "attn.bwd", mb), dy);
          if (g->name == "qkv") {
            dy = pass(lname(l, "attn_layout", mb) + ".bwd", passes_.attn_layout_bwd, dy);
          }
          if (fused_attention() && g->name == "attn_scores") continue;  // in the fused backward
          if (fused_attention() && g->name == "attn_context") {
            dy = plan_.attention(lname(l, "attention", mb) + ".bwd", attention(true), {dy, h2d});
            continue;
          }
          // dX = dY·Wᵀ and dW = Xᵀ·dY: the two GEMMs of a weight's backward, 2× its forward FLOPs.
          const int dgrad = plan_.gemm(base + ".dgrad", g->m, g->k, g->n, {dy, params, h2d});
          if (first_gemm < 0) first_gemm = dgrad;
          int next = dgrad;
          if (g->name == "ffn_up" || g->name == "qkv") {
            // Megatron overlaps the input-gradient reduction with the weight-gradient GEMM.
            next = tp_reduce(lname(l, g->name == "qkv" ? "attn.bwd" : "ffn.bwd", mb), dgrad);
          }
          const int wgrad = plan_.gemm(base + ".wgrad", g->k, g->n, g->m, {dgrad});
          last_wgrad = wgrad;
          if (last_pass && g->has_weight) grad_ready(log::cat("l", l, ".", g->name), wgrad);
          dy = next == dgrad ? wgrad : next;
          // The memory-bound ops' backward, in autograd's order: the activation's after the down
          // projection, each norm's and its residual's gradient sum after the projection it feeds.
          if (g->name == "ffn_down") dy = pass(lname(l, "act", mb) + ".bwd", passes_.act_bwd, dy);
          if (g->name == "ffn_up" || g->name == "qkv") {
            const char* norm = g->name == "qkv" ? "ln1" : "ln2";
            const char* residual = g->name == "qkv" ? "residual1" : "residual2";
            dy = pass(lname(l, norm, mb) + ".bwd", passes_.norm_bwd, dy);
            dy = pass(lname(l, residual, mb) + ".bwd", passes_.residual_bwd, dy);
          }
        }
        // Bias gradients (column sums of the output gradients), then, after the first
        // micro-batch, the weight gradients added to those accumulated so far.
        if (passes_.bias_grad.read > 0) {
          last_wgrad = pass(lname(l, "bias_grad", mb), passes_.bias_grad, last_wgrad);
        }
        if (mb > 0) last_wgrad = pass(lname(l, "grad_accum", mb), passes_.grad_accum, last_wgrad);
      }
      if (zero && last_pass) {
        const std::uint64_t shard = zero_shard(l);
        zero_reduce_ = plan_.collective(
            log::cat("l", l, ".zero.grad.rs"), CollectiveKind::kReduceScatter, Group::kDp, shard,
            shard * static_cast<std::uint64_t>(d_) * elem_, {last_wgrad});
      }
      prefetch_after = first_gemm;
    }
    return dy;
  }

  // DDP: when the parameter that closes a bucket has its gradient, copy the bucket's gradients
  // in (gradient_as_bucket_view=False), all-reduce it over the DP group, copy them back.
  void grad_ready(const std::string& param, int wgrad) {
    const auto it = closing_param_.find(param);
    if (it == closing_param_.end()) return;
    const Bucket& bucket = buckets_[it->second];
    const std::string name = log::cat("dp.bucket", it->second);
    const int in = plan_.copy(name + ".copy_in", CopyKind::kDeviceToDevice, bucket.bytes, {wgrad});
    const std::uint64_t count = bucket.bytes / elem_;
    const int ar = plan_.collective(name + ".allreduce", CollectiveKind::kAllReduce, Group::kDp,
                                    count, count * elem_, {in});
    last_dp_sync_ = plan_.copy(name + ".copy_out", CopyKind::kDeviceToDevice, bucket.bytes, {ar});
  }

  int transfer(const PipeItem& it, int produced) {
    const std::uint64_t count =
        tokens_hidden_ / static_cast<std::uint64_t>(c_.sequence_parallel ? t_ : 1);
    std::string name;
    if (it.send_peer >= 0) name += it.send_is_forward ? "pp.send_act" : "pp.send_grad";
    if (it.recv_peer >= 0) {
      name += name.empty() ? "" : "+";
      name += it.recv_is_forward ? "pp.recv_act" : "pp.recv_grad";
    }
    name += log::cat(".mb", it.micro_batch);
    const int id = plan_.p2p(name, Group::kPp, it.send_peer, it.recv_peer, count,
                             {it.send_peer >= 0 ? produced : -1});
    return it.recv_peer >= 0 ? id : -1;
  }

  void optimizer() {
    const int shards = d_ > 1 && c_.dp_mode == DpMode::kZero ? d_ : 1;
    if (c_.compute) {
      // The traced optimizer covers every layer's parameters on one GPU: this rank updates its
      // stage's layers, its TP part of them, and under ZeRO its DP shard.
      const double ns = c_.compute->optimizer_ns * layer_count_ / c_.shape.layers / t_ / shards;
      plan_.compute("optimizer", static_cast<std::uint64_t>(ns), {last_dp_sync_, zero_reduce_});
      return;
    }
    // Every parameter tensor of the rank's layers, as torch's fused AdamW iterates them; under
    // ZeRO each layer's parameters are one flat shard per rank (FSDP's flat parameter).
    const std::vector<std::uint64_t> layer = layer_parameter_tensors(c_.shape, t_);
    std::vector<std::uint64_t> tensors;
    for (int l = 0; l < layer_count_; ++l) {
      if (shards > 1) {
        std::uint64_t total = 0;
        for (std::uint64_t n : layer) total += n;
        tensors.push_back(total / static_cast<std::uint64_t>(shards));
      } else {
        tensors.insert(tensors.end(), layer.begin(), layer.end());
      }
    }
    plan_.adamw("optimizer.adamw", std::move(tensors), {last_dp_sync_, zero_reduce_});
  }

  static bool is_ffn(const LayerGemm& g) { return g.name.rfind("ffn", 0) == 0; }

  // --compute-from: the traced time of one layer and micro-batch in one direction, split between
  // attention and FFN as the shape's GEMM FLOPs are, and divided by the TP degree (the trace is
  // of one GPU; Megatron shards every GEMM of a layer over TP).
  std::uint64_t calibrated_ns(bool backward, bool ffn) const {
    const double layer =
        backward ? c_.compute->layer_backward_ns() : c_.compute->layer_forward_ns();
    return static_cast<std::uint64_t>(layer * (ffn ? 1 - attn_share_ : attn_share_) / t_);
  }

  // A layer's forward under --compute-from, with its TP collectives where the GEMMs would have
  // them: compute(attention), reduce, compute(FFN), reduce.
  int forward_calibrated(int l, int mb, int x, int params) {
    int y = tp_gather(lname(l, "attn", mb), x);
    y = plan_.compute(lname(l, "attn", mb) + ".fwd", calibrated_ns(false, false), {y, params});
    y = tp_reduce(lname(l, "attn", mb), y);
    y = tp_gather(lname(l, "ffn", mb), y);
    y = plan_.compute(lname(l, "ffn", mb) + ".fwd", calibrated_ns(false, true), {y});
    return tp_reduce(lname(l, "ffn", mb), y);
  }

  struct Calibrated {
    int dy = -1;     // the input gradient (what the layer below waits for)
    int first = -1;  // the layer's first compute op
    int last = -1;   // its last (every weight gradient is ready after it)
  };
  // A layer's backward under --compute-from: FFN, then attention, each followed by its weights'
  // gradients (DDP's bucket hooks) and the TP reduction of its input gradient.
  Calibrated backward_calibrated(int l, int mb, int dy, int params, int h2d, bool last_pass) {
    Calibrated out;
    for (const bool ffn : {true, false}) {
      const char* part = ffn ? "ffn" : "attn";
      dy = tp_gather(lname(l, ffn ? "ffn.bwd" : "attn.bwd", mb), dy);
      const int op =
          plan_.compute(lname(l, part, mb) + ".bwd", calibrated_ns(true, ffn), {dy, params, h2d});
      if (out.first < 0) out.first = op;
      out.last = op;
      for (auto g = gemms_.rbegin(); g != gemms_.rend(); ++g) {
        if (last_pass && g->has_weight && is_ffn(*g) == ffn)
          grad_ready(log::cat("l", l, ".", g->name), op);
      }
      dy = tp_reduce(lname(l, ffn ? "ffn.bwd" : "attn.bwd", mb), op);
    }
    out.dy = dy;
    return out;
  }

  void offload(int l, int mb, int after) {
    if (!c_.offload) return;
    offloaded_[{l, mb}] = plan_.copy(lname(l, "act", mb) + ".d2h", CopyKind::kDeviceToHost,
                                     activation_bytes(c_.shape), {after});
  }

  // A memory-bound op on the COMP stream after `after`.
  int pass(const std::string& name, const PassBytes& bytes, int after) {
    return plan_.elementwise(name, bytes.read, bytes.write, {after});
  }

  const WorkloadConfig& c_;
  const RankPlace& place_;
  OpPlan plan_;
  int t_ = 1;
  int d_ = 1;
  std::size_t elem_ = 4;
  std::vector<LayerGemm> gemms_;
  LayerPasses passes_;
  double attn_share_ = 0.5;  // attention's part of a layer's GEMM FLOPs

  bool fused_attention() const { return c_.attention == AttentionMode::kFused; }
  PlannedAttention attention(bool backward) const {
    return layer_attention(c_.shape, t_, backward);
  }
  std::uint64_t tokens_hidden_ = 0;
  int first_layer_ = 0;
  int layer_count_ = 0;
  std::vector<GradParam> grads_;
  std::vector<Bucket> buckets_;
  std::map<std::string, std::size_t> closing_param_;
  std::map<std::pair<int, int>, int> offloaded_;
  int last_dp_sync_ = -1;
  int zero_reduce_ = -1;
};

}  // namespace

std::vector<GradParam> stage_gradients_reversed(const WorkloadConfig& c, int pp_rank) {
  std::vector<GradParam> out;
  const auto gemms = layer_forward_gemms(c.shape, c.layout.tp);
  const int first = stage_first_layer(c, pp_rank);
  const int count = c.shape.layers / c.layout.pp;
  const std::size_t elem = dtype_size(c.shape.dtype);
  for (int l = first + count - 1; l >= first; --l) {
    for (auto g = gemms.rbegin(); g != gemms.rend(); ++g) {
      if (!g->has_weight) continue;
      out.push_back({log::cat("l", l, ".", g->name),
                     static_cast<std::uint64_t>(g->n) * static_cast<std::uint64_t>(g->k) * elem});
    }
  }
  return out;
}

OpPlan build_plan(const WorkloadConfig& config, const RankPlace& place) {
  return StepBuilder(config, place).build();
}

}  // namespace commprof
