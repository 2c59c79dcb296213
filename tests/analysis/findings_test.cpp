// SPDX-License-Identifier: MIT
// The findings' rules (analysis/findings.hpp) on hand-built reports: each fires with the cost
// and evidence worked out by hand here, and stays quiet (or says what it needs) where it must.
#include "analysis/findings.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "src/timeline/json_object.hpp"

namespace commprof {
namespace {

Stat stat(double mean, std::int64_t count = 3) {
  Stat s;
  s.min = s.mean = s.max = mean;
  s.count = count;
  return s;
}

// A rank of 3 timed steps of `step_ns`, `comp_ns` of compute and `comm_ns` of communication of
// which `overlap` is hidden.
RankSummary rank(int r, double step_ns, double comp_ns, double comm_ns, double overlap) {
  RankSummary s;
  s.rank = r;
  s.host = "node" + std::to_string(r);
  s.steps = s.timed_steps = 3;
  s.ops = 30;
  s.wall_ns = s.timed_wall_ns = stat(step_ns);
  s.comp_ns = stat(comp_ns);
  s.comm_ns = stat(comm_ns);
  s.overlap = stat(overlap);
  s.exposed_comm_ns = stat(comm_ns * (1 - overlap));
  s.idle_ns = stat(std::max(0.0, step_ns - comp_ns - comm_ns * (1 - overlap)));  // no op runs
  return s;
}

// Two ranks of 100 ms steps, 90 ms of compute, 10 ms of communication 80 % hidden: no rule
// fires on it.
Report healthy() {
  Report r;
  r.world_size = 2;
  r.ranks = {rank(0, 100e6, 90e6, 10e6, 0.8), rank(1, 100e6, 90e6, 10e6, 0.8)};
  return r;
}

RunFacts ddp_facts() {
  RunFacts f;
  f.known = true;
  f.dp_mode = "ddp";
  f.bucket_mb = 25;
  f.schedule = "1f1b";
  return f;
}

const Finding* find(const Report& r, std::string_view rule) {
  for (const Finding& f : r.findings) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

Report with_findings(Report r, const RunFacts& facts = ddp_facts()) {
  add_findings(r, facts);
  return r;
}

TEST(Findings, NoneFireOnAHealthyRun) {
  const Report r = with_findings(healthy());
  for (const Finding& f : r.findings) EXPECT_FALSE(f.fired()) << f.rule << ": " << f.evidence;
}

TEST(Findings, OverlapBelowTargetCostsTheCommunicationLeftToHide) {
  Report r = healthy();
  r.ranks = {rank(0, 100e6, 80e6, 20e6, 0.25), rank(1, 100e6, 80e6, 20e6, 0.35)};
  r = with_findings(std::move(r));
  const Finding* f = find(r, "overlap_below_target");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->fired());
  // Mean of 20 ms × (60 % − 25 %) = 7 ms and 20 ms × (60 % − 35 %) = 5 ms.
  EXPECT_NEAR(f->cost_ns, 6e6, 1);
  EXPECT_NEAR(f->cost_fraction, 0.06, 1e-9);
  EXPECT_EQ(f->ranks, "0");  // the lowest overlap
  EXPECT_NE(f->evidence.find("overlap 30.0 %"), std::string::npos) << f->evidence;
}

TEST(Findings, OverlapTargetIsAnOption) {
  Report r = healthy();  // 80 % overlap
  FindingOptions o;
  o.target_overlap = 0.9;
  add_findings(r, ddp_facts(), o);
  const Finding* f = find(r, "overlap_below_target");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->cost_ns, 10e6 * 0.1, 1);
}

TEST(Findings, RulesOverComputeSayWhatAPluginOnlyFileLacks) {
  Report r = healthy();
  for (RankSummary& s : r.ranks) s.comp_ns = stat(0);
  r = with_findings(std::move(r));
  for (const char* rule : {"overlap_below_target", "exposed_comm", "compute_busy"}) {
    const Finding* f = find(r, rule);
    ASSERT_NE(f, nullptr) << rule;
    EXPECT_FALSE(f->fired()) << rule;
    EXPECT_EQ(f->status.rfind("not evaluated: needs compute ops", 0), 0u) << f->status;
    EXPECT_LT(f->cost_ns, 0) << rule;
  }
}

TEST(Findings, ExposedCommNamesTheGroupAndTheBucketSize) {
  Report r = healthy();
  r.ranks = {rank(0, 100e6, 90e6, 20e6, 0.5), rank(1, 100e6, 90e6, 20e6, 0.5)};  // 10 ms exposed
  GroupTimeRow dp;
  dp.group = "dp";
  dp.exposed_ns = 10e6;
  dp.exposed_max_ns = 12e6;
  dp.exposed_worst_rank = 1;
  r.group_times = {dp};
  CriticalShareRow share{1, "COMM", "dp.bucket0.allreduce", "dp0", 8e6, 0.08, 3};
  r.critical_shares = {share};
  const Report ddp = with_findings(r);
  const Finding* f = find(ddp, "exposed_comm");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->fired());
  EXPECT_NEAR(f->cost_ns, 10e6, 1);
  EXPECT_NEAR(f->cost_fraction, 0.10, 1e-9);
  EXPECT_EQ(f->comm, "dp");
  EXPECT_EQ(f->ranks, "1");
  EXPECT_NE(f->ops.find("dp.bucket0.allreduce on dp0"), std::string::npos) << f->ops;
  EXPECT_NE(f->action.find("--bucket-mb 12.50"), std::string::npos) << f->action;

  RunFacts zero = ddp_facts();
  zero.dp_mode = "zero";
  const Report zr = with_findings(r, zero);
  const Finding* z = find(zr, "exposed_comm");
  ASSERT_NE(z, nullptr);
  EXPECT_NE(z->action.find("prefetch"), std::string::npos) << z->action;
}

TEST(Findings, ExposedCommBelowFivePercentDoesNotFire) {
  Report r = healthy();  // 2 ms exposed of 100 ms
  const Report done = with_findings(r);
  const Finding* f = find(done, "exposed_comm");
  EXPECT_TRUE(f == nullptr || !f->fired());
}

Report straggling(std::int64_t wait0_ns) {
  Report r = healthy();
  RankWait w0{0, "node0", 6, wait0_ns, 0, 0, 6};
  RankWait w1{1, "node1", 6, 0, wait0_ns, 6, 0};
  r.waits = {w0, w1};
  CriticalStepRow s;
  s.straggler_rank = 1;
  s.straggler_at = "allreduce dp0 #4";
  s.straggler_cause = "l1.mlp.fwd (COMP)";
  s.straggler_excess_ns = 4e6;
  r.critical_steps = {s, s, s};
  return r;
}

TEST(Findings, SyncWaitNamesTheStragglerAndItsCause) {
  // Rank 0 waits 90 ms over its 3 timed steps (30 ms a step), rank 1 none: 15 ms a step.
  const Report r = with_findings(straggling(90'000'000));
  const Finding* f = find(r, "sync_wait");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->fired());
  EXPECT_NEAR(f->cost_ns, 15e6, 1);
  EXPECT_NEAR(f->cost_fraction, 0.15, 1e-9);
  EXPECT_EQ(f->ranks, "1");
  EXPECT_EQ(f->ops, "l1.mlp.fwd (COMP)");
  EXPECT_EQ(f->comm, "allreduce dp0 #4");
  EXPECT_NE(f->evidence.find("in 3 of 3 steps"), std::string::npos) << f->evidence;
  EXPECT_NE(f->evidence.find("4.000 ms longer"), std::string::npos) << f->evidence;
}

TEST(Findings, SyncWaitAtTenPercentDoesNotFire) {
  const Report r = with_findings(straggling(60'000'000));  // 10 ms a step: not above 10 %
  const Finding* f = find(r, "sync_wait");
  EXPECT_TRUE(f == nullptr || !f->fired());
}

TEST(Findings, ComputeBusyNamesTheHostGaps) {
  Report r = healthy();
  r.ranks = {rank(0, 100e6, 70e6, 5e6, 0.8), rank(1, 100e6, 70e6, 5e6, 0.8)};
  CriticalStepRow s;
  s.gap_ns = 20'000'000;
  r.critical_steps = {s, s};
  r.critical_shares = {CriticalShareRow{0, "gap", "l0.qkv.fwd", "", 20e6, 0.2, 2}};
  r = with_findings(std::move(r));
  const Finding* f = find(r, "compute_busy");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->fired());
  // 100 ms − 70 ms / 0.85: the step at 85 % busy, less than the 29 ms no op runs.
  EXPECT_NEAR(f->cost_ns, 100e6 - 70e6 / 0.85, 1);
  EXPECT_NE(f->ops.find("l0.qkv.fwd"), std::string::npos) << f->ops;
  EXPECT_NE(f->evidence.find("host gaps on the critical path 20.000 ms"), std::string::npos)
      << f->evidence;
  EXPECT_EQ(f->action.rfind("launch-bound", 0), 0u) << f->action;
  EXPECT_EQ(find(with_findings(healthy()), "compute_busy"), nullptr);  // 90 % busy
}

Report pipeline(double bubble0, double bubble1, double comp0, double comp1) {
  Report r = healthy();
  r.stages = {StageRow{0, 2, 100e6, comp0, 0, bubble0}, StageRow{1, 2, 100e6, comp1, 0, bubble1}};
  return r;
}

RunFacts pipeline_facts() {
  RunFacts f = ddp_facts();
  f.pp = 2;
  f.micro_batches = 4;
  f.layers = 8;
  f.stage_layers = {4, 4};
  return f;
}

TEST(Findings, PipelineBubbleAboveTheSchedules) {
  // 2 stages, 4 micro-batches: (2-1)/(4+2-1) = 20 %; the slowest stage (1) 45 %: 25 % of
  // 100 ms. Stage 0's 60 % is waiting for stage 1: not the schedule's.
  const Report r = with_findings(pipeline(0.60, 0.45, 49e6, 50e6), pipeline_facts());
  const Finding* f = find(r, "pipeline_bubble");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->fired());
  EXPECT_NEAR(f->cost_ns, 25e6, 1);
  EXPECT_NE(f->evidence.find("implies 20.0 %"), std::string::npos) << f->evidence;
  EXPECT_NE(f->action.find("--micro-batches 8"), std::string::npos) << f->action;
  // 25 % is within 10 points of the schedule's.
  EXPECT_EQ(
      find(with_findings(pipeline(0.25, 0.25, 50e6, 50e6), pipeline_facts()), "pipeline_bubble"),
      nullptr);
}

TEST(Findings, StageImbalanceProposesTheSplitThatBalancesIt) {
  // Stage 0: 4 layers of 10 ms; stage 1: 4 layers and 20 ms of ends. Layers one by one to the
  // least loaded stage from (0, 20 ms): 5 and 3 layers, 50 ms each; the slowest stage saves
  // 60 − 50 = 10 ms in each of the 4 + 2 − 1 slots of 4 micro-batches: 12.5 ms a step.
  const Report r = with_findings(pipeline(0.2, 0.2, 40e6, 60e6), pipeline_facts());
  const Finding* f = find(r, "stage_imbalance");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->fired());
  EXPECT_EQ(f->action, "--pp-layers 5,3");
  EXPECT_NEAR(f->cost_ns, 12.5e6, 1);
  EXPECT_NE(f->evidence.find("max/mean 1.20"), std::string::npos) << f->evidence;
  EXPECT_EQ(
      find(with_findings(pipeline(0.2, 0.2, 50e6, 52e6), pipeline_facts()), "stage_imbalance"),
      nullptr);
}

Report experts(double imbalance) {
  Report r = healthy();
  GroupTimeRow ep;
  ep.group = "ep";
  ep.alltoalls = 6;
  ep.recv_mean_bytes = 1000;
  ep.recv_max_bytes = 1000 * imbalance;
  ep.recv_imbalance = imbalance;
  ep.recv_busiest_rank = 3;
  ep.comm_ns = 9e6;
  ep.alltoall_wait_ns = 5e6;
  r.group_times = {ep};
  return r;
}

TEST(Findings, EpImbalanceProposesACapacityFactor) {
  const Report r = with_findings(experts(1.8));
  const Finding* f = find(r, "ep_imbalance");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->fired());
  // 9 ms of all-to-alls, the busiest rank's 1.8x: 9 × (1 − 1/1.8) = 4 ms.
  EXPECT_NEAR(f->cost_ns, 4e6, 1);
  EXPECT_EQ(f->ranks, "3");
  EXPECT_EQ(f->comm, "ep");
  EXPECT_EQ(f->bytes, 1800);
  // Capped at 1.25x the mean: the wait shrinks to (1.25 − 1) / (1.8 − 1) of today's.
  EXPECT_NE(f->action.find("--moe-capacity-factor 1.25"), std::string::npos) << f->action;
  EXPECT_NE(f->action.find("31.2 %"), std::string::npos) << f->action;
  EXPECT_EQ(find(with_findings(experts(1.05)), "ep_imbalance"), nullptr);
}

TEST(Findings, AStragglerLateForItsRoutedRowsIsToldToBalanceTheRouting) {
  // Rank 1 is both the straggler and the rank that receives 1.8x the mean rows: the wait's action
  // is the routing's, not "check its device".
  Report r = straggling(90'000'000);
  r.group_times = experts(1.8).group_times;
  r.group_times[0].recv_busiest_rank = 1;
  r = with_findings(r);
  const Finding* wait = find(r, "sync_wait");
  ASSERT_NE(wait, nullptr);
  ASSERT_TRUE(wait->fired());
  EXPECT_NEAR(wait->cost_ns, 15e6, 1);  // the cost is still the measured wait
  const std::string routing =
      "rank 1 is late for the rows the router sends its experts (ep_imbalance, on ep): "
      "--moe-capacity-factor 1.25 caps";
  EXPECT_EQ(wait->action.rfind(routing, 0), 0u) << wait->action;
  // Another rank loaded most over the run, the straggler late after a dense op: it keeps its own
  // cause.
  Report other = straggling(90'000'000);
  other.group_times = experts(1.8).group_times;
  other = with_findings(other);
  EXPECT_EQ(find(other, "sync_wait")->action.find("router"), std::string::npos);
  // ... but late after one of its experts' ops (the hot experts move between steps): routing.
  Report expert_late = straggling(90'000'000);
  expert_late.group_times = experts(1.8).group_times;
  for (CriticalStepRow& step : expert_late.critical_steps)
    step.straggler_cause = "l1.expert4.up.mb1.wgrad (COMP)";
  expert_late = with_findings(expert_late);
  EXPECT_EQ(find(expert_late, "sync_wait")->action.rfind(routing, 0), 0u);
}

Report large_allreduce(double peak_fraction, double peak) {
  Report r = healthy();
  r.peak_busbw_gbps = peak;
  CollectiveRow c;
  c.collective = "allreduce";
  c.comm_size = 2;
  c.bytes = 64ull << 20;
  c.count = 6;  // 3 timed steps of 2 ranks, one communicator: 2 calls a step per rank
  c.p50_ns = 10e6;
  c.busbw_gbps = 20;
  c.peak_fraction = peak_fraction;
  r.collectives = {c};
  return r;
}

TEST(Findings, BusbwLowCostsTheTimeAtHalfThePeak) {
  const Report r = with_findings(large_allreduce(0.2, 100));
  const Finding* f = find(r, "busbw_low");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->fired());
  // 2 calls × 10 ms × (1 − 0.2 / 0.5).
  EXPECT_NEAR(f->cost_ns, 12e6, 1);
  EXPECT_EQ(f->bytes, 64 << 20);
  EXPECT_EQ(f->ops, "allreduce");
  EXPECT_EQ(find(with_findings(large_allreduce(0.7, 100)), "busbw_low"), nullptr);
  const Report no_peak = with_findings(large_allreduce(-1, 0));
  const Finding* unknown = find(no_peak, "busbw_low");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->status,
            "not evaluated: needs --peak-busbw (the link's bus bandwidth in GB/s)");
}

TEST(Findings, VocabNotAMultipleOf64) {
  Report r = healthy();
  // The head's GEMMs: 12 ms over 2 ranks × 3 timed steps, 2 ms a step.
  OpTiming head;
  head.count = 6;
  head.total_ns = 12e6;
  r.op_timings[{static_cast<int>(Category::kComp), "head.mb0.fwd"}] = head;
  RunFacts facts = ddp_facts();
  facts.vocab = 50257;
  facts.vocab_multiple = 1;  // unpadded, as Hugging Face keeps GPT-2's
  const Report unpadded = with_findings(r, facts);
  const Finding* f = find(unpadded, "vocab_alignment");
  ASSERT_NE(f, nullptr);
  ASSERT_TRUE(f->fired());
  EXPECT_NEAR(f->cost_ns, 2e6, 1);
  EXPECT_NE(f->action.find("pads it to 50304"), std::string::npos) << f->action;
  facts.vocab_multiple = 128;  // Megatron's default: 50304 rows
  EXPECT_EQ(find(with_findings(r, facts), "vocab_alignment"), nullptr);
  const Report no_config = with_findings(r, RunFacts{});
  const Finding* unknown = find(no_config, "vocab_alignment");
  ASSERT_NE(unknown, nullptr);
  EXPECT_FALSE(unknown->fired());
}

TEST(Findings, ExposedCommLeavesTheWaitsToSyncWait) {
  // 25 ms exposed on each rank; rank 0 waits 30 ms a step for rank 1: its transfers 0, rank
  // 1's 25 ms: 12.5 ms (the mean wait 15 ms).
  Report r = straggling(90'000'000);
  r.ranks = {rank(0, 100e6, 90e6, 50e6, 0.5), rank(1, 100e6, 90e6, 50e6, 0.5)};
  const Report done = with_findings(r);
  const Finding* f = find(done, "exposed_comm");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->cost_ns, 12.5e6, 1);
  EXPECT_NE(f->evidence.find("15.000 ms of it waiting at collectives"), std::string::npos)
      << f->evidence;
}

TEST(Findings, AHangComesFirstAndTheRestByCost) {
  Report r = straggling(90'000'000);  // sync_wait 15 ms
  // 25 ms exposed (12.5 ms of transfers), overlap 50 %: 50 ms × 10 % = 5 ms short of the target,
  // of which rank 0 (its 25 ms exposed all waiting) can hide none: 2.5 ms.
  r.ranks = {rank(0, 100e6, 90e6, 50e6, 0.5), rank(1, 100e6, 90e6, 50e6, 0.5)};
  r.warnings = {"hang: dp0 allreduce #12 unfinished on ranks 0 1 3; rank 2 never started it"};
  r = with_findings(std::move(r));
  ASSERT_GE(r.findings.size(), 4u);
  EXPECT_EQ(r.findings[0].rule, "hang");
  EXPECT_LT(r.findings[0].cost_ns, 0);
  EXPECT_NE(r.findings[0].evidence.find("rank 2 never started it"), std::string::npos);
  EXPECT_EQ(r.findings[1].rule, "sync_wait");
  EXPECT_EQ(r.findings[2].rule, "exposed_comm");
  EXPECT_EQ(r.findings[3].rule, "overlap_below_target");
  EXPECT_NEAR(r.findings[3].cost_ns, 2.5e6, 1);
  EXPECT_TRUE(finding_fired(r, "hang"));
  EXPECT_FALSE(finding_fired(r, "busbw_low"));
  EXPECT_EQ(find(with_findings(healthy()), "hang"), nullptr);
}

TEST(Findings, RunFactsFromARunConfiguration) {
  const JsonObject config(
      nlohmann::ordered_json{{"command", "run"},
                             {"tp", 2},
                             {"pp", 2},
                             {"dp_mode", "zero"},
                             {"schedule", "gpipe"},
                             {"bucket_mb", 12.5},
                             {"stage_layers", {3, 5}},
                             {"model", {{"layers", 8}, {"micro_batches", 4}, {"vocab", 50257}}}});
  const RunFacts f = run_facts(config);
  EXPECT_TRUE(f.known);
  EXPECT_EQ(f.tp, 2);
  EXPECT_EQ(f.pp, 2);
  EXPECT_EQ(f.dp_mode, "zero");
  EXPECT_EQ(f.schedule, "gpipe");
  EXPECT_EQ(f.micro_batches, 4);
  EXPECT_EQ(f.vocab, 50257);
  EXPECT_EQ(f.vocab_multiple, 128);
  EXPECT_EQ(f.stage_layers, (std::vector<int>{3, 5}));
  EXPECT_FALSE(run_facts(JsonObject(nlohmann::ordered_json{{"command", "import-nsys"}})).known);
  EXPECT_FALSE(run_facts(JsonObject()).known);
}

}  // namespace
}  // namespace commprof
