// SPDX-License-Identifier: MIT
// The diagnosis's classes on hand-made rank files: each fault of issue #47 at 1,024 ranks (one
// all-reduce per step on one communicator, as a data-parallel job issues), and a transfer whose
// receive was never posted.
#include "analysis/diagnosis.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/wire_codec.hpp"
#include "src/timeline/op_record.hpp"

namespace commprof::diagnosis {
namespace {

constexpr int kRanks = 1024;
constexpr std::int64_t kStepNs = 1'000'000;

OpRecord allreduce(int step, std::int64_t start, std::uint64_t count = 1024) {
  OpRecord op;
  op.name = "dp.allreduce";
  op.category = Category::kComm;
  op.stream = "COMM";
  op.collective = "allreduce";
  op.comm = "dp0";
  op.comm_size = kRanks;
  op.seq = step;
  op.count = count;
  op.bytes = count * 4;
  op.dtype = "float";
  op.start_ns = start;
  op.end_ns = start + 100'000;
  return op;
}

// Rank `rank` of a job of kRanks with steps 0 (warm-up) .. last, each a compute op of `comp` ns
// then an all-reduce #step.
RankTimeline rank_file(int rank, int last, std::int64_t comp = 500'000) {
  RankTimeline t;
  t.rank = rank;
  t.world_size = kRanks;
  t.backend = "host";
  for (int s = 0; s <= last; ++s) {
    StepRecord step;
    step.index = s;
    step.warmup = s == 0;
    step.start_ns = s * kStepNs;
    OpRecord c;
    c.name = "fwd";
    c.category = Category::kComp;
    c.start_ns = step.start_ns;
    c.end_ns = step.start_ns + comp;
    step.ops.push_back(c);
    step.ops.push_back(allreduce(s, c.end_ns));
    step.end_ns = step.ops.back().end_ns;
    t.steps.push_back(std::move(step));
  }
  return t;
}

// The stop record a run leaves when step `step` failed waiting on all-reduce #step.
void failed_at(RankTimeline& t, int step, std::uint64_t count = 1024) {
  nlohmann::ordered_json e = {{"comm", "dp0"},       {"collective", "allreduce"},
                              {"seq", step},         {"name", "dp.allreduce"},
                              {"step", step},        {"bytes", count * 4},
                              {"count", count},      {"dtype", "float"},
                              {"state", "submitted"}};
  t.config = JsonObject(nlohmann::ordered_json{
      {"failed_step", step}, {"error", "timeout"}, {"unfinished", nlohmann::ordered_json{e}}});
}

// The job's files through the same path diagnose takes: one Part per half, merged.
std::vector<Problem> run(const std::function<RankTimeline(int)>& file) {
  Part a, b;
  for (int r = 0; r < kRanks; ++r) add_rank_timeline(file(r), r < kRanks / 2 ? a : b);
  Part all = wire::decode<Part>(wire::encode(a));
  all.merge(wire::decode<Part>(wire::encode(b)));
  return diagnose(all);
}

TEST(Diagnosis, HealthyJobHasNoProblem) {
  EXPECT_TRUE(run([](int r) { return rank_file(r, 2); }).empty());
}

TEST(Diagnosis, RankThatSkippedAnAllReduceNeverLaunchedIt) {
  const auto p = run([](int r) {
    RankTimeline t = rank_file(r, 2);
    if (r == 700) {
      t.steps[2].ops.pop_back();  // went on without it
    } else {
      t.steps.pop_back();
      failed_at(t, 2);
    }
    return t;
  });
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, "never_launched");
  EXPECT_EQ(p[0].ranks, "700");
  EXPECT_EQ(p[0].seq, 2);
  EXPECT_NE(p[0].verdict.find("never launched on rank 700: dp0 allreduce #2"), std::string::npos)
      << p[0].verdict;
  EXPECT_NE(p[0].evidence.find("its last op on the communicator #1 dp.allreduce"),
            std::string::npos)
      << p[0].evidence;
}

TEST(Diagnosis, RankThatStoppedLeftNoRecord) {
  const auto p = run([](int r) {
    RankTimeline t = rank_file(r, r == 9 ? 1 : 2);
    if (r != 9) {
      t.steps.pop_back();
      failed_at(t, 2);
    }
    return t;
  });
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, "no_record");
  EXPECT_EQ(p[0].ranks, "9");
  EXPECT_NE(p[0].verdict.find("cannot tell never launched from started but not finished"),
            std::string::npos);
}

TEST(Diagnosis, EveryRankWaitingIsLaunchedNotFinished) {
  const auto p = run([](int r) {
    RankTimeline t = rank_file(r, 1);
    failed_at(t, 2);
    return t;
  });
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, "launched_not_finished");
  EXPECT_NE(p[0].verdict.find("no kernel records in this source"), std::string::npos);
}

TEST(Diagnosis, OtherCountIsArgumentsDiffer) {
  const auto p = run([](int r) {
    RankTimeline t = rank_file(r, 2);
    if (r == 5) t.steps[2].ops[1].count = 512;
    return t;
  });
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, "arguments_differ");
  EXPECT_EQ(p[0].ranks, "5");
  EXPECT_NE(p[0].evidence.find("expected allreduce of 4096 B, count 1024, float; rank 5: "
                               "allreduce of 4096 B, count 512"),
            std::string::npos)
      << p[0].evidence;
}

TEST(Diagnosis, OtherCountAgainstEarlierCallsWhenTheOthersLeftNoRecord) {
  const auto p = run([](int r) {
    RankTimeline t = rank_file(r, 1);
    if (r == 5) failed_at(t, 2, 512);
    return t;
  });
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p[0].kind, "arguments_differ");
  EXPECT_EQ(p[0].ranks, "5");
  EXPECT_NE(p[0].verdict.find("every earlier call of it"), std::string::npos);
}

TEST(Diagnosis, SlowRankIsTheStragglerWithItsCause) {
  const auto p = run([](int r) { return rank_file(r, 2, r == 3 ? 800'000 : 300'000); });
  ASSERT_EQ(p.size(), 2u);  // steps 1 and 2; the warm-up step is left out
  for (const Problem& s : p) {
    EXPECT_EQ(s.kind, "straggler");
    EXPECT_EQ(s.ranks, "3");
    EXPECT_NEAR(s.cost_ns, 500'000, 1'000);
    EXPECT_NE(s.evidence.find("its COMP took 0.5 ms longer"), std::string::npos) << s.evidence;
  }
}

TEST(Diagnosis, RecordsEndingEarlyWithoutAFailureAreANoteNotAVerdict) {
  // A rank killed outright: the launcher ended the others before they recorded anything.
  Part part;
  for (int r = 0; r < kRanks; ++r) {
    RankTimeline t = rank_file(r, 1);
    t.config = JsonObject(nlohmann::ordered_json{{"steps", 9}, {"warmup_steps", 1}});
    add_rank_timeline(t, part);
  }
  EXPECT_TRUE(diagnose(part).empty());
  const auto n = notes(part);
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].rfind("note: the record of every rank ends at step 1 of 10 planned", 0), 0u)
      << n[0];
}

TEST(Diagnosis, ReceiveNeverPostedNamesTheReceiver) {
  // Rank 0 sends twice to rank 1; rank 1 posted only one receive, then its step failed.
  auto transfer = [](int rank, bool send, int k) {
    OpRecord op;
    op.name = send ? "pp.send" : "pp.recv";
    op.category = Category::kComm;
    op.collective = send ? "send" : "recv";
    op.comm = "pp0";
    op.comm_size = 2;
    op.count = 64;
    op.dtype = "float";
    op.start_ns = k * 10;
    op.end_ns = op.start_ns + 5;
    (send ? op.send_to : op.recv_from).push_back(1 - rank);
    return op;
  };
  Part part;
  for (int r = 0; r < 2; ++r) {
    RankTimeline t;
    t.rank = r;
    t.world_size = 2;
    StepRecord step;
    step.ops.push_back(transfer(r, r == 0, 0));
    t.steps.push_back(step);
    nlohmann::ordered_json e = {{"comm", "pp0"}, {"collective", r == 0 ? "send" : "recv"},
                                {"name", "x"},   {"step", 1},
                                {"count", 64},   {"dtype", "float"}};
    e[r == 0 ? "send_to" : "recv_from"] = {1 - r};
    t.config = JsonObject(nlohmann::ordered_json{
        {"failed_step", 1},
        {"unfinished", r == 0 ? nlohmann::ordered_json{e, e} : nlohmann::ordered_json{e}}});
    add_rank_timeline(t, part);
  }
  const auto p = diagnose(part);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, "never_launched");
  EXPECT_EQ(p[0].comm, "pp0 0->1");
  EXPECT_EQ(p[0].seq, 2);
  EXPECT_EQ(p[0].ranks, "1");
}

// A plugin capture (kernel records on) in which every rank enqueued all-reduce #3 and none
// finished it: the kernel channels say which ranks' GPUs began it. Ranks 0..1022 began it and
// wait for rank 1023, whose kernel never began (its stream was held before it): that rank is
// where the GPU stopped; where every rank began it, the GPU or the link does not finish it.
RankTimeline plugin_file(int rank, std::int64_t channels_started, bool kernel_records = true) {
  RankTimeline t = rank_file(rank, 2);
  t.backend = "nccl-profiler";
  nlohmann::ordered_json e = {{"comm", "dp0"},
                              {"collective", "allreduce"},
                              {"seq", 3},
                              {"enqueue_ns", 4 * kStepNs},
                              {"graph", false},
                              {"channels_started", channels_started},
                              {"channels_stopped", 0},
                              {"channels", 2}};
  t.config = JsonObject(nlohmann::ordered_json{{"without_kernel_records", kernel_records ? 0 : 5},
                                               {"unfinished", nlohmann::ordered_json{e}}});
  return t;
}

TEST(Diagnosis, ThePluginsKernelChannelsTellNotStartedFromStartedNotFinished) {
  std::vector<Problem> p = run([](int r) { return plugin_file(r, r == 1023 ? 0 : 2); });
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, "launched_not_finished");
  EXPECT_NE(p[0].verdict.find("; launched but not started on rank 1023 (its kernel never began: "
                              "the GPU stopped before it there), started on ranks 0-1022"),
            std::string::npos)
      << p[0].verdict;
  p = run([](int r) { return plugin_file(r, 2); });
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].verdict.find("; started on every one and not finished: the GPU or the link"),
            std::string::npos)
      << p[0].verdict;
  // Without kernel records (a capture whose calls' channels did not report) a call with no
  // channel begun is not known to be unstarted.
  p = run([](int r) { return plugin_file(r, 0, false); });
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].verdict.find("; cannot tell launched but not started from started but not "
                              "finished"),
            std::string::npos)
      << p[0].verdict;
}

// Sampled capture (one call in K timed): the call a rank never launched may be untimed, so no
// rank recorded it; the plugin's count of each communicator's collectives still says who is
// behind. Rank 1023 launched 3 collectives on dp0 (#0..#2, recorded whole), the others 5.
TEST(Diagnosis, ThePluginsCountsNameARankBehindOnAnUntimedCall) {
  std::vector<Problem> p = run([](int r) {
    RankTimeline t = rank_file(r, 2);
    t.backend = "nccl-profiler";
    t.config = JsonObject(nlohmann::ordered_json{
        {"without_kernel_records", 0},
        {"communicators",
         nlohmann::ordered_json::array({{{"name", "dp0"}, {"collectives", r == 1023 ? 3 : 5}}})}});
    return t;
  });
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].kind, "never_launched");
  EXPECT_EQ(p[0].ranks, "1023");
  EXPECT_EQ(p[0].seq, 3);
  EXPECT_EQ(p[0].verdict,
            "never launched on rank 1023: dp0 collective #3 (the CPU took another path; an untimed "
            "call: counted, not recorded, so its function is not known)");
  EXPECT_EQ(p[0].waiting, "0-1022");
  // Equal counts: nothing.
  EXPECT_TRUE(run([](int r) {
                RankTimeline t = rank_file(r, 2);
                t.backend = "nccl-profiler";
                t.config = JsonObject(nlohmann::ordered_json{
                    {"communicators",
                     nlohmann::ordered_json::array({{{"name", "dp0"}, {"collectives", 3}}})}});
                return t;
              }).empty());
}

// Ranks as verdicts name them: runs of three or more as first-last, shorter runs one by one.
TEST(Diagnosis, RankListsFoldRunsOfThreeOrMore) {
  EXPECT_EQ(rank_ranges({}), "");
  EXPECT_EQ(rank_ranges({5}), "5");
  EXPECT_EQ(rank_ranges({0, 1, 3}), "0 1 3");
  EXPECT_EQ(rank_ranges({0, 1, 2, 3}), "0-3");
  std::vector<int> all_but_517;
  for (int r = 0; r < 1024; ++r) {
    if (r != 517) all_but_517.push_back(r);
  }
  EXPECT_EQ(rank_ranges(all_but_517), "0-516 518-1023");
  EXPECT_EQ(rank_ranges({1, 2, 4, 5, 6, 9}), "1 2 4-6 9");
}

}  // namespace
}  // namespace commprof::diagnosis
