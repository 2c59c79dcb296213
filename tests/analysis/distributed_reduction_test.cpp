// SPDX-License-Identifier: MIT
// The reduction shared among processes (reduce_rank_files_across) against one process
// (reduce_rank_files): the same report in every format, for 1 to 5 processes, on runs built so
// that what one process decides by reading order (an instance's kind and size, its algorithm,
// the kept file of a rank read twice, the order of problems and instances) falls across
// processes. The processes are threads here, talking through an in-memory exchange; the
// mpirun test (report_across_*) runs the same over MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "analysis/byte_codec.hpp"
#include "analysis/distributed_reduction.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/report_fields.hpp"
#include "analysis/tools/synthetic_timeline.hpp"
#include "src/timeline/rank_file.hpp"
#include "support/synthetic_files.hpp"
#include "support/tangled_run.hpp"
#include "support/temp_dir.hpp"
#include "support/thread_exchange.hpp"

namespace commprof {
namespace {

namespace fs = std::filesystem;

// The files a process's reduction read, in its order (the critical path's second reader is
// told each one).
class ReadFiles final : public FileStepSink {
 public:
  void begin_file(std::uint32_t index) override { read.push_back(index); }
  void header(const RankTimeline&) override {}
  void step(const StepView&) override {}
  void end() override {}
  void restart() override {}
  std::vector<std::uint32_t> read;
};

Report reduce_on_threads(const std::vector<std::string>& files, const ReduceOptions& options,
                         int processes, const test::MayClaim& may = {},
                         std::vector<std::vector<std::uint32_t>>* read = nullptr) {
  test::Mailboxes boxes(processes);
  Report report;
  std::vector<ReadFiles> readers(static_cast<std::size_t>(processes));
  std::vector<std::thread> threads;
  for (int p = 0; p < processes; ++p) {
    threads.emplace_back([&, p] {
      ReadFiles& reader = readers[static_cast<std::size_t>(p)];
      Report mine;
      if (may) {
        test::TurnsExchange exchange(boxes, p, files.size(), may);
        mine = reduce_rank_files_across(files, options, exchange, &reader);
      } else {
        test::ThreadExchange exchange(boxes, p);
        mine = reduce_rank_files_across(files, options, exchange, &reader);
      }
      if (p == 0) report = std::move(mine);
    });
  }
  for (std::thread& t : threads) t.join();
  if (read != nullptr) {
    read->clear();
    for (const ReadFiles& r : readers) read->push_back(r.read);
  }
  return report;
}

std::string all_formats(const Report& r) {
  std::ostringstream os;
  write_report_json(os, r);
  write_report_text(os, r);
  write_report_csv(os, r);
  write_report_prometheus(os, r);
  write_report_html(os, r);
  return os.str();
}

// "" where equal, else the first line where they differ, from each: a readable failure.
std::string first_difference(const std::string& got, const std::string& want) {
  std::istringstream a(got), b(want);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ha = static_cast<bool>(std::getline(a, la));
    const bool hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb) return "";
    if (ha != hb || la != lb) {
      return "line " + std::to_string(line) + ":\n  across:      " + (ha ? la : "(end)") +
             "\n  one process: " + (hb ? lb : "(end)");
    }
  }
}

std::string fresh_dir(const std::string& name) {
  const std::string dir = test::own_temp_path(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

using test::write_tangled_run;

TEST(DistributedReduction, SameReportAsOneProcessInEveryFormat) {
  const std::string dir = fresh_dir("across_tangled");
  std::vector<std::string> files = write_tangled_run(dir);
  // Read in an order that is not the ranks': instances are first met on late ranks.
  std::reverse(files.begin(), files.begin() + 5);
  ReduceOptions options;
  options.peak_busbw_gbps = 50;
  const Report one = reduce_rank_files(files, options);
  ASSERT_EQ(one.ranks.size(), 12u);
  ASSERT_GT(one.inconsistent_instances, 0);
  const std::string expected = all_formats(one);
  ASSERT_NE(expected.find("alltoallv"), std::string::npos);
  ASSERT_NE(expected.find("Tree/LL128"), std::string::npos);
  std::set<std::string> bases;
  for (const CollectiveInstance& c : one.instances) {
    if (c.collective == "alltoallv") bases.emplace(c.busbw_basis());
  }
  ASSERT_EQ(bases, (std::set<std::string>{"per-peer", "(n-1)/n"}));
  ASSERT_NE(expected.find("mixed"), std::string::npos);
  // tp and world, the latter with its balance, and world's dispatches alone
  ASSERT_EQ(one.group_times.size(), 3u);
  EXPECT_EQ(one.group_times[2].group, "world:dispatch");
  EXPECT_GE(one.group_times[2].alltoall_wait_ns, 0.0);
  ASSERT_GT(one.group_times[1].recv_imbalance, 1.0);
  for (int processes : {1, 2, 3, 5}) {
    SCOPED_TRACE("processes " + std::to_string(processes));
    const Report across = reduce_on_threads(files, options, processes);
    EXPECT_EQ(first_difference(all_formats(across), expected), "");
  }
}

TEST(DistributedReduction, RankReadTwiceAndBrokenFilesAsOneProcessNamesThem) {
  const std::string dir = fresh_dir("across_problems");
  std::vector<std::string> files = write_tangled_run(dir);
  // Rank 2 again, later in the list (a duplicate of a file another process reads), and rank 9
  // first in a broken copy (not kept: the valid one later is), then valid twice.
  const std::string copy2 = dir + "/copy-of-rank-2.json";
  fs::copy_file(files[2], copy2);
  const std::string broken9 = dir + "/broken-rank-9.json";
  {
    std::ifstream in(files[9]);
    std::string header;
    std::getline(in, header);
    std::ofstream(broken9) << header << "\n{\"index\": \"zero\"}\n]}\n";
  }
  const std::string copy9 = dir + "/copy-of-rank-9.json";
  fs::copy_file(files[9], copy9);
  files.insert(files.begin() + 1, broken9);
  files.push_back(copy2);
  files.push_back(copy9);
  files.push_back(dir + "/missing.json");
  const ReduceOptions options;
  const Report one = reduce_rank_files(files, options);
  ASSERT_EQ(one.ranks.size(), 12u);
  ASSERT_EQ(one.problems.size(), 4u);
  EXPECT_NE(one.problems[2].message.find("was already read from '" + files[10] + "'"),
            std::string::npos)
      << one.problems[2].message;
  const std::string expected = all_formats(one);
  for (int processes : {2, 4, 7}) {
    SCOPED_TRACE("processes " + std::to_string(processes));
    EXPECT_EQ(first_difference(all_formats(reduce_on_threads(files, options, processes)), expected),
              "");
  }
}

// Files are claimed as processes come free, so which process reads which is the machine's to
// decide: the report cannot depend on it. Two orders forced here, on the files of the test
// above (a rank read twice, in files other processes read, and broken files): the claims taken
// in turns from the last process to the first (each process's files interleave with the
// others'), and process 0 claiming nothing until every file is taken.
TEST(DistributedReduction, SameReportWhoeverClaimsWhichFiles) {
  const std::string dir = fresh_dir("across_claims");
  std::vector<std::string> files = write_tangled_run(dir);
  const std::string copy2 = dir + "/copy-of-rank-2.json";
  fs::copy_file(files[2], copy2);
  files.insert(files.begin() + 1, dir + "/missing.json");
  files.push_back(copy2);
  const ReduceOptions options;
  const Report one = reduce_rank_files(files, options);
  ASSERT_EQ(one.problems.size(), 2u);
  const std::string expected = all_formats(one);
  const auto n = static_cast<std::uint32_t>(files.size());
  constexpr int kProcesses = 3;
  std::vector<std::vector<std::uint32_t>> read;
  const Report turns = reduce_on_threads(
      files, options, kProcesses,
      [](int rank, std::uint64_t count) {
        return static_cast<int>(count % kProcesses) == kProcesses - 1 - rank;
      },
      &read);
  EXPECT_EQ(first_difference(all_formats(turns), expected), "");
  ASSERT_EQ(read.size(), 3u);
  for (std::uint32_t p = 0; p < read.size(); ++p) {
    std::vector<std::uint32_t> want;  // one file a chunk: every third, from 2 - p
    for (std::uint32_t i = kProcesses - 1 - p; i < n; i += kProcesses) want.push_back(i);
    EXPECT_EQ(read[p], want) << "process " << p;
  }
  const Report late = reduce_on_threads(
      files, options, kProcesses,
      [n](int rank, std::uint64_t count) { return rank != 0 || count >= n; }, &read);
  EXPECT_EQ(first_difference(all_formats(late), expected), "");
  EXPECT_TRUE(read[0].empty());
  EXPECT_EQ(read[1].size() + read[2].size(), n);
}

// Only the HTML report draws each rank's per-step points, and the report's process would hold
// every rank's: without them every other format is the same bytes, on one process or several.
TEST(DistributedReduction, WithoutStepPointsTheOtherFormatsAreTheSame) {
  const std::string dir = fresh_dir("across_no_points");
  const std::vector<std::string> files = write_tangled_run(dir);
  ReduceOptions options;
  const Report with = reduce_rank_files(files, options);
  ASSERT_FALSE(with.ranks.at(0).step_points.empty());
  options.step_points = false;
  const auto others = [](const Report& r) {
    std::ostringstream os;
    write_report_json(os, r);
    write_report_text(os, r);
    write_report_csv(os, r);
    write_report_prometheus(os, r);
    return os.str();
  };
  const std::string expected = others(with);
  for (int processes : {1, 3}) {
    SCOPED_TRACE("processes " + std::to_string(processes));
    const Report without = processes == 1 ? reduce_rank_files(files, options)
                                          : reduce_on_threads(files, options, processes);
    for (const RankSummary& r : without.ranks) EXPECT_TRUE(r.step_points.empty()) << r.rank;
    EXPECT_EQ(first_difference(others(without), expected), "");
  }
}

// More instances than the worst-instances table lists and than the heatmap has columns, with
// equal waits at the table's cut and equal first starts across communicators: process 0 gets
// each owner's worst and the columns' bounds, not the instances, and must list and bin as one
// process does.
TEST(DistributedReduction, TiesAtTheWorstInstancesCutAndInTheHeatmapsColumns) {
  SyntheticSpec spec;
  spec.world_size = 12;
  spec.steps = 60;
  spec.warmup_steps = 1;
  spec.layers = 4;
  spec.tp_size = 4;
  const std::vector<std::string> files =
      test::write_synthetic_files(test::own_temp_path("across_ties"), spec);
  const ReduceOptions options;
  const Report one = reduce_rank_files(files, options);
  // 60 measured steps × (2 on "world" + 2 on each of 3 tp groups), all here in one process.
  ASSERT_EQ(one.instances_total, 60 * 8);
  ASSERT_EQ(one.instances.size(), 60u * 8u);
  ASSERT_EQ(one.wait_columns.size(), kWaitColumns);
  EXPECT_EQ(one.wait_columns.back().last, 60 * 8 - 1);
  const auto worst = report_fields::worst_instances(one, kReportWorstInstances);
  ASSERT_EQ(worst.size(), kReportWorstInstances);
  EXPECT_EQ(worst[kReportWorstInstances - 1]->wait_caused_ns,
            report_fields::worst_instances(one, kReportWorstInstances + 1).back()->wait_caused_ns)
      << "the cut falls between equal waits";
  std::int64_t cells = 0;
  for (const WaitCell& c : one.wait_cells) cells += c.wait_caused_ns;
  std::int64_t caused = 0;
  for (const CollectiveInstance& c : one.instances) caused += c.wait_caused_ns;
  EXPECT_EQ(cells, caused) << "every wait caused is in one heatmap cell";
  const std::string expected = all_formats(one);
  for (int processes : {2, 3, 4}) {
    SCOPED_TRACE("processes " + std::to_string(processes));
    const Report across = reduce_on_threads(files, options, processes);
    EXPECT_LE(across.instances.size(), kReportWorstInstances);
    EXPECT_EQ(first_difference(all_formats(across), expected), "");
  }
}

TEST(DistributedReduction, MoreProcessesThanFiles) {
  SyntheticSpec spec;
  spec.world_size = 2;
  const std::vector<std::string> files =
      test::write_synthetic_files(test::own_temp_path("across_few"), spec);
  const ReduceOptions options;
  const Report one = reduce_rank_files(files, options);
  ASSERT_EQ(one.ranks.size(), 2u);
  EXPECT_EQ(first_difference(all_formats(reduce_on_threads(files, options, 4)), all_formats(one)),
            "");
}

}  // namespace
}  // namespace commprof
