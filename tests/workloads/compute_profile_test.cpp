// SPDX-License-Identifier: MIT
// --compute-from: what is learned from a traced step, and the plan built from it.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "workloads/compute_profile.hpp"
#include "workloads/workload.hpp"

namespace commprof {
namespace {

// Appends COMP ops back to back from `*t`, each `us` microseconds long.
void kernels(StepRecord& step, std::int64_t* t, const std::vector<std::string>& names,
             std::int64_t us) {
  for (const std::string& name : names) {
    OpRecord op;
    op.name = name;
    op.category = Category::kComp;
    op.start_ns = *t;
    op.end_ns = *t + us * 1000;
    *t = op.end_ns + 500;  // a launch gap: idle time is not kernel time
    step.ops.push_back(op);
  }
}

// One layer's kernels as nsys's shortName gives them: 8 forward, 12 backward of which every third
// is a recognised backward kernel.
const std::vector<std::string> kLayerForward = {"vectorized_layer_norm_kernel",
                                                "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT",
                                                "flash_fwd_kernel",
                                                "nvjet_tst_64x8_64x16_4x1_v_bz_TNT",
                                                "elementwise_kernel",
                                                "nvjet_tst_256x128_64x4_2x1_v_bz_coopB_TNT",
                                                "vectorized_elementwise_kernel",
                                                "nvjet_tst_128x128_64x4_1x2_h_bz_TNT"};
const std::vector<std::string> kLayerBackward = {
    "nvjet_tst_a", "nvjet_tst_b", "GammaBetaBackwardCUDAKernel",
    "nvjet_tst_c", "nvjet_tst_d", "layer_norm_grad_input_kernel",
    "nvjet_tst_e", "nvjet_tst_f", "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel",
    "nvjet_tst_g", "nvjet_tst_h", "cudnn_generated_fort_native_sdpa_sm90_flash_bprop"};

// A PyTorch-like step of `layers` layers and `mbs` micro-batches, with names as nsys's
// shortName gives them: per layer forward 8 ops of 10 µs, backward 12 ops of 20 µs of which
// every third is a recognised backward kernel; the loss's forward (2 ops of 5 µs) and its
// backward (1 op of 5 µs), neither recognisable; an optimizer of 3 ops of 100 µs; a NCCL kernel
// on COMM that is not compute. What the names cannot tell: the loss's backward and the last
// layer's first two backward GEMMs, before its first recognised kernel, are counted forward.
StepRecord torch_like_step(int layers, int mbs, std::int64_t origin) {
  StepRecord step;
  std::int64_t t = origin;
  step.start_ns = t;
  for (int mb = 0; mb < mbs; ++mb) {
    for (int l = 0; l < layers; ++l) kernels(step, &t, kLayerForward, 10);
    kernels(step, &t, {"reduce_kernel", "elementwise_kernel"}, 5);
    kernels(step, &t, {"elementwise_kernel"}, 5);  // starts the backward: unmarked
    for (int l = 0; l < layers; ++l) kernels(step, &t, kLayerBackward, 20);
  }
  kernels(step, &t, {"multi_tensor_apply_kernel", "multi_tensor_apply_kernel", "FusedAdamW"}, 100);
  OpRecord nccl;
  nccl.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
  nccl.category = Category::kComm;
  nccl.start_ns = origin;
  nccl.end_ns = t;
  step.ops.push_back(nccl);
  step.end_ns = t;
  return step;
}

TEST(ComputeProfile, LearnsForwardBackwardAndOptimizerFromKernelNames) {
  RankTimeline rank;
  rank.steps.push_back(torch_like_step(3, 2, 0));
  rank.steps.push_back(torch_like_step(3, 2, 1'000'000'000));
  const ComputeProfile p = learn_compute_profile({rank}, 3, "trace");
  EXPECT_EQ(p.samples, 2);
  EXPECT_EQ(p.micro_batches, 2);
  EXPECT_TRUE(p.split_by_names);
  // Per step: forward 2 × (3 × 8 × 10 + 2 × 5 + 5 + 2 × 20) µs = 590 µs; backward
  // 2 × (3 × 12 × 20 − 2 × 20) µs = 1360 µs; optimizer 300 µs; the NCCL kernel and the gaps
  // count nowhere.
  EXPECT_DOUBLE_EQ(p.forward_ns, 590'000);
  EXPECT_DOUBLE_EQ(p.backward_ns, 1'360'000);
  EXPECT_DOUBLE_EQ(p.optimizer_ns, 300'000);
  EXPECT_DOUBLE_EQ(p.kernel_ns(), 2'250'000);
  EXPECT_DOUBLE_EQ(p.layer_forward_ns(), 590'000.0 / 6);
  EXPECT_DOUBLE_EQ(p.layer_backward_ns(), 1'360'000.0 / 6);
  EXPECT_NE(describe(p).find("2 micro-batch(es) x 3 layers"), std::string::npos) << describe(p);
}

TEST(ComputeProfile, AveragesOverRanksAndLeavesWarmupOut) {
  RankTimeline a, b;
  a.steps.push_back(torch_like_step(2, 1, 0));
  a.steps.back().warmup = true;
  a.steps.back().ops.front().end_ns += 1'000'000'000;  // a slow warm-up step must not count
  a.steps.push_back(torch_like_step(2, 1, 1'000'000'000));
  b.rank = 1;
  b.steps.push_back(torch_like_step(2, 1, 0));
  for (OpRecord& op : b.steps.back().ops) op.end_ns += 1000;  // every op of rank 1 1 µs longer
  const ComputeProfile p = learn_compute_profile({a, b}, 2, "trace");
  EXPECT_EQ(p.samples, 2);
  // forward: (2 × 8 × 10 + 10 + 5 + 40) µs = 215 µs on rank 0, + 21 ops × 1 µs on rank 1:
  // mean 225.5 µs. backward: (2 × 12 × 20 − 40) µs = 440 µs, + 22 µs on rank 1: mean 451 µs.
  EXPECT_DOUBLE_EQ(p.forward_ns, 225'500);
  EXPECT_DOUBLE_EQ(p.backward_ns, 451'000);
  EXPECT_DOUBLE_EQ(p.optimizer_ns, 301'500);
}

TEST(ComputeProfile, WithoutBackwardNamesSplitsOneToTwo) {
  RankTimeline rank;
  StepRecord step;
  std::int64_t t = 0;
  kernels(step, &t, std::vector<std::string>(30, "sm90_xmma_gemm_bf16bf16"), 10);
  kernels(step, &t, {"adam_update"}, 60);
  rank.steps.push_back(step);
  const ComputeProfile p = learn_compute_profile({rank}, 5, "trace");
  EXPECT_FALSE(p.split_by_names);
  EXPECT_EQ(p.micro_batches, 1);
  EXPECT_DOUBLE_EQ(p.forward_ns, 100'000);
  EXPECT_DOUBLE_EQ(p.backward_ns, 200'000);
  EXPECT_DOUBLE_EQ(p.optimizer_ns, 60'000);
  EXPECT_NE(describe(p).find("split 1 : 2"), std::string::npos);
}

TEST(ComputeProfile, NothingToLearnIsAConfigError) {
  RankTimeline rank;
  EXPECT_THROW(learn_compute_profile({rank}, 2, "empty"), ConfigError);
  StepRecord only_comm = torch_like_step(1, 1, 0);
  only_comm.ops.erase(only_comm.ops.begin(), only_comm.ops.end() - 1);
  rank.steps.push_back(only_comm);
  EXPECT_THROW(learn_compute_profile({rank}, 2, "comm only"), ConfigError);
  rank.steps.push_back(torch_like_step(1, 1, 0));
  EXPECT_THROW(learn_compute_profile({rank}, 0, "no layers"), ConfigError);
}

// A PyTorch step of a model with its ends, kernel names as the H100 trace of llama-1b with ends
// shows them (tests/data/nsys-torch-llama1b-ends-1xh100/README.md), per micro-batch: the
// embedding's gather (7 µs), the layers as torch_like_step's, the head's GEMM (30 µs), a cast
// (5 µs), softmax and NLL forward (40, 3 µs) and a scale (1 µs); the NLL and softmax backward (2,
// 40 µs), a cast (5 µs), the head's two GEMMs (30 µs each); the layers backward; the embedding's
// gradient (1 + 6 + 6 + 1 + 60 µs). Then the optimizer; a 500 ns gap after every kernel.
StepRecord torch_step_with_ends(int layers, int mbs, std::int64_t origin) {
  StepRecord step;
  std::int64_t t = origin;
  step.start_ns = t;
  for (int mb = 0; mb < mbs; ++mb) {
    kernels(step, &t, {"vectorized_gather_kernel"}, 7);
    for (int l = 0; l < layers; ++l) kernels(step, &t, kLayerForward, 10);
    kernels(step, &t, {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"}, 30);
    kernels(step, &t, {"elementwise_kernel"}, 5);
    kernels(step, &t, {"cunn_SoftMaxForward"}, 40);
    kernels(step, &t, {"nll_loss_forward_reduce_cuda_kernel_2d"}, 3);
    kernels(step, &t, {"vectorized_elementwise_kernel"}, 1);
    kernels(step, &t, {"nll_loss_backward_reduce_cuda_kernel_2d"}, 2);
    kernels(step, &t, {"cunn_SoftMaxBackward"}, 40);
    kernels(step, &t, {"elementwise_kernel"}, 5);
    kernels(step, &t, {"nvjet_sm90_tst_dgrad", "nvjet_sm90_tst_wgrad"}, 30);
    for (int l = 0; l < layers; ++l) kernels(step, &t, kLayerBackward, 20);
    kernels(step, &t, {"elementwise_kernel_with_index"}, 1);
    kernels(step, &t, {"DeviceRadixSortOnesweepKernel", "DeviceRadixSortOnesweepKernel"}, 6);
    kernels(step, &t, {"krn_partials_per_segment"}, 1);
    kernels(step, &t, {"sum_and_scatter"}, 60);
  }
  kernels(step, &t, {"multi_tensor_apply_kernel", "multi_tensor_apply_kernel", "FusedAdamW"}, 100);
  step.end_ns = t;
  return step;
}

TEST(ComputeProfile, TellsTheModelsEndsApartFromTheLayers) {
  RankTimeline rank;
  rank.steps.push_back(torch_step_with_ends(3, 2, 0));
  const ComputeProfile p = learn_compute_profile({rank}, 3, "trace");
  EXPECT_EQ(p.micro_batches, 2);
  ASSERT_TRUE(p.has_ends());
  // Per step, 2 micro-batches: embedding 2 × 7 µs forward, 2 × (1 + 12 + 1 + 60) µs backward;
  // head and loss 2 × (30 + 5 + 40 + 3 + 1) µs forward, 2 × (2 + 40 + 5 + 60) µs backward; the
  // layers exactly theirs: 2 × 3 × 8 × 10 µs forward, 2 × 3 × 12 × 20 µs backward.
  EXPECT_DOUBLE_EQ(p.ends.embedding_forward_ns, 14'000);
  EXPECT_DOUBLE_EQ(p.ends.embedding_backward_ns, 148'000);
  EXPECT_DOUBLE_EQ(p.ends.head_forward_ns, 158'000);
  EXPECT_DOUBLE_EQ(p.ends.head_backward_ns, 214'000);
  EXPECT_DOUBLE_EQ(p.forward_ns, 480'000);
  EXPECT_DOUBLE_EQ(p.backward_ns, 1'440'000);
  EXPECT_DOUBLE_EQ(p.optimizer_ns, 300'000);
  // Idle: a 500 ns gap after each of the step's 2 × (1 + 24 + 10 + 36 + 5) + 3 = 155 kernels.
  EXPECT_DOUBLE_EQ(p.idle_ns, 155 * 500.0);
  EXPECT_NE(describe(p).find("the model's ends 0.534 ms per step"), std::string::npos)
      << describe(p);
  // The same step without recognisable ends (torch_like_step) has none, and says so.
  RankTimeline plain;
  plain.steps.push_back(torch_like_step(3, 2, 0));
  const ComputeProfile q = learn_compute_profile({plain}, 3, "trace");
  EXPECT_FALSE(q.has_ends());
  EXPECT_NE(describe(q).find("no ends (embedding, LM head, loss) recognised"), std::string::npos);
}

// The step's gaps go to the part of the kernel after each: torch_step_with_ends has a 500 ns gap
// after every kernel, so each part gets 500 ns per kernel of its own, but the step's first kernel
// (the embedding's, with nothing before it), whose part takes the gap after the last kernel
// instead.
TEST(ComputeProfile, GapsGoToThePartOfTheKernelAfterThem) {
  RankTimeline rank;
  rank.steps.push_back(torch_step_with_ends(3, 2, 0));
  const ComputeProfile p = learn_compute_profile({rank}, 3, "trace");
  // Kernels per step, 2 micro-batches: embedding 2 × 1 forward, 2 × 5 backward; head and loss
  // 2 × 5 each way; layers 2 × 3 × 8 forward, 2 × 3 × 12 backward; optimizer 3.
  EXPECT_DOUBLE_EQ(gap_of(p, ComputePart::kEmbeddingForward), 2 * 500.0);
  EXPECT_DOUBLE_EQ(gap_of(p, ComputePart::kEmbeddingBackward), 10 * 500.0);
  EXPECT_DOUBLE_EQ(gap_of(p, ComputePart::kHeadForward), 10 * 500.0);
  EXPECT_DOUBLE_EQ(gap_of(p, ComputePart::kHeadBackward), 10 * 500.0);
  EXPECT_DOUBLE_EQ(gap_of(p, ComputePart::kForward), 48 * 500.0);
  EXPECT_DOUBLE_EQ(gap_of(p, ComputePart::kBackward), 72 * 500.0);
  EXPECT_DOUBLE_EQ(gap_of(p, ComputePart::kOptimizer), 3 * 500.0);
  EXPECT_DOUBLE_EQ(p.gaps_total(), p.idle_ns);  // no copy or collective in this trace
  EXPECT_NE(describe(p).find(
                "gaps (no compute or communication op running) 0.077 ms: before forward 0.024"),
            std::string::npos)
      << describe(p);

  // A collective running through a gap covers it: not a gap to replay (the run's own collectives
  // take that time). A memset alone in a gap is the trace's, which the run does not issue: the
  // gap stays, though it is not idle.
  StepRecord step = torch_step_with_ends(3, 2, 0);
  const OpRecord& first = step.ops[0];  // the embedding's gather, then a 500 ns gap
  OpRecord nccl;
  nccl.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
  nccl.category = Category::kComm;
  nccl.start_ns = first.end_ns;
  nccl.end_ns = first.end_ns + 500;
  OpRecord memset = nccl;
  memset.name = "Memset";
  memset.category = Category::kMem;
  memset.start_ns = step.ops[1].end_ns;  // in the gap after the second kernel (a forward one)
  memset.end_ns = memset.start_ns + 500;
  step.ops.push_back(nccl);
  step.ops.push_back(memset);
  RankTimeline covered;
  covered.steps.push_back(step);
  const ComputeProfile q = learn_compute_profile({covered}, 3, "trace");
  EXPECT_DOUBLE_EQ(gap_of(q, ComputePart::kForward), 47 * 500.0);
  EXPECT_DOUBLE_EQ(q.gaps_total(), 154 * 500.0);
  EXPECT_DOUBLE_EQ(q.idle_ns, 153 * 500.0);
}

// The plan replays the gaps before the ops of their parts: per layer and micro-batch before the
// attention's forward and the FFN's backward, per micro-batch before each end, the optimizer's
// before it, not divided by TP; a step's gaps add up to the traced step's. --no-host-gaps leaves
// them out.
TEST(ComputeProfile, PlanReplaysTheGapsBeforeTheirParts) {
  RankTimeline rank;
  rank.steps.push_back(torch_step_with_ends(4, 2, 0));
  WorkloadConfig c;
  c.kind = WorkloadKind::kDp;
  c.shape = model_preset("tiny");  // 4 layers, 4 micro-batches
  c.shape.micro_batches = 2;       // as traced
  c.shape.vocab = 1000;
  c.compute = learn_compute_profile({rank}, c.shape.layers, "trace");
  const ComputeProfile& p = *c.compute;
  for (int tp : {1, 2}) {
    c.layout = ParallelLayout{tp, 1, 1};
    const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
    double total = 0;
    std::map<std::string, std::uint64_t> gap;
    for (const PlannedOp& op : plan.ops) {
      total += static_cast<double>(op.host_gap_ns);
      if (op.host_gap_ns > 0) {
        EXPECT_TRUE(op.is<PlannedCompute>()) << op.name;
        gap[op.name] = op.host_gap_ns;
      }
    }
    EXPECT_NEAR(total, p.gaps_total(), 30) << "tp " << tp;  // rounded down per op
    EXPECT_EQ(gap.at("l2.attn.mb1.fwd"),
              static_cast<std::uint64_t>(gap_of(p, ComputePart::kForward) / 8));
    EXPECT_EQ(gap.at("l2.ffn.mb1.bwd"),
              static_cast<std::uint64_t>(gap_of(p, ComputePart::kBackward) / 8));
    EXPECT_EQ(gap.count("l2.attn.mb1.bwd"), 0U);
    EXPECT_EQ(gap.at("head.mb0.bwd"),
              static_cast<std::uint64_t>(gap_of(p, ComputePart::kHeadBackward) / 2));
    EXPECT_EQ(gap.at("optimizer"), static_cast<std::uint64_t>(gap_of(p, ComputePart::kOptimizer)));
  }
  c.host_gaps = false;
  const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
  for (const PlannedOp& op : plan.ops) EXPECT_EQ(op.host_gap_ns, 0U) << op.name;
}

// With ends learned and a vocabulary, the plan's ends run the traced time per micro-batch (the
// head's over TP), in place of their modelled GEMMs and passes; the collectives stay.
TEST(ComputeProfile, PlanRunsTheTracedEndsAsTheEndsOps) {
  RankTimeline rank;
  rank.steps.push_back(torch_step_with_ends(4, 2, 0));
  WorkloadConfig c;
  c.kind = WorkloadKind::kDp;
  c.shape = model_preset("tiny");  // 4 layers, 4 micro-batches
  c.shape.vocab = 1000;
  c.compute = learn_compute_profile({rank}, c.shape.layers, "trace");
  const ComputeProfile& p = *c.compute;
  for (int tp : {1, 2}) {
    c.layout = ParallelLayout{tp, 1, 1};
    const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
    EXPECT_TRUE(plan.of_kind<PlannedGemm>().empty()) << "tp " << tp;
    EXPECT_TRUE(plan.of_kind<PlannedElementwise>().empty()) << "tp " << tp;
    std::map<std::string, std::uint64_t> ns;
    for (const PlannedOp* op : plan.of_kind<PlannedCompute>())
      ns[op->name] = op->as<PlannedCompute>().ns;
    for (int mb = 0; mb < 4; ++mb) {
      const std::string m = ".mb" + std::to_string(mb);
      EXPECT_EQ(ns.at("embedding" + m + ".fwd"),
                static_cast<std::uint64_t>(p.ends.embedding_forward_ns / 2));
      EXPECT_EQ(ns.at("embedding" + m + ".bwd"),
                static_cast<std::uint64_t>(p.ends.embedding_backward_ns / 2));
      EXPECT_EQ(ns.at("head" + m + ".fwd"),
                static_cast<std::uint64_t>(p.ends.head_forward_ns / 2 / tp));
      EXPECT_EQ(ns.at("head" + m + ".bwd"),
                static_cast<std::uint64_t>(p.ends.head_backward_ns / 2 / tp));
    }
    WorkloadConfig shapes_only = c;
    shapes_only.compute.reset();
    const OpPlan reference = build_plan(shapes_only, place_rank(c.layout, 0));
    EXPECT_EQ(plan.of_kind<PlannedCollective>().size(),
              reference.of_kind<PlannedCollective>().size())
        << "the collectives stay those of the shape, the ends' vocab-parallel ones included";
  }
}

// The plan built from a profile: each layer's forward and backward compute adds up to what was
// learned, TP divides it, DDP's buckets still follow the backward, and nothing else computes.
TEST(ComputeProfile, PlanComputesWhatWasLearned) {
  RankTimeline rank;
  rank.steps.push_back(torch_like_step(4, 2, 0));
  WorkloadConfig c;
  c.kind = WorkloadKind::kDp;
  c.shape = model_preset("tiny");  // 4 layers, 4 micro-batches
  ASSERT_EQ(c.shape.layers, 4);
  c.compute = learn_compute_profile({rank}, c.shape.layers, "trace");
  const ComputeProfile& p = *c.compute;
  for (int tp : {1, 2}) {
    c.layout = ParallelLayout{tp, 2, 1};
    const OpPlan plan = build_plan(c, place_rank(c.layout, 0));
    EXPECT_TRUE(plan.of_kind<PlannedGemm>().empty());
    EXPECT_TRUE(plan.of_kind<PlannedElementwise>().empty());
    double fwd = 0, bwd = 0, opt = 0;
    for (const PlannedOp* op : plan.of_kind<PlannedCompute>()) {
      const auto ns = static_cast<double>(op->as<PlannedCompute>().ns);
      if (op->name == "optimizer") {
        opt += ns;
      } else if (op->name.find(".fwd") != std::string::npos) {
        fwd += ns;
      } else {
        ASSERT_NE(op->name.find(".bwd"), std::string::npos) << op->name;
        bwd += ns;
      }
    }
    // Per layer and micro-batch, times the run's 4 layers and 4 micro-batches, over TP; each op
    // is rounded down to whole nanoseconds.
    const double n = 4.0 * 4 * 2;  // layers x micro-batches x two parts
    EXPECT_NEAR(fwd, p.layer_forward_ns() * 16 / tp, n) << "tp " << tp;
    EXPECT_NEAR(bwd, p.layer_backward_ns() * 16 / tp, n) << "tp " << tp;
    EXPECT_NEAR(opt, p.optimizer_ns / tp, 1) << "tp " << tp;
    WorkloadConfig shapes_only = c;
    shapes_only.compute.reset();
    const OpPlan reference = build_plan(shapes_only, place_rank(c.layout, 0));
    EXPECT_EQ(plan.of_kind<PlannedCollective>().size(),
              reference.of_kind<PlannedCollective>().size())
        << "the collectives stay those of the shape";
  }
}

}  // namespace
}  // namespace commprof
