// SPDX-License-Identifier: MIT
// StepBuilder (step_builder.hpp): its construction, the schedule's passes through a chunk's layers
// with their TP collectives, offload, and the layers' compute under --compute-from.
#include "workloads/step_builder.hpp"

#include <algorithm>
#include <map>

namespace commprof {

StepBuilder::StepBuilder(const WorkloadConfig& c, const RankPlace& place, std::uint64_t step)
    : c_(c), place_(place), step_(step) {
  plan_.dtype = c.shape.dtype;
  t_ = c.layout.tp;
  cp_ = c.layout.cp;
  d_ = c.layout.grad_dp();  // the ranks that sum dense gradients: DP x CP
  elem_ = dtype_size(c.shape.dtype);
  // Outside attention a CP rank works on its s/cp tokens of each micro-batch: the GEMMs, the
  // memory-bound passes, the ends, the TP collectives and the pipeline's activations.
  local_ = cp_local_shape(c.shape, cp_);
  gemms_ = layer_forward_gemms(local_, t_);
  passes_ = layer_passes(local_, t_, sp());
  ends_ = end_passes(local_, t_, sp());
  head_ = head_gemm(local_, t_);
  tokens_ = static_cast<std::uint64_t>(local_.micro_batch) * local_.seq;
  tokens_hidden_ = tokens_ * local_.hidden;
  double attn_flops = 0, all_flops = 0;
  for (const LayerGemm& g : gemms_) {
    all_flops += g.flops();
    if (!is_ffn(g)) attn_flops += g.flops();
  }
  attn_share_ = all_flops > 0 ? attn_flops / all_flops : 0.5;
  chunks_ = chunks_of(c, place.pp_rank);
  for (const ModelChunk& ch : chunks_) stage_layers_ += ch.layers;
  if (c.shape.moe()) {
    routing_ = std::make_unique<Routing>(c.routing, c.shape.experts);
    for (std::uint64_t n : moe_layer_dense_tensors(c.shape, t_)) moe_dense_params_ += n;
    for (std::uint64_t n : moe_layer_expert_tensors(c.shape, c.layout.ep, c.layout.expert_tp())) {
      moe_expert_params_ += n;
    }
    const std::uint64_t params = moe_dense_params_ + moe_expert_params_;
    moe_grad_accum_ = {2 * params * elem_, params * elem_};
  }
  edp_ = c.layout.expert_dp();
  if (c.shape.moe() && edp_ > 1 && c.dp_mode == DpMode::kDdp) {
    // Megatron-Core's DDP keeps the experts' gradients in buffers of their own, reduced over
    // the expert-data-parallel group.
    expert_grads_ = stage_expert_gradients_reversed(c, place.pp_rank, place.ep_rank);
    const auto cap = static_cast<std::uint64_t>(c.bucket_mb * (1 << 20));
    expert_buckets_ = assign_buckets(expert_grads_, cap, cap);
    for (std::size_t b = 0; b < expert_buckets_.size(); ++b) {
      expert_closing_[expert_grads_[expert_buckets_[b].params.back()].name] = b;
    }
  }
  if (d_ > 1 && c.dp_mode == DpMode::kDdp) {
    grads_ = stage_gradients_reversed(c, place.pp_rank);
    const auto cap = static_cast<std::uint64_t>(c.bucket_mb * (1 << 20));
    const std::uint64_t first = cap == kDdpDefaultCapBytes ? kDdpFirstBucketBytes : cap;
    buckets_ = assign_buckets(grads_, first, cap);
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      closing_param_[grads_[buckets_[b].params.back()].name] = b;
    }
  }
  if (c.compute) calibrate_layers();
}

OpPlan StepBuilder::build() {
  const auto items = pipeline_schedule(c_.schedule, c_.layout.pp, place_.pp_rank,
                                       c_.shape.micro_batches, c_.virtual_stages);
  std::map<int, int> last_backward;  // chunk -> its last backward's micro-batch
  for (const PipeItem& it : items) {
    if (it.kind == PipeItem::Kind::kBackward) last_backward[it.chunk] = it.micro_batch;
  }
  int produced = -1;  // output of the last forward/backward pass (what a transfer sends)
  int received = -1;  // the last transfer that received something (what a pass consumes)
  for (const PipeItem& it : items) {
    const ModelChunk& chunk = chunks_.at(static_cast<std::size_t>(it.chunk));
    switch (it.kind) {
      case PipeItem::Kind::kForward:
        produced = forward(chunk, it.micro_batch, received);
        break;
      case PipeItem::Kind::kBackward:
        produced =
            backward(chunk, it.micro_batch, received, it.micro_batch == last_backward[it.chunk]);
        break;
      case PipeItem::Kind::kTransfer:
        received = transfer(it, produced);
        break;
    }
  }
  tied_embedding_sync();
  optimizer();
  if (place_.rank == c_.slow_rank) plan_ = slowed(plan_, c_.slow_factor);
  return c_.no_overlap ? serialized(plan_) : std::move(plan_);
}

// TP collective after a row-parallel GEMM (forward) or on an input gradient (backward).
int StepBuilder::tp_reduce(const std::string& name, int after) {
  if (t_ == 1) return after;
  if (c_.sequence_parallel) {
    return plan_.collective(name + ".rs", CollectiveKind::kReduceScatter, Group::kTp,
                            tokens_hidden_ / t_, tokens_hidden_ * elem_, {after});
  }
  return plan_.collective(name + ".ar", CollectiveKind::kAllReduce, Group::kTp, tokens_hidden_,
                          tokens_hidden_ * elem_, {after});
}

// Sequence parallelism gathers the sequence-sharded activations before a column-parallel GEMM.
int StepBuilder::tp_gather(const std::string& name, int after) {
  if (t_ == 1 || !c_.sequence_parallel) return after;
  return plan_.collective(name + ".ag", CollectiveKind::kAllGather, Group::kTp, tokens_hidden_ / t_,
                          tokens_hidden_ * elem_, {after});
}

int StepBuilder::forward(const ModelChunk& chunk, int mb, int input) {
  std::map<int, int> gathered;
  const int first = chunk.first_layer, end = chunk.first_layer + chunk.layers;
  if (zero_any() && chunk.layers > 0) {
    gathered[first] = zero_gather_layer(first, "fwd", mb);
  }
  int x = input;
  if (chunk.embedding) x = embedding_forward(mb, x);
  for (int l = first; l < end; ++l) {
    // FSDP's forward prefetch: the next layer's parameters are gathered while this one runs.
    if (zero_any() && l + 1 < end) gathered[l + 1] = zero_gather_layer(l + 1, "fwd", mb);
    const int params = zero_any() ? gathered[l] : -1;
    x = c_.compute ? forward_calibrated(l, mb, x, params) : layer_forward(l, mb, x, params);
    offload(l, mb, x);
  }
  if (chunk.head) x = head_forward(mb, x);
  return x;
}

// Pre-norm: x + attn(norm1(x)), then + mlp(norm2(·)); under sequence parallelism the norms and
// residual adds run on the rank's part of the sequence, before the gathers.
int StepBuilder::layer_forward(int l, int mb, int x, int params) {
  int y = pass(lname(l, "ln1", mb) + ".fwd", passes_.norm_fwd, x);
  y = tp_gather(lname(l, "attn", mb), y);
  for (const LayerGemm& g : gemms_) {
    if (c_.shape.moe_layer(l) && g.name == "ffn_up") {
      y = pass(lname(l, "ln2", mb) + ".fwd", passes_.norm_fwd, y);
      y = moe_forward(l, mb, y, params);
      y = pass(lname(l, "residual2", mb) + ".fwd", passes_.residual_fwd, y);
      continue;
    }
    if (c_.shape.moe_layer(l) && g.name == "ffn_down") continue;  // in moe_forward
    if (g.name == "ffn_up") {
      y = pass(lname(l, "ln2", mb) + ".fwd", passes_.norm_fwd, y);
      y = tp_gather(lname(l, "ffn", mb), y);
    }
    if (fused_attention() && g.name == "attn_scores") continue;  // inside the fused kernel
    if (fused_attention() && g.name == "attn_context") {
      y = attention_forward(l, mb, y);
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
  return y;
}

int StepBuilder::backward(const ModelChunk& chunk, int mb, int grad_in, bool last_pass) {
  const int first = chunk.first_layer, top = chunk.first_layer + chunk.layers - 1;
  int dy = grad_in;
  if (chunk.head) dy = head_backward(mb, dy, last_pass);
  std::map<int, int> gathered;
  if (zero_any() && chunk.layers > 0) {
    gathered[top] = zero_gather_layer(top, "bwd", mb);
  }
  int prefetch_after = -1;
  for (int l = top; l >= first; --l) {
    int h2d = -1;
    if (c_.offload) {
      // Prefetch one layer ahead: layer l's activations come back once layer l+1's
      // backward has begun.
      h2d = plan_.copy(lname(l, "act", mb) + ".h2d", CopyKind::kHostToDevice,
                       activation_bytes(local_), {offloaded_[{l, mb}], prefetch_after});
    }
    if (zero_any() && l - 1 >= first) gathered[l - 1] = zero_gather_layer(l - 1, "bwd", mb);
    const int params = zero_any() ? gathered[l] : -1;
    const Calibrated b = c_.compute ? backward_calibrated(l, mb, dy, params, h2d, last_pass)
                                    : layer_backward(l, mb, dy, params, h2d, last_pass);
    dy = b.dy;
    if (last_pass) zero_reduce_layer(l, b.last);
    prefetch_after = b.first;
  }
  if (chunk.embedding) dy = embedding_backward(mb, dy, last_pass);
  return dy;
}

StepBuilder::Calibrated StepBuilder::layer_backward(int l, int mb, int dy, int params, int h2d,
                                                    bool last_pass) {
  Calibrated out;
  for (auto g = gemms_.rbegin(); g != gemms_.rend(); ++g) {
    const std::string base = lname(l, g->name.c_str(), mb);
    if (c_.shape.moe_layer(l) && g->name == "ffn_down") {
      const int moe = moe_backward(l, mb, dy, h2d, last_pass);
      out.first = out.last = moe;
      dy = pass(lname(l, "ln2", mb) + ".bwd", passes_.norm_bwd, moe);
      dy = pass(lname(l, "residual2", mb) + ".bwd", passes_.residual_bwd, dy);
      continue;
    }
    if (c_.shape.moe_layer(l) && g->name == "ffn_up") continue;  // in moe_backward
    if (g->name == "ffn_down") dy = tp_gather(lname(l, "ffn.bwd", mb), dy);
    if (g->name == "out_proj") dy = tp_gather(lname(l, "attn.bwd", mb), dy);
    if (g->name == "qkv") {
      dy = pass(lname(l, "attn_layout", mb) + ".bwd", passes_.attn_layout_bwd, dy);
    }
    if (fused_attention() && g->name == "attn_scores") continue;  // in the fused backward
    if (fused_attention() && g->name == "attn_context") {
      dy = attention_backward(l, mb, dy, h2d);
      continue;
    }
    // dX = dY·Wᵀ and dW = Xᵀ·dY: the two GEMMs of a weight's backward, 2× its forward FLOPs.
    const int dgrad = plan_.gemm(base + ".dgrad", g->m, g->k, g->n, {dy, params, h2d});
    if (out.first < 0) out.first = dgrad;
    int next = dgrad;
    if (g->name == "ffn_up" || g->name == "qkv") {
      // Megatron overlaps the input-gradient reduction with the weight-gradient GEMM.
      next = tp_reduce(lname(l, g->name == "qkv" ? "attn.bwd" : "ffn.bwd", mb), dgrad);
    }
    const int wgrad = plan_.gemm(base + ".wgrad", g->k, g->n, g->m, {dgrad});
    out.last = wgrad;
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
  // Bias gradients (column sums of the output gradients), then, after the first micro-batch,
  // the weight gradients added to those accumulated so far.
  if (passes_.bias_grad.read > 0) {
    out.last = pass(lname(l, "bias_grad", mb), passes_.bias_grad, out.last);
  }
  if (mb > 0) {
    // The layer's gradients added to those accumulated so far: an MoE layer's hold its local
    // experts' (E/ep FFNs), not the dense FFN's.
    const PassBytes accum = c_.shape.moe_layer(l) ? moe_grad_accum_ : passes_.grad_accum;
    out.last = pass(lname(l, "grad_accum", mb), accum, out.last);
  }
  out.dy = dy;
  return out;
}

// --compute-from: the traced time of layer l and one micro-batch in one direction, split between
// attention and FFN as the shape's GEMM FLOPs are, and divided by the TP degree (the trace is
// of one GPU; Megatron shards every GEMM of a layer over TP). An MoE layer's attention share is
// of its own FLOPs (step_moe_calibrated.cpp), its FFN the MoE block's ops.
std::uint64_t StepBuilder::calibrated_ns(int l, bool backward, bool ffn) const {
  // Under CP the rank's GEMMs shrink unevenly (scores and context with (s/cp)²): the shares are
  // the traced whole layer's, and the FFN's tokens are s/cp.
  const double dense = cp_ > 1 ? traced_attn_share_ : attn_share_;
  const double attn = c_.shape.moe_layer(l) ? moe_shares_.attn : dense;
  return static_cast<std::uint64_t>(traced_layer_ns(l, backward) * (ffn ? 1 - attn : attn) / t_ /
                                    cp_);
}

// A traced gap before op `op`: the step's gaps before ops of `part` over `per` (the ops of that
// part in the traced step). Not divided by TP: a TP rank launches as many kernels as the
// traced GPU did (shorter ones), so its host is no less the bottleneck.
void StepBuilder::replay_gap(int op, ComputePart part, double per) {
  if (!c_.host_gaps) return;
  const double ns = gap_of(*c_.compute, part) / per;
  plan_.ops.at(static_cast<std::size_t>(op)).host_gap_ns = static_cast<std::uint64_t>(ns);
}

// Traced layer passes of one direction per step: each layer once per micro-batch.
double StepBuilder::traced_layer_passes() const {
  return static_cast<double>(c_.compute->layers) * c_.compute->micro_batches;
}

// A layer's forward under --compute-from, with its TP collectives where the GEMMs would have
// them: compute(attention), reduce, compute(FFN), reduce.
int StepBuilder::forward_calibrated(int l, int mb, int x, int params) {
  int y = tp_gather(lname(l, "attn", mb), x);
  if (cp_ > 1) {
    y = attention_calibrated_cp(l, mb, y, params);
  } else {
    y = plan_.compute(lname(l, "attn", mb) + ".fwd", calibrated_ns(l, false, false), {y, params});
    replay_gap(y, ComputePart::kForward, traced_layer_passes());
  }
  y = tp_reduce(lname(l, "attn", mb), y);
  if (c_.shape.moe_layer(l)) return moe_forward_calibrated(l, mb, y, params);
  y = tp_gather(lname(l, "ffn", mb), y);
  y = plan_.compute(lname(l, "ffn", mb) + ".fwd", calibrated_ns(l, false, true), {y});
  return tp_reduce(lname(l, "ffn", mb), y);
}

// A layer's backward under --compute-from: FFN, then attention, each followed by its weights'
// gradients (DDP's bucket hooks) and the TP reduction of its input gradient.
StepBuilder::Calibrated StepBuilder::backward_calibrated(int l, int mb, int dy, int params, int h2d,
                                                         bool last_pass) {
  Calibrated out;
  for (const bool ffn : {true, false}) {
    if (ffn && c_.shape.moe_layer(l)) {
      out.first = out.last = dy = moe_backward_calibrated(l, mb, dy, h2d, last_pass);
      continue;
    }
    if (!ffn && cp_ > 1) {
      dy = tp_gather(lname(l, "attn.bwd", mb), dy);
      int first = -1;
      const int op = attention_backward_calibrated_cp(l, mb, dy, params, h2d, last_pass, &first);
      if (out.first < 0) {
        out.first = first;
        replay_gap(first, ComputePart::kBackward, traced_layer_passes());
      }
      out.last = op;
      dy = tp_reduce(lname(l, "attn.bwd", mb), op);
      continue;
    }
    const char* part = ffn ? "ffn" : "attn";
    dy = tp_gather(lname(l, ffn ? "ffn.bwd" : "attn.bwd", mb), dy);
    const int op =
        plan_.compute(lname(l, part, mb) + ".bwd", calibrated_ns(l, true, ffn), {dy, params, h2d});
    if (out.first < 0) {
      out.first = op;
      replay_gap(op, ComputePart::kBackward, traced_layer_passes());
    }
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

void StepBuilder::offload(int l, int mb, int after) {
  if (!c_.offload) return;
  offloaded_[{l, mb}] = plan_.copy(lname(l, "act", mb) + ".d2h", CopyKind::kDeviceToHost,
                                   activation_bytes(local_), {after});
}

// A memory-bound op on the COMP stream after `after` (and `also`, on another stream).
int StepBuilder::pass(const std::string& name, const PassBytes& bytes, int after, int also) {
  return plan_.elementwise(name, bytes, {after, also});
}

}  // namespace commprof
