// SPDX-License-Identifier: MIT
// The reducer and its writers on synthetic runs whose answers are known.
#include "analysis/reducer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "analysis/report/chrome_trace.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/three_ranks.hpp"
#include "analysis/tools/synthetic_timeline.hpp"
#include "src/timeline/back_to_back.hpp"
#include "src/timeline/rank_file.hpp"
#include "support/temp_dir.hpp"

namespace commprof {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

using testing::reduce;
using testing::three_ranks;

TEST(Reducer, ThreeRanksWithKnownSkewAcrossHosts) {
  // Layer = 10 us COMP, then an allreduce: ranks 0, 1, 2 arrive 0, 100, 200 ns late (rank 2
  // last); every copy ends 600 + 6000 ns after the COMP ended. 2 steps × 2 layers = 4 instances.
  const Report r = reduce(three_ranks());
  ASSERT_EQ(r.ranks.size(), 3u);
  EXPECT_TRUE(r.missing_ranks.empty());
  ASSERT_EQ(r.instances.size(), 4u);
  for (const CollectiveInstance& c : r.instances) {
    EXPECT_EQ(c.start_skew_ns(), 200);
    EXPECT_EQ(c.last_rank, 2);
    EXPECT_EQ(c.first_rank, 0);
    EXPECT_EQ(c.end_skew_ns(), 0);
    EXPECT_EQ(c.time_ns(), 6400);  // 600 − 200 + 6000 for the last arriver
    EXPECT_EQ(c.wait_caused_ns, 200 + 100);
  }
  ASSERT_EQ(r.waits.size(), 3u);
  EXPECT_EQ(r.waits[0].wait_ns, 4 * 200);
  EXPECT_EQ(r.waits[1].wait_ns, 4 * 100);
  EXPECT_EQ(r.waits[2].wait_ns, 0);
  EXPECT_EQ(r.waits[2].times_last, 4);
  EXPECT_EQ(r.waits[2].wait_caused_ns, 4 * 300);
  ASSERT_EQ(r.collectives.size(), 1u);
  const CollectiveRow& row = r.collectives[0];
  EXPECT_EQ(row.count, 4);
  EXPECT_EQ(row.p50_ns, 6400.0);
  EXPECT_DOUBLE_EQ(row.algbw_gbps, 1048576.0 / 6400.0);
  EXPECT_DOUBLE_EQ(row.busbw_gbps, 1048576.0 / 6400.0 * 4.0 / 3.0);
  EXPECT_LT(row.peak_fraction, 0.0);            // no --peak-busbw
  EXPECT_LT(row.back_to_back_busbw_gbps, 0.0);  // no plugin capture's runs
}

// The collective row's back-to-back busbw sums every rank's runs of its calls (a plugin
// capture's, src/timeline/back_to_back.hpp): 3 ranks of 4 calls apart in 40 us each, 12 calls
// in 120 us: bytes x 4/3 over 10 us; a run of another size is another row's.
TEST(Reducer, BackToBackBusbwOverEveryRanksRuns) {
  const SyntheticSpec spec = three_ranks();
  Reducer reducer(ReduceOptions{});
  for (int r = 0; r < spec.world_size; ++r) {
    RankTimeline t = make_synthetic_rank(spec, r);
    nlohmann::ordered_json config;
    config["back_to_back"] = back_to_back_json(
        {{"allreduce", 3, 1048576, 1, 4, 40'000}, {"allreduce", 3, 4096, 1, 4, 9}});
    t.config = JsonObject(std::move(config));
    reducer.add(t, "mem");
  }
  const Report rep = reducer.finish();
  ASSERT_EQ(rep.collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(rep.collectives[0].back_to_back_busbw_gbps, 1048576.0 * 4.0 / 3.0 / 10'000.0);
}

// A source that says which calls ran in place (NCCL's profiler plugin) splits the rows: nccl-tests
// times an out-of-place and an in-place loop of each size apart. Here the synthetic run's even
// calls ran in place, the odd ones not, on every rank: two rows of 2 instances each, and each
// row's back-to-back busbw from the runs of its own placement (in place 20 us a call, out of
// place 10 us); a call one rank calls otherwise is no row's placement.
TEST(Reducer, RowsSplitByPlacementWhereTheSourceSaysIt) {
  const SyntheticSpec spec = three_ranks();
  for (const bool ranks_disagree : {false, true}) {
    SCOPED_TRACE(ranks_disagree ? "rank 2 calls one in out of place" : "ranks agree");
    Reducer reducer(ReduceOptions{});
    for (int r = 0; r < spec.world_size; ++r) {
      RankTimeline t = make_synthetic_rank(spec, r);
      bool changed = false;
      for (StepRecord& s : t.steps) {
        for (OpRecord& op : s.ops) {
          if (op.collective.empty()) continue;
          op.in_place = op.seq % 2 == 0 ? 1 : 0;
          if (ranks_disagree && r == 2 && !s.warmup && op.in_place == 1 && !changed) {
            op.in_place = 0;  // a measured step's first in-place call
            changed = true;
          }
        }
      }
      BackToBackSums in_place{"allreduce", 3, 1048576, 1, 2, 40'000, 1};
      BackToBackSums out_of_place{"allreduce", 3, 1048576, 1, 2, 20'000, 0};
      nlohmann::ordered_json config;
      config["back_to_back"] = back_to_back_json({in_place, out_of_place});
      t.config = JsonObject(std::move(config));
      reducer.add(t, "mem");
    }
    const Report rep = reducer.finish();
    std::map<std::string, const CollectiveRow*> rows;
    for (const CollectiveRow& row : rep.collectives) rows[row.placement] = &row;
    ASSERT_EQ(rows.size(), ranks_disagree ? 3u : 2u);
    ASSERT_TRUE(rows.count("in place") && rows.count("out of place"));
    EXPECT_EQ(rows["in place"]->count, ranks_disagree ? 1 : 2);
    EXPECT_EQ(rows["out of place"]->count, 2);
    EXPECT_DOUBLE_EQ(rows["in place"]->back_to_back_busbw_gbps, 1048576.0 * 4.0 / 3.0 / 20'000.0);
    EXPECT_DOUBLE_EQ(rows["out of place"]->back_to_back_busbw_gbps,
                     1048576.0 * 4.0 / 3.0 / 10'000.0);
    if (ranks_disagree) {
      ASSERT_TRUE(rows.count(""));
      EXPECT_EQ(rows[""]->count, 1);
      EXPECT_LT(rows[""]->back_to_back_busbw_gbps, 0.0);
    }
  }
}

// Valid but adversarial rank files: every time within +-2^60 ns, yet durations and waits whose
// sums pass 2^63 ns after a few ops. The sums must not overflow (UBSan stops this test where
// they did; wrapped, they came out negative); they saturate at the int64 limit (292 years).
TEST(Reducer, SumsOfHugeDurationsAndWaitsDoNotOverflow) {
  Reducer reducer({});
  for (int rank = 0; rank < 2; ++rank) {
    RankTimeline t;
    t.rank = rank;
    t.world_size = 2;
    t.host = "h";
    for (int s = 0; s < 4; ++s) {
      StepRecord st;
      st.index = s;
      st.start_ns = -kMaxTimeNs;
      st.end_ns = kMaxTimeNs;
      for (int i = 0; i < 8; ++i) {
        OpRecord op;
        op.name = "huge.allreduce";
        op.category = Category::kComm;
        op.stream = "COMM";
        op.collective = "allreduce";
        op.comm = "world";
        op.comm_size = 2;
        op.seq = s * 8 + i;
        op.bytes = 1 << 20;
        // Rank 0 arrives 2^61 - 1 ns before rank 1 at every one of the 32 collectives.
        op.start_ns = rank == 0 ? -kMaxTimeNs : kMaxTimeNs - 1;
        op.end_ns = kMaxTimeNs;
        st.ops.push_back(op);
      }
      t.steps.push_back(std::move(st));
    }
    reducer.add(std::move(t), "adversarial-" + std::to_string(rank));
  }
  const Report r = reducer.finish();
  ASSERT_EQ(r.waits.size(), 2u);
  constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(r.waits[0].wait_ns, kSaturated);
  EXPECT_EQ(r.waits[1].wait_caused_ns, kSaturated);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].count, 32);
  EXPECT_EQ(r.collectives[0].wait_ns, kSaturated);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].wait_ns, kSaturated);
  EXPECT_GT(r.groups[0].time_ns, 0.0);
  ASSERT_EQ(r.group_times.size(), 1u);  // the per-group sums saturate too
  EXPECT_GT(r.group_times[0].comm_ns, 0.0);
  EXPECT_GE(r.group_times[0].exposed_ns, 0.0);
}

TEST(Reducer, PerRankMetricsAndWorstRank) {
  // Rank 0, step: COMP [0,20us); MEM inside; COMM of layer 0 [10000, 16600) fully under layer
  // 1's COMP; COMM of layer 1 [20000, 26600) exposed. Wall = 26.6 us, overlap = 6600/13200.
  const Report r = reduce(three_ranks());
  const RankSummary& s = r.ranks[0];
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.wall_ns.mean, 26600.0);
  EXPECT_EQ(s.comp_ns.mean, 20000.0);
  EXPECT_EQ(s.comm_ns.mean, 13200.0);
  EXPECT_EQ(s.mem_ns.mean, 4000.0);
  EXPECT_EQ(s.exposed_comm_ns.mean, 6600.0);
  EXPECT_EQ(s.overlap.mean, 0.5);
  EXPECT_EQ(s.idle_ns.mean, 0.0);
  // Rank 2 arrives 200 ns late at both collectives; layer 0's gap lies under layer 1's COMP,
  // so only layer 1's 200 ns are idle.
  EXPECT_EQ(r.ranks[2].idle_ns.mean, 200.0);
  for (const AcrossRanks& a : r.across) {
    if (a.metric == "idle") {
      EXPECT_EQ(a.worst_rank, 2);
      EXPECT_EQ(a.worst_host, "node2");
      EXPECT_EQ(a.stat.max, 200.0);
    }
  }
}

// The three ranks as the stages of a pipeline of three (their files' configuration says tp 1,
// dp 1, pp 3): each stage's row is its one rank's means, worked out from the synthetic run (step
// 26 600 ns, COMP 20 000 ns, idle 100·r ns): busy 26 600 − 100·r, bubble 1 − 20 000 / 26 600.
TEST(Reducer, PipelineStagesFromTheRunsConfiguration) {
  const SyntheticSpec spec = three_ranks();
  Reducer staged({}), plain({});
  for (int r = 0; r < spec.world_size; ++r) {
    RankTimeline t = make_synthetic_rank(spec, r);
    plain.add(t, "mem");
    t.config = JsonObject({{"tp", 1}, {"dp", 1}, {"pp", 3}});
    staged.add(t, "mem");
  }
  const Report rep = staged.finish();
  ASSERT_EQ(rep.stages.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    const StageRow& s = rep.stages[static_cast<std::size_t>(r)];
    EXPECT_EQ(s.stage, r);
    EXPECT_EQ(s.ranks, 1);
    EXPECT_DOUBLE_EQ(s.step_ns, 26600.0);
    EXPECT_DOUBLE_EQ(s.comp_ns, 20000.0);
    EXPECT_DOUBLE_EQ(s.busy_ns, 26600.0 - 100.0 * r);
    EXPECT_DOUBLE_EQ(s.bubble, 6600.0 / 26600.0);
  }
  // Files that say nothing of a pipeline (imports, the plugin, a run without one): no stages.
  EXPECT_TRUE(plain.finish().stages.empty());
  // Megatron's order, pp slowest: rank / (tp·dp) is the stage where pp > 1.
  EXPECT_EQ(pipeline_stage(5, JsonObject({{"tp", 2}, {"dp", 2}, {"pp", 2}})), 1);
  EXPECT_EQ(pipeline_stage(3, JsonObject({{"tp", 2}, {"dp", 2}, {"pp", 2}})), 0);
  EXPECT_EQ(pipeline_stage(3, JsonObject({{"tp", 1}, {"dp", 4}, {"pp", 1}})), -1);
  EXPECT_EQ(pipeline_stage(3, JsonObject()), -1);
}

TEST(Reducer, GroupsAndPeak) {
  SyntheticSpec spec = three_ranks();
  spec.world_size = 4;
  spec.tp_size = 2;
  ReduceOptions options;
  options.peak_busbw_gbps = 100.0;
  const Report r = reduce(spec, options);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].group, "tp");
  EXPECT_EQ(r.groups[0].communicators, 2);
  EXPECT_EQ(r.groups[0].min_size, 2);
  EXPECT_EQ(r.groups[1].group, "world");
  for (const CollectiveRow& c : r.collectives) {
    EXPECT_DOUBLE_EQ(c.peak_fraction, c.busbw_gbps / 100.0);
  }
}

TEST(Reducer, MissingAndBrokenFilesAreNamedAndTheRestReduced) {
  const std::string dir = test::own_temp_path("reducer_missing");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  SyntheticSpec spec = three_ranks();
  spec.world_size = 4;
  write_rank_file(dir, make_synthetic_rank(spec, 0));
  write_rank_file(dir, make_synthetic_rank(spec, 1));
  std::ofstream(dir + "/rank-2.json") << "{\"schema\":\"commprof.rank\",\"version\":1,\"ste";
  // rank 3 never wrote its file
  const Report r = reduce_rank_files(expand_rank_inputs({dir}), {});
  EXPECT_EQ(r.ranks.size(), 2u);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_THAT(r.problems[0].file, HasSubstr("rank-2.json"));
  EXPECT_THAT(r.problems[0].message, HasSubstr("rank-2.json"));
  EXPECT_EQ(r.missing_ranks, (std::vector<int>{2, 3}));
  EXPECT_GT(r.incomplete_instances, 0);
  std::ostringstream text;
  write_report_text(text, r);
  EXPECT_THAT(text.str(), HasSubstr("# problem: " + dir + "/rank-2.json"));
  EXPECT_THAT(text.str(), HasSubstr("# missing ranks: 2 3"));
}

TEST(ReportJson, SchemaUnitsAndNullForUndefined) {
  SyntheticSpec spec = three_ranks();
  RankTimeline no_comm = make_synthetic_rank(spec, 0);
  for (StepRecord& s : no_comm.steps) {
    s.ops.erase(std::remove_if(s.ops.begin(), s.ops.end(),
                               [](const OpRecord& o) { return o.category == Category::kComm; }),
                s.ops.end());
  }
  Reducer reducer({});
  reducer.add(no_comm, "rank-0.json");
  std::ostringstream os;
  write_report_json(os, reducer.finish());
  const json j = json::parse(os.str());
  EXPECT_EQ(j["schema"], "commprof.report");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["units"]["time"], "ns");
  EXPECT_TRUE(j["ranks"][0]["overlap"]["mean"].is_null());  // no COMM: n/a, not NaN
  EXPECT_EQ(j["ranks"][0]["overlap"]["count"], 0);
  EXPECT_EQ(j["ranks"][0]["comp_busy_ns"]["mean"], 20000.0);
  EXPECT_TRUE(j["across_ranks"]["overlap"]["worst_rank"].is_null());
  EXPECT_EQ(j["missing_ranks"], json::array({1, 2}));
}

// The JSON report of the three-rank run, against the answers worked out in
// ThreeRanksWithKnownSkewAcrossHosts: the collective row, every rank's waits, and per rank the
// steps that carried per-op timing (all of them here).
TEST(ReportJson, KnownAnswersOfThreeRanks) {
  std::ostringstream os;
  write_report_json(os, reduce(three_ranks()));
  const json j = json::parse(os.str());
  ASSERT_EQ(j["ranks"].size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(j["ranks"][r]["rank"], r);
    EXPECT_EQ(j["ranks"][r]["steps"], 2);
    EXPECT_EQ(j["ranks"][r]["timed_steps"], 2);
    EXPECT_EQ(j["ranks"][r]["plain_step_time_ns"]["count"], 0);
    // 2 layers of 10 us COMP per step.
    EXPECT_EQ(j["ranks"][r]["comp_busy_ns"]["mean"], 20000.0);
  }
  ASSERT_EQ(j["collectives"].size(), 1u);
  const json& row = j["collectives"][0];
  EXPECT_EQ(row["collective"], "allreduce");
  EXPECT_EQ(row["comm_size"], 3);
  EXPECT_EQ(row["bytes"], 1048576);
  EXPECT_EQ(row["count"], 4);
  EXPECT_EQ(row["p50_time_ns"], 6400.0);
  EXPECT_DOUBLE_EQ(row["busbw_gbps"].get<double>(), 1048576.0 / 6400.0 * 4.0 / 3.0);
  ASSERT_EQ(j["stragglers"].size(), 3u);
  std::map<int, json> by_rank;
  for (const json& w : j["stragglers"]) by_rank[w["rank"].get<int>()] = w;
  EXPECT_EQ(by_rank[0]["wait_ns"], 4 * 200);
  EXPECT_EQ(by_rank[1]["wait_ns"], 4 * 100);
  EXPECT_EQ(by_rank[2]["wait_ns"], 0);
  EXPECT_EQ(by_rank[2]["times_last"], 4);
  EXPECT_EQ(by_rank[2]["wait_caused_ns"], 4 * 300);
}

// An uneven alltoallv on 4 ranks, bytes rank a sends rank b in row a, column b (worked out in
// collective_matching_test.cpp's UnevenAlltoallvBusbwFromTheBusiestRanksOffRankBytes): rank 0
// sends the most, 930 B, nearly all to itself, and receives 900 B from the others, the most any
// rank moves off-rank. The shortest rank's duration is 1000 ns: busbw 900 B / 1000 ns = 0.9 GB/s
// from the bytes per peer; 930 B × 3/4 / 1000 ns = 0.6975 GB/s without them.
Report uneven_alltoallv_report(bool per_peer) {
  constexpr std::uint64_t kSent[4][4] = {
      {900, 10, 10, 10}, {300, 100, 100, 100}, {300, 50, 50, 50}, {300, 50, 50, 50}};
  Reducer reducer({});
  for (int r = 0; r < 4; ++r) {
    RankTimeline t;
    t.rank = r;
    t.world_size = 4;
    t.host = "node0";
    StepRecord step;
    step.start_ns = 0;
    step.end_ns = 5000;
    OpRecord o;
    o.name = "l0.dispatch";
    o.category = Category::kComm;
    o.stream = "COMM";
    o.collective = "alltoallv";
    o.comm = "ep0";
    o.comm_size = 4;
    o.seq = 0;
    o.start_ns = 100 * r;
    o.end_ns = 100 * r + 1000 + 500 * r;
    for (int p = 0; p < 4; ++p) {
      o.bytes += kSent[r][p];
      o.recv_bytes += kSent[p][r];
      if (!per_peer) continue;
      o.peer_send_bytes.push_back(kSent[r][p]);
      o.peer_recv_bytes.push_back(kSent[p][r]);
    }
    if (per_peer) o.comm_rank = r;
    step.ops.push_back(o);
    t.steps.push_back(step);
    reducer.add(t, "rank-" + std::to_string(r) + ".json");
  }
  return reducer.finish();
}

TEST(ReportJson, UnevenAlltoallvBusbwFromBytesPerPeer) {
  for (const bool per_peer : {true, false}) {
    SCOPED_TRACE(per_peer ? "bytes per peer" : "no bytes per peer");
    const double busbw = per_peer ? 0.9 : 930.0 * 3.0 / 4.0 / 1000.0;
    const std::string basis = per_peer ? "per-peer" : "(n-1)/n";
    std::ostringstream os;
    const Report report = uneven_alltoallv_report(per_peer);
    write_report_json(os, report);
    const json j = json::parse(os.str());
    ASSERT_EQ(j["collectives"].size(), 1u);
    const json& row = j["collectives"][0];
    EXPECT_EQ(row["collective"], "alltoallv");
    EXPECT_EQ(row["bytes"], 930);
    EXPECT_EQ(row["p50_time_ns"], 1000.0);
    EXPECT_DOUBLE_EQ(row["algbw_gbps"].get<double>(), 0.93);
    EXPECT_DOUBLE_EQ(row["busbw_gbps"].get<double>(), busbw);
    EXPECT_EQ(row["busbw_basis"], basis);
    ASSERT_EQ(j["groups"].size(), 1u);
    EXPECT_EQ(j["groups"][0]["group"], "ep");
    EXPECT_DOUBLE_EQ(j["groups"][0]["busbw_gbps"].get<double>(), busbw);
    EXPECT_EQ(j["groups"][0]["busbw_basis"], basis);
    ASSERT_EQ(j["worst_instances"].size(), 1u);
    EXPECT_DOUBLE_EQ(j["worst_instances"][0]["busbw_gbps"].get<double>(), busbw);
    EXPECT_EQ(j["worst_instances"][0]["busbw_basis"], basis);
    std::ostringstream text;
    write_report_text(text, report);
    EXPECT_THAT(text.str(), HasSubstr(" " + basis));
  }
}

// Sampled op timing in the JSON: a rank whose second measured step carries no ops reports its
// step time from that plain step and its busy time from the timed one.
TEST(ReportJson, SampledRanksReportPlainStepTimeAndTimedBusy) {
  RankTimeline t = make_synthetic_rank(three_ranks(), 0);
  ASSERT_EQ(t.steps.size(), 3u);  // a warm-up step, then two measured
  ASSERT_TRUE(t.steps[0].warmup);
  t.steps[2].ops.clear();
  const std::int64_t plain_wall = t.steps[2].end_ns - t.steps[2].start_ns;
  const std::int64_t timed_wall = t.steps[1].end_ns - t.steps[1].start_ns;
  Reducer reducer({});
  reducer.add(t, "rank-0.json");
  std::ostringstream os;
  write_report_json(os, reducer.finish());
  const json j = json::parse(os.str());
  const json& r = j["ranks"][0];
  EXPECT_EQ(r["steps"], 2);
  EXPECT_EQ(r["timed_steps"], 1);
  EXPECT_EQ(r["step_time_ns"]["mean"], static_cast<double>(plain_wall));
  EXPECT_EQ(r["timed_step_time_ns"]["mean"], static_cast<double>(timed_wall));
  EXPECT_EQ(r["comp_busy_ns"]["count"], 1);
  EXPECT_EQ(r["comp_busy_ns"]["mean"], 20000.0);
}

TEST(ReportText, NamesTheStraggler) {
  std::ostringstream os;
  write_report_text(os, reduce(three_ranks()));
  EXPECT_THAT(os.str(), HasSubstr("# straggler: rank 2 (node2) arrived last at 4 of 4"));
  EXPECT_TRUE(
      std::regex_search(os.str(), std::regex(R"(\n allreduce +3 +1048576 +4 +6\.4 +6\.4 )")));
}

// --baseline: the run against one with every category serialized. Here the baseline's COMP
// ops take 8 us where the run's take 10 us and its collectives are alike: every COMP op that
// overlapped COMM is 25% slower than its name's mean alone, COMM ops 0%.
TEST(Baseline, KnownAnswers) {
  const Report run = reduce(three_ranks());
  SyntheticSpec alone_spec = three_ranks();
  alone_spec.comp_ns = 8000;
  const Report alone = reduce(alone_spec);
  Report r = run;
  compare_with_baseline(r, alone, "serial/");
  ASSERT_TRUE(r.baseline.has_value());
  const BaselineComparison& b = *r.baseline;
  EXPECT_EQ(b.source, "serial/");
  // A synthetic step spans its 2 layers' COMP, the largest arrival skew (6 x 100 ns) and the
  // last collective's 6000 ns: 2 x 10000 + 600 + 6000 in the run, 2 x 8000 + 600 + 6000 in
  // the baseline.
  EXPECT_DOUBLE_EQ(b.run_step_ns, 26600.0);
  EXPECT_DOUBLE_EQ(b.baseline_step_ns, 22600.0);
  EXPECT_DOUBLE_EQ(*b.speedup, 22600.0 / 26600.0);
  // Per step: 6600, 6500 and 6400 ns of COMM hidden (layer 0's collective, under layer 1).
  EXPECT_DOUBLE_EQ(b.comm_hidden_ns, 6500.0);
  EXPECT_DOUBLE_EQ(b.run_comm_ns, 13000.0);
  ASSERT_EQ(b.interference.size(), 2u);
  const Interference& comp = b.interference[0];
  EXPECT_EQ(comp.category, "COMP");
  EXPECT_GT(comp.ops, 0);
  EXPECT_DOUBLE_EQ(comp.run_mean_ns, 10000.0);
  EXPECT_DOUBLE_EQ(comp.baseline_mean_ns, 8000.0);
  EXPECT_DOUBLE_EQ(*comp.slowdown, 0.25);
  const Interference& comm = b.interference[1];
  EXPECT_EQ(comm.category, "COMM");
  EXPECT_GT(comm.ops, 0);
  EXPECT_NEAR(*comm.slowdown, 0.0, 1e-12);
  // And what the text report says of it: COMP ops 10.0 us overlapped against 8.0 us alone.
  std::ostringstream os;
  write_report_text(os, r);
  EXPECT_THAT(os.str(), HasSubstr("\n## Interference ("));
  EXPECT_TRUE(
      std::regex_search(os.str(), std::regex(R"(\n COMP +[0-9]+ +[0-9]+ +10\.0 +8\.0 +25\.0\n)")))
      << os.str();
  EXPECT_TRUE(std::regex_search(
      os.str(), std::regex(R"(\n step time: 26\.6 us, baseline [0-9.]+ us, speed-up [0-9.]+x\n)")));
}

TEST(ChromeTrace, FollowsTheTraceEventFormat) {
  SyntheticSpec spec = three_ranks();
  std::ostringstream os;
  ChromeTraceWriter w(os);
  for (int r = 0; r < 3; ++r) w.add(make_synthetic_rank(spec, r));
  w.finish();
  const json j = json::parse(os.str());
  ASSERT_TRUE(j["traceEvents"].is_array());
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  int complete = 0;
  for (const json& e : j["traceEvents"]) {
    ASSERT_TRUE(e["name"].is_string());
    ASSERT_TRUE(e["pid"].is_number_integer());
    ASSERT_TRUE(e["tid"].is_number_integer());
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
      if (e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
      continue;
    }
    ASSERT_EQ(ph, "X");
    ASSERT_TRUE(e["ts"].is_number());
    ASSERT_TRUE(e["dur"].is_number());
    ASSERT_GE(e["dur"].get<double>(), 0.0);
    ASSERT_TRUE(e["args"]["bytes"].is_number_unsigned());
    ASSERT_TRUE(e["args"]["flops"].is_number());
    ASSERT_TRUE(threads.count({e["pid"], e["tid"]})) << "thread named before its events";
    ++complete;
  }
  EXPECT_EQ(complete, 3 * 3 * 3 * 2);  // 3 ranks × 3 steps × 2 layers × 3 ops
  EXPECT_EQ(processes.size(), 3u);
  EXPECT_EQ(processes[2], "rank 2 (node2)");
  EXPECT_EQ(threads.size(), 9u);  // COMP, MEM, COMM on each rank
  // Per rank and stream: one event per op, 3 steps (warm-up included) × 2 layers.
  std::map<std::pair<int, std::string>, int> per_stream;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] == "X") ++per_stream[{e["pid"].get<int>(), threads[{e["pid"], e["tid"]}]}];
  }
  ASSERT_EQ(per_stream.size(), 9u);
  for (int pid = 0; pid < 3; ++pid) {
    for (const char* stream : {"COMP", "COMM", "MEM"}) {
      EXPECT_EQ((per_stream[{pid, stream}]), 6) << "rank " << pid << " " << stream;
    }
  }
  // Times are on rank 0's clock: every rank's first COMP op starts at the same instant.
  EXPECT_EQ(j["traceEvents"][3]["ts"].get<double>(), 1000000.0);
}

}  // namespace
}  // namespace commprof
