// SPDX-License-Identifier: MIT
// The op plans against the formulas of docs/workloads.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "workloads/dp_buckets.hpp"
#include "workloads/model_parameters.hpp"
#include "workloads/workload.hpp"

namespace commprof {
namespace {

WorkloadConfig config(WorkloadKind kind, ParallelLayout layout) {
  WorkloadConfig c;
  c.kind = kind;
  c.shape = model_preset("tiny");
  c.layout = layout;
  return c;
}

std::vector<const PlannedOp*> collectives(const OpPlan& plan, CollectiveKind kind, Group group) {
  std::vector<const PlannedOp*> out;
  for (const PlannedOp* op : plan.of_kind<PlannedCollective>()) {
    if (op->as<PlannedCollective>().kind == kind && op->group() == group) out.push_back(op);
  }
  return out;
}

TEST(ModelShape, GemmFlopsAndParametersFollowMegatronFormulas) {
  ModelShape s = model_preset("gpt-1.3b");
  const double h = s.hidden, f = s.ffn, bs = s.micro_batch * s.seq, seq = s.seq;
  // Forward FLOPs per layer: 24·b·s·h² (QKV, out, FFN with f = 4h) + 4·b·s²·h (attention).
  EXPECT_DOUBLE_EQ(layer_forward_flops(s, 1),
                   2 * bs * (3 * h * h + h * h + 2 * h * f) + 4 * bs * seq * h);
  EXPECT_DOUBLE_EQ(layer_forward_flops(s, 1), 24 * bs * h * h + 4 * bs * seq * h);
  // TP divides every GEMM by t.
  EXPECT_DOUBLE_EQ(layer_forward_flops(s, 4), layer_forward_flops(s, 1) / 4);
  // Parameters per layer: 4h² + 2hf = 12h² for GPT; ≈ 1.2 B over 24 layers for gpt-1.3b.
  EXPECT_EQ(layer_parameters(s, 1), static_cast<std::uint64_t>(12 * h * h));
  EXPECT_EQ(layer_parameters(s, 2), static_cast<std::uint64_t>(6 * h * h));
  EXPECT_EQ(activation_bytes(s), static_cast<std::uint64_t>(bs * h * 2));
  // Llama's gated FFN has three matrices, and its 32 query heads share 8 key/value heads, so K
  // and V are h × h/4 each: 2h² + h²/2 + 3hf. With the embedding and output matrices (2 ×
  // 128256 × h) and the RMSNorm weights (2 per layer and a final one, h each) that is Llama 3
  // 8B's published parameter count.
  ModelShape l = model_preset("llama-8b");
  const std::uint64_t lh = 4096, lf = 14336;
  EXPECT_EQ(layer_parameters(l, 1), 2 * lh * lh + 2 * lh * (lh / 4) + 3 * lh * lf);
  EXPECT_EQ(32 * layer_parameters(l, 1) + 2 * 128256 * lh + (2 * 32 + 1) * lh, 8030261248ull);
  EXPECT_EQ(model_parameters(l, 1), 8030261248ull);  // the same count, the model's ends included
  ModelShape mha = l;
  mha.kv_heads = 0;  // as many as heads: 4h² + 3hf
  EXPECT_EQ(layer_parameters(mha, 1), 4 * lh * lh + 3 * lh * lf);
}

// The memory-bound ops' bytes, from the formulas of docs/workloads.md written out here again.
TEST(ModelShape, MemoryBoundOpsMoveWhatPyTorchsKernelsMove) {
  const ModelShape g = model_preset("gpt-1.3b");  // bf16, LayerNorm, GELU, biases
  const std::uint64_t e = 2, bs = 2048, h = 2048, f = 8192;
  const std::uint64_t a = bs * h * e, fa = bs * f * e;
  const LayerPasses p = layer_passes(g, 1, false);
  EXPECT_EQ(p.norm_fwd.read, a);
  EXPECT_EQ(p.norm_fwd.write, a);
  EXPECT_EQ(p.norm_bwd.read, 4 * a);
  EXPECT_EQ(p.norm_bwd.write, a);
  EXPECT_EQ(p.residual_fwd.read, 2 * a);
  EXPECT_EQ(p.residual_fwd.write, a);
  EXPECT_EQ(p.residual_bwd.read, 2 * a);
  EXPECT_EQ(p.act_fwd.read, fa);
  EXPECT_EQ(p.act_fwd.write, fa);
  EXPECT_EQ(p.act_bwd.read, 2 * fa);
  EXPECT_EQ(p.act_bwd.write, fa);
  EXPECT_EQ(p.act_fwd.pattern, AccessPattern::kStream);  // GELU on a contiguous tensor
  EXPECT_EQ(p.act_bwd.pattern, AccessPattern::kStream);
  EXPECT_EQ(p.norm_bwd.pattern, AccessPattern::kStream);
  EXPECT_EQ(p.attn_layout_fwd.read, a);
  EXPECT_EQ(p.attn_layout_bwd.write, 3 * a);
  EXPECT_EQ(layer_passes(g, 4, false).attn_layout_bwd.read, 3 * a / 4);  // the rank's heads
  EXPECT_EQ(p.bias_grad.read, bs * (3 * h + h + f + h) * e);
  EXPECT_EQ(p.grad_accum.read, 2 * 12 * h * h * e);  // 12h² weights per GPT layer
  EXPECT_EQ(p.grad_accum.write, 12 * h * h * e);
  // TP shards the FFN's activations; sequence parallelism also the norms' and residuals'.
  const LayerPasses t2 = layer_passes(g, 2, false);
  EXPECT_EQ(t2.act_fwd.read, fa / 2);
  EXPECT_EQ(t2.norm_fwd.read, a);
  EXPECT_EQ(layer_passes(g, 2, true).norm_fwd.read, a / 2);
  // Llama: RMSNorm, SwiGLU (silu on the gate, times up: read 3F write 2F; backward 8F / 5F), no
  // biases.
  const ModelShape l = model_preset("llama-8b");
  const std::uint64_t fl = static_cast<std::uint64_t>(l.seq) * l.ffn * 2;
  const LayerPasses q = layer_passes(l, 1, false);
  EXPECT_EQ(q.act_fwd.read, 3 * fl);
  EXPECT_EQ(q.act_fwd.write, 2 * fl);
  EXPECT_EQ(q.act_bwd.read, 8 * fl);
  EXPECT_EQ(q.act_bwd.write, 5 * fl);
  // gate and up are the halves of the up GEMM's rows (chunk): PyTorch's unvectorised kernels
  // run every forward op and, backward, the gradient times up and silu's gradient.
  EXPECT_EQ(q.act_fwd.pattern, AccessPattern::kStrided);
  EXPECT_EQ(q.act_fwd.pattern_read, 3 * fl);
  EXPECT_EQ(q.act_fwd.pattern_write, 2 * fl);
  EXPECT_EQ(q.act_fwd.row_bytes, static_cast<std::uint64_t>(l.ffn) * 2);
  EXPECT_EQ(q.act_bwd.pattern, AccessPattern::kStrided);
  EXPECT_EQ(q.act_bwd.pattern_read, 4 * fl);
  EXPECT_EQ(q.act_bwd.pattern_write, 2 * fl);
  EXPECT_EQ(layer_passes(l, 2, false).act_bwd.row_bytes, static_cast<std::uint64_t>(l.ffn));
  EXPECT_EQ(q.bias_grad.read, 0u);
  // Its 8 key/value heads of 32: the Q, K and V gradients joined are H + 2·H/4.
  const std::uint64_t hl = static_cast<std::uint64_t>(l.seq) * l.hidden * 2;
  EXPECT_EQ(q.attn_layout_bwd.read, hl + 2 * hl / 4);
  EXPECT_EQ(q.attn_layout_bwd.write, hl + 2 * hl / 4);
  // AdamW reads parameters, gradients and two moments and writes three of them.
  EXPECT_EQ(adamw_bytes(1000, DType::kBFloat16).read, 8000u);
  EXPECT_EQ(adamw_bytes(1000, DType::kBFloat16).write, 6000u);
  EXPECT_EQ(adamw_bytes(1000, DType::kFloat32).read, 16000u);
}

// The tensors a fused AdamW iterates, in a PyTorch layer's registration order: norms first,
// then each linear layer's weight and bias; llama has RMSNorm and no biases, and with TP the
// column- and row-parallel weights shrink while the norms stay whole.
TEST(ModelShape, ParameterTensorsInRegistrationOrder) {
  ModelShape gpt;
  gpt.hidden = 64;
  gpt.heads = 4;
  gpt.ffn = 256;
  const std::uint64_t h = 64, f = 256;
  EXPECT_EQ(
      layer_parameter_tensors(gpt, 1),
      (std::vector<std::uint64_t>{h, h, h, h, 3 * h * h, 3 * h, h * h, h, f * h, f, h * f, h}));
  ModelShape llama = gpt;
  llama.gated_ffn = true;
  EXPECT_EQ(layer_parameter_tensors(llama, 2),
            (std::vector<std::uint64_t>{h, h, 3 * h / 2 * h, h * h / 2, 2 * f / 2 * h, h * f / 2}));
}

// Every layer and micro-batch carries its norms, residual adds and activation, forward and
// backward, in a pre-norm layer's order; gradients accumulate after the first micro-batch; the
// step ends with one AdamW pass over the rank's parameters.
std::vector<std::string> layer0_mb1_comp_ops(const OpPlan& plan) {
  std::vector<std::string> names;
  for (const PlannedOp& op : plan.ops) {
    if (op.name.rfind("l0.", 0) == 0 && op.name.find(".mb1") != std::string::npos &&
        op.stream == Category::kComp) {
      names.push_back(op.name);
    }
  }
  return names;
}

TEST(ModelShape, PlanCarriesTheMemoryBoundOpsInLayerOrder) {
  WorkloadConfig c = config(WorkloadKind::kDp, ParallelLayout{1, 1, 1});
  c.attention = AttentionMode::kGemm;
  const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
  const std::vector<std::string> layer0_mb1 = layer0_mb1_comp_ops(plan);
  const std::vector<std::string> expected = {"l0.ln1.mb1.fwd",
                                             "l0.qkv.mb1.fwd",
                                             "l0.attn_scores.mb1.fwd",
                                             "l0.attn_context.mb1.fwd",
                                             "l0.attn_layout.mb1.fwd",
                                             "l0.out_proj.mb1.fwd",
                                             "l0.residual1.mb1.fwd",
                                             "l0.ln2.mb1.fwd",
                                             "l0.ffn_up.mb1.fwd",
                                             "l0.act.mb1.fwd",
                                             "l0.ffn_down.mb1.fwd",
                                             "l0.residual2.mb1.fwd",
                                             "l0.ffn_down.mb1.dgrad",
                                             "l0.ffn_down.mb1.wgrad",
                                             "l0.act.mb1.bwd",
                                             "l0.ffn_up.mb1.dgrad",
                                             "l0.ffn_up.mb1.wgrad",
                                             "l0.ln2.mb1.bwd",
                                             "l0.residual2.mb1.bwd",
                                             "l0.out_proj.mb1.dgrad",
                                             "l0.out_proj.mb1.wgrad",
                                             "l0.attn_context.mb1.dgrad",
                                             "l0.attn_context.mb1.wgrad",
                                             "l0.attn_scores.mb1.dgrad",
                                             "l0.attn_scores.mb1.wgrad",
                                             "l0.attn_layout.mb1.bwd",
                                             "l0.qkv.mb1.dgrad",
                                             "l0.qkv.mb1.wgrad",
                                             "l0.ln1.mb1.bwd",
                                             "l0.residual1.mb1.bwd",
                                             "l0.bias_grad.mb1",
                                             "l0.grad_accum.mb1"};
  EXPECT_EQ(layer0_mb1, expected);
  const auto passes = plan.of_kind<PlannedElementwise>();
  const ModelShape& s = c.shape;
  const std::uint64_t per_layer_mb = 13;  // 6 forward, 6 backward, bias gradients
  const std::uint64_t accum = static_cast<std::uint64_t>(s.micro_batches - 1) * s.layers;
  EXPECT_EQ(passes.size(), per_layer_mb * s.layers * s.micro_batches + accum);
  const auto adams = plan.of_kind<PlannedAdamw>();
  ASSERT_EQ(adams.size(), 1u);
  const PlannedOp* adam = adams.front();
  EXPECT_EQ(adam->name, "optimizer.adamw");
  // Every layer's 12 tensors (two LayerNorms and four linear layers, weights and biases).
  const PlannedAdamw& call = adam->as<PlannedAdamw>();
  EXPECT_EQ(call.tensors.size(), 12u * static_cast<std::size_t>(s.layers));
  const std::uint64_t h = s.hidden, f = s.ffn;
  const std::uint64_t per_layer =
      4 * h + (3 * h * h + 3 * h) + (h * h + h) + (f * h + f) + (h * f + h);
  EXPECT_EQ(call.parameters(), per_layer * s.layers);
  EXPECT_EQ(adam->bytes, 7 * per_layer * s.layers * dtype_size(s.dtype));
  EXPECT_EQ(adam->stream, Category::kComp);
}

// The default, fused attention: one op forward where the GEMM model has the score and context
// GEMMs, one backward where it has their four; the rank's heads (TP splits them), causal, with
// the FLOPs of causal flash attention (forward 2 products, backward 5, each 2·b·h·s²·d, halved).
TEST(ModelShape, FusedAttentionTakesThePlaceOfTheScoreAndContextGemms) {
  WorkloadConfig c = config(WorkloadKind::kTp, ParallelLayout{2, 1, 1});
  ASSERT_EQ(c.attention, AttentionMode::kFused) << "fused is the default";
  const OpPlan plan = build_plan(c, place_rank(c.layout, 1));
  const std::vector<std::string> names = layer0_mb1_comp_ops(plan);
  const std::vector<std::string> fwd = {"l0.qkv.mb1.fwd", "l0.attention.mb1.fwd",
                                        "l0.attn_layout.mb1.fwd", "l0.out_proj.mb1.fwd"};
  const std::vector<std::string> bwd = {"l0.out_proj.mb1.wgrad", "l0.attention.mb1.bwd",
                                        "l0.attn_layout.mb1.bwd", "l0.qkv.mb1.dgrad"};
  for (const auto& run : {fwd, bwd}) {
    const auto at = std::search(names.begin(), names.end(), run.begin(), run.end());
    EXPECT_NE(at, names.end()) << "in order: " << ::testing::PrintToString(run)
                               << "\nops: " << ::testing::PrintToString(names);
  }
  for (const std::string& n : names) EXPECT_EQ(n.find("attn_scores"), std::string::npos) << n;
  const auto attention = plan.of_kind<PlannedAttention>();
  const ModelShape& s = c.shape;
  ASSERT_EQ(attention.size(), 2u * static_cast<std::size_t>(s.layers) * s.micro_batches);
  for (const PlannedOp* op : attention) {
    const auto& a = op->as<PlannedAttention>();
    EXPECT_EQ(a.heads, s.heads / 2);
    EXPECT_EQ(a.head_dim, s.hidden / s.heads);
    EXPECT_EQ(a.seq, s.seq);
    EXPECT_EQ(a.batch, s.micro_batch);
    EXPECT_TRUE(a.causal);
    const double per_product =
        2.0 * s.micro_batch * (s.heads / 2) * double(s.seq) * s.seq * (s.hidden / s.heads);
    EXPECT_DOUBLE_EQ(op->flops, per_product * (a.backward ? 5 : 2) / 2) << op->name;
    const std::uint64_t x =
        static_cast<std::uint64_t>(s.micro_batch) * s.seq * s.hidden / 2 * dtype_size(s.dtype);
    const std::uint64_t stats =
        static_cast<std::uint64_t>(s.micro_batch) * (s.heads / 2) * s.seq * 4;
    EXPECT_EQ(op->bytes, (a.backward ? 8 : 4) * x + stats) << op->name;
  }
}
// Grouped-query attention: the tiny model's 4 heads sharing 2 key/value heads, over 2 TP ranks:
// each rank has 2 query heads and 1 K/V head; the QKV GEMM is (a + 2·kv)·d/t wide, and the
// fused attention moves the smaller K and V (Y) beside Q, O and their gradients (X).
TEST(ModelShape, GroupedQueryAttentionShrinksKeysAndValuesNotTheProducts) {
  WorkloadConfig c = config(WorkloadKind::kTp, ParallelLayout{2, 1, 1});
  c.shape.kv_heads = 2;
  const ModelShape& s = c.shape;
  const int d = s.hidden / s.heads;
  const std::vector<LayerGemm> gemms = layer_forward_gemms(s, 2);
  ASSERT_EQ(gemms.front().name, "qkv");
  EXPECT_EQ(gemms.front().n, (4 + 2 * 2) * d / 2);
  const OpPlan plan = build_plan(c, place_rank(c.layout, 1));
  const auto attention = plan.of_kind<PlannedAttention>();
  ASSERT_FALSE(attention.empty());
  ModelShape mha = s;
  mha.kv_heads = 0;
  for (const PlannedOp* op : attention) {
    const auto& a = op->as<PlannedAttention>();
    EXPECT_EQ(a.heads, 2);
    EXPECT_EQ(a.kv_heads, 1);
    const std::uint64_t x = static_cast<std::uint64_t>(s.micro_batch) * s.seq * 2 * d * 4;
    const std::uint64_t y = x / 2;
    const std::uint64_t stats = static_cast<std::uint64_t>(s.micro_batch) * 2 * s.seq * 4;
    EXPECT_EQ(op->bytes, (a.backward ? 4 * x + 4 * y : 2 * x + 2 * y) + stats) << op->name;
    // The same FLOPs as multi-head attention: every query head still multiplies. By hand, on a
    // rank's 2 heads: forward QK^T and PV, 2 · 2·b·a·s²·d, causal half: 2 · 2 · 2 · 64² · 32 / 2
    // = 524,288; backward five such products (QK^T again, dV, dP, dQ, dK): 2.5 times that.
    EXPECT_DOUBLE_EQ(op->flops, a.backward ? 1310720.0 : 524288.0) << op->name;
    EXPECT_DOUBLE_EQ(op->flops, layer_attention(mha, 2, a.backward).flops());
  }
}

TEST(DdpBuckets, FirstBucketOneMiBThenCapInReverseOrder) {
  // 10 parameters of 3 MiB: [1 MiB cap → one 3 MiB param], then 25 MiB caps: 9 params of
  // 3 MiB close at 27 MiB (9 params) → buckets of 1 and 9 params.
  std::vector<GradParam> params;
  for (int i = 0; i < 10; ++i) params.push_back({"p" + std::to_string(i), 3ull << 20});
  const auto buckets = assign_buckets(params, kDdpFirstBucketBytes, kDdpDefaultCapBytes);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].bytes, 3ull << 20);
  EXPECT_EQ(buckets[1].bytes, 27ull << 20);
  // The remainder becomes the last bucket.
  params.push_back({"p10", 1ull << 20});
  const auto more = assign_buckets(params, kDdpFirstBucketBytes, kDdpDefaultCapBytes);
  ASSERT_EQ(more.size(), 3u);
  EXPECT_EQ(more[2].bytes, 1ull << 20);
}

TEST(DdpBuckets, PlanAllReducesEachBucketOnceWithCopiesAroundIt) {
  // gpt-1.3b on dp 4: 24 layers × 4 weights and the tied embedding; gradients 2 B each.
  WorkloadConfig c = config(WorkloadKind::kDp, {1, 4, 1});
  c.shape = model_preset("gpt-1.3b");
  c.shape.micro_batches = 2;
  const auto grads = stage_gradients_reversed(c, 0);
  ASSERT_EQ(grads.size(), 97u);
  EXPECT_EQ(grads.front().name, "l23.ffn_down");  // gradient-ready order: last layer first
  EXPECT_EQ(grads.back().name, "embedding");      // tied: the head's gradient joins it, last
  const auto buckets = assign_buckets(grads, kDdpFirstBucketBytes, kDdpDefaultCapBytes);
  // Worked out by hand: per layer, in gradient order, ffn_down and ffn_up 2048 × 8192 × 2 B =
  // 32 MiB each, out_proj 8 MiB, qkv 24 MiB. The first bucket (1 MiB cap) closes on l23's
  // ffn_down; then every 25 MiB bucket closes on ffn_up alone, on out_proj + qkv (32 MiB), on the
  // next layer's ffn_down alone, ...: 3 buckets of 32 MiB per layer, 72 in all. Then the
  // embedding: GPT-2's 50,257 tokens padded to 50,304 (a multiple of 128) × 2048 × 2 B =
  // 206,045,184 B, over the cap alone: a 73rd bucket.
  ASSERT_EQ(buckets.size(), 73u);
  for (std::size_t i = 0; i < 72; ++i) EXPECT_EQ(buckets[i].bytes, 32ull << 20) << "bucket " << i;
  EXPECT_EQ(buckets.back().bytes, 206045184ull);
  std::uint64_t total = 0;
  for (const auto& g : grads) total += g.bytes;
  EXPECT_EQ(total, 24ull * (96ull << 20) + 206045184ull);
  const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
  const auto ars = collectives(plan, CollectiveKind::kAllReduce, Group::kDp);
  ASSERT_EQ(ars.size(), buckets.size());
  std::uint64_t reduced = 0;
  for (std::size_t i = 0; i < ars.size(); ++i) {
    EXPECT_EQ(ars[i]->bytes, buckets[i].bytes) << "bucket " << i;
    reduced += ars[i]->bytes;
  }
  EXPECT_EQ(reduced, total);  // every gradient byte reduced exactly once per step
  // Two D2D copies of every gradient byte (gradient_as_bucket_view=False).
  std::uint64_t copied = 0;
  for (const PlannedOp* op : plan.of_kind<PlannedCopy>()) copied += op->bytes;
  EXPECT_EQ(copied, 2 * total);
  // Bucket all-reduces wait for a gradient (COMP via the MEM copy), never the end of backward:
  // the first one is issued before the last backward GEMM.
  const PlannedOp* last_gemm = plan.of_kind<PlannedGemm>().back();
  EXPECT_LT(ars.front()->id, last_gemm->id);
}

TEST(TensorParallel, TwoAllReducesForwardTwoBackwardPerLayerOfBsh) {
  WorkloadConfig c = config(WorkloadKind::kTp, {4, 1, 1});
  c.shape.micro_batches = 1;
  const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
  const auto ars = collectives(plan, CollectiveKind::kAllReduce, Group::kTp);
  ASSERT_EQ(ars.size(), static_cast<std::size_t>(4 * c.shape.layers));
  const std::uint64_t bsh =
      static_cast<std::uint64_t>(c.shape.micro_batch) * c.shape.seq * c.shape.hidden;
  for (const PlannedOp* op : ars) {
    EXPECT_EQ(op->as<PlannedCollective>().count, bsh);
    EXPECT_EQ(op->bytes, bsh * 4);  // float in the tiny preset
  }
  EXPECT_TRUE(collectives(plan, CollectiveKind::kAllGather, Group::kTp).empty());
}

TEST(TensorParallel, SequenceParallelUsesAllGatherAndReduceScatterOfBshOverT) {
  WorkloadConfig c = config(WorkloadKind::kTp, {4, 1, 1});
  c.shape.micro_batches = 1;
  c.sequence_parallel = true;
  const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
  const std::uint64_t bsh =
      static_cast<std::uint64_t>(c.shape.micro_batch) * c.shape.seq * c.shape.hidden;
  const auto ags = collectives(plan, CollectiveKind::kAllGather, Group::kTp);
  const auto rss = collectives(plan, CollectiveKind::kReduceScatter, Group::kTp);
  EXPECT_TRUE(collectives(plan, CollectiveKind::kAllReduce, Group::kTp).empty());
  ASSERT_EQ(ags.size(), static_cast<std::size_t>(4 * c.shape.layers));
  ASSERT_EQ(rss.size(), static_cast<std::size_t>(4 * c.shape.layers));
  for (const PlannedOp* op : ags) {
    EXPECT_EQ(op->as<PlannedCollective>().count,
              bsh / 4);             // NCCL count: elements each rank contributes
    EXPECT_EQ(op->bytes, bsh * 4);  // S: the full gathered buffer
  }
  for (const PlannedOp* op : rss) {
    EXPECT_EQ(op->as<PlannedCollective>().count, bsh / 4);
    EXPECT_EQ(op->bytes, bsh * 4);
  }
}

TEST(PipelineParallel, ActivationMessagesAreBshElementsToNeighbours) {
  WorkloadConfig c = config(WorkloadKind::kPp, {1, 1, 4});
  const std::uint64_t bsh =
      static_cast<std::uint64_t>(c.shape.micro_batch) * c.shape.seq * c.shape.hidden;
  for (int r = 0; r < 4; ++r) {
    const OpPlan plan = build_plan(c, place_rank(c.layout, r));
    for (const PlannedOp* op : plan.of_kind<PlannedP2P>()) {
      EXPECT_EQ(op->as<PlannedP2P>().count, bsh);
      EXPECT_EQ(op->group(), Group::kPp);
    }
    // A stage computes only its layers: layers / pp of them.
    int layers = 0;
    for (const PlannedOp* op : plan.of_kind<PlannedGemm>()) {
      if (op->name.find(".qkv.mb0.fwd") != std::string::npos) ++layers;
    }
    EXPECT_EQ(layers, c.shape.layers / 4) << "stage " << r;
  }
}

TEST(ZeroThree, GathersParametersPerLayerAndReducesGradientsOnce) {
  WorkloadConfig c = config(WorkloadKind::kDp, {1, 4, 1});
  c.dp_mode = DpMode::kZero;
  c.shape.micro_batches = 2;
  const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
  const std::size_t layers = static_cast<std::size_t>(c.shape.layers);
  // Forward and backward gather every layer once per micro-batch.
  EXPECT_EQ(collectives(plan, CollectiveKind::kAllGather, Group::kDp).size(), 2 * layers * 2);
  // Gradients reduce-scattered once per layer, on the last backward pass.
  const auto rs = collectives(plan, CollectiveKind::kReduceScatter, Group::kDp);
  ASSERT_EQ(rs.size(), layers);
  EXPECT_EQ(rs[0]->as<PlannedCollective>().count, layer_parameters(c.shape, 1) / 4);
  EXPECT_TRUE(collectives(plan, CollectiveKind::kAllReduce, Group::kDp).empty());
}

TEST(NoOverlap, EveryOpWaitsForThePreviousOne) {
  WorkloadConfig c = config(WorkloadKind::kDp, {1, 2, 1});
  const OpPlan overlapped = build_plan(c, place_rank(c.layout, 0));
  c.no_overlap = true;
  const OpPlan serial = build_plan(c, place_rank(c.layout, 0));
  ASSERT_EQ(serial.ops.size(), overlapped.ops.size());
  for (std::size_t i = 1; i < serial.ops.size(); ++i) {
    const PlannedOp& op = serial.ops[i];
    const PlannedOp& prev = serial.ops[i - 1];
    EXPECT_EQ(op.name, overlapped.ops[i].name);
    if (op.stream != prev.stream) {
      EXPECT_NE(std::find(op.deps.begin(), op.deps.end(), prev.id), op.deps.end()) << op.name;
    }
  }
}

TEST(SlowRank, OnlyThatRanksComputeGrowsByTheFactorAndNothingElseChanges) {
  WorkloadConfig c = config(WorkloadKind::kDp, {1, 2, 1});
  c.shape.micro_batches = 2;
  const OpPlan plain = build_plan(c, place_rank(c.layout, 1));
  c.slow_rank = 1;
  c.slow_factor = 2.0;
  const OpPlan slow = build_plan(c, place_rank(c.layout, 1));
  const OpPlan other = build_plan(c, place_rank(c.layout, 0));
  ASSERT_EQ(slow.ops.size(), plain.ops.size());
  ASSERT_EQ(other.ops.size(), plain.ops.size());
  double plain_flops = 0.0, slow_flops = 0.0;
  int gemms = 0;
  for (std::size_t i = 0; i < plain.ops.size(); ++i) {
    const PlannedOp& p = plain.ops[i];
    const PlannedOp& q = slow.ops[i];
    EXPECT_EQ(q.name, p.name);
    EXPECT_EQ(q.deps, p.deps) << p.name;  // the same dependencies: only durations change
    // Rank 0 is not the slow rank: its plan is rank 1's unslowed plan's twin.
    EXPECT_EQ(other.ops[i].bytes, p.bytes) << p.name;
    if (p.stream != Category::kComp) {
      EXPECT_EQ(q.bytes, p.bytes) << p.name;  // communication and copies keep their sizes
      continue;
    }
    plain_flops += p.flops;
    slow_flops += q.flops;
    if (p.is<PlannedGemm>()) {
      ++gemms;
      EXPECT_EQ(q.as<PlannedGemm>().m, 2 * p.as<PlannedGemm>().m) << p.name;
      EXPECT_EQ(q.as<PlannedGemm>().n, p.as<PlannedGemm>().n) << p.name;
      EXPECT_DOUBLE_EQ(q.flops, 2 * p.flops) << p.name;
    } else if (p.is<PlannedElementwise>() || p.is<PlannedAdamw>()) {
      EXPECT_EQ(q.bytes, 2 * p.bytes) << p.name;
    } else if (p.is<PlannedAttention>()) {
      const PlannedAttention& a = p.as<PlannedAttention>();
      const PlannedAttention& b = q.as<PlannedAttention>();
      EXPECT_EQ(b.batch * b.heads, 2 * a.batch * a.heads) << p.name;
      EXPECT_EQ(b.seq, a.seq) << p.name;
    }
  }
  EXPECT_GT(gemms, 0);
  EXPECT_DOUBLE_EQ(slow_flops, 2 * plain_flops);
}

TEST(SlowRank, AttentionGrowsByWholeKeyValueGroupsAndRoundsFactors) {
  PlannedOp op;
  op.stream = Category::kComp;
  PlannedAttention a;
  a.heads = 8;
  a.kv_heads = 2;  // 4 query heads per group
  op.call = a;
  op.flops = 100.0;
  OpPlan plan;
  plan.add(op, {});
  const PlannedAttention b = slowed(plan, 1.5).ops[0].as<PlannedAttention>();
  EXPECT_EQ(b.kv_heads, 3);
  EXPECT_EQ(b.heads, 12);
  EXPECT_DOUBLE_EQ(slowed(plan, 1.5).ops[0].flops, 150.0);
  // A GEMM of 3 rows at x1.5 rounds to 5 (4.5 rounds half away from zero); its FLOPs follow
  // the rows it got, not the factor asked for.
  PlannedOp g;
  g.stream = Category::kComp;
  g.call = PlannedGemm{3, 4, 5};
  g.flops = 2.0 * 3 * 4 * 5;
  OpPlan gp;
  gp.add(g, {});
  const PlannedOp s = slowed(gp, 1.5).ops[0];
  EXPECT_EQ(s.as<PlannedGemm>().m, 5);
  EXPECT_DOUBLE_EQ(s.flops, 2.0 * 5 * 4 * 5);
}

TEST(Offload, ActivationsGoToHostAfterForwardAndBackBeforeBackward) {
  WorkloadConfig c = config(WorkloadKind::kDp, {1, 1, 1});
  c.offload = true;
  c.shape.micro_batches = 1;
  const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
  int d2h = 0;
  int h2d = 0;
  for (const PlannedOp* op : plan.of_kind<PlannedCopy>()) {
    d2h += op->as<PlannedCopy>().kind == CopyKind::kDeviceToHost;
    h2d += op->as<PlannedCopy>().kind == CopyKind::kHostToDevice;
    EXPECT_EQ(op->bytes, activation_bytes(c.shape));
    EXPECT_EQ(op->stream, Category::kMem);
  }
  EXPECT_EQ(d2h, c.shape.layers);
  EXPECT_EQ(h2d, c.shape.layers);
}

TEST(OpPlan, PrintsOneLinePerOp) {
  WorkloadConfig c = config(WorkloadKind::kTp, {2, 1, 1});
  const OpPlan plan = build_plan(c, place_rank(c.layout, 1));
  std::ostringstream os;
  print_plan(os, plan);
  const std::string text = os.str();
  EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), plan.ops.size());
  EXPECT_NE(text.find("allreduce on tp"), std::string::npos);
}

}  // namespace
}  // namespace commprof
