// SPDX-License-Identifier: MIT
// `report --format prometheus` parsed back line by line: the exposition format's grammar, one
// TYPE per family before its samples, no series twice, and values worked out by hand for the
// three-rank synthetic run (see reducer_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "analysis/reducer.hpp"
#include "analysis/report/format_parsers.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/three_ranks.hpp"
#include "analysis/tools/synthetic_timeline.hpp"

namespace commprof {
namespace {

using testing::parse_exposition;

TEST(ReportPrometheus, ThreeRanksKnownAnswers) {
  const Report report = testing::reduce(testing::three_ranks());
  std::ostringstream os;
  write_report_prometheus(os, report);
  const auto s = parse_exposition(os.str());

  EXPECT_EQ(s.at("commprof_world_size"), 3);
  EXPECT_EQ(s.at("commprof_ranks_read"), 3);
  EXPECT_EQ(s.at("commprof_rank_files_unreadable"), 0);
  const std::string row = R"({collective="allreduce",nranks="3",message_bytes="1048576")";
  // 4 instances of 6400 ns each (the last arriver's transfer): busbw = 2^20 / 6400 × 4/3.
  EXPECT_DOUBLE_EQ(s.at("commprof_bus_bandwidth_gbs" + row + "}"), 1048576.0 / 6400.0 * 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.at("commprof_alg_bandwidth_gbs" + row + "}"), 1048576.0 / 6400.0);
  EXPECT_DOUBLE_EQ(s.at("commprof_collective_time_seconds" + row + R"(,stat="p50"})"), 6.4e-6);
  EXPECT_EQ(s.at("commprof_collective_instances" + row + "}"), 4);
  EXPECT_DOUBLE_EQ(s.at("commprof_collective_start_skew_seconds" + row + "}"), 200e-9);
  // Rank 2 arrives last everywhere: 4 × (200 + 100) ns of others' wait; rank 0 waits 4 × 200.
  const std::string host2 = report.ranks[2].host;
  EXPECT_DOUBLE_EQ(s.at(R"(commprof_wait_caused_seconds{rank="2",node=")" + host2 + R"("})"),
                   1200e-9);
  EXPECT_EQ(s.at(R"(commprof_arrived_last_collectives{rank="2",node=")" + host2 + R"("})"), 4);
  const std::string host0 = report.ranks[0].host;
  EXPECT_DOUBLE_EQ(s.at(R"(commprof_collective_wait_seconds{rank="0",node=")" + host0 + R"("})"),
                   800e-9);
  EXPECT_DOUBLE_EQ(s.at(R"(commprof_group_wait_caused_seconds{comm_name="world"})"), 4 * 300e-9);
  // Rank 0 by hand (Reducer.PerRankMetricsAndWorstRank): a step of 26.6 us, 13.2 us of COMM, half
  // of it under COMP.
  const std::string l0 = R"({rank="0",node=")" + host0 + '"';
  EXPECT_DOUBLE_EQ(s.at("commprof_step_time_seconds" + l0 + "}"), 26.6e-6);
  EXPECT_DOUBLE_EQ(s.at("commprof_busy_seconds" + l0 + R"(,category="COMM"})"), 13.2e-6);
  EXPECT_DOUBLE_EQ(s.at("commprof_overlap_ratio" + l0 + "}"), 0.5);
  // Every rank: the report's own means in seconds.
  for (const RankSummary& r : report.ranks) {
    const std::string l = R"({rank=")" + std::to_string(r.rank) + R"(",node=")" + r.host + '"';
    EXPECT_DOUBLE_EQ(s.at("commprof_step_time_seconds" + l + "}"), r.wall_ns.mean / 1e9);
    EXPECT_DOUBLE_EQ(s.at("commprof_busy_seconds" + l + R"(,category="COMM"})"),
                     r.comm_ns.mean / 1e9);
    EXPECT_DOUBLE_EQ(s.at("commprof_overlap_ratio" + l + "}"), r.overlap.mean);
    EXPECT_EQ(s.at("commprof_measured_steps" + l + "}"), 2);
  }
}

TEST(ReportPrometheus, LabelValuesAreEscaped) {
  Report report;
  report.world_size = 1;
  RankSummary s;
  s.host = "node\"7\\a\nb";
  s.steps = 1;
  s.wall_ns.add(1e6);
  report.ranks.push_back(s);
  std::ostringstream os;
  write_report_prometheus(os, report);
  EXPECT_THAT(os.str(), ::testing::HasSubstr(
                            R"(commprof_step_time_seconds{rank="0",node="node\"7\\a\nb"} 0.001)"));
  parse_exposition(os.str());  // and the grammar holds
}

}  // namespace
}  // namespace commprof
