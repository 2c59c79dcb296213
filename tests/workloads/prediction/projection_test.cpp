// SPDX-License-Identifier: MIT
// The projection against answers worked out independently. Synthetic measured runs
// (tests/support/synthetic_runs.hpp) at the default known rates: every op with FLOPs takes FLOPs /
// 2 ns, every other op bytes / 1 ns, an all-reduce of S bytes on n ranks 5 µs × 2(n−1) + S ×
// 2(n−1)/n / 10 GB/s; ops back to back, no host gaps. Under --no-overlap every op waits for the one
// before, so a rank's step is the sum of its ops' times: the projection's replay must give exactly
// that sum, computed here from the target's plan without the replay.
#include "workloads/prediction/projection.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "collectives/links/link_model.hpp"
#include "src/core/errors.hpp"
#include "src/timeline/json_object.hpp"
#include "support/synthetic_runs.hpp"
#include "workloads/layout.hpp"
#include "workloads/prediction/target_graph.hpp"
#include "workloads/run_config_json.hpp"

namespace commprof {
namespace {

constexpr double kFlopsPerNs = 2.0;
constexpr double kBytesPerNs = 1.0;
constexpr double kBusbwGbps = 10.0;
constexpr double kLatencyUs = 5.0;

using test::allreduce_ns;
using test::known_links;
using test::serial_dp;
using test::serial_step_ns;
using test::synthetic_run;

TEST(Projection, SerialDpRunProjectsToDp4Exactly) {
  const MeasuredRun run = measured_run(synthetic_run(serial_dp(2), 2), "synthetic dp2");
  EXPECT_EQ(run.rates.steps, 2);
  EXPECT_EQ(run.rates.gap_ns[0], 0);
  // The rates are the known ones.
  EXPECT_DOUBLE_EQ(run.rates.gemm_flops.per_ns(), kFlopsPerNs);
  EXPECT_DOUBLE_EQ(run.rates.pass_bytes.per_ns(), kBytesPerNs);
  ParallelLayout dp4;
  dp4.dp = 4;
  const std::int64_t want = serial_step_ns(serial_dp(4));
  // Given the link model: the sum of the dp4 plan's times (every op alone, as measured).
  const LinkModel links = known_links();
  ProjectionOptions with_links;
  with_links.links = &links;
  with_links.overlap_slowdown = false;
  with_links.rank_spread = false;
  const Projection p = project(run, dp4, with_links);
  EXPECT_EQ(p.outcome.step_ns, want);
  EXPECT_EQ(p.ranks, 4);
  // With the overlap slowdown and the ranks' spread: nothing overlapped in the run, so nothing
  // slows; the all-reduces' alone ratio is the measured times over the model's, and each rank's
  // compute speed its time over the class rates: 1 but for the records' whole ns.
  with_links.overlap_slowdown = true;
  with_links.rank_spread = true;
  for (const double c : run.rates.rank_compute) EXPECT_NEAR(c, 1.0, 1e-6);
  const Projection slowed = project(run, dp4, with_links);
  EXPECT_TRUE(slowed.slowdown.comp_pooled.empty());
  EXPECT_EQ(slowed.applied_comp.overlapped, 0);
  EXPECT_EQ(slowed.applied_comm.overlapped, 0);
  ASSERT_FALSE(slowed.slowdown.comm.empty());
  for (const auto& [key, f] : slowed.slowdown.comm) {
    EXPECT_EQ(f.overlapped_ops, 0) << link_collective_name(key.collective);
    EXPECT_NEAR(f.alone, 1.0, 1e-4) << link_collective_name(key.collective);
  }
  EXPECT_EQ(slowed.step_alone_ns, slowed.outcome.step_ns);
  EXPECT_NEAR(static_cast<double>(slowed.outcome.step_ns), static_cast<double>(want), 50.0);
  // Serial: no overlap, every COMM ns exposed.
  ASSERT_TRUE(p.outcome.overlap.has_value());
  EXPECT_DOUBLE_EQ(*p.outcome.overlap, 0.0);
  EXPECT_DOUBLE_EQ(p.outcome.exposed_comm_ns, p.outcome.comm_ns);
  // Fitted from the run's own all-reduces on 2 ranks (exact points of several sizes): the same
  // latency and bandwidth, so the same step, within the fit's rounding.
  ASSERT_EQ(run.own_links.fits.size(), 1u);
  EXPECT_NEAR(run.own_links.fits[0].latency_us, kLatencyUs, 1e-3);
  EXPECT_NEAR(run.own_links.fits[0].busbw_gbps, kBusbwGbps, 1e-3);
  const Projection own = project(run, dp4, ProjectionOptions{});
  EXPECT_NEAR(static_cast<double>(own.outcome.step_ns), static_cast<double>(want), 50.0);
  // dp's busbw is the link model's: Σ S·f / Σ time, each time from the model.
  ASSERT_EQ(p.comms.size(), 1u);
  EXPECT_EQ(p.comms[0].group, "dp");
  EXPECT_EQ(p.comms[0].collectives, "allreduce");
  double bus = 0, ns = 0;
  for (const PlannedOp& op : build_plan(serial_dp(4), place_rank(dp4, 0)).ops) {
    if (!op.is<PlannedCollective>()) continue;
    bus += static_cast<double>(op.bytes) * 1.5;
    ns += static_cast<double>(allreduce_ns(op.bytes, 4));
  }
  EXPECT_NEAR(p.comms[0].busbw_gbps(), bus / ns, 1e-12);
}

TEST(Projection, TheMeasuredLayoutReplaysToTheMeasuredStep) {
  const MeasuredRun run = measured_run(synthetic_run(serial_dp(2), 1), "synthetic dp2");
  ParallelLayout dp2;
  dp2.dp = 2;
  const LinkModel links = known_links();
  ProjectionOptions with_links;
  with_links.links = &links;
  const Projection p = project(run, dp2, with_links);
  EXPECT_EQ(p.outcome.step_ns, serial_step_ns(serial_dp(2)));
  EXPECT_DOUBLE_EQ(static_cast<double>(p.outcome.step_ns), run.figures.measured.step_ns);
}

// A measured dp run projected onto two pipeline stages, against a step worked out from the
// measured rank file alone, not from the target's plan or the replay: one micro-batch under
// --no-overlap on 1F1B, stage 0 runs layer 0's forward ops (F0), sends the activation to stage 1,
// which runs layer 1's forward and backward ops (F1, B1) and sends the gradient back; stage 0 then
// runs layer 0's backward ops (B0) and its optimizer over half the parameters (the measured
// optimizer's time halved: half the bytes). Each transfer of 32768 B (the 8192-float activation)
// takes the p2p fit's 5 µs + 32768 B / 10 GB/s = 8277 ns. Stage 0 ends last.
TEST(Projection, SerialDpRunProjectsToTwoPipelineStagesByHand) {
  WorkloadConfig w = serial_dp(2);
  w.shape.micro_batches = 1;
  const std::vector<RankTimeline> ranks = synthetic_run(w, 2);
  const StepRecord& measured = ranks[0].steps[1];
  std::int64_t f[2] = {0, 0}, b[2] = {0, 0}, optimizer = 0;
  for (const OpRecord& op : measured.ops) {
    const std::int64_t ns = op.end_ns - op.start_ns;
    if (op.name == "optimizer.adamw") optimizer = ns;
    for (int l = 0; l < 2; ++l) {
      const std::string layer = "l" + std::to_string(l) + ".";
      if (op.name.rfind(layer, 0) != 0) continue;
      const bool forward =
          op.name.size() > 4 && op.name.compare(op.name.size() - 4, 4, ".fwd") == 0;
      (forward ? f[l] : b[l]) += ns;
    }
  }
  ASSERT_GT(f[0], 0);
  ASSERT_GT(b[1], 0);
  ASSERT_GT(optimizer, 0);
  ASSERT_EQ(optimizer % 2, 0);
  constexpr std::int64_t kTransferNs = 8277;  // 5 µs + 32768 B / (10 GB/s), rounded
  const std::int64_t want = f[0] + kTransferNs + f[1] + b[1] + kTransferNs + b[0] + optimizer / 2;

  const MeasuredRun run = measured_run(ranks, "synthetic dp2, one micro-batch");
  LinkModel links = known_links();
  LinkFit p2p;
  p2p.collective = CollectiveKind::kSendRecv;
  p2p.latency_us = kLatencyUs;
  p2p.busbw_gbps = kBusbwGbps;
  links.fits.push_back(p2p);
  ProjectionOptions options;
  options.links = &links;
  options.overlap_slowdown = false;
  options.rank_spread = false;
  ParallelLayout pp2;
  pp2.pp = 2;
  const Projection p = project(run, pp2, options);
  EXPECT_EQ(p.ranks, 2);
  EXPECT_EQ(p.outcome.step_ns, want);
}

TEST(Projection, LayoutsThatDoNotFitTheModelAreRefusedByName) {
  const MeasuredRun run = measured_run(synthetic_run(serial_dp(2), 1), "synthetic dp2");
  ParallelLayout tp3;
  tp3.tp = 3;  // tiny has 4 heads
  try {
    project(run, tp3, ProjectionOptions{});
    FAIL() << "tp=3 was projected";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--layout tp=3,pp=1,dp=1: ", 0), 0u) << what;
  }
  // A collective no fit covers: tp's all-reduces on a run that measured dp's alone is borrowed
  // from dp's fit, and said so.
  ParallelLayout tp2;
  tp2.tp = 2;
  const Projection p = project(run, tp2, ProjectionOptions{});
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes.front().find("allreduce of tp from the dp communicators' fit"),
            std::string::npos)
      << p.notes.front();
}

TEST(Projection, RunsThatAreNotCommprofRunsAreRefused) {
  std::vector<RankTimeline> ranks = synthetic_run(serial_dp(2), 1);
  ranks[0].config = JsonObject();
  ranks[1].config = JsonObject();
  try {
    measured_run(ranks, "imported/rank-0.json");
    FAIL() << "a run without configuration was read";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("holds no run configuration"), std::string::npos)
        << e.what();
  }
  ranks = synthetic_run(serial_dp(2), 1);
  ranks.pop_back();
  EXPECT_THROW(measured_run(ranks, "one rank short"), ConfigError);
}

TEST(Projection, OpClassesDropIndexes) {
  EXPECT_EQ(op_class("l3.qkv.mb0.dgrad"), "qkv.dgrad");
  EXPECT_EQ(op_class("l1.attention.mb2.fwd.step1"), "attention.fwd");
  EXPECT_EQ(op_class("optimizer.adamw"), "optimizer.adamw");
}

// A pipeline run written from its own graph's replay, each transfer's two sides ending 30 and 50
// µs after the last arrived: the run's own fit gives each send/receive size their mean, 40 µs,
// timed from their pairs (the records' peers, as the executor writes them; each side's shortest
// op would give 30 µs).
TEST(Projection, PipelineTransfersAreTimedFromTheirPairs) {
  WorkloadConfig w;
  w.kind = WorkloadKind::kPp;
  w.shape = model_preset("tiny");
  w.layout.pp = 2;
  w.attention = AttentionMode::kGemm;
  const TargetGraph tg = build_target_graph(w, 0);
  ReplayModel m;
  m.gap_ns.assign(tg.graph.ops.size(), 0);
  m.op_ns.resize(tg.graph.ops.size());
  for (std::size_t i = 0; i < tg.ops.size(); ++i) {
    const TargetOp& t = tg.ops[i];
    // Transfers: rank 0's side ends 30 µs after the last arrival, rank 1's 50 µs: 40 µs mean.
    m.op_ns[i] = t.work == TargetOp::Work::kCollective ? (tg.graph.ops[i].rank == 0 ? 30000 : 50000)
                 : t.flops > 0 ? static_cast<std::int64_t>(std::llround(t.flops / kFlopsPerNs))
                               : static_cast<std::int64_t>(t.bytes);
  }
  const GraphTimes times = replay(tg.graph, m);
  std::vector<RankTimeline> ranks;
  for (const GraphRank& gr : tg.graph.ranks) {
    RankTimeline t;
    t.rank = gr.rank;
    t.world_size = 2;
    t.host = "node0";
    t.config =
        JsonObject(run_config_json(w, RunSettings{1, 0, OpTimingMode::kPair, 4, std::nullopt}));
    StepRecord step;
    for (int k = gr.first_op; k < gr.first_op + gr.ops; ++k) {
      const GraphOp& g = tg.graph.ops[static_cast<std::size_t>(k)];
      const TargetOp& target = tg.ops[static_cast<std::size_t>(k)];
      OpRecord r;
      r.name = g.name;
      r.category = g.category;
      r.stream = g.stream;
      r.collective = g.collective;
      r.comm = g.comm;
      r.comm_size = g.comm_size;
      r.seq = g.seq;
      r.send_to = g.send_to;
      r.recv_from = g.recv_from;
      r.bytes = target.bytes;
      r.flops = target.flops;
      r.start_ns = times.start_ns[static_cast<std::size_t>(k)];
      r.end_ns = times.end_ns[static_cast<std::size_t>(k)];
      step.end_ns = std::max(step.end_ns, r.end_ns);
      step.ops.push_back(r);
    }
    t.steps.push_back(step);
    ranks.push_back(std::move(t));
  }
  const MeasuredRun run = measured_run(ranks, "synthetic pp2");
  int p2p = 0;
  for (const LinkSample& p : run.rates.collectives) {
    if (p.collective != CollectiveKind::kSendRecv) continue;
    ++p2p;
    EXPECT_NEAR(p.time_us, 40.0, 1e-9) << p.bytes << " B";
  }
  EXPECT_GT(p2p, 0);
}

// Pipelines and hybrids of 8 ranks: every send meets its receive, and the graph replays (a
// schedule whose transfers were matched wrongly would deadlock the replay).
TEST(TargetGraph, PipelinesAndHybridsOfEightRanksReplay) {
  for (const char* text : {"pp=8", "tp=2,pp=2,dp=2", "pp=2,dp=4", "tp=4,dp=2"}) {
    WorkloadConfig w;
    w.shape = model_preset("tiny");
    w.shape.layers = 8;
    w.shape.micro_batches = 8;
    w.layout = parse_layout(text);
    w.kind = WorkloadKind::kHybrid;
    w.attention = AttentionMode::kGemm;
    const TargetGraph g = build_target_graph(w, 0);
    ASSERT_EQ(g.graph.ranks.size(), 8u) << text;
    for (const GraphCollective& c : g.graph.collectives) {
      if (c.collective == "p2p") {
        EXPECT_GE(c.members.size(), 2u) << text;
      } else {
        EXPECT_EQ(static_cast<int>(c.members.size()), c.comm_size) << text << " " << c.comm;
      }
    }
    ReplayModel m;
    m.op_ns.assign(g.graph.ops.size(), 1000);
    m.gap_ns.assign(g.graph.ops.size(), 0);
    const GraphTimes t = replay(g.graph, m);
    EXPECT_GT(step_outcome(g.graph, t).step_ns, 0) << text;
  }
}

}  // namespace
}  // namespace commprof
