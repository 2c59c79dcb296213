// SPDX-License-Identifier: MIT
// Several source runs combined into one (workloads/prediction/source_runs.hpp), against answers
// worked out by hand. Three synthetic serial dp runs (tests/support/synthetic_runs.hpp) at known
// rates that differ per run:
//
//   run   GEMM FLOP/ns   bytes/ns   all-reduce busbw
//   A     2              3          5 GB/s
//   B     4              1          10 GB/s
//   C     1              0.5        20 GB/s
//
// The medians are 2 FLOP/ns (A's), 1 B/ns (B's) and 10 GB/s (B's): the defaults of
// synthetic_runs.hpp, so the combined run must predict dp=4's step exactly as a run at the
// default rates does: the sum of the dp=4 plan's op times at those rates (serial_step_ns, no
// replay). No single run predicts it, nor would the runs' mean rates (7/3 FLOP/ns, 1.5 B/ns).
#include "workloads/prediction/source_runs.hpp"

#include <gtest/gtest.h>

#include <string>

#include "src/core/errors.hpp"
#include "support/synthetic_runs.hpp"
#include "workloads/prediction/projection.hpp"

namespace commprof {
namespace {

using test::KnownRates;

test::KnownRates rates(double flops, double bytes, double busbw) {
  KnownRates k;
  k.flops_per_ns = flops;
  k.bytes_per_ns = bytes;
  k.busbw_gbps = busbw;
  return k;
}

MeasuredRun source_run(const KnownRates& k, const std::string& name) {
  return measured_run(test::synthetic_run(test::serial_dp(2), 2, k), name);
}

std::vector<MeasuredRun> three_runs() {
  std::vector<MeasuredRun> runs;
  runs.push_back(source_run(rates(2.0, 3.0, 5.0), "A"));
  runs.push_back(source_run(rates(4.0, 1.0, 10.0), "B"));
  runs.push_back(source_run(rates(1.0, 0.5, 20.0), "C"));
  return runs;
}

const CombinedFigure* find_figure(const std::vector<CombinedFigure>& figures,
                                  const std::string& name) {
  for (const CombinedFigure& f : figures) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

ParallelLayout dp(int n) {
  ParallelLayout l;
  l.dp = n;
  return l;
}

TEST(SourceRuns, ThreeRunsPredictTheStepOfTheirMedianRates) {
  const std::int64_t want = test::serial_step_ns(test::serial_dp(4));
  const LinkModel links = test::known_links();
  ProjectionOptions given;
  given.links = &links;
  given.overlap_slowdown = false;
  // Each run alone predicts its own rates' step, none the median's.
  for (const MeasuredRun& one : three_runs()) {
    EXPECT_GT(std::llabs(project(one, dp(4), given).outcome.step_ns - want), want / 20);
  }
  const MeasuredRun run = combine_runs(three_runs());
  ASSERT_EQ(run.sources.size(), 3u);
  EXPECT_DOUBLE_EQ(run.rates.gemm_flops.per_ns(), 2.0);
  EXPECT_DOUBLE_EQ(run.rates.pass_bytes.per_ns(), 1.0);
  for (const auto& [cls, t] : run.rates.by_class) {
    EXPECT_DOUBLE_EQ(t.per_ns(), OverlapSlowdown::comp_kind(cls) == "flop" ? 2.0 : 1.0) << cls;
  }
  EXPECT_EQ(run.rates.steps, 6);  // 2 measured steps of each
  // Given the link model (the known one): exactly the sum of the plan's times at the medians.
  EXPECT_EQ(project(run, dp(4), given).outcome.step_ns, want);
  // Fitted to the runs' own all-reduces: each point is its median time, B's, so the fit is B's
  // 5 µs and 10 GB/s.
  ASSERT_EQ(run.own_links.fits.size(), 1u);
  EXPECT_NEAR(run.own_links.fits[0].latency_us, 5.0, 1e-3);
  EXPECT_NEAR(run.own_links.fits[0].busbw_gbps, 10.0, 1e-3);
  // With the overlap slowdown (measured on each run against that fit: nothing overlapped, and the
  // all-reduces' alone ratio A's 5/10-slow, B's 1, C's fast: their median 1) and the ranks'
  // spread (1 on every rank): the same step, within the records' whole ns.
  const Projection own = project(run, dp(4), ProjectionOptions{});
  EXPECT_NEAR(static_cast<double>(own.outcome.step_ns), static_cast<double>(want), 50.0);
  for (const auto& [key, f] : own.slowdown.comm) EXPECT_NEAR(f.alone, 1.0, 1e-3) << key.group;
  for (const auto& [cls, rate] : own.slowdown.alone_rate) {
    EXPECT_NEAR(rate, OverlapSlowdown::comp_kind(cls) == "flop" ? 2.0 : 1.0, 1e-9) << cls;
  }
  EXPECT_FALSE(own.slowdown_figures.empty());
  // Each figure says how many runs it came from and their range, in its unit.
  const CombinedFigure* gemm = find_figure(run.combined, "rate, every op of GEMMs (FLOPs)");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->runs, 3);
  EXPECT_EQ(gemm->unit, "TFLOP/s");
  EXPECT_DOUBLE_EQ(gemm->median, 2e-3);
  EXPECT_DOUBLE_EQ(gemm->min, 1e-3);
  EXPECT_DOUBLE_EQ(gemm->max, 4e-3);
  EXPECT_DOUBLE_EQ(gemm->spread(), 3.0);  // 4 / 1 − 1
  const CombinedFigure* bytes =
      find_figure(run.combined, "rate, every op of memory-bound passes (bytes)");
  ASSERT_NE(bytes, nullptr);
  EXPECT_DOUBLE_EQ(bytes->median, 1.0);
  // 3 / 0.5 − 1, A's 3 B/ns within its ops' whole ns
  EXPECT_NEAR(bytes->spread(), 5.0, 1e-5);
}

TEST(SourceRuns, OneRunIsItsOwnFigures) {
  std::vector<MeasuredRun> one;
  one.push_back(source_run(rates(2.0, 3.0, 5.0), "A"));
  const MeasuredRun run = combine_runs(std::move(one));
  EXPECT_TRUE(run.sources.empty());
  EXPECT_TRUE(run.combined.empty());
  EXPECT_NEAR(run.rates.pass_bytes.per_ns(), 3.0, 1e-5);  // within its ops' whole ns
}

TEST(SourceRuns, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  EXPECT_DOUBLE_EQ(median_of({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({5.0, 1.0, 3.0}), 3.0);
  EXPECT_DOUBLE_EQ(median_of({}), 0.0);
}

// The ranks' compute speeds as order statistics: run 1's slow rank is 0 (1.4), run 2's rank 1
// (1.2), run 3's rank 1 (1.6). The slowest speed is the median of 1.4, 1.2, 1.6 = 1.4, the
// fastest the median of 0.6, 0.8, 0.4 = 0.6; rank 1 is the slower by its own median (1.2 against
// 0.8), so it gets 1.4. A median per rank id would give 0.8 and 1.2: a spread of 1.5 where every
// run showed 2.0 or more.
TEST(SourceRuns, RankSpeedsKeepTheSpreadEveryRunShowed) {
  std::vector<MeasuredRun> runs(3);
  runs[0].rates.rank_compute = {1.4, 0.6};
  runs[1].rates.rank_compute = {0.8, 1.2};
  runs[2].rates.rank_compute = {0.4, 1.6};
  const MeasuredRun run = combine_runs(std::move(runs));
  ASSERT_EQ(run.rates.rank_compute.size(), 2u);
  EXPECT_DOUBLE_EQ(run.rates.rank_compute[1], 1.4);
  EXPECT_DOUBLE_EQ(run.rates.rank_compute[0], 0.6);
}

SlowdownFactor factor(double alone, double slowdown, std::int64_t overlapped) {
  SlowdownFactor f;
  f.alone = alone;
  f.slowdown = slowdown;
  f.alone_ops = 4;
  f.overlapped_ops = overlapped;
  f.mean_overlap = 0.5;
  f.measured_slowdown = true;
  return f;
}

// Each run's factor as that run applies it, by hand:
// - all-reduce on dp, [1 MiB, 2 MiB): run 1 alone 0.5, slowdown 3 (fully overlapped 2.0); run 2
//   measured none of that size, so its communicator kind's alone 2.0, slowdown 0 (2.0); run 3
//   alone 1.0, slowdown 0.5 (1.5). Alone: the median of 0.5, 2.0, 1.0 = 1.0; fully overlapped the
//   median of 2.0, 2.0, 1.5 = 2.0; so slowdown 2.0 / 1.0 − 1 = 1. (The medians of alone and of
//   slowdown apart, 1.0 and 0.5, would give 1.5 fully overlapped: less than two runs of three.)
// - COMP qkv.fwd/flop: runs 1 and 3 measured their own from 150 overlapped ops (0.2, 0.3); run 2
//   from 10, so it applies its kind's pooled 0.5: the median of 0.2, 0.5, 0.3 = 0.3, from 310 ops.
TEST(SourceRuns, SlowdownsAreTheMediansOfWhatEachRunApplies) {
  const CommKey key{CollectiveKind::kAllReduce, "dp", 20, false};
  std::vector<OverlapSlowdown> each(3);
  each[0].comm[key] = factor(0.5, 3.0, 6);
  each[0].comm_by_kind[{CollectiveKind::kAllReduce, "dp"}] = factor(0.5, 3.0, 6);
  each[1].comm_by_kind[{CollectiveKind::kAllReduce, "dp"}] = factor(2.0, 0.0, 8);
  each[2].comm[key] = factor(1.0, 0.5, 5);
  each[2].comm_by_kind[{CollectiveKind::kAllReduce, "dp"}] = factor(1.0, 0.5, 5);
  each[0].comp["qkv.fwd/flop"] = factor(1.0, 0.2, 150);
  each[1].comp["qkv.fwd/flop"] = factor(1.0, 0.9, 10);
  each[1].comp_pooled["flop"] = factor(1.0, 0.5, 200);
  each[2].comp["qkv.fwd/flop"] = factor(1.0, 0.3, 150);
  std::vector<CombinedFigure> figures;
  const OverlapSlowdown s = combine_slowdowns(each, &figures);
  const SlowdownFactor* comm = s.comm_factor(key);
  ASSERT_NE(comm, nullptr);
  EXPECT_DOUBLE_EQ(comm->alone, 1.0);
  EXPECT_DOUBLE_EQ(comm->slowdown, 1.0);
  EXPECT_EQ(comm->overlapped_ops, 11);  // measured at this size: runs 1 and 3
  const SlowdownFactor& comp = s.comp_factor("qkv.fwd/flop");
  EXPECT_DOUBLE_EQ(comp.slowdown, 0.3);
  EXPECT_EQ(comp.overlapped_ops, 310);
  const CombinedFigure* full =
      find_figure(figures, "fully overlapped x COMM allreduce dp [1 MiB, 2 MiB)");
  ASSERT_NE(full, nullptr);
  EXPECT_EQ(full->runs, 3);
  EXPECT_DOUBLE_EQ(full->min, 1.5);
  EXPECT_DOUBLE_EQ(full->max, 2.0);
}

TEST(SourceRuns, RunsOfAnotherSourceAreRefusedNamingTheField) {
  const MeasuredRun a = source_run(KnownRates{}, "A");
  WorkloadConfig three_layers = test::serial_dp(2);
  three_layers.shape.layers = 3;
  const MeasuredRun other = measured_run(test::synthetic_run(three_layers, 1), "B");
  try {
    check_same_source(a, "runA", other, "runB");
    FAIL() << "a run of 3 layers was combined with one of 2";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "runB: not a run of the same source as runA: model.layers is 3 there, 2 in runA"),
              std::string::npos)
        << e.what();
  }
  WorkloadConfig overlapped = test::serial_dp(2);
  overlapped.no_overlap = false;
  try {
    check_same_source(a, "runA", measured_run(test::synthetic_run(overlapped, 1), "C"), "runC");
    FAIL() << "an overlapped run was combined with a --no-overlap one";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no_overlap is false there, true in runA"),
              std::string::npos)
        << e.what();
  }
  // Steps and op timing may differ: a run of 1 step is the same source.
  EXPECT_NO_THROW(check_same_source(
      a, "runA", measured_run(test::synthetic_run(test::serial_dp(2), 1), "D"), "runD"));
}

}  // namespace
}  // namespace commprof
