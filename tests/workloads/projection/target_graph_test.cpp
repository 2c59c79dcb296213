// SPDX-License-Identifier: MIT
// The target graph pairs transfers as the step graph pairs a run's: each send with its receive,
// pairwise through GraphOp::partners, never a chain of grouped ops joined into one set.
#include "workloads/projection/target_graph.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "analysis/graph/replay.hpp"
#include "workloads/layout.hpp"
#include "workloads/projection/projection.hpp"

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

}  // namespace
}  // namespace commprof
