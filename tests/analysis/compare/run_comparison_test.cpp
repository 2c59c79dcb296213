// SPDX-License-Identifier: MIT
// `commprof compare`'s arithmetic on runs whose answers are worked out by hand: thresholds as
// typed, noise from the step-to-step spread, and the same metrics from a Report and from the
// report JSON written of it.
#include "analysis/compare/run_comparison.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "analysis/compare/comparison_writers.hpp"
#include "analysis/reducer.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/three_ranks.hpp"
#include "analysis/tools/synthetic_timeline.hpp"
#include "src/core/errors.hpp"

namespace commprof {
namespace {

using ::testing::HasSubstr;

TEST(Stat, SampleStandardDeviation) {
  Stat s;
  EXPECT_FALSE(s.stddev());
  s.add(2);
  EXPECT_FALSE(s.stddev());  // one value: no spread
  for (double v : {4, 4, 4, 5, 5, 7, 9}) s.add(v);
  // Mean 5, Σ(v − 5)² = 9+1+1+1+0+0+4+16 = 32, n − 1 = 7.
  ASSERT_TRUE(s.stddev());
  EXPECT_DOUBLE_EQ(*s.stddev(), std::sqrt(32.0 / 7.0));
  Stat same;
  for (int i = 0; i < 5; ++i) same.add(1e12 + 0.5);  // large equal values: exactly 0
  EXPECT_EQ(*same.stddev(), 0.0);
}

TEST(Threshold, ParsesWhatTheHelpShows) {
  const Threshold step = parse_threshold("step>+5%");
  EXPECT_EQ(step.family, "step");
  EXPECT_TRUE(step.label.empty());
  EXPECT_TRUE(step.above);
  EXPECT_DOUBLE_EQ(step.limit, 5.0);
  EXPECT_FALSE(step.points);
  const Threshold bw = parse_threshold("busbw[allreduce n=8 1 MiB] < -3 %");
  EXPECT_EQ(bw.family, "busbw");
  EXPECT_EQ(bw.label, "allreduce n=8 1 MiB");
  EXPECT_FALSE(bw.above);
  EXPECT_DOUBLE_EQ(bw.limit, -3.0);
  const Threshold overlap = parse_threshold("overlap<-2pp");
  EXPECT_TRUE(overlap.points);
  EXPECT_DOUBLE_EQ(overlap.limit, -2.0);
}

TEST(Threshold, RefusesWhatItCannotMean) {
  auto message = [](const std::string& text) {
    try {
      parse_threshold(text);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(message("stp>5%"), HasSubstr("unknown metric 'stp'; the metrics are step, comp"));
  EXPECT_THAT(message("step>5pp"), HasSubstr("pp (percentage points) applies to ratios"));
  EXPECT_THAT(message("step>5"), HasSubstr("the limit has no unit"));
  EXPECT_THAT(message("step>5ms"), HasSubstr("unknown unit 'ms'"));
  EXPECT_THAT(message("step=5%"), HasSubstr("no < or >"));
  EXPECT_THAT(message("step>%"), HasSubstr("no number"));
  EXPECT_THAT(message("busbw[dp<-3%"), HasSubstr("must end with ]"));
  EXPECT_THAT(message(">5%"), HasSubstr("no metric"));
}

RunMetric metric(const std::string& family, const std::string& label, MetricUnit unit, double value,
                 std::optional<double> spread = {}, std::int64_t samples = 0,
                 bool higher_is_better = false) {
  RunMetric m;
  m.family = family;
  m.label = label;
  m.unit = unit;
  m.value = value;
  m.spread = spread;
  m.samples = samples;
  m.higher_is_better = higher_is_better;
  return m;
}

TEST(CompareRuns, KnownAnswers) {
  RunMetrics base, next;
  base.metrics = {metric("step", "", MetricUnit::kNanoseconds, 100e6, 4e6, 16),
                  metric("overlap", "", MetricUnit::kRatio, 0.50, 0.01, 16, true),
                  metric("busbw", "dp", MetricUnit::kGBps, 200, {}, 0, true),
                  metric("busbw", "tp", MetricUnit::kGBps, 300, {}, 0, true),
                  metric("straggler", "", MetricUnit::kNanoseconds, 1e6)};
  next.metrics = {metric("step", "", MetricUnit::kNanoseconds, 110e6, 4e6, 16),
                  metric("overlap", "", MetricUnit::kRatio, 0.47, 0.01, 16, true),
                  metric("busbw", "dp", MetricUnit::kGBps, 190, {}, 0, true),
                  metric("busbw", "tp", MetricUnit::kGBps, 297, {}, 0, true),
                  metric("busbw", "pp", MetricUnit::kGBps, 50, {}, 0, true)};
  const std::vector<Threshold> thresholds = {
      parse_threshold("step>+5%"),     parse_threshold("step>+15%"),
      parse_threshold("overlap<-2pp"), parse_threshold("busbw[dp]<-3%"),
      parse_threshold("busbw<-4%"),    parse_threshold("hidden<-1pp")};
  const Comparison c = compare_runs(base, next, thresholds);
  ASSERT_EQ(c.rows.size(), 6u);

  const MetricComparison& step = c.rows[0];
  EXPECT_DOUBLE_EQ(step.delta, 10e6);
  EXPECT_DOUBLE_EQ(*step.relative, 0.10);
  // 2 × sqrt(4²/16 + 4²/16) ms = 2·√2 ms: a 10 ms change is beyond it.
  EXPECT_DOUBLE_EQ(*step.noise, 2.0 * std::sqrt(2.0) * 1e6);
  EXPECT_TRUE(step.beyond_noise());
  EXPECT_TRUE(step.worse());
  EXPECT_EQ(step.crossed, std::vector<std::string>{"step>+5%"});

  const MetricComparison& overlap = c.rows[1];
  EXPECT_NEAR(overlap.delta, -0.03, 1e-12);  // −3 pp: crosses −2 pp
  EXPECT_TRUE(overlap.worse());
  EXPECT_EQ(overlap.crossed, std::vector<std::string>{"overlap<-2pp"});

  // dp −5%: both its own threshold and the family's; tp −1%: neither.
  EXPECT_EQ(c.rows[2].crossed, (std::vector<std::string>{"busbw[dp]<-3%", "busbw<-4%"}));
  EXPECT_FALSE(c.rows[2].noise);  // no spread: noise unknown, not zero
  EXPECT_TRUE(c.rows[3].crossed.empty());
  EXPECT_DOUBLE_EQ(*c.rows[3].relative, -0.01);

  EXPECT_TRUE(c.rows[4].in_base);  // straggler: only in base
  EXPECT_FALSE(c.rows[4].in_new);
  EXPECT_TRUE(c.rows[5].in_new);  // busbw[pp]: only in new, not compared
  EXPECT_FALSE(c.rows[5].in_base);
  EXPECT_TRUE(c.rows[5].crossed.empty());

  EXPECT_EQ(c.crossed, 3);
  EXPECT_EQ(c.unmatched, std::vector<std::string>{"hidden<-1pp"});
}

// The noise is two standard errors of the difference of the two means, worked by hand rather
// than by the formula: spreads of 6 and 8 ms over 4 steps each are standard errors of 3 and 4 ms,
// whose difference has one of 5 ms (3-4-5), so the noise is 10 ms. A change of 9.9 ms is within
// it, 10.1 ms beyond; a spread over one step gives no noise at all.
TEST(CompareRuns, NoiseIsTwoStandardErrorsOfTheDifference) {
  RunMetrics base, next;
  base.metrics = {metric("step", "", MetricUnit::kNanoseconds, 100e6, 6e6, 4),
                  metric("comm", "", MetricUnit::kNanoseconds, 50e6, 6e6, 4),
                  metric("exposed_comm", "", MetricUnit::kNanoseconds, 20e6, 6e6, 1)};
  next.metrics = {metric("step", "", MetricUnit::kNanoseconds, 109.9e6, 8e6, 4),
                  metric("comm", "", MetricUnit::kNanoseconds, 60.1e6, 8e6, 4),
                  metric("exposed_comm", "", MetricUnit::kNanoseconds, 40e6, 8e6, 4)};
  const Comparison c = compare_runs(base, next, {});
  ASSERT_EQ(c.rows.size(), 3u);
  ASSERT_TRUE(c.rows[0].noise);
  EXPECT_NEAR(*c.rows[0].noise, 10e6, 1e-6);
  EXPECT_FALSE(c.rows[0].beyond_noise());
  ASSERT_TRUE(c.rows[1].noise);
  EXPECT_NEAR(*c.rows[1].noise, 10e6, 1e-6);
  EXPECT_TRUE(c.rows[1].beyond_noise());
  EXPECT_FALSE(c.rows[2].noise);  // one step: no spread to judge by
}

TEST(CompareRuns, ChangeWithinNoiseIsSaidToBe) {
  RunMetrics base, next;
  base.metrics = {metric("step", "", MetricUnit::kNanoseconds, 100e6, 10e6, 4)};
  next.metrics = {metric("step", "", MetricUnit::kNanoseconds, 105e6, 10e6, 4)};
  // noise = 2 × sqrt(100/4 + 100/4) ms = 14.1 ms > 5 ms.
  const Comparison c = compare_runs(base, next, {parse_threshold("step>+4%")});
  EXPECT_FALSE(c.rows[0].beyond_noise());
  EXPECT_EQ(c.crossed, 1);  // thresholds are the user's: crossed whatever the noise
  std::ostringstream text;
  write_comparison_text(text, c);
  EXPECT_THAT(text.str(), HasSubstr("worse, within noise  CROSSED step>+4%"));
  EXPECT_THAT(text.str(), HasSubstr("# REGRESSION: 1 metric(s) crossed a threshold"));
  EXPECT_THAT(text.str(),
              ::testing::ContainsRegex(" step +100 ms +105 ms +\\+5.00 ms +\\+5.00% +±14.1 ms"));
}

// The three-rank run with four measured steps and collectives of `comm_ns`.
SyntheticSpec spec_with(std::int64_t comm_ns) {
  SyntheticSpec spec = testing::three_ranks();
  spec.steps = 4;
  spec.comm_ns = comm_ns;
  return spec;
}
using testing::reduce;

const RunMetric* find(const RunMetrics& m, const std::string& key) {
  for (const RunMetric& x : m.metrics)
    if (x.key() == key) return &x;
  return nullptr;
}

TEST(RunMetrics, SyntheticRunsBusbwAndStraggler) {
  // Every allreduce takes 600 − 200 + comm_ns for the last arriver (see reducer_test), so the
  // busbw of 1 MiB over 3 ranks is 2^20 / t × 4/3, and rank 2 causes 300 ns of wait per
  // collective, two per step.
  const RunMetrics a = run_metrics_from_report(reduce(spec_with(6000)), "a");
  const RunMetrics b = run_metrics_from_report(reduce(spec_with(12000)), "b");
  EXPECT_EQ(a.ranks, 3);
  EXPECT_EQ(a.steps, 4);
  const RunMetric* bw = find(a, "busbw[allreduce n=3 1 MiB]");
  ASSERT_NE(bw, nullptr);
  EXPECT_DOUBLE_EQ(bw->value, 1048576.0 / 6400.0 * 4.0 / 3.0);
  const RunMetric* straggler = find(a, "straggler");
  ASSERT_NE(straggler, nullptr);
  EXPECT_DOUBLE_EQ(straggler->value, 2 * 300.0);
  EXPECT_EQ(straggler->note, "rank 2 (wait it caused per step)");
  const RunMetric* step = find(a, "step");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->samples, 4);
  ASSERT_TRUE(step->spread);
  EXPECT_EQ(*step->spread, 0.0);  // synthetic steps are all alike

  const Comparison c =
      compare_runs(a, b, {parse_threshold("busbw<-40%"), parse_threshold("busbw<-50%")});
  for (const MetricComparison& row : c.rows) {
    if (row.base_metric.key() != "busbw[allreduce n=3 1 MiB]") continue;
    EXPECT_DOUBLE_EQ(*row.relative, 6400.0 / 12400.0 - 1.0);  // −48.4%
    EXPECT_EQ(row.crossed, std::vector<std::string>{"busbw<-40%"});
  }
}

TEST(RunMetrics, ReportJsonGivesTheReportsOwnMetrics) {
  SyntheticSpec spec = spec_with(6000);
  spec.world_size = 4;
  spec.tp_size = 2;  // two families of communicators: world and tp
  const Report report = reduce(spec);
  std::ostringstream report_json;
  write_report_json(report_json, report);
  const RunMetrics direct = run_metrics_from_report(report, "dir");
  const RunMetrics parsed = run_metrics_from_report_json(report_json.str(), "report.json");
  ASSERT_EQ(direct.metrics.size(), parsed.metrics.size());
  ASSERT_GE(direct.metrics.size(), 12u);  // 9 per-rank families, 2 groups, rows, straggler
  for (std::size_t i = 0; i < direct.metrics.size(); ++i) {
    const RunMetric& d = direct.metrics[i];
    const RunMetric& p = parsed.metrics[i];
    EXPECT_EQ(d.key(), p.key());
    EXPECT_DOUBLE_EQ(d.value, p.value) << d.key();
    EXPECT_EQ(d.spread.has_value(), p.spread.has_value()) << d.key();
    if (d.spread && p.spread) {
      EXPECT_DOUBLE_EQ(*d.spread, *p.spread) << d.key();
    }
    EXPECT_EQ(d.samples, p.samples) << d.key();
    EXPECT_EQ(d.note, p.note) << d.key();
  }
  EXPECT_NE(find(direct, "busbw[tp]"), nullptr);
  EXPECT_NE(find(direct, "busbw[world]"), nullptr);
}

TEST(RunMetrics, ReportJsonProblemsNameTheFileAndTheField) {
  auto message = [](const std::string& text) {
    try {
      run_metrics_from_report_json(text, "r.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(message("{"), HasSubstr("r.json: not valid JSON"));
  EXPECT_THAT(message(R"({"schema": "commprof.rank", "version": 1})"),
              HasSubstr("r.json: not a commprof report (schema is not \"commprof.report\")"));
  EXPECT_THAT(message(R"({"schema": "commprof.report", "version": 7})"),
              HasSubstr("report schema version 7 is not the 1 this commprof reads"));
  EXPECT_THAT(message(R"({"schema": "commprof.report", "version": 1, "ranks": [{"rank": 0}]})"),
              HasSubstr("r.json: not a commprof report: a rank has no \"steps\""));
}

}  // namespace
}  // namespace commprof
