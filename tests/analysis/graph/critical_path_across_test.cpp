// SPDX-License-Identifier: MIT
// The critical paths shared among processes (add_critical_paths_across) against the graphs one
// process builds and holds (load_step_graphs, add_critical_paths), on 1, 2 and 3 processes
// (threads talking through mailboxes). The run: four ranks, two pipeline pairs (0 sends to 1,
// 2 to 3) and one allreduce of all four, a warm-up step 0 and measured steps 1 and 2 (times in
// ns from the step's start, 1000 × step on rank 0's clock; ranks 2 and 3 on a host whose clock
// reads 100 less):
//
//   rank 0: f COMP [0,10]   send COMM [10,14] after f     ar [14,30] after send  c [30,35] after ar
//   rank 1: recv COMM [2,14]  g COMP [14,24] after recv  ar [24,30] after g     c [30,35] after ar
//   rank 2: f COMP [0,12]   send COMM [12,16] after f     ar [16,30] after send  c [30,38] after ar
//   rank 3: recv COMM [2,16]  g COMP [16,26] after recv  ar [26,30] after g     c [30,35] after ar
//
// Step 1's path, worked by hand: it ends with rank 2's c (38), which waited for ar; ar's last
// arrival is rank 3's (26), which waited for its g, which waited for its receive, whose partner,
// rank 2's send, arrived last (12, after rank 3's receive at 2), after rank 2's f from the step's
// start: f 12, send 4, g 10, ar 4, c 8 = 38. The worst wait on it is the receive's (10 against
// ar's 2): rank 2, whose f took 2 longer than rank 0's. In step 2 rank 0's f takes 20 instead
// (its send [20,24], rank 1's receive [2,24], g [24,34], ar [34,38]): every ar ends at 38, and
// every c 8 later than in step 1.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "analysis/distributed_reduction.hpp"
#include "analysis/graph/critical_path_across.hpp"
#include "analysis/graph/critical_report.hpp"
#include "analysis/graph/step_graph.hpp"
#include "analysis/report/report_writers.hpp"
#include "src/timeline/rank_file.hpp"
#include "support/hand_timelines.hpp"
#include "support/synthetic_files.hpp"
#include "support/temp_dir.hpp"
#include "support/thread_exchange.hpp"

namespace commprof {
namespace {

namespace fs = std::filesystem;
using test::timed_op;

OpRecord transfer_op(const std::string& name, std::int64_t start, std::int64_t end, int peer,
                     bool send, std::vector<std::int32_t> after = {}) {
  OpRecord r = timed_op(name, Category::kComm, start, end, std::move(after));
  r.collective = send ? "send" : "recv";
  r.comm = "pp" + std::to_string(peer / 2);
  r.comm_size = 2;
  (send ? r.send_to : r.recv_from) = {peer};
  return r;
}

OpRecord world_allreduce(std::int64_t seq, std::int64_t start, std::int64_t end,
                         std::vector<std::int32_t> after) {
  OpRecord r = timed_op("ar", Category::kComm, start, end, std::move(after));
  r.collective = "allreduce";
  r.comm = "world";
  r.comm_size = 4;
  r.seq = seq;
  r.bytes = 4096;
  return r;
}

// Rank `rank`'s step `step` of the run above.
StepRecord pipeline_step(int rank, int step) {
  StepRecord s;
  s.index = step;
  s.warmup = step == 0;
  const int f_end = rank == 0 ? (step == 2 ? 20 : 10) : 12;
  const int ar_end = step == 2 ? 38 : 30;  // the last arrival (rank 1's in step 2) + 4
  const int c_end = ar_end + (rank == 2 ? 8 : 5);
  if (rank % 2 == 0) {
    s.ops = {timed_op("f", Category::kComp, 0, f_end),
             transfer_op("send_act", f_end, f_end + 4, rank + 1, true, {0}),
             world_allreduce(step, f_end + 4, ar_end, {1})};
  } else {
    const int arrived = rank == 1 ? (step == 2 ? 24 : 14) : 16;
    s.ops = {transfer_op("recv_act", 2, arrived, rank - 1, false),
             timed_op("g", Category::kComp, arrived, arrived + 10, {0}),
             world_allreduce(step, arrived + 10, ar_end, {1})};
  }
  s.ops.push_back(timed_op("c", Category::kComp, ar_end, c_end, {2}));
  const std::int64_t base = 1000 * step - (rank >= 2 ? 100 : 0);
  for (OpRecord& op : s.ops) {
    op.start_ns += base;
    op.end_ns += base;
  }
  s.start_ns = base;
  s.end_ns = base + c_end;
  return s;
}

// The run above as rank files in `dir`, each step first given to `change` (rank, step).
std::vector<std::string> write_pipeline_run(
    const std::string& dir, const std::function<void(int, int, StepRecord&)>& change = {}) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> files;
  for (int rank = 0; rank < 4; ++rank) {
    RankTimeline t;
    t.rank = rank;
    t.world_size = 4;
    t.host = rank >= 2 ? "node1" : "node0";
    t.clock_offset_ns = rank >= 2 ? 100 : 0;
    for (int step = 0; step < 3; ++step) {
      t.steps.push_back(pipeline_step(rank, step));
      if (change) change(rank, step, t.steps.back());
    }
    files.push_back(
        write_rank_file(dir, t, rank == 3 ? RankFileFormat::kZstd : RankFileFormat::kJson));
  }
  return files;
}

// As `commprof report` runs it: the steps packed while the reduction reads the files (which
// then names the problem files itself), the path from those packs.
// With `may`, the processes claim files in the turns it sets (test::TurnsExchange).
Report critical_on_threads(const std::vector<std::string>& files, const Report& reduced,
                           int processes, const test::MayClaim& may = {}) {
  test::Mailboxes boxes(processes);
  Report report;
  std::vector<std::thread> threads;
  for (int p = 0; p < processes; ++p) {
    threads.emplace_back([&, p] {
      test::ThreadExchange plain(boxes, p);
      test::TurnsExchange turns(boxes, p, files.size(), may);
      ReduceExchange& exchange = may ? static_cast<ReduceExchange&>(turns) : plain;
      Report mine;
      CriticalPathPacks packs;
      const Report r = reduce_rank_files_across(files, ReduceOptions{}, exchange, &packs);
      if (p == 0) {
        // The reduction finds the same problem files (in its own words).
        EXPECT_EQ(r.problems.size(), reduced.problems.size());
        for (std::size_t i = 0; i < r.problems.size() && i < reduced.problems.size(); ++i)
          EXPECT_EQ(r.problems[i].file, reduced.problems[i].file);
        mine.problems = reduced.problems;
      }
      add_critical_paths_across(mine, files, exchange, packs);
      if (p == 0) report = std::move(mine);
    });
  }
  for (std::thread& t : threads) t.join();
  return report;
}

// The critical path's rows as the report writes them, and its segments, which no writer lists
// whole.
std::string critical_text(const Report& r) {
  std::ostringstream os;
  write_report_json(os, r);
  for (const CriticalPathOfStep& p : r.critical_paths) {
    os << "step " << p.step << ":";
    for (const CriticalSegment& s : p.segments) {
      os << ' ' << s.rank << '/' << s.op << (s.gap ? "gap" : "") << ' ' << s.name << ' '
         << s.start_ns << '-' << s.end_ns;
    }
    os << '\n';
  }
  for (const std::string& w : r.warnings) os << "warning: " << w << '\n';
  return os.str();
}

TEST(CriticalPathAcross, SameRowsAsOneProcessHoldingEveryGraph) {
  const std::vector<std::string> files =
      write_pipeline_run(test::own_temp_path("critical_across_pipeline"));
  Report held;
  add_critical_paths(held, load_step_graphs(files));
  ASSERT_EQ(held.critical_steps.size(), 2u);
  const CriticalStepRow& one = held.critical_steps[0];
  EXPECT_EQ(one.step, 1);
  EXPECT_EQ(one.path_ns, 38);
  EXPECT_EQ(one.comp_ns, 30);
  EXPECT_EQ(one.comm_ns, 8);
  EXPECT_EQ(one.ranks, 2);
  EXPECT_EQ(one.straggler_rank, 2);
  EXPECT_EQ(one.straggler_at, "recv_act on rank 3 (with rank 2)");
  EXPECT_EQ(one.straggler_late_ns, 10);
  EXPECT_EQ(one.straggler_cause, "f (COMP)");
  EXPECT_DOUBLE_EQ(one.straggler_excess_ns, 2.0);
  ASSERT_EQ(held.critical_paths[0].segments.size(), 5u);
  EXPECT_EQ(held.critical_paths[0].segments[0].start_ns, 1000);
  EXPECT_EQ(held.critical_paths[0].segments[3].rank, 3);  // ar, from rank 3's arrival
  EXPECT_EQ(held.critical_steps[1].straggler_rank, 0);    // step 2: rank 0's slow f
  const std::string expected = critical_text(held);
  for (int processes : {1, 2, 3}) {
    SCOPED_TRACE("processes " + std::to_string(processes));
    EXPECT_EQ(critical_text(critical_on_threads(files, Report{}, processes)), expected);
  }
}

// Which process reads which files is the machine's to decide (they are claimed as processes
// come free): the owner of a step must add its ranks in the files' order whatever the sources,
// since ties in the path go to the op added first. In a synthetic run of two tensor-parallel
// groups the last arrivals of each group tie (ranks 6 and 13, r % 7 = 6), and the path's end is
// the first op of those ending last: where process 0 reads the second group's files (here it
// claims only from file 8 on) and its ranks were added first, the path ran through rank 13 (a
// run on 16 processes at 2,048 ranks did just that). Also the files claimed one at a time in
// turns, from the last process to the first.
TEST(CriticalPathAcross, SameRowsWhoeverClaimsWhichFiles) {
  SyntheticSpec spec;
  spec.world_size = 16;
  spec.steps = 3;
  spec.warmup_steps = 1;
  spec.layers = 4;
  spec.tp_size = 8;
  const std::vector<std::string> files =
      test::write_synthetic_files(test::own_temp_path("critical_across_claims"), spec);
  Report held;
  add_critical_paths(held, load_step_graphs(files));
  ASSERT_EQ(held.critical_steps.size(), 3u);
  EXPECT_EQ(held.critical_steps[0].straggler_rank, 6);
  const std::string expected = critical_text(held);
  const test::MayClaim second_group_on_0 = [](int rank, std::uint64_t count) {
    return rank == 0 ? count >= 8 : count < 8;
  };
  EXPECT_EQ(critical_text(critical_on_threads(files, Report{}, 3, second_group_on_0)), expected);
  for (int processes : {2, 3, 5}) {
    SCOPED_TRACE("processes " + std::to_string(processes));
    const Report turns =
        critical_on_threads(files, Report{}, processes, [processes](int rank, std::uint64_t count) {
          return static_cast<int>(count % static_cast<std::uint64_t>(processes)) ==
                 processes - 1 - rank;
        });
    EXPECT_EQ(critical_text(turns), expected);
  }
}

TEST(CriticalPathAcross, LeavesOutProblemFilesAndWarnsOfABadWaitAsOneProcess) {
  const std::string dir = test::own_temp_path("critical_across_problems");
  std::vector<std::string> files = write_pipeline_run(dir);
  // A file the reduction could not read is left out: the rows are those of the others.
  Report reduced;
  const std::string broken = dir + "/rank-7.json";
  std::ofstream(broken) << "not a rank file\n";
  files.insert(files.begin() + 1, broken);
  reduced.problems.push_back({broken, "not JSON"});
  Report held;
  held.problems = reduced.problems;
  add_critical_paths(held, load_step_graphs({files[0], files[2], files[3], files[4]}));
  for (int processes : {1, 2, 3}) {
    SCOPED_TRACE("processes " + std::to_string(processes));
    EXPECT_EQ(critical_text(critical_on_threads(files, reduced, processes)), critical_text(held));
  }
  // Rank 2 waits for an op its step does not have: no path, and the warning names it.
  RankTimeline bad = read_rank_file(files[3]);
  bad.steps[2].ops[1].after = {9};
  write_rank_file(dir, bad);
  for (int processes : {1, 2, 3}) {
    SCOPED_TRACE("processes " + std::to_string(processes));
    const Report r = critical_on_threads(files, reduced, processes);
    EXPECT_TRUE(r.critical_steps.empty());
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_EQ(r.warnings[0],
              "no critical path: rank 2, step 2, op 1 ('send_act'): 'after' names op 9, which "
              "is not another op of the step (it has 4)");
  }
}

// The packing sends what ops share once and each op's numbers as differences from the op
// before it; the owner reuses one graph's ops from step to step. Steps of other sizes, ops that
// start before the op listed before them, names longer than a string holds inline, a collective
// without a sequence number, sequence numbers far apart, and a transfer at a place a plain op
// takes the step after, all give the rows one process holding every graph gives. A collective
// whose sequence number follows another on some ranks only must still match on all of them.
TEST(CriticalPathAcross, UnevenStepsPackAndUnpackAsOneProcess) {
  const std::vector<std::string> files = write_pipeline_run(
      test::own_temp_path("critical_across_uneven"), [](int rank, int step, StepRecord& s) {
        const std::int64_t base = s.start_ns;
        // Listed last, started early, on a stream of its own: a start before the one listed
        // before it. Rank 1 has it in step 1 only.
        if (rank != 1 || step == 1) {
          OpRecord early = timed_op("a_copy_with_a_name_longer_than_inline", Category::kMem,
                                    base + 1, base + 3 + rank);
          early.stream = "side";
          s.ops.push_back(early);
        }
        // A collective without a sequence number (matched with nothing), then one whose
        // numbers are far apart from step to step.
        OpRecord loose = timed_op("unsequenced", Category::kComm, base + 31, base + 33, {2});
        loose.collective = "allreduce";
        loose.comm = "world";
        loose.comm_size = 4;
        s.ops.push_back(loose);
        // The even ranks have one more collective before it, so its seq follows another on
        // them; it ends last on rank 3, whose path then runs through rank 0, which arrived last.
        if (rank % 2 == 0) {
          OpRecord pair = world_allreduce(50 + step, base + 34, base + 36, {2});
          pair.comm = "evens";
          pair.comm_size = 2;
          s.ops.push_back(pair);
        }
        OpRecord far =
            world_allreduce(1000000 * step + 7, base + 40 + 2 * (3 - rank), base + 48 + rank,
                            {static_cast<std::int32_t>(s.ops.size() - 1)});
        far.name = "the_last_allreduce_has_a_long_name";
        far.comm = "wide_world_communicator";
        s.ops.push_back(far);
        // Rank 0's step 2 has a plain op where its step 1 has its send.
        if (rank == 0 && step == 2) {
          s.ops[1] = timed_op("not_a_send", Category::kComm, base + 20, base + 24, {0});
          s.ops[1].stream = "COMM";
        }
      });
  Report held;
  add_critical_paths(held, load_step_graphs(files));
  ASSERT_EQ(held.critical_steps.size(), 2u);
  const std::string expected = critical_text(held);
  EXPECT_NE(expected.find("the_last_allreduce_has_a_long_name"), std::string::npos);
  for (int processes : {1, 2, 3}) {
    SCOPED_TRACE("processes " + std::to_string(processes));
    EXPECT_EQ(critical_text(critical_on_threads(files, Report{}, processes)), expected);
  }
}

}  // namespace
}  // namespace commprof
