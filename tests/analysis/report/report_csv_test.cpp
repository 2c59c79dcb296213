// SPDX-License-Identifier: MIT
// Every CSV table of the three-rank synthetic run, cell by cell, against answers worked out by
// hand (the run is described in reducer_test.cpp): rank r arrives r × 100 ns late at each of
// the 4 allreduces of 1 MiB; every copy ends together, 6000 ns after the last arrival.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "analysis/reducer.hpp"
#include "analysis/report/format_parsers.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/three_ranks.hpp"
#include "analysis/tools/synthetic_timeline.hpp"

namespace commprof {
namespace {

using Rows = testing::CsvRows;
using testing::parse_csv;
using testing::reduce;
using testing::three_ranks;

std::map<std::string, Rows> tables_of(const Report& r) {
  std::map<std::string, Rows> out;
  for (const CsvTable& t : report_csv_tables(r)) out[t.name] = parse_csv(t.text);
  return out;
}

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Numeric cells compared as numbers (the writer prints 17 significant digits).
void expect_row(const std::vector<std::string>& got, const std::vector<std::string>& want,
                const std::string& where) {
  ASSERT_EQ(got.size(), want.size()) << where;
  for (std::size_t i = 0; i < want.size(); ++i) {
    char* end = nullptr;
    const double w = std::strtod(want[i].c_str(), &end);
    if (!want[i].empty() && *end == '\0') {
      EXPECT_DOUBLE_EQ(std::stod(got[i]), w) << where << " column " << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << where << " column " << i;
    }
  }
}

// The three-rank run's tables, reduced once for the tests below.
const std::map<std::string, Rows>& three_rank_tables() {
  static const std::map<std::string, Rows> tables = tables_of(reduce(three_ranks()));
  return tables;
}

TEST(ReportCsv, EveryTableIsWritten) {
  const auto& t = three_rank_tables();
  // The critical path's two tables are empty (the reducer leaves them out), and so are the
  // findings (add_findings runs after the reduction): their headers only.
  ASSERT_EQ(t.size(), 14u);
  ASSERT_EQ(t.at("findings").size(), 1u);
}

TEST(ReportCsv, RanksKnownAnswers) {
  const auto& t = three_rank_tables();
  const Rows& ranks = t.at("ranks");
  ASSERT_EQ(ranks.size(), 4u);
  EXPECT_EQ(ranks[0], (std::vector<std::string>{"rank",
                                                "host",
                                                "device",
                                                "steps",
                                                "step_time_ns",
                                                "comp_busy_ns",
                                                "comm_busy_ns",
                                                "mem_busy_ns",
                                                "overlap",
                                                "hidden_fraction",
                                                "exposed_comm_ns",
                                                "idle_ns",
                                                "busy_ns",
                                                "comm_comp_overlap_ns",
                                                "timed_step_time_ns",
                                                "plain_step_time_ns",
                                                "timed_steps",
                                                "warmup_steps",
                                                "ops",
                                                "clock_offset_ns",
                                                "backend",
                                                "steps_from",
                                                "plugin_calls",
                                                "plugin_timed",
                                                "plugin_dropped",
                                                "file",
                                                "hta_steps",
                                                "hta_overlap",
                                                "hta_idle",
                                                "hta_compute",
                                                "hta_non_compute",
                                                "hta_span_ns",
                                                "hta_differs",
                                                "step_time_min_ns",
                                                "step_time_max_ns"}));
  // Rank r's two allreduces each last 6600 − 100 r ns; layer 0's lies under layer 1's COMP, so
  // 6600 − 100 r ns of COMM per step are hidden and as many exposed. Every step carries ops (no
  // plain step time); 2 layers of COMP, MEM and COMM a step; hosts' clocks 1 ms apart.
  // As HTA computes it: the first measured step alone (the last left out), on each rank's clock
  // (offsets of whole ms), every op rounded inward to whole us. That step begins 27.6 us after a
  // whole us (base b = 10^9 + 27600 ns), so COMP [b, b+10) us is [b+0.4, b+9.4), the next
  // [b+10.4, b+19.4), the allreduces [b+10+0.1r, b+16.6) and [b+20+0.1r, b+26.6) are [b+10.4,
  // b+16.4) and [b+20.4, b+26.4) on every rank, the copies lie under COMP: COMM 12 us of which 6
  // hidden, 0.5 as per step (no note); COMP 18 us, every op 24 us, span b+0.4 to b+26.4 = 26 us.
  const std::vector<std::string> hta = {
      "1", "0.5", exact(2.0 / 26.0), exact(18.0 / 26.0), exact(6.0 / 26.0), "26000", ""};
  auto with_hta = [&](std::vector<std::string> row) {
    row.insert(row.end() - 2, hta.begin(), hta.end());
    return row;
  };
  expect_row(ranks[1],
             with_hta({"0",     "node0", "synthetic", "2",    "26600", "20000", "13200",
                       "4000",  "0.5",   "0.5",       "6600", "0",     "26600", "6600",
                       "26600", "",      "2",         "1",    "12",    "0",     "synthetic",
                       "",      "",      "",          "",     "mem",   "26600", "26600"}),
             "ranks row 0");
  expect_row(ranks[2],
             with_hta({"1",     "node1", "synthetic", "2",    "26600", "20000",   "13000",
                       "4000",  "0.5",   "0.5",       "6500", "100",   "26500",   "6500",
                       "26600", "",      "2",         "1",    "12",    "1000000", "synthetic",
                       "",      "",      "",          "",     "mem",   "26600",   "26600"}),
             "ranks row 1");
  expect_row(ranks[3],
             with_hta({"2",     "node2", "synthetic", "2",    "26600", "20000",   "12800",
                       "4000",  "0.5",   "0.5",       "6400", "200",   "26400",   "6400",
                       "26600", "",      "2",         "1",    "12",    "2000000", "synthetic",
                       "",      "",      "",          "",     "mem",   "26600",   "26600"}),
             "ranks row 2");
}

TEST(ReportCsv, AcrossRanksKnownAnswers) {
  // One row per compared per-rank field, in the ranks table's order; the standard deviation
  // over the three ranks' means (n − 1): 200 ns of 13200, 13000, 12800.
  const Rows& across = three_rank_tables().at("across_ranks");
  ASSERT_EQ(across.size(), 10u);
  EXPECT_EQ(across[0], (std::vector<std::string>{"metric", "unit", "min", "mean", "max",
                                                 "worst_rank", "worst_host", "stddev", "count"}));
  expect_row(across[3], {"comm_busy", "ns", "12800", "13000", "13200", "0", "node0", "200", "3"},
             "comm");
  expect_row(across[5], {"overlap", "ratio", "0.5", "0.5", "0.5", "0", "node0", "0", "3"},
             "overlap");
  expect_row(across[7], {"exposed_comm", "ns", "6400", "6500", "6600", "0", "node0", "100", "3"},
             "exposed");
  expect_row(across[8], {"idle", "ns", "0", "100", "200", "2", "node2", "100", "3"}, "idle");
  expect_row(across[9], {"busy", "ns", "26400", "26500", "26600", "0", "node0", "100", "3"},
             "busy");
}

TEST(ReportCsv, GroupsKnownAnswers) {
  const auto& t = three_rank_tables();
  const Rows& groups = t.at("groups");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0],
            (std::vector<std::string>{
                "group", "communicators", "min_size", "max_size", "collectives", "bytes", "time_ns",
                "busbw_gbps", "mean_start_skew_ns", "wait_ns", "incomplete", "busbw_basis"}));
  // No all-to-all(v): its busbw basis is n/a.
  expect_row(groups[1],
             {"world", "1", "3", "3", "4", "4194304", "25600", exact(4194304.0 * 4 / 3 / 25600),
              "200", "1200", "0", ""},
             "groups");

  // Per group, means over the ranks of each rank's per-step COMM and exposed time: ranks 1 and 2
  // arrive 100 and 200 ns late at both of the step's collectives, which end together, so their
  // COMM is 13 200 − 2·100·r ns and half of it (layer 1's) is exposed. No all-to-all: n/a.
  const Rows& group_times = t.at("group_times");
  ASSERT_EQ(group_times.size(), 2u);
  EXPECT_EQ(group_times[0],
            (std::vector<std::string>{"group", "ranks", "comm_busy_ns", "exposed_comm_ns",
                                      "exposed_comm_max_ns", "exposed_worst_rank", "alltoalls",
                                      "recv_mean_bytes", "recv_max_bytes", "recv_imbalance",
                                      "recv_busiest_rank", "alltoall_wait_ns"}));
  expect_row(group_times[1], {"world", "3", "13000", "6500", "6600", "0", "0", "", "", "", "", ""},
             "group_times");
}

TEST(ReportCsv, CollectivesKnownAnswers) {
  const Rows& colls = three_rank_tables().at("collectives");
  ASSERT_EQ(colls.size(), 2u);
  EXPECT_EQ(colls[0],
            (std::vector<std::string>{
                "collective", "comm_size", "bytes", "count", "p50_time_ns", "p95_time_ns",
                "algbw_gbps", "busbw_gbps", "peak_busbw_fraction", "back_to_back_busbw_gbps",
                "mean_start_skew_ns", "wait_ns", "nccl_algo", "busbw_basis", "placement"}));
  // No --peak-busbw and no NCCL plugin (no back-to-back runs, no placement): those cells are
  // empty, not 0.
  expect_row(colls[1],
             {"allreduce", "3", "1048576", "4", "6400", "6400", "163.84",
              exact(1048576.0 / 6400 * 4 / 3), "", "", "200", "1200", "", "2(n-1)/n", ""},
             "collectives");
}

TEST(ReportCsv, StragglersKnownAnswers) {
  // In the text report's column order: rank 2 is last everywhere, 4 × (200 + 100) ns caused.
  const Rows& stragglers = three_rank_tables().at("stragglers");
  ASSERT_EQ(stragglers.size(), 4u);
  EXPECT_EQ(stragglers[0],
            (std::vector<std::string>{"rank", "host", "times_last", "last_fraction",
                                      "wait_caused_ns", "wait_ns", "collectives", "times_first"}));
  expect_row(stragglers[1], {"0", "node0", "0", "0", "0", "800", "4", "4"}, "stragglers 0");
  expect_row(stragglers[2], {"1", "node1", "0", "0", "0", "400", "4", "0"}, "stragglers 1");
  expect_row(stragglers[3], {"2", "node2", "4", "1", "1200", "0", "4", "0"}, "stragglers 2");
}

TEST(ReportCsv, WorstInstancesKnownAnswers) {
  // The four instances cause as much waiting each, so they come in issue order (seq 2 to 5: 0
  // and 1 were the warm-up step's); durations 6600, 6500, 6400 ns.
  const Rows& instances = three_rank_tables().at("worst_instances");
  ASSERT_EQ(instances.size(), 5u);
  EXPECT_EQ(instances[0], (std::vector<std::string>{
                              "comm", "seq", "collective", "comm_size", "bytes", "ranks_seen",
                              "consistent", "time_ns", "max_duration_ns", "mean_duration_ns",
                              "start_skew_ns", "end_skew_ns", "first_rank", "last_rank", "wait_ns",
                              "algbw_gbps", "busbw_gbps", "busbw_basis", "nccl_algo"}));
  for (std::size_t i = 1; i < instances.size(); ++i) {
    expect_row(instances[i],
               {"world", std::to_string(i + 1), "allreduce", "3", "1048576", "3", "true", "6400",
                "6600", "6500", "200", "0", "0", "2", "300", "163.84",
                exact(1048576.0 / 6400 * 4 / 3), "2(n-1)/n", ""},
               "instance " + std::to_string(i));
  }
}

TEST(ReportCsv, TablesWithoutRowsAreTheirHeaders) {
  const auto& t = three_rank_tables();
  // No --baseline: its tables are headers alone.
  EXPECT_EQ(t.at("baseline").size(), 1u);
  EXPECT_EQ(t.at("interference").size(), 1u);
  // No pipeline in these ranks' configuration: the stages table is its header alone.
  ASSERT_EQ(t.at("stages").size(), 1u);
  EXPECT_EQ(t.at("stages")[0],
            (std::vector<std::string>{"stage", "ranks", "step_time_ns", "comp_busy_ns", "busy_ns",
                                      "bubble_fraction"}));

  const Rows& problems = t.at("problems");
  ASSERT_EQ(problems.size(), 1u);  // the header only
  EXPECT_EQ(problems[0], (std::vector<std::string>{"file", "problem"}));
}

TEST(ReportCsv, ProblemsAndMissingRanksAreRowsAndTextIsQuoted) {
  SyntheticSpec spec;
  spec.world_size = 3;
  Reducer reducer({});
  RankTimeline t = make_synthetic_rank(spec, 0);
  t.host = "node \"a\", rack 1";
  reducer.add(t, "a.json");
  reducer.add_problem("b.json", "b.json: line 3: expected '}'");
  const auto tables = tables_of(reducer.finish());
  EXPECT_EQ(tables.at("ranks")[1][1], "node \"a\", rack 1");  // read back through the quoting
  const Rows& problems = tables.at("problems");
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_EQ(problems[1], (std::vector<std::string>{"b.json", "b.json: line 3: expected '}'"}));
  EXPECT_EQ(problems[2], (std::vector<std::string>{"", "rank 1 is missing"}));
  EXPECT_EQ(problems[3], (std::vector<std::string>{"", "rank 2 is missing"}));
}

TEST(ReportCsv, OneStreamHoldsEveryTableUnderItsName) {
  const Report r = reduce(three_ranks());
  std::ostringstream os;
  write_report_csv(os, r);
  std::string expected;
  for (const CsvTable& t : report_csv_tables(r))
    expected += "# table: " + t.name + "\n" + t.text + "\n";
  EXPECT_EQ(os.str(), expected);
}

}  // namespace
}  // namespace commprof
