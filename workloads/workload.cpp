// SPDX-License-Identifier: MIT
#include "workloads/workload.hpp"

#include <algorithm>
#include <map>

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/core/name_table.hpp"
#include "workloads/dp_buckets.hpp"
#include "workloads/moe.hpp"

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

void validate_workload(const WorkloadConfig& c) {
  const std::string problem =
      schedule_problem(c.schedule, c.layout.pp, c.shape.micro_batches, c.virtual_stages);
  if (!problem.empty()) throw ConfigError(problem);
  if (c.shape.moe()) {
    const ParallelLayout& l = c.layout;
    if (c.shape.experts % l.ep != 0) {
      throw ConfigError(log::cat("--ep ", l.ep, " does not divide --experts ", c.shape.experts));
    }
    if (l.expert_tp() > 1) {
      throw ConfigError(log::cat("the experts' tensor parallelism (--etp ", l.expert_tp(),
                                 "; 0 means --tp) is not modelled yet: give --etp 1"));
    }
    if (l.tp > 1 && !c.sequence_parallel) {  // as Megatron-Core asserts
      throw ConfigError(
          "MoE layers with --tp > 1 need --sequence-parallel (Megatron-Core "
          "requires it: each TP rank routes its part of the sequence)");
    }
    if (l.grad_dp() > 1 && c.dp_mode == DpMode::kZero) {
      throw ConfigError("--dp-mode zero with MoE layers is not modelled yet: use ddp");
    }
    if (c.compute) throw ConfigError("--compute-from with MoE layers is not modelled yet");
  }
  virtual_stage_layers(c.shape.layers, c.layout.pp, c.virtual_stages, c.split);
  validate_context_parallel(c.shape, c.layout, c.cp_mode);
  if (c.layout.cp > 1 && c.compute) {
    throw ConfigError(
        "--cp > 1 with --compute-from: a traced step's attention time does not split into the "
        "CP schedule's blocks");
  }
  if (c.layout.cp > 1 && c.attention == AttentionMode::kGemm) {
    throw ConfigError(cp_needs_fused_attention());
  }
}

std::string cp_needs_fused_attention() {
  return "--cp > 1 needs fused attention (--attention fused): the CP schedules run attention "
         "kernels on blocks of the sequence, which --attention gemm does not model";
}

namespace {}  // namespace

std::uint64_t moe_tokens(const WorkloadConfig& c) {
  const auto tokens = static_cast<std::uint64_t>(c.shape.micro_batch) * c.shape.seq /
                      static_cast<std::uint64_t>(c.layout.cp);
  return c.layout.tp > 1 && c.sequence_parallel ? tokens / static_cast<std::uint64_t>(c.layout.tp)
                                                : tokens;
}

namespace {

std::vector<ModelChunk> chunks_of(const WorkloadConfig& c, int pp_rank) {
  return stage_chunks(c.shape.layers, c.layout.pp, c.virtual_stages, pp_rank, c.shape.vocab > 0,
                      c.split);
}

// Tied embeddings split over stages: the last stage keeps a copy of the embedding as its LM head
// (Megatron's shared_embedding_or_output_weight), whose gradient the embedding group sums.
bool tied_across_stages(const WorkloadConfig& c) {
  return c.shape.vocab > 0 && c.shape.tie_embeddings && c.layout.pp > 1;
}

// Builds one rank's step: the pipeline schedule's forward and backward passes through the
// stage's chunks (the embedding before the first chunk's layers, the final norm, LM head and
// loss after the last's), with TP collectives inside them, DP gradient synchronisation hooked on
// each chunk's last backward pass, the tied embeddings' gradient summed between the first and
// last stage, and the optimizer step at the end.
class StepBuilder {
 public:
  StepBuilder(const WorkloadConfig& c, const RankPlace& place) : c_(c), place_(place) {
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
      std::uint64_t params = 0;
      for (std::uint64_t n : moe_layer_dense_tensors(c.shape, t_)) params += n;
      for (std::uint64_t n : moe_layer_expert_tensors(c.shape, c.layout.ep, 1)) params += n;
      moe_grad_accum_ = {2 * params * elem_, params * elem_};
    }
    const int edp = c.layout.expert_dp();
    if (c.shape.moe() && edp > 1 && c.dp_mode == DpMode::kDdp) {
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
  }

  OpPlan build() {
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

 private:
  bool sp() const { return t_ > 1 && c_.sequence_parallel; }
  bool zero() const { return d_ > 1 && c_.dp_mode == DpMode::kZero; }
  std::string lname(int layer, const char* what, int mb) const {
    return log::cat("l", layer, ".", what, ".mb", mb);
  }
  std::string ename(const char* what, int mb) const { return log::cat(what, ".mb", mb); }

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

  // ZeRO: one flat shard per layer (FSDP's flat parameter), and one for each end's parameters.
  int zero_gather(const std::string& unit, std::uint64_t params, const char* phase, int mb) {
    const std::uint64_t shard = params / static_cast<std::uint64_t>(d_);
    return plan_.collective(log::cat(unit, ".zero.", phase, ".ag.mb", mb),
                            CollectiveKind::kAllGather, Group::kDp, shard,
                            shard * static_cast<std::uint64_t>(d_) * elem_, {});
  }
  void zero_reduce(const std::string& unit, std::uint64_t params, int after) {
    const std::uint64_t shard = params / static_cast<std::uint64_t>(d_);
    zero_reduce_ = plan_.collective(log::cat(unit, ".zero.grad.rs"), CollectiveKind::kReduceScatter,
                                    Group::kDp, shard,
                                    shard * static_cast<std::uint64_t>(d_) * elem_, {after});
  }
  std::uint64_t layer_params() const { return layer_parameters(c_.shape, t_); }
  std::uint64_t embedding_params() const { return end_parameters(c_.shape, t_).embedding; }
  // The LM head's weight on the last stage: its own, or tied embeddings' copy there.
  std::uint64_t head_params() const {
    const EndParameters e = end_parameters(c_.shape, t_);
    return e.final_norm + (tied_across_stages(c_) ? e.embedding : e.head);
  }

  int forward(const ModelChunk& chunk, int mb, int input) {
    std::map<int, int> gathered;
    const int first = chunk.first_layer, end = chunk.first_layer + chunk.layers;
    if (zero() && chunk.layers > 0) {
      gathered[first] = zero_gather(log::cat("l", first), layer_params(), "fwd", mb);
    }
    int x = input;
    if (chunk.embedding) x = embedding_forward(mb, x);
    for (int l = first; l < end; ++l) {
      // FSDP's forward prefetch: the next layer's parameters are gathered while this one runs.
      if (zero() && l + 1 < end) {
        gathered[l + 1] = zero_gather(log::cat("l", l + 1), layer_params(), "fwd", mb);
      }
      const int params = zero() ? gathered[l] : -1;
      x = c_.compute ? forward_calibrated(l, mb, x, params) : layer_forward(l, mb, x, params);
      offload(l, mb, x);
    }
    if (chunk.head) x = head_forward(mb, x);
    return x;
  }

  // Pre-norm: x + attn(norm1(x)), then + mlp(norm2(·)); under sequence parallelism the norms and
  // residual adds run on the rank's part of the sequence, before the gathers.
  int layer_forward(int l, int mb, int x, int params) {
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

  // Megatron's VocabParallelEmbedding: each TP rank looks up the tokens of its vocabulary rows,
  // zeroes the others' rows, and the ranks' outputs are summed (all-reduce of b·s·h; under
  // sequence parallelism reduce-scattered onto the ranks' parts of the sequence).
  int embedding_forward(int mb, int after) {
    int params = -1;
    if (zero()) params = zero_gather("embedding", embedding_params(), "fwd", mb);
    int y = -1;
    if (calibrated_ends()) {
      y = plan_.compute(ename("embedding", mb) + ".fwd",
                        ends_ns(c_.compute->ends.embedding_forward_ns, 1), {after, params});
      replay_gap(y, ComputePart::kEmbeddingForward, c_.compute->micro_batches);
    } else {
      y = pass(ename("embedding", mb) + ".fwd", ends_.embed_fwd, after, params);
      if (t_ > 1) y = pass(ename("embedding.mask", mb) + ".fwd", ends_.embed_mask, y);
    }
    return tp_reduce(ename("embedding", mb), y);
  }

  // --compute-from a trace whose ends were told apart: its ends' kernels run as the ends' ops.
  bool calibrated_ends() const { return c_.compute && c_.compute->has_ends(); }
  // One micro-batch's share of a traced end's time per step, divided by `divide` (the TP degree
  // where Megatron splits the work over the vocabulary: the head's GEMMs and the loss's logits;
  // each TP rank looks up and sums the gradients of every token's row, so the embedding is not).
  std::uint64_t ends_ns(double per_step, int divide) const {
    return static_cast<std::uint64_t>(per_step / c_.compute->micro_batches / divide);
  }

  // The final norm, the LM head (column-parallel over the vocabulary: each rank's V/t logits) and
  // the cross-entropy. Megatron's VocabParallelCrossEntropy all-reduces over TP the logits' row
  // maxima, the target logits and the sums of exponentials, b·s fp32 values each.
  int head_forward(int mb, int x) {
    int params = -1;
    if (zero()) params = zero_gather("head", head_params(), "fwd", mb);
    int y = x;
    if (calibrated_ends()) {  // the final norm's kernels are among the layers' learned time
      y = tp_gather(ename("head", mb), y);
      y = plan_.compute(ename("head", mb) + ".fwd", ends_ns(c_.compute->ends.head_forward_ns, t_),
                        {y, params});
      replay_gap(y, ComputePart::kHeadForward, c_.compute->micro_batches);
    } else {
      y = pass(ename("final_norm", mb) + ".fwd", ends_.final_norm_fwd, y, params);
      y = tp_gather(ename("head", mb), y);
      y = plan_.gemm(ename("head", mb) + ".fwd", head_.m, head_.n, head_.k, {y, params});
      y = pass(ename("loss", mb) + ".fwd", ends_.loss_fwd, y);
    }
    if (t_ > 1) {
      for (const char* what : {"max", "target", "sum_exp"}) {
        y = plan_.collective(log::cat("loss.", what, ".mb", mb, ".ar"), CollectiveKind::kAllReduce,
                             Group::kTp, tokens_, tokens_ * 4, {y});
      }
    }
    return y;
  }

  int backward(const ModelChunk& chunk, int mb, int grad_in, bool last_pass) {
    const int first = chunk.first_layer, top = chunk.first_layer + chunk.layers - 1;
    int dy = grad_in;
    if (chunk.head) dy = head_backward(mb, dy, last_pass);
    std::map<int, int> gathered;
    if (zero() && chunk.layers > 0) {
      gathered[top] = zero_gather(log::cat("l", top), layer_params(), "bwd", mb);
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
      if (zero() && l - 1 >= first) {
        gathered[l - 1] = zero_gather(log::cat("l", l - 1), layer_params(), "bwd", mb);
      }
      const int params = zero() ? gathered[l] : -1;
      const Calibrated b = c_.compute ? backward_calibrated(l, mb, dy, params, h2d, last_pass)
                                      : layer_backward(l, mb, dy, params, h2d, last_pass);
      dy = b.dy;
      if (zero() && last_pass) zero_reduce(log::cat("l", l), layer_params(), b.last);
      prefetch_after = b.first;
    }
    if (chunk.embedding) dy = embedding_backward(mb, dy, last_pass);
    return dy;
  }

  struct Calibrated {
    int dy = -1;     // the input gradient (what the layer below waits for)
    int first = -1;  // the layer's first compute op
    int last = -1;   // its last (every weight gradient is ready after it)
  };

  Calibrated layer_backward(int l, int mb, int dy, int params, int h2d, bool last_pass) {
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

  // --- Mixture of experts: Megatron-Core's MoELayer with the alltoall token dispatcher ---------

  const MoeDispatch& dispatch_of(int l) {
    auto it = dispatch_.find(l);
    if (it == dispatch_.end()) {
      it = dispatch_
               .emplace(l, moe_dispatch(c_.shape, *routing_, l, c_.layout.ep, place_.ep_rank,
                                        moe_tokens(c_)))
               .first;
    }
    return it->second;
  }

  // An all-to-allv over EP with `splits`; its bytes: what this rank sends. None at EP 1: there,
  // as Megatron-Core's all-to-all over one rank, the input is the output.
  int alltoallv(const std::string& name, const std::shared_ptr<const PeerSplits>& splits,
                std::uint64_t send_elements, int after) {
    if (c_.layout.ep == 1) return after;
    const int id = plan_.collective(name, CollectiveKind::kAllToAllV, Group::kEp, send_elements,
                                    send_elements * elem_, {after});
    std::get<PlannedCollective>(plan_.ops[static_cast<std::size_t>(id)].call).splits = splits;
    return id;
  }

  // An expert's rows as its GEMMs take them: rounded up to a multiple of 8. commprof's GEMMs are
  // column-major with the rows as the leading dimension, which cuBLAS's tensor-core kernels need
  // 16-byte aligned (8 bf16 elements); a framework's grouped GEMM, row-major, has no such need
  // and does not slow down on odd rows (Mixtral on 2 H200s, rows as routed: 2.3x the step of
  // aligned rows, docs/BENCHMARKS.md). At most 7 rows more per expert.
  static int gemm_rows(std::uint64_t rows) { return static_cast<int>((rows + 7) / 8 * 8); }

  // Forward of the MoE block on the normed input `x` (the rank's tokens: its part of the
  // sequence under sequence parallelism): shared experts, router and top-k, the per-expert
  // counts all-gathered over expert TP x EP and read on the host (a device-to-host copy the host
  // waits for: Megatron-Core's dispatcher needs the counts to size the all-to-all), permutation,
  // the dispatch all-to-allv, each local expert's FFN on its rows, the combine all-to-allv,
  // unpermutation.
  int moe_forward(int l, int mb, int x, int params) {
    const ModelShape& s = c_.shape;
    const std::uint64_t tokens = moe_tokens(c_);
    const MoeGemms g = moe_gemms(s, t_, tokens);
    const MoePasses p = moe_passes(s, tokens);
    const MoeDispatch& d = dispatch_of(l);
    int shared = -1;
    if (g.shared_up_n > 0) {  // a dense FFN over TP on every token, as the layer's own would be
      int y = tp_gather(lname(l, "shared", mb), x);
      y = plan_.gemm(lname(l, "shared_up", mb) + ".fwd", static_cast<int>(tokens_), g.shared_up_n,
                     s.hidden, {y, params});
      y = pass(lname(l, "shared_act", mb) + ".fwd", shared_act(false), y);
      y = plan_.gemm(lname(l, "shared_down", mb) + ".fwd", static_cast<int>(tokens_), s.hidden,
                     g.shared_down_k, {y});
      shared = tp_reduce(lname(l, "shared", mb), y);
    }
    int y = plan_.gemm(lname(l, "router", mb) + ".fwd", g.router_m, g.router_n, g.router_k,
                       {x, params});
    y = pass(lname(l, "topk", mb) + ".fwd", p.topk_fwd, y);
    y = routing_counts(l, mb, y);
    y = pass(lname(l, "permute", mb) + ".fwd", p.permute_fwd, y);
    y = alltoallv(lname(l, "dispatch", mb), d.dispatch, d.send_elements, y);
    const int first_expert = place_.ep_rank * static_cast<int>(d.expert_rows.size());
    for (std::size_t e = 0; e < d.expert_rows.size(); ++e) {
      const auto rows = d.expert_rows[e];
      if (rows == 0) continue;  // no token routed here: no kernel, as a grouped GEMM skips it
      const std::string ex = log::cat("expert", first_expert + static_cast<int>(e));
      y = plan_.gemm(lname(l, (ex + ".up").c_str(), mb) + ".fwd", gemm_rows(rows), g.expert_up_n,
                     s.hidden, {y});
      y = pass(lname(l, (ex + ".act").c_str(), mb) + ".fwd", expert_act_fwd(s, rows, 1), y);
      y = plan_.gemm(lname(l, (ex + ".down").c_str(), mb) + ".fwd", gemm_rows(rows), s.hidden,
                     g.expert_down_k, {y});
    }
    y = alltoallv(lname(l, "combine", mb), d.combine, d.recv_elements, y);
    return pass(lname(l, "unpermute", mb) + ".fwd", p.unpermute_fwd, y, shared);
  }

  // The tokens per expert of every rank of the expert TP x EP group, all-gathered (E int64 each),
  // copied to the host, which waits for them before it issues the rest of the step.
  int routing_counts(int l, int mb, int after) {
    const std::uint64_t bytes = static_cast<std::uint64_t>(c_.shape.experts) * 8;
    const std::uint64_t count = (bytes + elem_ - 1) / elem_;
    const int group = c_.layout.expert_tp() * c_.layout.ep;
    int y = after;
    if (group > 1) {
      y = plan_.collective(lname(l, "routing_counts", mb) + ".ag", CollectiveKind::kAllGather,
                           Group::kTpEp, count, count * elem_ * static_cast<std::uint64_t>(group),
                           {after});
    }
    y = plan_.copy(lname(l, "routing_counts", mb) + ".d2h", CopyKind::kDeviceToHost,
                   bytes * static_cast<std::uint64_t>(group), {y});
    plan_.ops[static_cast<std::size_t>(y)].host_waits = true;
    return y;
  }

  PassBytes shared_act(bool backward) const {
    const std::uint64_t f =
        tokens_ * static_cast<std::uint64_t>(moe_gemms(c_.shape, t_, 1).shared_down_k) * elem_;
    return backward ? ffn_act_bwd(c_.shape.gated_ffn, f) : ffn_act_fwd(c_.shape.gated_ffn, f);
  }

  // Backward of the MoE block: unpermutation's gradient, the combine's all-to-allv backward (the
  // rows' gradients to the experts' ranks: the dispatch's splits), each local expert's input and
  // weight gradients (its gradients then ready for expert DP), the dispatch's backward (the
  // combine's splits), permutation's and the router's gradients, the shared experts'.
  int moe_backward(int l, int mb, int dy, int h2d, bool last_pass) {
    const ModelShape& s = c_.shape;
    const std::uint64_t tokens = moe_tokens(c_);
    const MoeGemms g = moe_gemms(s, t_, tokens);
    const MoePasses p = moe_passes(s, tokens);
    const MoeDispatch& d = dispatch_of(l);
    int y = pass(lname(l, "unpermute", mb) + ".bwd", p.unpermute_bwd, dy, h2d);
    y = alltoallv(lname(l, "combine.bwd", mb), d.dispatch, d.send_elements, y);
    const int first_expert = place_.ep_rank * static_cast<int>(d.expert_rows.size());
    for (std::size_t i = d.expert_rows.size(); i-- > 0;) {
      const auto rows = d.expert_rows[i];
      const int e = first_expert + static_cast<int>(i);
      const std::string ex = log::cat("expert", e);
      if (rows == 0) {
        if (last_pass) expert_grad_ready(log::cat("l", l, ".", ex, ".up"), y);
        continue;
      }
      const int m = gemm_rows(rows);
      y = plan_.gemm(lname(l, (ex + ".down").c_str(), mb) + ".dgrad", m, g.expert_down_k, s.hidden,
                     {y});
      int w = plan_.gemm(lname(l, (ex + ".down").c_str(), mb) + ".wgrad", g.expert_down_k, s.hidden,
                         m, {y});
      if (last_pass) expert_grad_ready(log::cat("l", l, ".", ex, ".down"), w);
      y = pass(lname(l, (ex + ".act").c_str(), mb) + ".bwd", expert_act_bwd(s, rows, 1), w);
      y = plan_.gemm(lname(l, (ex + ".up").c_str(), mb) + ".dgrad", m, s.hidden, g.expert_up_n,
                     {y});
      w = plan_.gemm(lname(l, (ex + ".up").c_str(), mb) + ".wgrad", s.hidden, g.expert_up_n, m,
                     {y});
      if (last_pass) expert_grad_ready(log::cat("l", l, ".", ex, ".up"), w);
      y = w;
    }
    y = alltoallv(lname(l, "dispatch.bwd", mb), d.combine, d.recv_elements, y);
    y = pass(lname(l, "permute", mb) + ".bwd", p.permute_bwd, y);
    y = pass(lname(l, "topk", mb) + ".bwd", p.topk_bwd, y);
    const int dgrad =
        plan_.gemm(lname(l, "router", mb) + ".dgrad", g.router_m, g.router_k, g.router_n, {y});
    const int wgrad =
        plan_.gemm(lname(l, "router", mb) + ".wgrad", g.router_k, g.router_n, g.router_m, {dgrad});
    if (last_pass) grad_ready(log::cat("l", l, ".router"), wgrad);
    y = wgrad;
    if (g.shared_up_n > 0) {
      const int n = static_cast<int>(tokens_);
      int z = tp_gather(lname(l, "shared.bwd", mb), dy);
      z = plan_.gemm(lname(l, "shared_down", mb) + ".dgrad", n, g.shared_down_k, s.hidden, {z});
      int w = plan_.gemm(lname(l, "shared_down", mb) + ".wgrad", g.shared_down_k, s.hidden, n, {z});
      if (last_pass) grad_ready(log::cat("l", l, ".shared_down"), w);
      z = pass(lname(l, "shared_act", mb) + ".bwd", shared_act(true), w);
      z = plan_.gemm(lname(l, "shared_up", mb) + ".dgrad", n, s.hidden, g.shared_up_n, {z});
      const int reduced = tp_reduce(lname(l, "shared.bwd", mb), z);
      w = plan_.gemm(lname(l, "shared_up", mb) + ".wgrad", s.hidden, g.shared_up_n, n, {z});
      if (last_pass) grad_ready(log::cat("l", l, ".shared_up"), w);
      y = reduced == z ? w : reduced;
    }
    return y;
  }

  // DDP's hook for an expert's gradient: its bucket all-reduced over expert DP when complete.
  void expert_grad_ready(const std::string& param, int wgrad) {
    bucket_ready(param, wgrad, expert_closing_, expert_buckets_, "edp", Group::kEdp);
  }

  // The loss's gradient, the LM head's two GEMMs (the input gradient's TP reduction overlapping
  // the weight gradient's, as Megatron's column-parallel layer does), the final norm's gradient.
  int head_backward(int mb, int dy, bool last_pass) {
    int params = -1;
    if (zero()) params = zero_gather("head", head_params(), "bwd", mb);
    if (calibrated_ends()) {  // the loss's and the head's backward kernels as one op
      const int g = plan_.compute(ename("head", mb) + ".bwd",
                                  ends_ns(c_.compute->ends.head_backward_ns, t_), {dy, params});
      replay_gap(g, ComputePart::kHeadBackward, c_.compute->micro_batches);
      if (last_pass) head_gradient_done(g);
      return tp_reduce(ename("head.bwd", mb), g);
    }
    dy = pass(ename("loss", mb) + ".bwd", ends_.loss_bwd, dy, params);
    const int dgrad =
        plan_.gemm(ename("head", mb) + ".dgrad", head_.m, head_.k, head_.n, {dy, params});
    const int reduced = tp_reduce(ename("head.bwd", mb), dgrad);
    int wgrad = plan_.gemm(ename("head", mb) + ".wgrad", head_.k, head_.n, head_.m, {dgrad});
    if (mb > 0 && ends_.head_grad_accum.read > 0) {
      wgrad = pass(ename("head.grad_accum", mb), ends_.head_grad_accum, wgrad);
    } else if (mb > 0 && tied_across_stages(c_)) {
      wgrad = pass(ename("head.grad_accum", mb), ends_.embed_grad_accum, wgrad);
    }
    if (last_pass) head_gradient_done(wgrad);
    dy = reduced == dgrad ? wgrad : reduced;
    return pass(ename("final_norm", mb) + ".bwd", ends_.final_norm_bwd, dy);
  }

  // The head's weight gradient complete after the last backward pass: DDP's bucket hook and
  // ZeRO's reduce-scatter. With tied embeddings on one stage the head's gradient is part of the
  // embedding's, ready once the embedding's backward has added its own: no hook of its own.
  void head_gradient_done(int grad) {
    if (!c_.shape.tie_embeddings || tied_across_stages(c_)) grad_ready("head", grad);
    if (zero()) zero_reduce("head", head_params(), grad);
  }

  // embedding_dense_backward: the rows of the tokens seen, summed into the rank's gradient of its
  // vocabulary rows; after the first micro-batch added to the gradient accumulated so far.
  int embedding_backward(int mb, int dy, bool last_pass) {
    int params = -1;
    if (zero()) params = zero_gather("embedding", embedding_params(), "bwd", mb);
    int g = -1;
    if (calibrated_ends()) {  // the trace's gradient accumulation is in its learned time
      g = plan_.compute(ename("embedding", mb) + ".bwd",
                        ends_ns(c_.compute->ends.embedding_backward_ns, 1), {dy, params});
      replay_gap(g, ComputePart::kEmbeddingBackward, c_.compute->micro_batches);
    } else {
      g = pass(ename("embedding", mb) + ".bwd", ends_.embed_bwd, dy, params);
      if (mb > 0) g = pass(ename("embedding.grad_accum", mb), ends_.embed_grad_accum, g);
    }
    if (last_pass) grad_ready("embedding", g);
    if (zero() && last_pass) zero_reduce("embedding", embedding_params(), g);
    return g;
  }

  void grad_ready(const std::string& param, int wgrad) {
    bucket_ready(param, wgrad, closing_param_, buckets_, "dp", Group::kDp);
  }

  // DDP: when the parameter that closes a bucket has its gradient, copy the bucket's gradients
  // in (gradient_as_bucket_view=False), all-reduce it over `group`, copy them back.
  void bucket_ready(const std::string& param, int wgrad,
                    const std::map<std::string, std::size_t>& closing,
                    const std::vector<Bucket>& buckets, const char* prefix, Group group) {
    last_grad_ = std::max(last_grad_, wgrad);
    const auto it = closing.find(param);
    if (it == closing.end()) return;
    const Bucket& bucket = buckets[it->second];
    const std::string name = log::cat(prefix, ".bucket", it->second);
    const int in = plan_.copy(name + ".copy_in", CopyKind::kDeviceToDevice, bucket.bytes, {wgrad});
    const std::uint64_t count = bucket.bytes / elem_;
    const int ar = plan_.collective(name + ".allreduce", CollectiveKind::kAllReduce, group, count,
                                    count * elem_, {in});
    last_dp_sync_ =
        std::max(last_dp_sync_,
                 plan_.copy(name + ".copy_out", CopyKind::kDeviceToDevice, bucket.bytes, {ar}));
  }

  // Megatron's finalize_model_grads: after the DP synchronisation, the first and the last stage
  // all-reduce the gradient of the embedding they share (_allreduce_embedding_grads).
  void tied_embedding_sync() {
    if (!tied_across_stages(c_) || !place_.in_embedding_group()) return;
    const std::uint64_t count = embedding_params();
    tied_sync_ =
        plan_.collective("embedding.tied_grad.ar", CollectiveKind::kAllReduce, Group::kEmbedding,
                         count, count * elem_, {last_dp_sync_, zero_reduce_, last_grad_});
  }

  int transfer(const PipeItem& it, int produced) {
    const std::uint64_t count = tokens_hidden_ / static_cast<std::uint64_t>(sp() ? t_ : 1);
    std::string name;
    const bool chunks = c_.virtual_stages > 1;
    auto part = [&](const char* what, const P2PTransfer& t, int mb, int chunk) {
      if (t.peer < 0) return;
      name += name.empty() ? "pp." : "+";
      name += log::cat(what, t.forward ? "_act" : "_grad");
      if (chunks) name += log::cat(".mb", mb, "c", chunk);
    };
    for (int i = 0; i < 2; ++i) part("send", it.sends[i], it.send_mb[i], it.send_chunk[i]);
    for (int i = 0; i < 2; ++i) part("recv", it.recvs[i], it.recv_mb[i], it.recv_chunk[i]);
    if (!chunks) name += log::cat(".mb", it.micro_batch);
    const bool sends = used(it.sends) > 0, recvs = used(it.recvs) > 0;
    const int id = plan_.p2p(name, Group::kPp, it.sends, it.recvs, count, {sends ? produced : -1});
    return recvs ? id : -1;
  }

  void optimizer() {
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
  std::vector<std::uint64_t> optimizer_tensors(int shards) const {
    const std::vector<std::uint64_t> layer = layer_parameter_tensors(c_.shape, t_);
    const EndParameters e = end_parameters(c_.shape, t_);
    const bool first = !chunks_.empty() && chunks_.front().embedding;
    bool last = false;
    for (const ModelChunk& ch : chunks_) last = last || ch.head;
    std::vector<std::uint64_t> tensors;
    auto unit = [&](const std::vector<std::uint64_t>& unit_tensors) {
      std::uint64_t total = 0;
      for (std::uint64_t n : unit_tensors) total += n;
      if (total == 0) return;
      if (shards > 1) {
        tensors.push_back(total / static_cast<std::uint64_t>(shards));
      } else {
        for (std::uint64_t n : unit_tensors)
          if (n > 0) tensors.push_back(n);
      }
    };
    if (first) unit({e.embedding});
    std::vector<std::uint64_t> moe;
    if (c_.shape.moe()) {
      moe = moe_layer_dense_tensors(c_.shape, t_);
      for (std::uint64_t n : moe_layer_expert_tensors(c_.shape, c_.layout.ep, 1)) moe.push_back(n);
    }
    for (const ModelChunk& ch : chunks_) {
      for (int l = ch.first_layer; l < ch.first_layer + ch.layers; ++l) {
        unit(c_.shape.moe_layer(l) ? moe : layer);
      }
    }
    if (last) {
      // The final norm's weight (and LayerNorm's bias), then the head's weight.
      std::vector<std::uint64_t> head = {e.final_norm};
      if (!c_.shape.gated_ffn) head = {e.final_norm / 2, e.final_norm / 2};
      head.push_back(tied_across_stages(c_) ? e.embedding : e.head);
      unit(head);
    }
    return tensors;
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

  // A traced gap before op `op`: the step's gaps before ops of `part` over `per` (the ops of that
  // part in the traced step). Not divided by TP: a TP rank launches as many kernels as the
  // traced GPU did (shorter ones), so its host is no less the bottleneck.
  void replay_gap(int op, ComputePart part, double per) {
    if (!c_.host_gaps) return;
    const double ns = gap_of(*c_.compute, part) / per;
    plan_.ops.at(static_cast<std::size_t>(op)).host_gap_ns = static_cast<std::uint64_t>(ns);
  }
  // Traced layer passes of one direction per step: each layer once per micro-batch.
  double traced_layer_passes() const {
    return static_cast<double>(c_.compute->layers) * c_.compute->micro_batches;
  }

  // A layer's forward under --compute-from, with its TP collectives where the GEMMs would have
  // them: compute(attention), reduce, compute(FFN), reduce.
  int forward_calibrated(int l, int mb, int x, int params) {
    int y = tp_gather(lname(l, "attn", mb), x);
    y = plan_.compute(lname(l, "attn", mb) + ".fwd", calibrated_ns(false, false), {y, params});
    replay_gap(y, ComputePart::kForward, traced_layer_passes());
    y = tp_reduce(lname(l, "attn", mb), y);
    y = tp_gather(lname(l, "ffn", mb), y);
    y = plan_.compute(lname(l, "ffn", mb) + ".fwd", calibrated_ns(false, true), {y});
    return tp_reduce(lname(l, "ffn", mb), y);
  }

  // A layer's backward under --compute-from: FFN, then attention, each followed by its weights'
  // gradients (DDP's bucket hooks) and the TP reduction of its input gradient.
  Calibrated backward_calibrated(int l, int mb, int dy, int params, int h2d, bool last_pass) {
    Calibrated out;
    for (const bool ffn : {true, false}) {
      const char* part = ffn ? "ffn" : "attn";
      dy = tp_gather(lname(l, ffn ? "ffn.bwd" : "attn.bwd", mb), dy);
      const int op =
          plan_.compute(lname(l, part, mb) + ".bwd", calibrated_ns(true, ffn), {dy, params, h2d});
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

  void offload(int l, int mb, int after) {
    if (!c_.offload) return;
    offloaded_[{l, mb}] = plan_.copy(lname(l, "act", mb) + ".d2h", CopyKind::kDeviceToHost,
                                     activation_bytes(local_), {after});
  }

  // A memory-bound op on the COMP stream after `after` (and `also`, on another stream).
  int pass(const std::string& name, const PassBytes& bytes, int after, int also = -1) {
    return plan_.elementwise(name, bytes.read, bytes.write, {after, also});
  }

  bool fused_attention() const { return c_.attention == AttentionMode::kFused; }
  PlannedAttention attention(bool backward) const {
    return layer_attention(c_.shape, t_, backward);
  }

  // One layer's attention of one micro-batch: one fused kernel at cp 1; under context
  // parallelism the CP mode's kernels with the CP group's communication around them. Returns
  // the op the layer's next op waits for.
  int attention_forward(int l, int mb, int after) {
    if (cp_ == 1)
      return plan_.attention(lname(l, "attention", mb) + ".fwd", attention(false), {after});
    switch (c_.cp_mode) {
      case CpMode::kP2p:
        return ring_forward(l, mb, after);
      case CpMode::kA2a:
        return ulysses(l, mb, after, -1, false);
      case CpMode::kAllGather:
        return gathered(l, mb, after, -1, false);
    }
    return after;
  }
  int attention_backward(int l, int mb, int dy, int h2d) {
    if (cp_ == 1) {
      return plan_.attention(lname(l, "attention", mb) + ".bwd", attention(true), {dy, h2d});
    }
    switch (c_.cp_mode) {
      case CpMode::kP2p:
        return ring_backward(l, mb, dy, h2d);
      case CpMode::kA2a:
        return ulysses(l, mb, dy, h2d, true);
      case CpMode::kAllGather:
        return gathered(l, mb, dy, h2d, true);
    }
    return dy;
  }
  // The kernel of one CP block: the layer's heads on this TP rank, the block's lengths.
  PlannedAttention block(const CpBlock& b, bool backward) const {
    PlannedAttention a = attention(backward);
    a.seq = b.q_seq;
    a.kv_seq = b.kv_seq;
    a.causal = b.causal;
    return a;
  }
  std::string step_name(int l, const char* what, int mb, bool backward, std::size_t step) const {
    return lname(l, what, mb) + (backward ? ".bwd" : ".fwd") + log::cat(".step", step);
  }
  // One ring step's transfer on the CP group: send to the next CP rank, receive from the
  // previous (TE's flash_attn_p2p_communicate); K and V (or dK and dV) of the rank's tokens in
  // one buffer.
  int ring_transfer(const std::string& name, bool gradient, const std::vector<int>& deps) {
    const int next = (place_.cp_rank + 1) % cp_, prev = (place_.cp_rank + cp_ - 1) % cp_;
    const std::array<P2PTransfer, 2> sends{P2PTransfer{next, !gradient}, P2PTransfer{}};
    const std::array<P2PTransfer, 2> recvs{P2PTransfer{prev, !gradient}, P2PTransfer{}};
    return plan_.p2p(name, Group::kCp, sends, recvs, 2 * cp_kv_elements(c_.shape, t_, cp_), deps);
  }
  // p2p forward: at step i the attention of the K/V held (own at step 0, then received) while
  // the ring passes it on: step i+1's transfer is issued before step i's attention, on COMM
  // beside it, and step i+1's attention waits for its receive.
  int ring_forward(int l, int mb, int after) {
    const std::vector<CpBlock> steps = cp_ring_steps(c_.shape.seq, cp_, place_.cp_rank);
    int held = -1;  // the receive that brought this step's K/V (none at step 0: the rank's own)
    int y = after;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const int next = i + 1 < steps.size() ? ring_transfer(step_name(l, "cp.kv", mb, false, i + 1),
                                                            false, {after, held})
                                            : -1;
      y = plan_.attention(step_name(l, "attention", mb, false, i), block(steps[i], false),
                          {y, held});
      held = next;
    }
    return y;
  }
  // p2p backward (TE's AttnFuncWithCPAndKVP2P.backward): the same ring of K/V, and a dK/dV
  // accumulator travelling with it: after step i's attention backward the rank adds its part to
  // the accumulator received from the previous rank and sends it on; after cp transfers it is
  // back at the rank that owns those K/V.
  int ring_backward(int l, int mb, int dy, int h2d) {
    const std::vector<CpBlock> steps = cp_ring_steps(c_.shape.seq, cp_, place_.cp_rank);
    const std::uint64_t dkv_bytes = 2 * cp_kv_elements(c_.shape, t_, cp_) * elem_;
    int held = -1, dkv = -1;
    int y = dy;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const int next = i + 1 < steps.size() ? ring_transfer(step_name(l, "cp.kv", mb, true, i + 1),
                                                            false, {dy, held})
                                            : -1;
      y = plan_.attention(step_name(l, "attention", mb, true, i), block(steps[i], true),
                          {y, held, h2d});
      if (dkv >= 0) {
        y = pass(step_name(l, "cp.dkv_add", mb, true, i), {2 * dkv_bytes, dkv_bytes}, y, dkv);
      }
      dkv = ring_transfer(step_name(l, "cp.dkv", mb, true, i), true, {y});
      held = next;
    }
    return dkv;
  }
  // a2a (DeepSpeed-Ulysses, TE's AttnFuncWithCPAndQKVOA2A): all-to-alls over CP turn Q, K and V
  // from the rank's tokens of every head into every token of its heads / cp; attention runs over
  // the whole sequence on those heads; an all-to-all turns the output back. The backward
  // mirrors it: dO in, dQ, dK and dV out.
  int ulysses(int l, int mb, int after, int h2d, bool backward) {
    const std::uint64_t q = cp_q_elements(c_.shape, t_, cp_),
                        kv = cp_kv_elements(c_.shape, t_, cp_);
    const std::string dir = backward ? ".bwd" : ".fwd";
    auto a2a = [&](const char* what, std::uint64_t elements, int dep) {
      return plan_.collective(lname(l, what, mb) + dir, CollectiveKind::kAllToAll, Group::kCp,
                              elements / static_cast<std::uint64_t>(cp_), elements * elem_, {dep});
    };
    PlannedAttention a = attention(backward);
    a.heads /= cp_;
    a.kv_heads /= cp_;
    if (!backward) {
      a2a("cp.a2a_q", q, after);
      a2a("cp.a2a_k", kv, after);
      const int in = a2a("cp.a2a_v", kv, after);
      const int y = plan_.attention(lname(l, "attention", mb) + dir, a, {after, in});
      return a2a("cp.a2a_o", q, y);
    }
    const int in = a2a("cp.a2a_do", q, after);
    const int y = plan_.attention(lname(l, "attention", mb) + dir, a, {after, in, h2d});
    a2a("cp.a2a_dq", q, y);
    a2a("cp.a2a_dk", kv, y);
    return a2a("cp.a2a_dv", kv, y);
  }
  // allgather (TE's AttnFuncWithCPAndKVAllGather, Megatron's cp_comm_type "all_gather"): K and V
  // all-gathered over CP, then one kernel per local Q chunk over the keys up to it. The backward
  // gathers K and V again (TE saves only the rank's own) and reduce-scatters dK and dV.
  int gathered(int l, int mb, int after, int h2d, bool backward) {
    const std::uint64_t kv = cp_kv_elements(c_.shape, t_, cp_);
    const std::uint64_t bytes = kv * static_cast<std::uint64_t>(cp_) * elem_;
    const std::string dir = backward ? ".bwd" : ".fwd";
    auto collective = [&](const char* what, CollectiveKind kind, int dep) {
      return plan_.collective(lname(l, what, mb) + dir, kind, Group::kCp, kv, bytes, {dep});
    };
    collective("cp.ag_k", CollectiveKind::kAllGather, after);
    const int in = collective("cp.ag_v", CollectiveKind::kAllGather, after);
    const std::vector<CpBlock> blocks = cp_allgather_blocks(c_.shape.seq, cp_, place_.cp_rank);
    int y = after;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      y = plan_.attention(lname(l, "attention", mb) + dir + log::cat(".chunk", i),
                          block(blocks[i], backward), {y, in, h2d});
    }
    if (!backward) return y;
    collective("cp.rs_dk", CollectiveKind::kReduceScatter, y);
    return collective("cp.rs_dv", CollectiveKind::kReduceScatter, y);
  }

  const WorkloadConfig& c_;
  const RankPlace& place_;
  OpPlan plan_;
  int t_ = 1;
  int cp_ = 1;
  ModelShape local_;  // the shape outside attention: s/cp tokens per micro-batch
  int d_ = 1;
  std::size_t elem_ = 4;
  std::vector<LayerGemm> gemms_;
  LayerPasses passes_;
  EndPasses ends_;
  LayerGemm head_;
  double attn_share_ = 0.5;  // attention's part of a layer's GEMM FLOPs

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
  std::vector<GradParam> expert_grads_;
  std::vector<Bucket> expert_buckets_;
  std::map<std::string, std::size_t> expert_closing_;
  std::map<std::pair<int, int>, int> offloaded_;
  int last_dp_sync_ = -1;
  int zero_reduce_ = -1;
  int last_grad_ = -1;  // the last op that finished a gradient (the tied sync waits for it)
  int tied_sync_ = -1;
};

}  // namespace

std::vector<GradParam> stage_gradients_reversed(const WorkloadConfig& c, int pp_rank) {
  std::vector<GradParam> out;
  const auto gemms = layer_forward_gemms(c.shape, c.layout.tp);
  const std::size_t elem = dtype_size(c.shape.dtype);
  const EndParameters e = end_parameters(c.shape, c.layout.tp);
  const std::vector<ModelChunk> chunks = chunks_of(c, pp_rank);
  // Chunks in reverse: gradients become ready from the last layer backwards.
  for (auto ch = chunks.rbegin(); ch != chunks.rend(); ++ch) {
    if (ch->head && (!c.shape.tie_embeddings || tied_across_stages(c))) {
      out.push_back({"head", (tied_across_stages(c) ? e.embedding : e.head) * elem});
    }
    for (int l = ch->first_layer + ch->layers - 1; l >= ch->first_layer; --l) {
      for (auto g = gemms.rbegin(); g != gemms.rend(); ++g) {
        if (!g->has_weight) continue;
        if (c.shape.moe_layer(l) && g->name.rfind("ffn", 0) == 0) {
          // The MoE block's dense parameters, as its backward finishes them; the experts' are
          // stage_expert_gradients_reversed's.
          if (g->name != "ffn_down") continue;
          const MoeGemms m = moe_gemms(c.shape, c.layout.tp, 1);
          const auto h = static_cast<std::uint64_t>(c.shape.hidden);
          out.push_back({log::cat("l", l, ".router"),
                         static_cast<std::uint64_t>(c.shape.experts) * h * elem});
          if (m.shared_up_n > 0) {
            out.push_back({log::cat("l", l, ".shared_down"),
                           static_cast<std::uint64_t>(m.shared_down_k) * h * elem});
            out.push_back({log::cat("l", l, ".shared_up"),
                           static_cast<std::uint64_t>(m.shared_up_n) * h * elem});
          }
          continue;
        }
        out.push_back({log::cat("l", l, ".", g->name),
                       static_cast<std::uint64_t>(g->n) * static_cast<std::uint64_t>(g->k) * elem});
      }
    }
    if (ch->embedding) out.push_back({"embedding", e.embedding * elem});
  }
  return out;
}

std::vector<GradParam> stage_expert_gradients_reversed(const WorkloadConfig& c, int pp_rank,
                                                       int ep_rank) {
  std::vector<GradParam> out;
  if (!c.shape.moe()) return out;
  const std::size_t elem = dtype_size(c.shape.dtype);
  const MoeGemms g = moe_gemms(c.shape, c.layout.tp, 1);
  const auto h = static_cast<std::uint64_t>(c.shape.hidden);
  const int local = c.shape.experts / c.layout.ep;
  const std::vector<ModelChunk> chunks = chunks_of(c, pp_rank);
  for (auto ch = chunks.rbegin(); ch != chunks.rend(); ++ch) {
    for (int l = ch->first_layer + ch->layers - 1; l >= ch->first_layer; --l) {
      if (!c.shape.moe_layer(l)) continue;
      for (int e = local - 1; e >= 0; --e) {
        const int expert = ep_rank * local + e;
        out.push_back({log::cat("l", l, ".expert", expert, ".down"),
                       static_cast<std::uint64_t>(g.expert_down_k) * h * elem});
        out.push_back({log::cat("l", l, ".expert", expert, ".up"),
                       static_cast<std::uint64_t>(g.expert_up_n) * h * elem});
      }
    }
  }
  return out;
}

OpPlan build_plan(const WorkloadConfig& config, const RankPlace& place) {
  return StepBuilder(config, place).build();
}

}  // namespace commprof
