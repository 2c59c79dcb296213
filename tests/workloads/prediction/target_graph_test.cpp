// SPDX-License-Identifier: MIT
// The target graph pairs transfers as the step graph pairs a run's: each send with its receive,
// pairwise through GraphOp::partners, never a chain of grouped ops joined into one set.
#include "workloads/prediction/target_graph.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "workloads/layout.hpp"
#include "workloads/prediction/projection.hpp"
#include "workloads/prediction/replay.hpp"

namespace commprof {
namespace {

WorkloadConfig pipeline(const char* layout, int micro_batches) {
  WorkloadConfig w;
  w.kind = WorkloadKind::kHybrid;
  w.shape = model_preset("tiny");
  w.shape.layers = 8;
  w.shape.micro_batches = micro_batches;
  w.layout = parse_layout(layout);
  w.attention = AttentionMode::kGemm;
  return w;
}

// Every op's partners lie on the ranks it sends to or receives from, and pair back.
TEST(TargetGraph, TransfersPairWithTheRanksTheyNameAndNoOthers) {
  for (const char* layout : {"pp=4", "tp=2,pp=2,dp=2"}) {
    const TargetGraph tg = build_target_graph(pipeline(layout, 8), 0);
    const StepGraph& g = tg.graph;
    EXPECT_EQ(g.unmatched_transfers, 0) << layout;
    std::int64_t sends = 0, recvs = 0, paired = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
      const GraphOp& op = g.ops[i];
      sends += static_cast<std::int64_t>(op.send_to.size());
      recvs += static_cast<std::int64_t>(op.recv_from.size());
      std::set<int> named(op.send_to.begin(), op.send_to.end());
      named.insert(op.recv_from.begin(), op.recv_from.end());
      for (const int p : op.partners) {
        const GraphOp& other = g.ops[static_cast<std::size_t>(p)];
        EXPECT_EQ(named.count(other.rank), 1u)
            << layout << ": rank " << op.rank << "'s '" << op.name << "' pairs with rank "
            << other.rank << "'s '" << other.name << "'";
        EXPECT_NE(std::find(other.partners.begin(), other.partners.end(), static_cast<int>(i)),
                  other.partners.end())
            << layout << ": not paired back";
        ++paired;
      }
      // Each transfer it holds has a partner.
      if (!named.empty()) {
        EXPECT_FALSE(op.partners.empty()) << layout << " " << op.name;
      }
    }
    EXPECT_EQ(sends, recvs) << layout;
    EXPECT_GT(sends, 0) << layout;
    // Each transfer links its two sides both ways (two transfers between the same two ops, as a
    // grouped send and receive can hold, link them once).
    EXPECT_LE(paired, 2 * sends) << layout;
    // No P2P set is a collective any more.
    for (const GraphCollective& c : g.collectives) EXPECT_NE(c.collective, "p2p") << layout;
  }
}

// Pipeline of 4 stages with 1F1B: rank 1's grouped ops (a send to rank 2 with a receive from it,
// or from rank 0) end with their own transfers: with every op 1 µs and nothing else, the replay
// ends each transfer op 1 µs after the later of its own and its partners' starts.
TEST(TargetGraph, EachTransferEndsWithItsOwnPartnersOnly) {
  const TargetGraph tg = build_target_graph(pipeline("pp=4", 8), 0);
  const StepGraph& g = tg.graph;
  ReplayModel m;
  m.op_ns.assign(g.ops.size(), 1000);
  m.gap_ns.assign(g.ops.size(), 0);
  const GraphTimes t = replay(g, m);
  int checked = 0;
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const GraphOp& op = g.ops[i];
    if (op.partners.empty()) continue;
    std::int64_t last = t.start_ns[i];
    for (const int p : op.partners) last = std::max(last, t.start_ns[static_cast<std::size_t>(p)]);
    EXPECT_EQ(t.end_ns[i], last + 1000) << op.name << " on rank " << op.rank;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// The pipelines' known answer: with a stage's forward of a micro-batch f and backward b, and
// transfers free, 1F1B and GPipe both take (m + p - 1)(f + b) for m micro-batches over p stages
// (the bubble is (p - 1)(f + b)), and no pipeline m(f + b). A hand-sized layer: the tiny
// model's 11 forward ops of a layer (ln1, qkv, fused attention, attn_layout, out_proj,
// residual1, ln2, ffn_up, act, ffn_down, residual2) and its 15 backward ones (a dgrad and a wgrad
// of each of its 4 GEMMs, the backward of attention, attn_layout, both norms, both residuals and
// act), 1 us each. With TP, each layer's 2 all-reduces forward (after out_proj and ffn_down) take
// t each on the path; its 2 backward (of the input gradients of qkv and ffn_up) overlap the wgrad
// GEMM issued beside them, as Megatron's asynchronous all-reduce does, so t - 1 us of each shows.
// The rest (transfers, the data-parallel all-reduces, bias gradients, gradient accumulation, the
// optimizer) take no time. 8 layers, 8 micro-batches; per layer f = 11 + 2t, b = 15 + 2(t - 1):
//   pp=8 (1 layer a stage):  f 11, b 15: 15 x 26 = 390 us, both schedules
//   pp=2,dp=4 (4 layers):    f 44, b 60: 9 x 104 = 936 us
//   tp=2,pp=2,dp=2, t = 2:   f 4 x 15 = 60, b 4 x 17 = 68: 9 x 128 = 1152 us; t = 3: 9 x 144 = 1296
//   tp=4,dp=2, t = 2:        8 x 8 x 32 = 2048 us (no pipeline); t = 3: 8 x 8 x 36 = 2304
TEST(TargetGraph, PipelinesReplayToTheirClosedForm) {
  auto ends_with = [](const std::string& s, const char* tail) {
    const std::string t(tail);
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
  };
  struct Case {
    const char* layout;
    PpSchedule schedule;
    std::int64_t ar_us;  // a TP all-reduce
    std::int64_t step_us;
  };
  for (const Case& c :
       {Case{"pp=8", PpSchedule::k1F1B, 2, 390}, Case{"pp=8", PpSchedule::kGpipe, 2, 390},
        Case{"pp=2,dp=4", PpSchedule::k1F1B, 2, 936},
        Case{"tp=2,pp=2,dp=2", PpSchedule::k1F1B, 2, 1152},
        Case{"tp=2,pp=2,dp=2", PpSchedule::k1F1B, 3, 1296},
        Case{"tp=4,dp=2", PpSchedule::k1F1B, 2, 2048},
        Case{"tp=4,dp=2", PpSchedule::k1F1B, 3, 2304}}) {
    WorkloadConfig w = pipeline(c.layout, 8);
    w.schedule = c.schedule;
    w.attention = AttentionMode::kFused;  // one attention op each way, as counted above
    const TargetGraph tg = build_target_graph(w, 0);
    const StepGraph& g = tg.graph;
    ReplayModel m;
    m.op_ns.assign(g.ops.size(), 0);
    m.gap_ns.assign(g.ops.size(), 0);
    int passes = 0, reductions = 0;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
      const GraphOp& op = g.ops[i];
      if (op.category == Category::kComp &&
          (ends_with(op.name, ".fwd") || ends_with(op.name, ".bwd") ||
           ends_with(op.name, ".dgrad") || ends_with(op.name, ".wgrad"))) {
        m.op_ns[i] = 1000;
        ++passes;
      } else if (op.collective == "allreduce" && op.comm.rfind("tp", 0) == 0) {
        m.op_ns[i] = c.ar_us * 1000;
        ++reductions;
      }
    }
    const int world = static_cast<int>(g.ranks.size());
    // Every rank holds 8 / pp layers of 8 micro-batches: 26 timed passes and, with TP, 4
    // all-reduces each.
    EXPECT_EQ(passes, world * 8 / w.layout.pp * 8 * 26) << c.layout;
    EXPECT_EQ(reductions, w.layout.tp > 1 ? world * 8 / w.layout.pp * 8 * 4 : 0) << c.layout;
    const GraphTimes t = replay(g, m);
    EXPECT_EQ(step_outcome(g, t).step_ns, c.step_us * 1000)
        << c.layout << " " << schedule_name(c.schedule) << ", all-reduce " << c.ar_us << " us";
  }
}

}  // namespace
}  // namespace commprof
