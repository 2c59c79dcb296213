// SPDX-License-Identifier: MIT
// The executor's NVTX ranges at its step boundaries, on the host backend under mpirun, seen
// through the annotation observer (what commprof asks NVTX for, no tool attached): one range per
// step, and one range named "measured_steps" that opens right before the first measured step and
// closes after the last, so `nsys --capture-range=nvtx --nvtx-capture=measured_steps@commprof`
// records exactly the measured steps.
#include <gtest/gtest.h>
#include <mpi.h>

#include <csignal>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "src/backend/annotation.hpp"
#include "src/backend/host/host_backend.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/runtime/stop_signals.hpp"
#include "workloads/execution/executor.hpp"

namespace commprof {
namespace {

std::mutex g_mutex;
std::vector<std::string> g_events;  // "push <text>" or "pop"

void record(const AnnotationEvent& e) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_events.push_back(e.push ? "push " + e.text : "pop");
}

std::vector<std::string> expected(int warmup, int steps) {
  std::vector<std::string> out;
  for (int i = 0; i < warmup + steps; ++i) {
    if (i == warmup) out.push_back("push measured_steps");
    out.push_back("push step " + std::to_string(i) + (i < warmup ? " (warm-up)" : ""));
    out.push_back("pop");
  }
  out.push_back("pop");
  return out;
}

// One op per stream: a GEMM, an allreduce over the world and a copy, in that order.
OpPlan small_plan() {
  OpPlan plan;
  const int g = plan.gemm("gemm", 16, 16, 16, {});
  const int c = plan.collective("dp.bucket0.allreduce", CollectiveKind::kAllReduce, Group::kDp, 256,
                                1024, {g});
  plan.copy("copy_out", CopyKind::kDeviceToDevice, 1024, {c});
  return plan;
}

class ExecutorAnnotations : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = std::make_unique<RankContext>(nullptr, nullptr, MPI_THREAD_MULTIPLE);
    backend_ = std::make_unique<HostBackend>(*ctx_, BackendOptions{});
    plan_ = small_plan();
    g_events.clear();
    set_annotation_observer(&record);
  }
  void TearDown() override {
    set_annotation_observer(nullptr);
    backend_.reset();
    ctx_.reset();
  }
  std::vector<StepRecord> run(
      int steps, int warmup,
      const std::function<void(const std::vector<StepRecord>&)>& after = {}) {
    PlanExecutor executor(*backend_, *ctx_, plan_, GroupComms{nullptr, &backend_->world(), nullptr},
                          OpTimingMode::kPair);
    auto records = executor.run(steps, warmup, after);
    stopped_by_ = executor.stopped_by();
    return records;
  }

  std::unique_ptr<RankContext> ctx_;
  std::unique_ptr<HostBackend> backend_;
  OpPlan plan_;
  int stopped_by_ = 0;
};

TEST_F(ExecutorAnnotations, MeasuredStepsRangeSpansExactlyTheMeasuredSteps) {
  const auto records = run(3, 2);
  EXPECT_EQ(g_events, expected(2, 3));
  ASSERT_EQ(records.size(), 5u);
  EXPECT_TRUE(records[1].warmup);
  EXPECT_FALSE(records[2].warmup);
  EXPECT_EQ(records[2].ops.size(), 3u);
}

TEST_F(ExecutorAnnotations, WithoutWarmUpTheRangeOpensBeforeTheFirstStep) {
  run(2, 0);
  EXPECT_EQ(g_events, expected(0, 2));
  ASSERT_GE(g_events.size(), 1u);
  EXPECT_EQ(g_events.front(), "push measured_steps");
}

TEST_F(ExecutorAnnotations, TheRangeOpensOnlyWhenTheFirstMeasuredStepBegins) {
  // The range is pushed when the first measured step begins, never during warm-up: a run
  // stopped by a signal during warm-up leaves nsys nothing to capture.
  std::vector<std::string> during_warmup;
  run(1, 2, [&](const std::vector<StepRecord>& so_far) {
    if (so_far.size() == 2) {
      std::lock_guard<std::mutex> lock(g_mutex);
      during_warmup = g_events;
    }
  });
  for (const std::string& e : during_warmup) EXPECT_NE(e, "push measured_steps");
  EXPECT_EQ(g_events, expected(2, 1));
}

// The recorded signal is cleared afterwards, so the tests run in any order (--gtest_shuffle).
TEST_F(ExecutorAnnotations, AStopClosesTheMeasuredRange) {
  install_stop_signals();
  const auto records = run(5, 1, [&](const std::vector<StepRecord>& so_far) {
    if (so_far.size() == 2) std::raise(SIGTERM);  // on every rank, after step 1
  });
  clear_stop_signal();
  EXPECT_EQ(stop_signal(), 0);
  EXPECT_EQ(stopped_by_, SIGTERM);
  EXPECT_EQ(records.size(), 2u);
  EXPECT_EQ(g_events, expected(1, 1));  // the range is popped although 4 steps never ran
}

}  // namespace
}  // namespace commprof
