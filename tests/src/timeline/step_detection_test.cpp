// SPDX-License-Identifier: MIT
// Steps found in a capture of collectives alone (NCCL's profiler plugin): hand-made sequences of
// the calls DDP, FSDP, TP with PP make per step, with irregular first steps, without a period,
// and cut by a marker.
#include "src/timeline/step_detection.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "src/core/errors.hpp"
#include "src/timeline/json_object.hpp"

namespace commprof {
namespace {

constexpr std::int64_t kMs = 1'000'000;

// Calls of one step, issued 1 ms apart; steps begin 20 ms after the last call of the one before
// (the optimizer and the next batch's forward).
struct Job {
  std::vector<CommCall> calls;
  std::int64_t t = 0;
  std::int64_t between = 20 * kMs;
  void step(const std::vector<CommCall>& of_step) {
    t += between;
    for (CommCall c : of_step) {
      c.start_ns = t;
      calls.push_back(c);
      t += kMs;
    }
  }
};

CommCall ar(std::uint64_t bytes, const char* comm = "dp0") {
  return CommCall{comm, "allreduce", bytes, 0};
}

TEST(FindPeriod, FindsTheRepeatingUnitAfterAnIrregularStart) {
  const std::vector<std::uint32_t> ids = {7, 8, 9, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2};
  const PeriodFit fit = find_period(ids);
  EXPECT_EQ(fit.period, 3u);
  EXPECT_EQ(fit.offset, 3u);
}

TEST(FindPeriod, NoPeriodInASequenceThatNeverRepeats) {
  EXPECT_EQ(find_period({1, 2, 3, 4, 5, 6, 7, 8}).period, 0u);
  EXPECT_EQ(find_period({}).period, 0u);
  EXPECT_EQ(find_period({4}).period, 0u);
  // A repeat at the very end covers too little of the sequence to be the step.
  EXPECT_EQ(find_period({1, 2, 3, 4, 5, 6, 7, 8, 9, 9}).period, 0u);
}

TEST(FindSteps, DdpBucketsWithAnIrregularFirstStep) {
  Job job;
  // PyTorch's first step all-reduces buckets in parameter order; later ones in gradient order.
  job.step({ar(1 << 20), ar(30 << 20), ar(20 << 20)});
  for (int s = 0; s < 5; ++s) job.step({ar(1 << 20), ar(25 << 20), ar(25 << 20), ar(10 << 20)});
  const StepCut cut = find_steps(job.calls, std::nullopt);
  EXPECT_EQ(cut.method, StepMethod::kDetected);
  EXPECT_EQ(cut.comm, "dp0");
  EXPECT_EQ(cut.period, 4u);
  // The last step's end is not seen (no next step begins): a trailing step, not measured.
  EXPECT_EQ(cut.steps(), 4u);
  EXPECT_GT(cut.confidence, 0.7);
  EXPECT_EQ(describe(cut).rfind("detected: 4 calls of dp0 per step, confidence", 0), 0u)
      << describe(cut);
}

// Two ranks of one DDP job, every call timed: a collective ends at the same time on both, but
// rank 0 reaches each step's first bucket early (a wait of 9 ms in the first step, 1 ms later)
// and starts it there. Cut by the calls' ends, both ranks cut at the same calls, and their steps
// last alike: the wait does not lengthen rank 0's first step.
TEST(FindSteps, RanksThatWaitInACallCutTheirStepsAlike) {
  std::vector<std::int64_t> bounds[2];
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<CommCall> calls;
    std::int64_t t = 0;
    for (int s = 0; s < 6; ++s) {
      t += 20 * kMs;  // optimizer and forward
      for (int b = 0; b < 4; ++b) {
        CommCall c = ar(b == 0 ? 1 << 20 : 25 << 20);
        const std::int64_t wait = rank == 0 && b == 0 ? (s == 1 ? 9 : 1) * kMs : 0;
        c.start_ns = t - wait;
        c.end_ns = t + 2 * kMs;
        calls.push_back(c);
        t += 3 * kMs;
      }
    }
    const StepCut cut = find_steps(calls, std::nullopt);
    ASSERT_EQ(cut.method, StepMethod::kDetected) << "rank " << rank;
    EXPECT_EQ(cut.period, 4u);
    bounds[rank] = cut.bounds;
  }
  EXPECT_EQ(bounds[0], bounds[1]);
  // The first step's last call ends the warm-up; the other five steps are measured whole.
  ASSERT_EQ(bounds[0].size(), 6u);
  for (std::size_t k = 1; k < bounds[0].size(); ++k)
    EXPECT_EQ(bounds[0][k] - bounds[0][k - 1], 32 * kMs) << "step " << k;
}

TEST(FindSteps, FsdpGathersAndScatters) {
  Job job;
  const CommCall ag{"dp0", "allgather", 4 << 20, 0};
  const CommCall rs{"dp0", "reducescatter", 4 << 20, 0};
  for (int s = 0; s < 4; ++s) job.step({ag, ag, ag, ag, ag, ag, rs, rs, rs});
  const StepCut cut = find_steps(job.calls, std::nullopt);
  EXPECT_EQ(cut.method, StepMethod::kDetected);
  EXPECT_EQ(cut.period, 9u);
  EXPECT_EQ(cut.steps(), 3u);
  EXPECT_DOUBLE_EQ(cut.confidence, 1.0);
  // The steps begin with each step's first gather, not within the run of equal gathers.
  ASSERT_EQ(cut.bounds.size(), 4u);
  EXPECT_EQ(cut.bounds[0], job.calls[0].start_ns);
  EXPECT_EQ(cut.bounds[1], job.calls[9].start_ns);
}

TEST(FindSteps, AFirstStepOfTheSameCallsButSlowIsWarmUp) {
  // FSDP2 on 2 H200: the first step issues the same 12 calls as the others but takes 0.78 s
  // (lazy initialisation), the others 27 ms: it is warm-up, not a measured step.
  Job job;
  const CommCall ag{"dp0", "allgather", 4 << 20, 0};
  const CommCall rs{"dp0", "reducescatter", 4 << 20, 0};
  job.step({ag, ag, rs, rs});
  job.between = 700 * kMs;  // the first step's calls, then its slow rest
  job.step({ag, ag, rs, rs});
  job.between = 20 * kMs;
  for (int s = 0; s < 4; ++s) job.step({ag, ag, rs, rs});
  const StepCut cut = find_steps(job.calls, std::nullopt);
  EXPECT_EQ(cut.period, 4u);
  // Steps 2-5 measured (the sixth is the trailing one), the first left to warm-up.
  EXPECT_EQ(cut.steps(), 4u);
  ASSERT_FALSE(cut.bounds.empty());
  EXPECT_EQ(cut.bounds[0], job.calls[4].start_ns);
  // Every measured step is 24 ms: 4 calls 1 ms apart, then 20 ms to the next.
  for (std::size_t k = 0; k + 1 < cut.bounds.size(); ++k)
    EXPECT_EQ(cut.bounds[k + 1] - cut.bounds[k], 24 * kMs) << k;
  // A slow step later on is the job's, not warm-up: it stays.
  Job later;
  for (int s = 0; s < 6; ++s) {
    later.between = s == 4 ? 700 * kMs : 20 * kMs;
    later.step({ag, ag, rs, rs});
  }
  EXPECT_EQ(find_steps(later.calls, std::nullopt).bounds[0], later.calls[0].start_ns);
}

// Sampled (one call in 4 timed, every step's first): the first step is slow (warm-up), and rank 0
// reaches the second step's first call 40 ms early and waits there. By the starts that step is
// more than twice the others on rank 0; the ends of the steps' first calls, which both ranks
// share, say it is not: both ranks keep it and cut the same steps (FSDP2 at K = 4 on 2 H200,
// tests/data/plugin-fsdp40-k4-2xh200).
TEST(FindSteps, ASampledRankThatWaitsKeepsTheStepsTheOthersKeep) {
  std::size_t steps[2];
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<CommCall> calls;
    std::int64_t t = 0;
    for (int s = 0; s < 7; ++s) {
      t += s == 1 ? 500 * kMs : 20 * kMs;  // the first step's slow rest: warm-up
      for (int i = 0; i < 4; ++i) {
        CommCall c{"dp0", i < 2 ? "allgather" : "reducescatter", 4 << 20, t};
        if (i == 0) {
          c.end_ns = t + kMs;  // timed: its end, the same on both ranks
          if (rank == 0 && s == 1) c.start_ns = t - 40 * kMs;  // rank 0 waits in it
        }
        calls.push_back(c);
        t += kMs;
      }
    }
    const StepCut cut = find_steps(calls, std::nullopt);
    ASSERT_EQ(cut.period, 4u) << "rank " << rank;
    steps[rank] = cut.steps();
    ASSERT_FALSE(cut.bounds.empty());
    EXPECT_EQ(cut.bounds[0], calls[4].start_ns) << "rank " << rank << ": the second step is kept";
  }
  EXPECT_EQ(steps[0], steps[1]);
}

// DDP's 5 buckets a step, the gap between steps 3 ms where calls are 1 ms apart: two of the
// step gaps (before steps 10 and 35) happen to pass 4x the median gap, 125 calls apart. Those
// two alone do not make a step of 125 calls (a sampled DDP capture on 2 H200, K = 3, lost its
// steps to that): the steps stay the buckets' period.
TEST(FindSteps, TwoLongGapsByChanceDoNotMakeALongerStep) {
  Job job;
  for (int s = 0; s < 40; ++s) {
    job.between = s == 10 || s == 35 ? 5 * kMs : 3 * kMs;
    job.step({ar(8 << 20), ar(32 << 20), ar(26 << 20), ar(30 << 20), ar(4 << 10)});
  }
  const StepCut cut = find_steps(job.calls, std::nullopt);
  EXPECT_EQ(cut.method, StepMethod::kDetected) << describe(cut);
  EXPECT_EQ(cut.period, 5u);
  EXPECT_EQ(cut.steps(), 39u);
}

TEST(FindSteps, TensorParallelWithPipelineTakesTheLongerPeriod) {
  Job job;
  const CommCall tp = ar(8 << 20, "tp0");
  const CommCall send{"pp0/0>1", "send", 8 << 20, 0};
  const CommCall recv{"pp0/1>0", "recv", 8 << 20, 0};
  // Two micro-batches: per layer all-reduces, the activation sent, its gradient received.
  for (int s = 0; s < 4; ++s) job.step({tp, tp, send, tp, tp, send, recv, tp, tp, recv, tp, tp});
  const StepCut cut = find_steps(job.calls, std::nullopt);
  EXPECT_EQ(cut.method, StepMethod::kDetected);
  // Each communicator repeats one call; the long gaps between steps make the steps of them, and
  // the step begins with its first call (tp0's), so every call of a step falls into it.
  EXPECT_EQ(cut.steps(), 3u);
  EXPECT_EQ(cut.comm, "tp0");
  EXPECT_EQ(cut.period, 8u);
  ASSERT_EQ(cut.bounds.size(), 4u);
  EXPECT_EQ(cut.bounds[1], job.calls[12].start_ns);
}

TEST(FindSteps, AShorterPeriodOfAnotherCommunicatorIsAPartOfTheStep) {
  Job job;
  job.between = kMs;  // no gap tells the steps apart: the calls alone do
  // tp0's all-reduces differ per layer kind (attention, MLP): a period of 2 calls, 4 per step;
  // dp0's one bucket per step sets the step.
  for (int s = 0; s < 4; ++s)
    job.step({ar(8 << 20, "tp0"), ar(16 << 20, "tp0"), ar(8 << 20, "tp0"), ar(16 << 20, "tp0"),
              ar(8 << 20, "tp0"), ar(16 << 20, "tp0"), ar(8 << 20, "tp0"), ar(16 << 20, "tp0"),
              ar(64 << 20, "dp0")});
  const StepCut cut = find_steps(job.calls, std::nullopt);
  EXPECT_EQ(cut.comm, "dp0");
  EXPECT_EQ(cut.steps(), 3u);
  EXPECT_NE(cut.note.find("tp0"), std::string::npos) << cut.note;
}

TEST(FindSteps, NoPeriodMeansNoStepsFoundAndSaysSo) {
  Job job;
  std::vector<CommCall> distinct;
  for (std::uint64_t b = 1; b <= 12; ++b) distinct.push_back(ar(b << 10));
  job.step(distinct);
  const StepCut cut = find_steps(job.calls, std::nullopt);
  EXPECT_EQ(cut.method, StepMethod::kWholeCapture);
  EXPECT_EQ(cut.steps(), 1u);
  EXPECT_EQ(describe(cut),
            "whole capture: no steps found (no communicator repeats its collectives): the whole "
            "capture is one step");
}

TEST(CutSteps, TheWholeCaptureIsOneMeasuredStep) {
  std::vector<OpRecord> ops(3);
  for (int i = 0; i < 3; ++i) {
    ops[i].start_ns = i * kMs;
    ops[i].end_ns = i * kMs + 500;
  }
  const std::vector<StepRecord> steps = cut_steps(ops, StepCut{});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_FALSE(steps[0].warmup);
  EXPECT_EQ(steps[0].ops.size(), 3u);
  EXPECT_EQ(steps[0].end_ns - steps[0].start_ns, 2 * kMs + 500);
}

TEST(CutSteps, WarmUpFirstThenEveryStepFromItsFirstCallToTheNext) {
  Job job;
  job.step({ar(3), ar(5)});
  for (int s = 0; s < 3; ++s) job.step({ar(1), ar(2)});
  const StepCut cut = find_steps(job.calls, std::nullopt);
  std::vector<OpRecord> ops;
  for (const CommCall& c : job.calls) {
    OpRecord op;
    op.category = Category::kComm;
    op.comm = c.comm;
    op.collective = c.collective;
    op.bytes = c.bytes;
    op.start_ns = c.start_ns;
    op.end_ns = c.start_ns + 100;
    ops.push_back(op);
  }
  const std::vector<StepRecord> steps = cut_steps(ops, cut);
  // The irregular first step, two measured ones, the last one (its end not seen).
  ASSERT_EQ(steps.size(), 4u);
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(steps[s].warmup, s == 0 || s == 3) << s;
    EXPECT_EQ(steps[s].index, s);
    EXPECT_EQ(steps[s].ops.size(), 2u);
  }
  // The step time is the cadence: 2 calls 1 ms apart, then 20 ms to the next step's first.
  EXPECT_EQ(steps[1].end_ns - steps[1].start_ns, 22 * kMs);
}

TEST(FindSteps, AMarkerEndsEachStepAndOverridesTheDetection) {
  Job job;
  for (int s = 0; s < 3; ++s)
    job.step({ar(1, "world"), ar(25 << 20), ar(25 << 20), CommCall{"world", "broadcast", 8, 0}});
  const StepCut cut = find_steps(job.calls, parse_step_marker("world:Broadcast"));
  EXPECT_EQ(cut.method, StepMethod::kMarker);
  EXPECT_EQ(cut.steps(), 3u);
  EXPECT_DOUBLE_EQ(cut.confidence, 1.0);
  EXPECT_EQ(describe(cut), "marker world:broadcast: 3 steps");
  // none: the whole capture, said.
  EXPECT_EQ(describe(find_steps(job.calls, parse_step_marker("none"))),
            "whole capture: COMMPROF_PLUGIN_STEP_MARKER=none: the whole capture is one step");
  // A marker that is never called: the whole capture, and why.
  const StepCut never = find_steps(job.calls, parse_step_marker("comm-7f:allgather"));
  EXPECT_EQ(never.method, StepMethod::kWholeCapture);
  EXPECT_NE(describe(never).find("comm-7f:allgather"), std::string::npos) << describe(never);
}

TEST(ParseStepMarker, NamesTheVariableOnBadInput) {
  EXPECT_EQ(parse_step_marker("comm-1a2b:All_Reduce").collective, "allreduce");
  EXPECT_EQ(parse_step_marker("dp0:allreduce").comm, "dp0");
  for (const char* bad : {"dp0", ":allreduce", "dp0:", ""}) {
    try {
      parse_step_marker(bad);
      ADD_FAILURE() << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("COMMPROF_PLUGIN_STEP_MARKER"), std::string::npos);
    }
  }
}

TEST(CutPluginCapture, CutsOnlyTheOneStepOfAPluginCapture) {
  Job job;
  for (int s = 0; s < 4; ++s) job.step({ar(1 << 20), ar(25 << 20)});
  RankTimeline t;
  t.backend = "nccl-profiler";
  t.steps.resize(1);
  for (const CommCall& c : job.calls) {
    OpRecord op;
    op.category = Category::kComm;
    op.comm = c.comm;
    op.collective = c.collective;
    op.bytes = c.bytes;
    op.start_ns = c.start_ns;
    op.end_ns = c.start_ns + 100;
    t.steps[0].ops.push_back(op);
  }
  RankTimeline other = t;
  other.backend = "host";
  ::unsetenv(kStepMarkerVariable);
  cut_plugin_capture(t);
  cut_plugin_capture(other);
  EXPECT_EQ(t.steps.size(), 4u);
  EXPECT_EQ(t.config.json().at("step_cut").at("method"), "detected");
  EXPECT_EQ(t.config.json().at("step_cut").at("steps"), 3);
  EXPECT_EQ(t.config.json().at("step_cut").at("warmup_steps"), 1);
  EXPECT_EQ(other.steps.size(), 1u);
}

// A capture sampled at K = 4 of a DDP job of 12 steps, 5 buckets a step: the plugin times calls
// 0, 4, 8, ... (their GPU runs 3 ms after the host's call) and lists the others with the host's
// time of their call. Timed calls alone repeat every 20 calls (4 steps); all calls, every 5.
RankTimeline sampled_ddp_capture(bool list_untimed) {
  const std::uint64_t bucket[5] = {1 << 20, 2 << 20, 3 << 20, 4 << 20, 5 << 20};
  Job job;
  for (int step = 0; step < 12; ++step) {
    std::vector<CommCall> calls;
    for (const std::uint64_t b : bucket) calls.push_back(ar(b));
    job.step(calls);
  }
  RankTimeline t;
  t.backend = "nccl-profiler";
  t.steps.resize(1);
  nlohmann::ordered_json groups = nlohmann::ordered_json::array(), listed;
  for (const std::uint64_t b : bucket)
    groups.push_back({{"collective", "allreduce"}, {"bytes", b}});
  listed = nlohmann::ordered_json::array();
  for (std::size_t seq = 0; seq < job.calls.size(); ++seq) {
    const CommCall& c = job.calls[seq];
    if (seq % 4 != 0) {
      listed.push_back({seq, c.start_ns, seq % 5});
      continue;
    }
    OpRecord op;
    op.category = Category::kComm;
    op.comm = c.comm;
    op.collective = c.collective;
    op.bytes = c.bytes;
    op.seq = static_cast<std::int64_t>(seq);
    op.enqueue_ns = c.start_ns;
    op.start_ns = c.start_ns + 3 * kMs;
    op.end_ns = op.start_ns + 100;
    t.steps[0].ops.push_back(op);
  }
  nlohmann::ordered_json comm = {{"name", "dp0"}, {"sample_period", 4}, {"untimed", groups}};
  if (list_untimed) comm["untimed_calls"] = listed;
  t.config = JsonObject(nlohmann::ordered_json{{"communicators", {comm}}});
  return t;
}

TEST(CutPluginCapture, ASampledCaptureIsCutFromEveryCall) {
  ::unsetenv(kStepMarkerVariable);
  RankTimeline t = sampled_ddp_capture(true);
  cut_plugin_capture(t);
  const auto& cut = t.config.json().at("step_cut");
  EXPECT_EQ(cut.at("method"), "detected");
  EXPECT_EQ(cut.at("period_calls"), 5);
  EXPECT_EQ(cut.at("steps"), 11);  // the 12th, trailing, has no next step's call to end it
  EXPECT_NE(cut.at("description").get<std::string>().find("sampled: cut from every call"),
            std::string::npos);
  std::size_t ops = 0;
  for (const StepRecord& s : t.steps) {
    ops += s.ops.size();
    if (s.warmup) continue;
    // Each step lasts its cadence, 5 calls 1 ms apart and 20 ms before the next, on the GPU's
    // clock: the untimed calls placed 3 ms after their call, as the timed ones run.
    EXPECT_EQ(s.start_ns, (3 + 20 + 25 * s.index) * kMs) << "step " << s.index;
    EXPECT_EQ(s.end_ns - s.start_ns, 25 * kMs) << "step " << s.index;
    for (const OpRecord& op : s.ops) EXPECT_EQ(op.seq / 5, s.index) << "#" << op.seq;
  }
  EXPECT_EQ(ops, 15u) << "every timed call in a step";
}

TEST(CutPluginCapture, TheTimedCallsAloneOfASampledCaptureMissTheStep) {
  ::unsetenv(kStepMarkerVariable);
  RankTimeline t = sampled_ddp_capture(false);
  cut_plugin_capture(t);
  // One in 4 of 5 buckets: the timed calls' kinds repeat every 5 of them, 4 steps.
  EXPECT_EQ(t.config.json().at("step_cut").at("period_calls"), 5);
  EXPECT_EQ(t.config.json().at("step_cut").at("steps"), 2);
}

}  // namespace
}  // namespace commprof
