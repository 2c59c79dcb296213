// SPDX-License-Identifier: MIT
#include "workloads/pipeline_schedule.hpp"

#include <gtest/gtest.h>

namespace commprof {
namespace {

int count_leading_forwards(const std::vector<PipeItem>& items) {
  int n = 0;
  for (const PipeItem& it : items) {
    if (it.kind == PipeItem::Kind::kBackward) break;
    if (it.kind == PipeItem::Kind::kForward) ++n;
  }
  return n;
}

TEST(PipelineSchedule, OneFOneBWarmupIsStagesMinusStageMinusOne) {
  // Megatron: each stage runs min(p − r − 1, m) forwards before its first backward, plus the
  // steady state's first forward. A documentation invariant: it restates the schedule's formula
  // (pipeline_schedule.cpp) over many shapes; the worked examples below are the oracle.
  for (int p : {2, 4, 8}) {
    for (int r = 0; r < p; ++r) {
      for (int m : {1, 2, 4, 8, 16}) {
        const auto items = pipeline_schedule(PpSchedule::k1F1B, p, r, m);
        const int warmup = std::min(p - r - 1, m);
        const int expected = warmup + (m - warmup > 0 ? 1 : 0);
        EXPECT_EQ(count_leading_forwards(items), expected) << "p=" << p << " r=" << r << " m=" << m;
      }
    }
  }
}

TEST(PipelineSchedule, OneFOneBExactOrder) {
  EXPECT_EQ(compute_order(pipeline_schedule(PpSchedule::k1F1B, 4, 0, 6)),
            "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(compute_order(pipeline_schedule(PpSchedule::k1F1B, 4, 3, 6)),
            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  EXPECT_EQ(compute_order(pipeline_schedule(PpSchedule::k1F1B, 4, 1, 2)), "F0 F1 B0 B1");
}

TEST(PipelineSchedule, GpipeRunsAllForwardsThenAllBackwards) {
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(compute_order(pipeline_schedule(PpSchedule::kGpipe, 4, r, 4)),
              "F0 F1 F2 F3 B0 B1 B2 B3");
  }
}

TEST(PipelineSchedule, SingleStageAccumulatesGradientsPerMicroBatch) {
  EXPECT_EQ(compute_order(pipeline_schedule(PpSchedule::k1F1B, 1, 0, 3)), "F0 B0 F1 B1 F2 B2");
}

TEST(PipelineSchedule, TransfersGoToNeighboursOnly) {
  const int p = 4;
  for (PpSchedule s : {PpSchedule::kGpipe, PpSchedule::k1F1B}) {
    for (int r = 0; r < p; ++r) {
      int sends = 0;
      int recvs = 0;
      for (const PipeItem& it : pipeline_schedule(s, p, r, 4)) {
        if (it.kind != PipeItem::Kind::kTransfer) continue;
        if (it.send_peer >= 0) {
          ++sends;
          EXPECT_EQ(std::abs(it.send_peer - r), 1);
          EXPECT_EQ(it.send_peer, it.send_is_forward ? r + 1 : r - 1);
        }
        if (it.recv_peer >= 0) {
          ++recvs;
          EXPECT_EQ(it.recv_peer, it.recv_is_forward ? r - 1 : r + 1);
        }
      }
      // Each micro-batch: an activation in and out, a gradient in and out, except at the ends.
      const int sides = (r > 0 ? 1 : 0) + (r < p - 1 ? 1 : 0);
      EXPECT_EQ(sends, 4 * sides) << schedule_name(s) << " stage " << r;
      EXPECT_EQ(recvs, 4 * sides) << schedule_name(s) << " stage " << r;
    }
  }
}

TEST(PipelineSchedule, OneFOneBFusesSendWithReceiveInSteadyState) {
  // Middle stage of 4 with 8 micro-batches: every steady-state transfer is fused.
  int fused = 0;
  for (const PipeItem& it : pipeline_schedule(PpSchedule::k1F1B, 4, 1, 8)) {
    if (it.kind == PipeItem::Kind::kTransfer && it.send_peer >= 0 && it.recv_peer >= 0) ++fused;
  }
  // remaining = 8 − 2 = 6 steady iterations: 6 send_forward_recv_backward + 5
  // send_backward_recv_forward.
  EXPECT_EQ(fused, 11);
}

}  // namespace
}  // namespace commprof
