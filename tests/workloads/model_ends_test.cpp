// SPDX-License-Identifier: MIT
// The model's ends (embedding, final norm, LM head, loss) and the layers' split over pipeline
// stages, against numbers worked out by hand from docs/workloads.md and Megatron-Core's rules.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "src/core/errors.hpp"
#include "workloads/model_parameters.hpp"
#include "workloads/stage_split.hpp"
#include "workloads/workload.hpp"

namespace commprof {
namespace {

ModelShape small_with_ends() {
  ModelShape s = model_preset("tiny");  // 4 layers, h 128, 4 heads, ffn 512, seq 64, float
  s.vocab = 1000;
  s.micro_batches = 2;
  return s;
}

WorkloadConfig config(ParallelLayout layout, ModelShape s) {
  WorkloadConfig c;
  c.kind = WorkloadKind::kHybrid;
  c.shape = s;
  c.layout = layout;
  return c;
}

std::vector<const PlannedOp*> named(const OpPlan& plan, const std::string& part) {
  std::vector<const PlannedOp*> out;
  for (const PlannedOp& op : plan.ops) {
    if (op.name.find(part) != std::string::npos) out.push_back(&op);
  }
  return out;
}

TEST(ModelEnds, VocabularyPaddedAsMegatronPadsIt) {
  ModelShape g = model_preset("gpt-1.3b");
  EXPECT_EQ(g.vocab, 50257);
  EXPECT_TRUE(g.tie_embeddings);
  EXPECT_EQ(vocab_per_rank(g, 1), 50304u);      // 393 × 128
  EXPECT_EQ(vocab_per_rank(g, 2), 50432u / 2);  // 197 × 256
  EXPECT_EQ(vocab_per_rank(g, 4), 50688u / 4);  // 99 × 512
  ModelShape l = model_preset("llama-8b");
  EXPECT_EQ(l.vocab, 128256);
  EXPECT_FALSE(l.tie_embeddings);
  EXPECT_EQ(vocab_per_rank(l, 1), 128256u);                // already 1002 × 128
  EXPECT_EQ(vocab_per_rank(l, 8), 129024u / 8);            // 126 × 1024
  EXPECT_EQ(vocab_per_rank(model_preset("tiny"), 1), 0u);  // no ends
}

// --make-vocab-size-divisible-by N: a multiple of N·tp; 1 keeps GPT-2's 50,257 on one rank and
// pads to a multiple of tp beyond it (50,258 = 2 × 25,129); 64 on tp 2 is 128 again.
TEST(ModelEnds, VocabularyPaddingFollowsMakeVocabSizeDivisibleBy) {
  ModelShape g = model_preset("gpt-1.3b");
  g.vocab_divisible_by = 1;
  EXPECT_EQ(vocab_per_rank(g, 1), 50257u);
  EXPECT_EQ(vocab_per_rank(g, 2), 25129u);
  EXPECT_EQ(vocab_per_rank(g, 4), 50260u / 4);  // 12,565 × 4
  g.vocab_divisible_by = 64;
  EXPECT_EQ(vocab_per_rank(g, 2), 50304u / 2);  // 393 × 128
  EXPECT_EQ(head_gemm(g, 1).n, 50304);          // 786 × 64: the LM head's GEMM at that shape
}

TEST(ModelEnds, ParametersOfTheEndsAndTheWholeModel) {
  // gpt-1.3b, tied: the embedding once (50304 × 2048), the final LayerNorm's weight and bias.
  const ModelShape g = model_preset("gpt-1.3b");
  const EndParameters e = end_parameters(g, 1);
  EXPECT_EQ(e.embedding, 50304ull * 2048);
  EXPECT_EQ(e.final_norm, 2ull * 2048);
  EXPECT_EQ(e.head, 0u);
  // Per layer: 12h² weights, biases 3h + h + 4h + h, two LayerNorms 4h.
  const std::uint64_t h = 2048, layer = 12 * h * h + 9 * h + 4 * h;
  EXPECT_EQ(model_parameters(g, 1), 24 * layer + 50304 * h + 2 * h);
  // Llama 3.2 1B, tied: 16 layers of 60,821,504 and the embedding, Meta's published
  // 1,235,814,400.
  EXPECT_EQ(model_parameters(model_preset("llama-1b"), 1), 1235814400ull);
  // Untied on two TP ranks: each holds half the rows of both matrices.
  ModelShape u = g;
  u.tie_embeddings = false;
  EXPECT_EQ(end_parameters(u, 2).embedding, 25216ull * 2048);
  EXPECT_EQ(end_parameters(u, 2).head, 25216ull * 2048);
}

TEST(ModelEnds, BytesOfTheEndsOpsByHand) {
  // tiny with 1000 tokens (padded to 1024), float: N = 64 tokens, h = 128, E = 4.
  const ModelShape s = small_with_ends();
  const std::uint64_t n = 64, a = 64 * 128 * 4, rows = 1024 * 128 * 4, logits = 64 * 1024;
  const EndPasses p = end_passes(s, 1, false);
  EXPECT_EQ(p.embed_fwd.read, 8 * n + a);  // the int64 ids and the rows looked up
  EXPECT_EQ(p.embed_fwd.write, a);
  EXPECT_EQ(p.embed_mask.read, 0u);  // one TP rank: nothing to mask
  // The gradient of the rows zeroed (R), the ids sorted, fp32 sums per id, scattered back.
  EXPECT_EQ(p.embed_bwd.read, a + 64 * n + 4 * n * 128);
  EXPECT_EQ(p.embed_bwd.write, rows + 64 * n + 4 * n * 128);
  EXPECT_EQ(p.final_norm_fwd.read, a);
  EXPECT_EQ(p.final_norm_bwd.read, 4 * a);
  // logits.float() (read 4L... here E = 4 too), log_softmax, nll_loss's labels and values.
  EXPECT_EQ(p.loss_fwd.read, 4 * logits + 4 * logits + 8 * n + 4 * n);
  EXPECT_EQ(p.loss_fwd.write, 8 * logits);
  EXPECT_EQ(p.loss_bwd.read, 12 * logits + 8 * n);
  EXPECT_EQ(p.loss_bwd.write, 8 * logits + 4 * logits);
  EXPECT_EQ(p.embed_grad_accum.read, 2 * rows);
  EXPECT_EQ(p.head_grad_accum.write, rows);  // untied: the head's gradient accumulates too
  // Two TP ranks: half the rows and logits each, and Megatron's mask of foreign tokens.
  const EndPasses t = end_passes(s, 2, false);
  EXPECT_EQ(t.embed_mask.read, 16 * n + a);
  EXPECT_EQ(t.loss_fwd.write, 8 * logits / 2);
  // The head GEMM: b·s × V/t × h.
  const LayerGemm head = head_gemm(s, 2);
  EXPECT_EQ(head.m, 64);
  EXPECT_EQ(head.n, 512);
  EXPECT_EQ(head.k, 128);
}

// The head's three GEMMs in the layouts PyTorch's F.linear and its autograd run them (column-
// major, as cuBLAS sees them): forward logits (V/t × b·s) = Wᵀ·x (TN), input gradient (h × b·s)
// = W·dy (NN), weight gradient (h × V/t) = x·dyᵀ (NT). The vocabulary is a leading dimension in
// all three, as it is in PyTorch: unpadded, cuBLAS serves it with slower kernels.
TEST(ModelEnds, TheHeadsGemmsRunInPyTorchsLayouts) {
  const WorkloadConfig c = config({2, 1, 1}, small_with_ends());  // V 1000 -> 1024, 512 per rank
  const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
  auto gemm = [&](const std::string& name) {
    for (const PlannedOp& op : plan.ops) {
      if (op.name == name) return op.as<PlannedGemm>();
    }
    ADD_FAILURE() << "no op " << name;
    return PlannedGemm{};
  };
  const PlannedGemm fwd = gemm("head.mb0.fwd"), dgrad = gemm("head.mb0.dgrad"),
                    wgrad = gemm("head.mb0.wgrad");
  EXPECT_EQ(fwd.m, 512);  // V/t
  EXPECT_EQ(fwd.n, 64);   // b·s
  EXPECT_EQ(fwd.k, 128);  // h
  EXPECT_TRUE(fwd.trans_a);
  EXPECT_FALSE(fwd.trans_b);
  EXPECT_EQ(dgrad.m, 128);
  EXPECT_EQ(dgrad.n, 64);
  EXPECT_EQ(dgrad.k, 512);
  EXPECT_FALSE(dgrad.trans_a);
  EXPECT_FALSE(dgrad.trans_b);
  EXPECT_EQ(wgrad.m, 128);
  EXPECT_EQ(wgrad.n, 512);
  EXPECT_EQ(wgrad.k, 64);
  EXPECT_FALSE(wgrad.trans_a);
  EXPECT_TRUE(wgrad.trans_b);
}

TEST(ModelEnds, FirstStageHoldsTheEmbeddingLastTheHeadAndLoss) {
  const WorkloadConfig c = config({1, 1, 4}, small_with_ends());
  for (int r = 0; r < 4; ++r) {
    const OpPlan plan = build_plan(c, place_rank(c.layout, r));
    // Two micro-batches: one forward and one backward of each end per micro-batch.
    // The head: a forward GEMM and two backward ones per micro-batch. The second micro-batch's
    // gradients are added to the first's, the embedding's and the untied head's.
    EXPECT_EQ(named(plan, "embedding.mb").size(), r == 0 ? 4u : 0u) << "stage " << r;
    EXPECT_EQ(named(plan, "embedding.grad_accum.mb1").size(), r == 0 ? 1u : 0u) << "stage " << r;
    EXPECT_EQ(named(plan, "head.mb").size(), r == 3 ? 2u * 3u : 0u) << "stage " << r;
    EXPECT_EQ(named(plan, "head.grad_accum.mb1").size(), r == 3 ? 1u : 0u) << "stage " << r;
    EXPECT_EQ(named(plan, "loss.mb").size(), r == 3 ? 4u : 0u) << "stage " << r;
    EXPECT_EQ(named(plan, "final_norm.mb").size(), r == 3 ? 4u : 0u) << "stage " << r;
  }
}

TEST(ModelEnds, TiedEmbeddingsSumTheirGradientOnTheFirstAndLastStageOnly) {
  ModelShape s = small_with_ends();
  s.tie_embeddings = true;
  WorkloadConfig c = config({2, 2, 4}, s);  // 16 ranks: tp 2, dp 2, pp 4
  for (int rank = 0; rank < 16; ++rank) {
    const RankPlace place = place_rank(c.layout, rank);
    const OpPlan plan = build_plan(c, place);
    std::vector<const PlannedOp*> tied;
    for (const PlannedOp* op : plan.of_kind<PlannedCollective>()) {
      if (op->group() == Group::kEmbedding) tied.push_back(op);
    }
    const bool ends = place.pp_rank == 0 || place.pp_rank == 3;
    ASSERT_EQ(tied.size(), ends ? 1u : 0u) << "rank " << rank;
    if (!ends) continue;
    // The rank's rows of the embedding: 1024 / 2 × 128 floats; after the DP buckets' sync and
    // before the optimizer.
    EXPECT_EQ(tied[0]->as<PlannedCollective>().count, 512u * 128u);
    EXPECT_EQ(tied[0]->bytes, 512u * 128u * 4u);
    EXPECT_EQ(place.embedding_group, (std::vector<int>{rank % 4, 12 + rank % 4}));
    const PlannedOp& adamw = *plan.of_kind<PlannedAdamw>().front();
    EXPECT_NE(std::find(adamw.deps.begin(), adamw.deps.end(), tied[0]->id), adamw.deps.end());
  }
  // One stage holding both ends needs no sum: the head's gradient is the embedding's.
  c.layout = {1, 2, 1};
  const OpPlan one_stage = build_plan(c, place_rank(c.layout, 0));  // outlives the loop below
  for (const PlannedOp* op : one_stage.of_kind<PlannedCollective>())
    EXPECT_NE(op->group(), Group::kEmbedding);
}

TEST(ModelEnds, VocabParallelCollectivesOverTp) {
  // tp 2: the embedding's outputs summed (b·s·h), the loss's row maxima, target logits and sums
  // of exponentials (b·s fp32 each), the head's input gradient summed in backward.
  WorkloadConfig c = config({2, 1, 1}, small_with_ends());
  const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
  std::map<std::string, const PlannedOp*> by_name;
  for (const PlannedOp* op : plan.of_kind<PlannedCollective>()) by_name[op->name] = op;
  ASSERT_TRUE(by_name.count("embedding.mb0.ar"));
  EXPECT_EQ(by_name["embedding.mb0.ar"]->bytes, 64u * 128u * 4u);
  for (const char* what : {"max", "target", "sum_exp"}) {
    const std::string name = std::string("loss.") + what + ".mb1.ar";
    ASSERT_TRUE(by_name.count(name)) << name;
    EXPECT_EQ(by_name[name]->as<PlannedCollective>().count, 64u);
    EXPECT_EQ(by_name[name]->bytes, 64u * 4u);
  }
  ASSERT_TRUE(by_name.count("head.bwd.mb0.ar"));
  EXPECT_EQ(by_name["head.bwd.mb0.ar"]->bytes, 64u * 128u * 4u);
  // Sequence parallelism: the embedding reduce-scattered, the head's input gathered.
  c.sequence_parallel = true;
  by_name.clear();
  const OpPlan sp = build_plan(c, place_rank(c.layout, 0));
  for (const PlannedOp* op : sp.of_kind<PlannedCollective>()) by_name[op->name] = op;
  ASSERT_TRUE(by_name.count("embedding.mb0.rs"));
  ASSERT_TRUE(by_name.count("head.mb0.ag"));
  EXPECT_EQ(by_name["head.mb0.ag"]->as<PlannedCollective>().count, 64u * 128u / 2);
}

TEST(StageSplit, EvenByDefaultWithTheEndsCountedWhereAsked) {
  const StageSplitOptions none;
  EXPECT_EQ(virtual_stage_layers(8, 4, 1, none), (std::vector<int>{2, 2, 2, 2}));
  StageSplitOptions ends;
  ends.account_for_embedding = true;
  ends.account_for_loss = true;
  // 30 layers + 2 = 32 over 4 stages: the first and the last give one up to the ends.
  EXPECT_EQ(virtual_stage_layers(30, 4, 1, ends), (std::vector<int>{7, 8, 8, 7}));
  // Interleaved, 2 stages × 2 chunks, 14 + 2 over 4 virtual stages.
  EXPECT_EQ(virtual_stage_layers(14, 2, 2, ends), (std::vector<int>{3, 4, 4, 3}));
  const auto chunks = stage_chunks(14, 2, 2, 1, true, ends);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].first_layer, 3);  // virtual stage 1
  EXPECT_EQ(chunks[0].layers, 4);
  EXPECT_EQ(chunks[1].first_layer, 11);  // virtual stage 3: the model's last layers, then the loss
  EXPECT_TRUE(chunks[1].head);
  EXPECT_FALSE(chunks[0].head);
  EXPECT_TRUE(stage_chunks(14, 2, 2, 0, true, ends)[0].embedding);
  EXPECT_FALSE(stage_chunks(14, 2, 2, 0, false, ends)[0].embedding);  // a model without ends
}

TEST(StageSplit, ExplicitListsAndRefusals) {
  StageSplitOptions o;
  o.layers = parse_layer_list("3,5");
  EXPECT_EQ(virtual_stage_layers(8, 2, 1, o), (std::vector<int>{3, 5}));
  EXPECT_EQ(stage_chunks(8, 2, 1, 1, true, o)[0].first_layer, 3);
  auto message = [](int layers, int stages, int chunks, const StageSplitOptions& opt) {
    try {
      virtual_stage_layers(layers, stages, chunks, opt);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message(9, 2, 1, o), "--pp-layers adds up to 8 layers, but the model has 9");
  EXPECT_EQ(message(8, 4, 1, o), "--pp-layers has 2 entries, but --pp 4 makes 4 stages");
  o.account_for_loss = true;
  EXPECT_EQ(message(8, 2, 1, o),
            "--pp-layers gives every stage's layers: it does not go with --account-for-embedding "
            "or --account-for-loss");
  StageSplitOptions even;
  EXPECT_EQ(message(6, 4, 1, even), "--layers 6 is not divisible by --pp 4");
  even.account_for_embedding = true;
  EXPECT_EQ(message(6, 2, 2, even),
            "--layers 6 + 1 (--account-for-embedding) is not divisible by --pp 2 x "
            "--virtual-stages 2");
  EXPECT_THROW(parse_layer_list("3,,5"), ConfigError);
  EXPECT_THROW(parse_layer_list("3,x"), ConfigError);
}

TEST(StageSplit, UnevenStagesComputeTheirOwnLayers) {
  WorkloadConfig c = config({1, 1, 2}, small_with_ends());
  c.split.layers = {1, 3};
  int layers[2] = {0, 0};
  for (int r = 0; r < 2; ++r) {
    const OpPlan plan = build_plan(c, place_rank(c.layout, r));  // outlives the loop below
    for (const PlannedOp* op : plan.of_kind<PlannedGemm>()) {
      if (op->name.find(".qkv.mb0.fwd") != std::string::npos) ++layers[r];
    }
  }
  EXPECT_EQ(layers[0], 1);
  EXPECT_EQ(layers[1], 3);
}

}  // namespace
}  // namespace commprof
