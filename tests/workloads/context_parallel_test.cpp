// SPDX-License-Identifier: MIT
// Context parallelism (workloads/context_parallel.hpp) and the plans it gives, against numbers
// worked out by hand here. The shape: b 2, s 64, h 256, 8 query heads sharing 4 key/value heads
// (d 32), float (4 B), tp 2: g = 2 key/value heads and 4 query heads per TP rank.
#include "workloads/context_parallel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "src/core/errors.hpp"
#include "workloads/compute_profile.hpp"
#include "workloads/workload.hpp"

namespace commprof {
namespace {

ModelShape shape() {
  ModelShape s;
  s.layers = 1;
  s.hidden = 256;
  s.heads = 8;
  s.kv_heads = 4;
  s.ffn = 512;
  s.seq = 64;
  s.micro_batch = 2;
  s.micro_batches = 1;
  s.dtype = DType::kFloat32;
  return s;
}

WorkloadConfig config(int cp, CpMode mode) {
  WorkloadConfig c;
  c.kind = WorkloadKind::kHybrid;
  c.shape = shape();
  c.layout.tp = 2;
  c.layout.cp = cp;
  c.cp_mode = mode;
  return c;
}

OpPlan plan_of(const WorkloadConfig& c, int cp_rank) {
  // tp varies fastest: world rank 2·cp_rank is TP rank 0 of that CP rank.
  const RankPlace place = place_rank(c.layout, c.layout.tp * cp_rank);
  EXPECT_EQ(place.cp_rank, cp_rank);
  return build_plan(c, place);
}

bool has(const std::string& name, const std::string& part) {
  return name.find(part) != std::string::npos;
}

double attention_flops(const OpPlan& plan, const char* direction) {
  double flops = 0;
  for (const PlannedOp* op : plan.of_kind<PlannedAttention>()) {
    if (has(op->name, direction)) flops += op->flops;
  }
  return flops;
}

// The causal attention of the whole sequence on one TP rank: 2 products of 2·b·H·d·s²/2 each
// forward = 4 · 2 · 4 · 32 · 64²/2 = 2,097,152 FLOPs; backward 5 products, 5,242,880.
constexpr double kCausalForward = 2097152.0, kCausalBackward = 5242880.0;

TEST(ContextParallel, RankRHoldsChunksRAndTheirMirror) {
  std::set<int> held;
  for (int r = 0; r < 4; ++r) {
    const auto chunks = cp_chunks(4, r);
    EXPECT_EQ(chunks[0], r);
    EXPECT_EQ(chunks[1], 7 - r);
    held.insert(chunks.begin(), chunks.end());
  }
  EXPECT_EQ(held.size(), 8u);  // every chunk of the 2·cp on exactly one rank
}

TEST(ContextParallel, RingStepsComputeTheCausalBlocks) {
  // cp 4, s 64: chunks of 8 tokens. Rank 1 holds chunks 1 and 6.
  const auto steps = cp_ring_steps(64, 4, 1);
  ASSERT_EQ(steps.size(), 4u);
  // Step 0: its own chunks, 16 × 16 causal.
  EXPECT_EQ(steps[0].q_seq, 16);
  EXPECT_EQ(steps[0].kv_seq, 16);
  EXPECT_TRUE(steps[0].causal);
  // Step 1: K/V of rank 0 (chunks 0, 7): both local chunks see chunk 0 whole, chunk 7 not.
  EXPECT_EQ(steps[1].source, 0);
  EXPECT_EQ(steps[1].q_seq, 16);
  EXPECT_EQ(steps[1].kv_seq, 8);
  EXPECT_FALSE(steps[1].causal);
  // Steps 2 and 3: K/V of ranks 3 (chunks 3, 4) and 2 (chunks 2, 5): only chunk 6 sees them,
  // both chunks whole.
  EXPECT_EQ(steps[2].source, 3);
  EXPECT_EQ(steps[3].source, 2);
  for (int i : {2, 3}) {
    EXPECT_EQ(steps[i].q_seq, 8);
    EXPECT_EQ(steps[i].kv_seq, 16);
    EXPECT_FALSE(steps[i].causal);
  }
}

TEST(ContextParallel, AllGatherBlocksReachUpToTheirChunk) {
  // Rank 1: chunk 1 over keys 0..15 (8 × 16), chunk 6 over keys 0..55 (8 × 56), bottom-right.
  const auto blocks = cp_allgather_blocks(64, 4, 1);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].q_seq, 8);
  EXPECT_EQ(blocks[0].kv_seq, 16);
  EXPECT_EQ(blocks[1].q_seq, 8);
  EXPECT_EQ(blocks[1].kv_seq, 56);
  EXPECT_TRUE(blocks[0].causal && blocks[1].causal);
}

TEST(ContextParallel, AttentionFlopsOfEveryRankAreTheCausalTotalOverCp) {
  for (const CpMode mode : {CpMode::kP2p, CpMode::kAllGather}) {
    for (int r = 0; r < 4; ++r) {
      const OpPlan plan = plan_of(config(4, mode), r);
      // Each rank: 524,288 forward (pairs 512 per head: p2p 128 + 3 × 128, allgather rank 1
      // 96 + 416), 1,310,720 backward.
      EXPECT_DOUBLE_EQ(attention_flops(plan, ".fwd"), kCausalForward / 4)
          << cp_mode_name(mode) << " rank " << r;
      EXPECT_DOUBLE_EQ(attention_flops(plan, ".bwd"), kCausalBackward / 4)
          << cp_mode_name(mode) << " rank " << r;
    }
  }
  // a2a at cp 2: every token, heads / 2: half the total.
  const OpPlan a2a = plan_of(config(2, CpMode::kA2a), 1);
  EXPECT_DOUBLE_EQ(attention_flops(a2a, ".fwd"), kCausalForward / 2);
  EXPECT_DOUBLE_EQ(attention_flops(a2a, ".bwd"), kCausalBackward / 2);
}

TEST(ContextParallel, RingStepsSendKAndVOfTheRanksTokens) {
  // K and V of b·(s/cp)·g·d = 2 · 16 · 2 · 32 = 2,048 elements each: 4,096 elements, 16,384 B
  // per ring step each way; the op's bytes count the send and the receive, 32,768.
  EXPECT_EQ(cp_kv_elements(shape(), 2, 4), 2048u);
  const OpPlan plan = plan_of(config(4, CpMode::kP2p), 2);
  int forward = 0, kv_backward = 0, dkv = 0;
  for (const PlannedOp* op : plan.of_kind<PlannedP2P>()) {
    ASSERT_EQ(op->group(), Group::kCp) << op->name;
    const PlannedP2P& p = op->as<PlannedP2P>();
    EXPECT_EQ(p.count, 4096u) << op->name;
    EXPECT_EQ(op->bytes, 32768u) << op->name;
    EXPECT_EQ(p.sends[0].peer, 3);  // the next CP rank
    EXPECT_EQ(p.recvs[0].peer, 1);  // the previous
    if (has(op->name, "cp.kv") && has(op->name, ".fwd")) ++forward;
    if (has(op->name, "cp.kv") && has(op->name, ".bwd")) ++kv_backward;
    if (has(op->name, "cp.dkv")) ++dkv;
  }
  EXPECT_EQ(forward, 3);      // cp − 1 per attention forward
  EXPECT_EQ(kv_backward, 3);  // cp − 1 of K/V in the backward
  EXPECT_EQ(dkv, 4);          // cp of dK/dV: the last returns them to their owner
}

TEST(ContextParallel, EachRingTransferRunsBesideAStepsAttention) {
  const OpPlan plan = plan_of(config(4, CpMode::kP2p), 0);
  auto find = [&](const std::string& name) -> const PlannedOp& {
    for (const PlannedOp& op : plan.ops)
      if (op.name == name) return op;
    ADD_FAILURE() << "no op " << name;
    return plan.ops.front();
  };
  auto waits_for = [](const PlannedOp& op, int id) {
    return std::find(op.deps.begin(), op.deps.end(), id) != op.deps.end();
  };
  for (int i = 1; i < 4; ++i) {
    const PlannedOp& kv = find("l0.cp.kv.mb0.fwd.step" + std::to_string(i));
    const PlannedOp& before = find("l0.attention.mb0.fwd.step" + std::to_string(i - 1));
    const PlannedOp& after = find("l0.attention.mb0.fwd.step" + std::to_string(i));
    EXPECT_EQ(kv.stream, Category::kComm);
    // Issued before the previous step's attention, neither waiting for the other: they overlap.
    EXPECT_LT(kv.id, before.id);
    EXPECT_FALSE(waits_for(before, kv.id));
    EXPECT_FALSE(waits_for(kv, before.id));
    // The step's own attention waits for its receive.
    EXPECT_TRUE(waits_for(after, kv.id));
  }
}

TEST(ContextParallel, LayerOpsWorkOnTheRanksTokens) {
  // b·s/cp = 2 · 64 / 4 = 32 tokens: the QKV GEMM's m, and the TP all-reduce of 32 · 256.
  const OpPlan plan = plan_of(config(4, CpMode::kP2p), 0);
  for (const PlannedOp* op : plan.of_kind<PlannedGemm>()) {
    if (has(op->name, ".qkv.mb0.fwd")) {
      EXPECT_EQ(op->as<PlannedGemm>().m, 32);
    }
  }
  for (const PlannedOp* op : plan.of_kind<PlannedCollective>()) {
    if (op->group() == Group::kTp) {
      EXPECT_EQ(op->as<PlannedCollective>().count, 8192u);
    }
  }
}

TEST(ContextParallel, UlyssesAllToAllsMoveTheRanksHeads) {
  // cp 2: Q and O b·(s/cp)·(a/t)·d = 2 · 32 · 4 · 32 = 8,192 elements (32,768 B), 4,096 to each
  // peer; K and V 2 · 32 · 2 · 32 = 4,096 (16,384 B), 2,048 to each peer.
  const OpPlan plan = plan_of(config(2, CpMode::kA2a), 0);
  int forward = 0, backward = 0;
  for (const PlannedOp* op : plan.of_kind<PlannedCollective>()) {
    if (op->group() != Group::kCp) continue;
    const auto& c = op->as<PlannedCollective>();
    EXPECT_EQ(c.kind, CollectiveKind::kAllToAll);
    const bool kv = has(op->name, "a2a_k.") || has(op->name, "a2a_v.") ||
                    has(op->name, "a2a_dk.") || has(op->name, "a2a_dv.");
    EXPECT_EQ(c.count, kv ? 2048u : 4096u) << op->name;
    EXPECT_EQ(op->bytes, kv ? 16384u : 32768u) << op->name;
    (has(op->name, ".fwd") ? forward : backward) += 1;
  }
  EXPECT_EQ(forward, 4);   // Q, K, V in; O out
  EXPECT_EQ(backward, 4);  // dO in; dQ, dK, dV out
  for (const PlannedOp* op : plan.of_kind<PlannedAttention>()) {
    const auto& a = op->as<PlannedAttention>();
    EXPECT_EQ(a.seq, 64);
    EXPECT_EQ(a.heads, 2);
    EXPECT_EQ(a.kv_heads, 1);
  }
}

TEST(ContextParallel, UlyssesRefusesFewerKeyValueHeadsThanCp) {
  // tp 2, cp 4: 2 key/value heads per TP rank cannot split over 4 CP ranks.
  try {
    validate_workload(config(4, CpMode::kA2a));
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("2 key/value heads per TP rank (4 over tp 2) are not a "
                                         "multiple of 4"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(validate_workload(config(2, CpMode::kA2a)));
}

TEST(ContextParallel, AllGatherSizes) {
  // K and V each: 2,048 elements per rank, 2,048 · 4 ranks · 4 B = 32,768 B gathered at cp 4
  // (S of the all-gather and of the reduce-scatter).
  const OpPlan plan = plan_of(config(4, CpMode::kAllGather), 3);
  int gathers = 0, scatters = 0;
  for (const PlannedOp* op : plan.of_kind<PlannedCollective>()) {
    if (op->group() != Group::kCp) continue;
    EXPECT_EQ(op->as<PlannedCollective>().count, 2048u);
    EXPECT_EQ(op->bytes, 32768u);
    (op->as<PlannedCollective>().kind == CollectiveKind::kAllGather ? gathers : scatters) += 1;
  }
  EXPECT_EQ(gathers, 4);   // K and V, forward and again backward
  EXPECT_EQ(scatters, 2);  // dK and dV
}

TEST(ContextParallel, SequenceMustSplitIntoTwoChunksPerRank) {
  WorkloadConfig c = config(4, CpMode::kP2p);
  c.shape.seq = 60;  // 60 / 8 chunks does not divide
  EXPECT_THROW(validate_workload(c), ConfigError);
  c.attention = AttentionMode::kGemm;
  c.shape.seq = 64;
  EXPECT_THROW(validate_workload(c), ConfigError);
}

// --compute-from under CP 2 (workloads/step_cp.cpp): one layer of h 64, 4 heads, f 128, 32
// tokens traced on one GPU at 1 ns per FLOP. Its GEMMs there: qkv 2·32·192·64 = 786,432, scores
// and context 2·32·32·64 = 131,072 each, out_proj 2·32·64·64 = 262,144 (attention 1,310,720),
// FFN 2 × 2·32·128·64 = 1,048,576. Each CP rank runs its 16 tokens' projections and FFN (half),
// and the schedule's kernels split the traced core (262,144 ns) by their FLOPs: the two ranks'
// kernels add up to it, in every mode; backward twice each.
TEST(ContextParallel, ATracedLayerSplitsOverTheCpSchedule) {
  for (const CpMode mode : {CpMode::kP2p, CpMode::kA2a, CpMode::kAllGather}) {
    WorkloadConfig c;
    c.kind = WorkloadKind::kHybrid;
    c.shape.layers = 1;
    c.shape.hidden = 64;
    c.shape.heads = 4;
    c.shape.ffn = 128;
    c.shape.seq = 32;
    c.shape.micro_batch = 1;
    c.shape.micro_batches = 1;
    c.shape.vocab = 0;
    c.layout.cp = 2;
    c.cp_mode = mode;
    c.attention = AttentionMode::kFused;
    ComputeProfile p;
    p.layers = 1;
    p.micro_batches = 1;
    p.samples = 1;
    p.forward_ns = 2359296;
    p.backward_ns = 2 * p.forward_ns;
    c.compute = p;
    validate_workload(c);
    double core[2] = {0, 0};  // forward, backward, over both ranks
    for (int r = 0; r < 2; ++r) {
      const OpPlan plan = build_plan(c, place_rank(c.layout, r));
      std::map<std::string, double> ns;
      for (const PlannedOp* op : plan.of_kind<PlannedCompute>()) {
        const auto t = static_cast<double>(op->as<PlannedCompute>().ns);
        ns[op->name] += t;
        if (has(op->name, ".attention.")) core[has(op->name, ".bwd") ? 1 : 0] += t;
      }
      EXPECT_TRUE(plan.of_kind<PlannedAttention>().empty());
      EXPECT_NEAR(ns["l0.qkv.mb0.fwd"], 393216, 1) << r;
      EXPECT_NEAR(ns["l0.out_proj.mb0.fwd"], 131072, 1) << r;
      EXPECT_NEAR(ns["l0.ffn.mb0.fwd"], 524288, 1) << r;
      EXPECT_NEAR(ns["l0.qkv.mb0.bwd"], 2 * 393216, 1) << r;
      EXPECT_NEAR(ns["l0.out_proj.mb0.bwd"], 2 * 131072, 1) << r;
      EXPECT_NEAR(ns["l0.ffn.mb0.bwd"], 2 * 524288, 1) << r;
    }
    EXPECT_NEAR(core[0], 262144, 8) << static_cast<int>(mode);
    EXPECT_NEAR(core[1], 2 * 262144, 8) << static_cast<int>(mode);
  }
}

}  // namespace
}  // namespace commprof
