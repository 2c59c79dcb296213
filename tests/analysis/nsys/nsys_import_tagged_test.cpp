// SPDX-License-Identifier: MIT
// import-nsys on real exports with tagged COMM ranges (tests/data/nsys-tp-tiny-2xh200-tagged:
// 2 x H200, commprof run --workload tp --model tiny, 2 warm-up + 3 measured steps, nsys capturing
// only the `measured_steps` range), against commprof's own rank files of the same job. Every
// expected value is read from those rank files; the only literal is the communicator's name,
// checked to be the group's own ("tp0"), which only the tag can tell.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

#include "analysis/nsys/nsys_import.hpp"
#include "analysis/reducer.hpp"
#include "analysis/step_metrics.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {
namespace {

const std::string kData = COMMPROF_TEST_DATA_DIR "/nsys-tp-tiny-2xh200-tagged";

std::string export_of(int rank) {
  return kData + "/commprof_vm_" + std::to_string(rank) + ".sqlite";
}

struct Imported {
  std::vector<RankTimeline> nsys;            // by rank
  std::vector<RankTimeline> commprof;        // by rank
  std::map<int, NsysFileSummary> summaries;  // by rank
};

const Imported& imported() {
  static const Imported data = [] {
    Imported d;
    // Per process: ctest -j runs each TEST in its own process at the same time.
    const std::string dir =
        ::testing::TempDir() + "/nsys_import_tagged_test_" + std::to_string(::getpid());
    std::filesystem::remove_all(dir);
    for (NsysFileSummary& s : import_nsys_files({export_of(1), export_of(0)}, dir, {}))
      d.summaries[s.rank] = s;
    for (int r = 0; r < 2; ++r) {
      d.nsys.push_back(read_rank_file(dir + "/rank-" + std::to_string(r) + ".json"));
      d.commprof.push_back(read_rank_file(kData + "/rank-" + std::to_string(r) + ".json"));
    }
    std::filesystem::remove_all(dir);
    return d;
  }();
  return data;
}

std::vector<const StepRecord*> steps_of(const RankTimeline& t, bool warmup) {
  std::vector<const StepRecord*> out;
  for (const StepRecord& s : t.steps)
    if (s.warmup == warmup) out.push_back(&s);
  return out;
}

std::vector<const OpRecord*> comm_ops(const std::vector<const StepRecord*>& steps) {
  std::vector<const OpRecord*> out;
  for (const StepRecord* s : steps)
    for (const OpRecord& op : s->ops)
      if (op.category == Category::kComm) out.push_back(&op);
  return out;
}

std::map<Category, int> count_by_category(const StepRecord& s) {
  std::map<Category, int> n;
  for (const OpRecord& op : s.ops) ++n[op.category];
  return n;
}

TEST(NsysImportTagged, FindsBothRanksAsCommprofNamedThem) {
  const Imported& d = imported();
  ASSERT_EQ(d.summaries.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const NsysFileInfo info = probe_nsys_file(export_of(r));
    const RankTimeline& cp = d.commprof[r];
    const RankTimeline& ns = d.nsys[r];
    ASSERT_EQ(cp.rank, r);
    EXPECT_EQ(info.rank, r);
    EXPECT_EQ(info.rank_source, "OMPI_COMM_WORLD_RANK");
    EXPECT_EQ(info.world_size, cp.world_size);
    EXPECT_EQ(info.local_rank, cp.local_rank);
    EXPECT_EQ(info.host, cp.host);
    EXPECT_GT(info.session_start_utc_ns, 0);
    EXPECT_EQ(ns.rank, r);
    EXPECT_EQ(ns.world_size, cp.world_size);
    EXPECT_EQ(ns.local_rank, cp.local_rank);
    EXPECT_EQ(ns.host, cp.host);
    EXPECT_EQ(ns.device, cp.device);  // "NVIDIA H200 (0000:00:0<6|7>.0)"
    EXPECT_EQ(ns.backend, "nsys");
    EXPECT_TRUE(d.summaries.at(r).commprof_nvtx);
  }
}

// nsys captured the `measured_steps` range only: the import holds commprof's measured steps (2..4)
// and nothing of the 2 warm-up steps, and no activity fell outside a step.
TEST(NsysImportTagged, HoldsExactlyTheMeasuredSteps) {
  const Imported& d = imported();
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const auto warmup = steps_of(d.commprof[r], true);
    const auto measured = steps_of(d.commprof[r], false);
    ASSERT_EQ(warmup.size(), 2u);  // so that leaving them out means something
    ASSERT_EQ(measured.size(), 3u);
    ASSERT_EQ(d.nsys[r].steps.size(), measured.size());
    for (std::size_t i = 0; i < measured.size(); ++i) {
      EXPECT_EQ(d.nsys[r].steps[i].index, measured[i]->index);
      EXPECT_FALSE(d.nsys[r].steps[i].warmup);
    }
    EXPECT_EQ(d.nsys[r].steps.front().index, 2);
    EXPECT_EQ(d.nsys[r].steps.back().index, 4);
    const NsysFileSummary& s = d.summaries.at(r);
    EXPECT_EQ(s.steps, 3);
    EXPECT_EQ(s.outside_steps, 0);
    EXPECT_EQ(s.ignored, 0);
    // Every activity of the capture is one of commprof's ops of the measured steps.
    std::int64_t ops = 0, kernels = 0;
    for (const StepRecord* st : measured) {
      ops += static_cast<std::int64_t>(st->ops.size());
      for (const OpRecord& op : st->ops)
        if (op.category != Category::kMem) ++kernels;
    }
    EXPECT_EQ(s.activities, ops);
    EXPECT_EQ(s.kernels, kernels);
    std::printf("rank %d: %lld activities, %lld kernels, steps %d..%d (warm-up %d..%d left out)\n",
                r, static_cast<long long>(s.activities), static_cast<long long>(s.kernels),
                d.nsys[r].steps.front().index, d.nsys[r].steps.back().index, warmup.front()->index,
                warmup.back()->index);
  }
}

TEST(NsysImportTagged, OpsPerCategoryNamesAndBytesMatchTheRankFilesStepByStep) {
  const Imported& d = imported();
  for (int r = 0; r < 2; ++r) {
    const auto measured = steps_of(d.commprof[r], false);
    ASSERT_EQ(d.nsys[r].steps.size(), measured.size());
    std::int64_t per_category[3] = {0, 0, 0};
    for (std::size_t i = 0; i < measured.size(); ++i) {
      const StepRecord& ns = d.nsys[r].steps[i];
      const StepRecord& cp = *measured[i];
      SCOPED_TRACE("rank " + std::to_string(r) + " step " + std::to_string(cp.index));
      EXPECT_EQ(count_by_category(ns), count_by_category(cp));
      for (const OpRecord& op : cp.ops) ++per_category[index_of(op.category)];
      // Names are unique within a step: the same set, each with commprof's category and bytes.
      std::map<std::string, const OpRecord*> want;
      for (const OpRecord& op : cp.ops) want[op.name] = &op;
      ASSERT_EQ(want.size(), cp.ops.size());
      std::set<std::string> got_names;
      for (const OpRecord& op : ns.ops) {
        got_names.insert(op.name);
        const auto it = want.find(op.name);
        ASSERT_NE(it, want.end()) << op.name;
        EXPECT_EQ(op.category, it->second->category) << op.name;
        EXPECT_EQ(op.stream, it->second->stream) << op.name;
        EXPECT_EQ(op.bytes, it->second->bytes) << op.name;
      }
      EXPECT_EQ(got_names.size(), want.size());
    }
    for (Category c : kAllCategories)
      EXPECT_EQ(d.summaries.at(r).ops[index_of(c)], per_category[index_of(c)])
          << "rank " << r << " " << category_name(c);
  }
}

// The tag gives each COMM op the communicator's own name, its size and commprof's sequence
// number, which continue from the warm-up steps nsys did not capture.
TEST(NsysImportTagged, CommOpsCarryCommprofsCommunicatorAndSequenceNumbers) {
  const Imported& d = imported();
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const auto want = comm_ops(steps_of(d.commprof[r], false));
    const auto got = comm_ops(steps_of(d.nsys[r], false));
    const std::size_t warmup_comm = comm_ops(steps_of(d.commprof[r], true)).size();
    ASSERT_GT(want.size(), 0u);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(d.summaries.at(r).comm_ranges_tagged, static_cast<std::int64_t>(want.size()));
    EXPECT_EQ(d.summaries.at(r).comm_ranges_by_name, 0);
    std::set<std::string> comms;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const OpRecord& g = *got[i];
      const OpRecord& w = *want[i];
      SCOPED_TRACE("op " + std::to_string(i) + " " + w.name);
      EXPECT_EQ(g.name, w.name);  // the plain name, without its tag
      EXPECT_EQ(g.collective, w.collective);
      EXPECT_EQ(g.comm, w.comm);
      EXPECT_EQ(g.comm_size, w.comm_size);
      EXPECT_EQ(g.seq, w.seq);
      EXPECT_EQ(g.bytes, w.bytes);
      EXPECT_EQ(g.stream, w.stream);
      // commprof numbers its collectives from 0 over every step, warm-up included.
      EXPECT_EQ(w.seq, static_cast<std::int64_t>(warmup_comm + i));
      comms.insert(g.comm);
    }
    // The group's own name, which an untagged export cannot give (there: the kind, "tp").
    EXPECT_EQ(comms, std::set<std::string>{"tp0"});
    std::printf("rank %d: %zu COMM ops on %s, seq %lld..%lld (%zu in the warm-up)\n", r, got.size(),
                got.front()->comm.c_str(), static_cast<long long>(got.front()->seq),
                static_cast<long long>(got.back()->seq), warmup_comm);
  }
}

Report reduce(const std::vector<RankTimeline>& ranks) {
  Reducer reducer(ReduceOptions{});
  for (const RankTimeline& t : ranks) reducer.add(t, "rank " + std::to_string(t.rank));
  return reducer.finish();
}

using InstanceKey = std::tuple<std::string, std::int64_t, std::string, std::uint64_t, int>;

std::vector<InstanceKey> keys_of(const Report& rep) {
  std::vector<InstanceKey> keys;
  for (const CollectiveInstance& c : rep.instances)
    keys.emplace_back(c.comm, c.seq, c.collective, c.bytes, c.comm_size);
  std::sort(keys.begin(), keys.end());
  return keys;
}

TEST(NsysImportTagged, ReducerMatchesEveryCollectiveAcrossBothRanks) {
  const Imported& d = imported();
  const Report ns = reduce(d.nsys);
  const Report cp = reduce(d.commprof);
  for (const Report* rep : {&ns, &cp}) {
    EXPECT_TRUE(rep->problems.empty());
    EXPECT_EQ(rep->world_size, 2);
    EXPECT_EQ(rep->incomplete_instances, 0);
    EXPECT_EQ(rep->inconsistent_instances, 0);
  }
  // One instance per COMM op of a rank's measured steps, each seen by both ranks.
  const std::size_t comm_per_rank = comm_ops(steps_of(d.commprof[0], false)).size();
  EXPECT_EQ(comm_ops(steps_of(d.commprof[1], false)).size(), comm_per_rank);
  ASSERT_EQ(ns.instances.size(), comm_per_rank);
  for (const CollectiveInstance& c : ns.instances) {
    SCOPED_TRACE(c.comm + " seq " + std::to_string(c.seq));
    EXPECT_EQ(c.ranks_seen, 2);
    EXPECT_EQ(c.comm_size, 2);
    EXPECT_TRUE(c.consistent);
  }
  // The same instances as commprof's own reduction of the run: (comm, seq, collective, bytes, n).
  EXPECT_EQ(keys_of(ns), keys_of(cp));
  ASSERT_EQ(ns.groups.size(), 1u);
  ASSERT_EQ(cp.groups.size(), 1u);
  EXPECT_EQ(ns.groups[0].group, cp.groups[0].group);
  EXPECT_EQ(ns.groups[0].communicators, 1);
  EXPECT_EQ(ns.groups[0].instances, cp.groups[0].instances);
  EXPECT_EQ(ns.groups[0].bytes, cp.groups[0].bytes);
  EXPECT_EQ(ns.groups[0].incomplete, 0);
  // Who arrived last: by kernel start (nsys) and by the start event (commprof); printed only.
  for (const Report* rep : {&ns, &cp}) {
    int last[2] = {0, 0};
    double time_ns = 0;
    for (const CollectiveInstance& c : rep->instances) {
      ++last[c.last_rank];
      time_ns += static_cast<double>(c.time_ns());
    }
    std::printf("%s: %zu instances on %s, last rank 0 at %d, rank 1 at %d; mean time %.1f us\n",
                rep == &ns ? "nsys" : "commprof", rep->instances.size(),
                rep->groups[0].group.c_str(), last[0], last[1],
                time_ns / static_cast<double>(rep->instances.size()) / 1e3);
  }
}

// Agreement of times with commprof's pair-event timeline (--op-timing pair: nsys holds CUPTI).
//
// commprof's pair timing measures each op between two CUDA events, as elapsed times from an
// origin event recorded at the step's start and tied to a host clock reading (begin_epoch). So
// within a step commprof's times are GPU times; the step's tie to the host clock has its own
// error. One constant per step (the median of nsys end - commprof end) aligns the two; on this
// data the constants of one rank spread by ~14 us, and a single constant for the whole run leaves
// only ~2/3 of op ends within 5 us. What holds, and is asserted, per step after its constant:
// (1) the kernel lies inside commprof's event window: its nsys duration is never longer than
// commprof's (by > 1 us: the event resolution), it starts no earlier than commprof's start event
// and ends no later than its end event (1 us / 2 us slack; measured: starts >= 3.7 us later, ends
// <= 0.8 us later); (2) >= 95 % of op ends agree within 5 us; (3) the two ranks' run-wide
// constants agree within 10 us (one host, one steady clock; nsys' files share the UTC clock).
TEST(NsysImportTagged, KernelsLieInsideCommprofsPairEventWindows) {
  const Imported& d = imported();
  double run_shift[2] = {0, 0};
  for (int r = 0; r < 2; ++r) {
    const auto measured = steps_of(d.commprof[r], false);
    ASSERT_EQ(d.nsys[r].steps.size(), measured.size());
    std::vector<double> all_end_diffs;
    std::size_t ops = 0, ends_within = 0;
    double max_longer = -1e18, max_early_start = -1e18, max_late_end = -1e18;
    double min_comm_shorter = 1e18, max_comm_shorter = -1e18;
    for (std::size_t i = 0; i < measured.size(); ++i) {
      const StepRecord& ns = d.nsys[r].steps[i];
      const StepRecord& cp = *measured[i];
      std::map<std::string, const OpRecord*> by_name;
      for (const OpRecord& op : cp.ops) by_name[op.name] = &op;
      std::vector<double> end_diffs;
      for (const OpRecord& op : ns.ops) {
        ASSERT_TRUE(by_name.count(op.name)) << op.name;
        end_diffs.push_back(static_cast<double>(op.end_ns - by_name[op.name]->end_ns));
      }
      all_end_diffs.insert(all_end_diffs.end(), end_diffs.begin(), end_diffs.end());
      std::sort(end_diffs.begin(), end_diffs.end());
      const double shift = end_diffs[end_diffs.size() / 2];  // nsys time - commprof time, ns
      std::size_t step_within = 0;
      for (const OpRecord& op : ns.ops) {
        const OpRecord& o = *by_name[op.name];
        const double longer = static_cast<double>(op.duration_ns() - o.duration_ns());
        const double early =
            static_cast<double>(o.start_ns) + shift - static_cast<double>(op.start_ns);
        const double late = static_cast<double>(op.end_ns - o.end_ns) - shift;
        ++ops;
        if (std::fabs(late) <= 5000.0) ++step_within;
        max_longer = std::max(max_longer, longer);
        max_early_start = std::max(max_early_start, early);
        max_late_end = std::max(max_late_end, late);
        if (op.category == Category::kComm) {
          min_comm_shorter = std::min(min_comm_shorter, -longer);
          max_comm_shorter = std::max(max_comm_shorter, -longer);
        }
      }
      ends_within += step_within;
      const StepMetrics n = compute_step_metrics(ns);
      const StepMetrics c = compute_step_metrics(cp);
      std::printf(
          "rank %d step %d: shift %.3f us; %zu of %zu op ends within 5 us; busy COMP %.1f vs "
          "%.1f us, COMM %.1f vs %.1f us (nsys vs commprof)\n",
          r, cp.index, shift / 1e3, step_within, ns.ops.size(),
          static_cast<double>(n.comp_ns) / 1e3, static_cast<double>(c.comp_ns) / 1e3,
          static_cast<double>(n.comm_ns) / 1e3, static_cast<double>(c.comm_ns) / 1e3);
    }
    std::sort(all_end_diffs.begin(), all_end_diffs.end());
    run_shift[r] = all_end_diffs[all_end_diffs.size() / 2];
    std::printf(
        "rank %d: %zu of %zu op ends within 5 us; against commprof's event window every nsys "
        "kernel is shorter by >= %.2f us and starts later by >= %.2f us, and ends later by <= "
        "%.2f us; COMM kernels shorter by %.1f..%.1f us\n",
        r, ends_within, ops, -max_longer / 1e3, -max_early_start / 1e3, max_late_end / 1e3,
        min_comm_shorter / 1e3, max_comm_shorter / 1e3);
    EXPECT_LE(max_longer, 1000.0) << "rank " << r;
    EXPECT_LE(max_early_start, 1000.0) << "rank " << r;
    EXPECT_LE(max_late_end, 2000.0) << "rank " << r;
    EXPECT_GE(static_cast<double>(ends_within), 0.95 * static_cast<double>(ops)) << "rank " << r;
  }
  std::printf("run-wide shifts differ by %.3f us between the ranks\n",
              std::fabs(run_shift[0] - run_shift[1]) / 1e3);
  EXPECT_LT(std::fabs(run_shift[0] - run_shift[1]), 10000.0);
}

}  // namespace
}  // namespace commprof
