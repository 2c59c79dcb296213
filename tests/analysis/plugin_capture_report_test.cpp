// SPDX-License-Identifier: MIT
// A capture by NCCL's profiler plugin (one step holding the whole job, no compute) through the
// reducer: cut into its training steps, said in every format, and its compute-dependent figures
// unknown (n/a, null), never zero, with the findings that need them saying why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "analysis/findings.hpp"
#include "analysis/reducer.hpp"
#include "analysis/report/report_writers.hpp"
#include "src/timeline/rank_file.hpp"
#include "support/temp_dir.hpp"

namespace commprof {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kMs = 1'000'000;

// A DDP job as the plugin writes it: dp0's buckets, a first step of other buckets, then 5 steps
// of 3 all-reduces, 20 ms between steps; rank 1 a little later than rank 0.
RankTimeline plugin_rank(int rank) {
  RankTimeline t;
  t.rank = rank;
  t.world_size = 2;
  t.backend = "nccl-profiler";
  t.config = JsonObject(nlohmann::ordered_json{{"command", "nccl-profiler-plugin"}});
  t.steps.resize(1);
  std::int64_t now = 0;
  std::int64_t seq = 0;
  auto step = [&](std::initializer_list<std::uint64_t> buckets) {
    now += 20 * kMs;
    for (const std::uint64_t bytes : buckets) {
      OpRecord op;
      op.name = "AllReduce";
      op.category = Category::kComm;
      op.stream = "COMM";
      op.collective = "allreduce";
      op.comm = "dp0";
      op.comm_size = 2;
      op.seq = seq++;
      op.bytes = bytes;
      op.start_ns = now + rank * 100'000;
      op.end_ns = op.start_ns + 2 * kMs;
      t.steps[0].ops.push_back(op);
      now += 3 * kMs;
    }
  };
  step({1 << 20, 40 << 20});
  for (int s = 0; s < 5; ++s) step({1 << 20, 25 << 20, 15 << 20});
  t.steps[0].start_ns = t.steps[0].ops.front().start_ns;
  t.steps[0].end_ns = t.steps[0].ops.back().end_ns;
  return t;
}

TEST(PluginCapture, CutIntoStepsWithComputeUnknownInEveryFormat) {
  const std::string dir = test::fresh_temp_dir("plugin_capture_report");
  for (int rank = 0; rank < 2; ++rank) write_rank_file(dir, plugin_rank(rank));
  Report r = reduce_rank_files(expand_rank_inputs({dir}), {});
  add_findings(r, RunFacts{});
  ASSERT_EQ(r.ranks.size(), 2u);
  for (const RankSummary& s : r.ranks) {
    EXPECT_EQ(s.steps, 4) << "rank " << s.rank;
    // One warm-up slot: the irregular first step and the first regular one, whose start no
    // call of the period's kinds ends; the last step ends with its last call's end, seen.
    EXPECT_EQ(s.warmup_steps, 1);
    EXPECT_EQ(s.steps_from, "detected: 3 calls of dp0 per step, confidence 0.88, 4 steps");
    // From one step's last call's end to the next's: 20 ms, then 3 calls 3 ms apart.
    EXPECT_DOUBLE_EQ(s.wall_ns.mean, 29.0 * kMs);
    EXPECT_DOUBLE_EQ(s.comm_ns.mean, 6.0 * kMs);
    EXPECT_EQ(s.comp_ns.count, 0) << "unknown, not zero";
    EXPECT_EQ(s.idle_ns.count, 0);
    EXPECT_EQ(s.busy_ns.count, 0);
    EXPECT_EQ(s.overlap.count, 0);
  }
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();

  std::ostringstream json;
  write_report_json(json, r);
  const nlohmann::json j = nlohmann::json::parse(json.str());
  const nlohmann::json& rank0 = j.at("ranks").at(0);
  for (const char* key : {"comp_busy_ns", "idle_ns", "busy_ns", "overlap", "exposed_comm_ns",
                          "hidden_fraction", "mem_busy_ns", "hta_idle"}) {
    // A Stat is {min, mean, max, stddev, count}: no sample, every figure null.
    const nlohmann::json& v = rank0.at(key);
    EXPECT_TRUE(v.is_null() || (v.at("mean").is_null() && v.at("count") == 0)) << key << ": " << v;
  }
  EXPECT_EQ(rank0.at("steps_from"), "detected: 3 calls of dp0 per step, confidence 0.88, 4 steps");
  EXPECT_FALSE(rank0.at("comm_busy_ns").is_null());

  std::ostringstream text;
  write_report_text(text, r);
  EXPECT_THAT(text.str(), HasSubstr("detected: 3 calls of dp0 per step"));
  std::ostringstream csv;
  write_report_csv(csv, r);
  EXPECT_THAT(csv.str(), HasSubstr("detected: 3 calls of dp0 per step"));

  int cannot = 0;
  for (const Finding& f : r.findings) {
    if (f.rule == "overlap_below_target" || f.rule == "exposed_comm" || f.rule == "compute_busy") {
      EXPECT_THAT(f.status, HasSubstr("cannot be computed: no compute in a plugin-only capture"));
      ++cannot;
    }
  }
  EXPECT_EQ(cannot, 3);
}

TEST(PluginCapture, AMarkerOverridesTheDetectionAndIsSaid) {
  const std::string dir = test::fresh_temp_dir("plugin_capture_marker");
  for (int rank = 0; rank < 2; ++rank) {
    RankTimeline t = plugin_rank(rank);
    nlohmann::ordered_json config = t.config.json();
    config["step_marker"] = "dp0:allreduce";  // as the plugin records the variable
    t.config = JsonObject(config);
    write_rank_file(dir, t);
  }
  const Report r = reduce_rank_files(expand_rank_inputs({dir}), {});
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].steps_from, "marker dp0:allreduce: 17 steps");
  EXPECT_EQ(r.ranks[0].steps, 17);
}

}  // namespace
}  // namespace commprof
