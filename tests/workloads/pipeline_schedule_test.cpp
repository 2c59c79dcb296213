// SPDX-License-Identifier: MIT
#include "workloads/pipeline_schedule.hpp"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "src/core/errors.hpp"

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
        for (const P2PTransfer& t : it.sends) {
          if (t.peer < 0) continue;
          ++sends;
          EXPECT_EQ(t.peer, t.forward ? r + 1 : r - 1);
        }
        for (const P2PTransfer& t : it.recvs) {
          if (t.peer < 0) continue;
          ++recvs;
          EXPECT_EQ(t.peer, t.forward ? r - 1 : r + 1);
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
    if (it.kind == PipeItem::Kind::kTransfer && used(it.sends) == 1 && used(it.recvs) == 1) ++fused;
  }
  // remaining = 8 − 2 = 6 steady iterations: 6 send_forward_recv_backward + 5
  // send_backward_recv_forward.
  EXPECT_EQ(fused, 11);
}

// A stage's schedule as "F<mb>c<chunk>" passes and "T[...]" transfers, each transfer's parts as
// send_act / send_grad / recv_act / recv_grad with the micro-batch and chunk they carry.
std::string render(const std::vector<PipeItem>& items) {
  std::string out;
  auto add = [&](const std::string& word) { out += (out.empty() ? "" : " ") + word; };
  for (const PipeItem& it : items) {
    if (it.kind != PipeItem::Kind::kTransfer) {
      add((it.kind == PipeItem::Kind::kForward ? "F" : "B") + std::to_string(it.micro_batch) + "c" +
          std::to_string(it.chunk));
      continue;
    }
    std::string parts;
    auto part = [&](const char* what, const P2PTransfer& t, int mb, int chunk) {
      if (t.peer < 0) return;
      parts += (parts.empty() ? "" : " ") + std::string(what) + (t.forward ? "_act" : "_grad") +
               ".mb" + std::to_string(mb) + "c" + std::to_string(chunk);
    };
    for (int i = 0; i < 2; ++i) part("send", it.sends[i], it.send_mb[i], it.send_chunk[i]);
    for (int i = 0; i < 2; ++i) part("recv", it.recvs[i], it.recv_mb[i], it.recv_chunk[i]);
    add("T[" + parts + "]");
  }
  return out;
}

struct InterleavedCase {
  int p, v, m;
  std::vector<std::string> stages;
};

// Megatron-Core's forward_backward_pipelining_with_interleaving (schedules.py: the schedule
// table of micro-batch groups of p, 2·(p−r−1) + (V−1)·p warm-up forwards,
// recv_tensor_from_previous_stage, the warm-up's last send_forward_backward_recv_forward_backward,
// the cool-down's send_backward_recv_backward) followed by hand for every stage, p2p without
// overlap: passes in order, and each batched transfer with what it sends and receives.
const std::vector<InterleavedCase>& interleaved_cases() {
  static const std::vector<InterleavedCase> cases = {
      // p = 2, V = 2, m = 4
      {2,
       2,
       4,
       {
           "F0c0 T[send_act.mb0c0] F1c0 T[send_act.mb1c0 recv_act.mb0c1] F0c1 T[send_act.mb0c1 "
           "recv_act.mb1c1] F1c1 T[send_act.mb1c1 recv_grad.mb0c1] F2c0 B0c1 T[send_act.mb2c0 "
           "send_grad.mb0c1 recv_grad.mb1c1] F3c0 B1c1 T[send_act.mb3c0 send_grad.mb1c1 "
           "recv_act.mb2c1 recv_grad.mb0c0] F2c1 B0c0 T[send_act.mb2c1 recv_act.mb3c1 "
           "recv_grad.mb1c0] F3c1 B1c0 T[send_act.mb3c1 recv_grad.mb2c1] B2c1 T[send_grad.mb2c1 "
           "recv_grad.mb3c1] B3c1 T[send_grad.mb3c1 recv_grad.mb2c0] B2c0 T[recv_grad.mb3c0] B3c0",
           "T[recv_act.mb0c0] F0c0 T[send_act.mb0c0 recv_act.mb1c0] F1c0 T[send_act.mb1c0 "
           "recv_act.mb0c1] F0c1 B0c1 T[send_grad.mb0c1 recv_act.mb1c1] F1c1 B1c1 "
           "T[send_grad.mb1c1 recv_act.mb2c0 recv_grad.mb0c0] F2c0 B0c0 T[send_act.mb2c0 "
           "send_grad.mb0c0 recv_act.mb3c0 recv_grad.mb1c0] F3c0 B1c0 T[send_act.mb3c0 "
           "send_grad.mb1c0 recv_act.mb2c1] F2c1 B2c1 T[send_grad.mb2c1 recv_act.mb3c1] F3c1 B3c1 "
           "T[send_grad.mb3c1 recv_grad.mb2c0] B2c0 T[send_grad.mb2c0 recv_grad.mb3c0] B3c0 "
           "T[send_grad.mb3c0]",
       }},
      // p = 4, V = 2, m = 8
      {4,
       2,
       8,
       {
           "F0c0 T[send_act.mb0c0] F1c0 T[send_act.mb1c0] F2c0 T[send_act.mb2c0] F3c0 "
           "T[send_act.mb3c0 recv_act.mb0c1] F0c1 T[send_act.mb0c1 recv_act.mb1c1] F1c1 "
           "T[send_act.mb1c1 recv_act.mb2c1] F2c1 T[send_act.mb2c1 recv_act.mb3c1] F3c1 "
           "T[send_act.mb3c1] F4c0 T[send_act.mb4c0] F5c0 T[send_act.mb5c0 recv_grad.mb0c1] F6c0 "
           "B0c1 T[send_act.mb6c0 send_grad.mb0c1 recv_grad.mb1c1] F7c0 B1c1 T[send_act.mb7c0 "
           "send_grad.mb1c1 recv_act.mb4c1 recv_grad.mb2c1] F4c1 B2c1 T[send_act.mb4c1 "
           "send_grad.mb2c1 recv_act.mb5c1 recv_grad.mb3c1] F5c1 B3c1 T[send_act.mb5c1 "
           "send_grad.mb3c1 recv_act.mb6c1 recv_grad.mb0c0] F6c1 B0c0 T[send_act.mb6c1 "
           "recv_act.mb7c1 recv_grad.mb1c0] F7c1 B1c0 T[send_act.mb7c1 recv_grad.mb2c0] B2c0 "
           "T[recv_grad.mb3c0] B3c0 T[recv_grad.mb4c1] B4c1 T[send_grad.mb4c1 recv_grad.mb5c1] "
           "B5c1 T[send_grad.mb5c1 recv_grad.mb6c1] B6c1 T[send_grad.mb6c1 recv_grad.mb7c1] B7c1 "
           "T[send_grad.mb7c1 recv_grad.mb4c0] B4c0 T[recv_grad.mb5c0] B5c0 T[recv_grad.mb6c0] "
           "B6c0 T[recv_grad.mb7c0] B7c0",
           "T[recv_act.mb0c0] F0c0 T[send_act.mb0c0 recv_act.mb1c0] F1c0 T[send_act.mb1c0 "
           "recv_act.mb2c0] F2c0 T[send_act.mb2c0 recv_act.mb3c0] F3c0 T[send_act.mb3c0 "
           "recv_act.mb0c1] F0c1 T[send_act.mb0c1 recv_act.mb1c1] F1c1 T[send_act.mb1c1 "
           "recv_act.mb2c1] F2c1 T[send_act.mb2c1 recv_act.mb3c1] F3c1 T[send_act.mb3c1 "
           "recv_act.mb4c0 recv_grad.mb0c1] F4c0 B0c1 T[send_act.mb4c0 send_grad.mb0c1 "
           "recv_act.mb5c0 recv_grad.mb1c1] F5c0 B1c1 T[send_act.mb5c0 send_grad.mb1c1 "
           "recv_act.mb6c0 recv_grad.mb2c1] F6c0 B2c1 T[send_act.mb6c0 send_grad.mb2c1 "
           "recv_act.mb7c0 recv_grad.mb3c1] F7c0 B3c1 T[send_act.mb7c0 send_grad.mb3c1 "
           "recv_act.mb4c1 recv_grad.mb0c0] F4c1 B0c0 T[send_act.mb4c1 send_grad.mb0c0 "
           "recv_act.mb5c1 recv_grad.mb1c0] F5c1 B1c0 T[send_act.mb5c1 send_grad.mb1c0 "
           "recv_act.mb6c1 recv_grad.mb2c0] F6c1 B2c0 T[send_act.mb6c1 send_grad.mb2c0 "
           "recv_act.mb7c1 recv_grad.mb3c0] F7c1 B3c0 T[send_act.mb7c1 send_grad.mb3c0 "
           "recv_grad.mb4c1] B4c1 T[send_grad.mb4c1 recv_grad.mb5c1] B5c1 T[send_grad.mb5c1 "
           "recv_grad.mb6c1] B6c1 T[send_grad.mb6c1 recv_grad.mb7c1] B7c1 T[send_grad.mb7c1 "
           "recv_grad.mb4c0] B4c0 T[send_grad.mb4c0 recv_grad.mb5c0] B5c0 T[send_grad.mb5c0 "
           "recv_grad.mb6c0] B6c0 T[send_grad.mb6c0 recv_grad.mb7c0] B7c0 T[send_grad.mb7c0]",
           "T[recv_act.mb0c0] F0c0 T[send_act.mb0c0 recv_act.mb1c0] F1c0 T[send_act.mb1c0 "
           "recv_act.mb2c0] F2c0 T[send_act.mb2c0 recv_act.mb3c0] F3c0 T[send_act.mb3c0 "
           "recv_act.mb0c1] F0c1 T[send_act.mb0c1 recv_act.mb1c1] F1c1 T[send_act.mb1c1 "
           "recv_act.mb2c1 recv_grad.mb0c1] F2c1 B0c1 T[send_act.mb2c1 send_grad.mb0c1 "
           "recv_act.mb3c1 recv_grad.mb1c1] F3c1 B1c1 T[send_act.mb3c1 send_grad.mb1c1 "
           "recv_act.mb4c0 recv_grad.mb2c1] F4c0 B2c1 T[send_act.mb4c0 send_grad.mb2c1 "
           "recv_act.mb5c0 recv_grad.mb3c1] F5c0 B3c1 T[send_act.mb5c0 send_grad.mb3c1 "
           "recv_act.mb6c0 recv_grad.mb0c0] F6c0 B0c0 T[send_act.mb6c0 send_grad.mb0c0 "
           "recv_act.mb7c0 recv_grad.mb1c0] F7c0 B1c0 T[send_act.mb7c0 send_grad.mb1c0 "
           "recv_act.mb4c1 recv_grad.mb2c0] F4c1 B2c0 T[send_act.mb4c1 send_grad.mb2c0 "
           "recv_act.mb5c1 recv_grad.mb3c0] F5c1 B3c0 T[send_act.mb5c1 send_grad.mb3c0 "
           "recv_act.mb6c1 recv_grad.mb4c1] F6c1 B4c1 T[send_act.mb6c1 send_grad.mb4c1 "
           "recv_act.mb7c1 recv_grad.mb5c1] F7c1 B5c1 T[send_act.mb7c1 send_grad.mb5c1 "
           "recv_grad.mb6c1] B6c1 T[send_grad.mb6c1 recv_grad.mb7c1] B7c1 T[send_grad.mb7c1 "
           "recv_grad.mb4c0] B4c0 T[send_grad.mb4c0 recv_grad.mb5c0] B5c0 T[send_grad.mb5c0 "
           "recv_grad.mb6c0] B6c0 T[send_grad.mb6c0 recv_grad.mb7c0] B7c0 T[send_grad.mb7c0]",
           "T[recv_act.mb0c0] F0c0 T[send_act.mb0c0 recv_act.mb1c0] F1c0 T[send_act.mb1c0 "
           "recv_act.mb2c0] F2c0 T[send_act.mb2c0 recv_act.mb3c0] F3c0 T[send_act.mb3c0 "
           "recv_act.mb0c1] F0c1 B0c1 T[send_grad.mb0c1 recv_act.mb1c1] F1c1 B1c1 "
           "T[send_grad.mb1c1 recv_act.mb2c1] F2c1 B2c1 T[send_grad.mb2c1 recv_act.mb3c1] F3c1 "
           "B3c1 T[send_grad.mb3c1 recv_act.mb4c0 recv_grad.mb0c0] F4c0 B0c0 T[send_act.mb4c0 "
           "send_grad.mb0c0 recv_act.mb5c0 recv_grad.mb1c0] F5c0 B1c0 T[send_act.mb5c0 "
           "send_grad.mb1c0 recv_act.mb6c0 recv_grad.mb2c0] F6c0 B2c0 T[send_act.mb6c0 "
           "send_grad.mb2c0 recv_act.mb7c0 recv_grad.mb3c0] F7c0 B3c0 T[send_act.mb7c0 "
           "send_grad.mb3c0 recv_act.mb4c1] F4c1 B4c1 T[send_grad.mb4c1 recv_act.mb5c1] F5c1 B5c1 "
           "T[send_grad.mb5c1 recv_act.mb6c1] F6c1 B6c1 T[send_grad.mb6c1 recv_act.mb7c1] F7c1 "
           "B7c1 T[send_grad.mb7c1 recv_grad.mb4c0] B4c0 T[send_grad.mb4c0 recv_grad.mb5c0] B5c0 "
           "T[send_grad.mb5c0 recv_grad.mb6c0] B6c0 T[send_grad.mb6c0 recv_grad.mb7c0] B7c0 "
           "T[send_grad.mb7c0]",
       }},
  };
  return cases;
}

TEST(PipelineSchedule, InterleavedFollowsMegatronCore) {
  for (const InterleavedCase& c : interleaved_cases()) {
    for (int r = 0; r < c.p; ++r) {
      EXPECT_EQ(render(pipeline_schedule(PpSchedule::kInterleaved, c.p, r, c.m, c.v)),
                c.stages[static_cast<std::size_t>(r)])
          << "p=" << c.p << " V=" << c.v << " m=" << c.m << " stage " << r;
    }
  }
}

// Whatever the shape: what a stage sends to a neighbour, the neighbour receives, in the same
// order (activations forward around the ring, gradients backward), so no transfer waits forever;
// every stage runs each micro-batch through each of its chunks once forward and once backward.
TEST(PipelineSchedule, InterleavedTransfersPairUpAroundTheRing) {
  for (const auto& [p, v, m] : std::vector<std::array<int, 3>>{
           {2, 2, 4}, {2, 3, 4}, {3, 2, 6}, {4, 2, 8}, {4, 4, 8}, {4, 2, 4}, {8, 2, 16}}) {
    // (from, to, activation) -> what the sender sent, and what the receiver took, in order: each
    // part's (micro-batch, chunk), the sender's chunk given as the receiver's: an activation
    // goes from chunk c of stage r to chunk c of stage r + 1, the last stage's to chunk c + 1 of
    // the first; a gradient from chunk c of stage r to chunk c of r - 1, the first stage's to
    // chunk c - 1 of the last.
    std::map<std::tuple<int, int, bool>, std::vector<std::pair<int, int>>> sent, received;
    auto to_chunk = [p = p](int r, bool forward, int c) {
      if (forward) return r == p - 1 ? c + 1 : c;
      return r == 0 ? c - 1 : c;
    };
    for (int r = 0; r < p; ++r) {
      int forwards = 0, backwards = 0;
      for (const PipeItem& it : pipeline_schedule(PpSchedule::kInterleaved, p, r, m, v)) {
        forwards += it.kind == PipeItem::Kind::kForward ? 1 : 0;
        backwards += it.kind == PipeItem::Kind::kBackward ? 1 : 0;
        for (std::size_t i = 0; i < it.sends.size(); ++i) {
          const P2PTransfer& t = it.sends[i];
          if (t.peer < 0) continue;
          sent[{r, t.peer, t.forward}].emplace_back(it.send_mb[i],
                                                    to_chunk(r, t.forward, it.send_chunk[i]));
          EXPECT_TRUE(it.send_mb[i] >= 0 && it.send_mb[i] < m) << "p=" << p << " stage " << r;
        }
        for (std::size_t i = 0; i < it.recvs.size(); ++i) {
          const P2PTransfer& t = it.recvs[i];
          if (t.peer < 0) continue;
          received[{t.peer, r, t.forward}].emplace_back(it.recv_mb[i], it.recv_chunk[i]);
          EXPECT_TRUE(it.recv_chunk[i] >= 0 && it.recv_chunk[i] < v) << "p=" << p << " stage " << r;
        }
        for (const P2PTransfer& t : it.sends) {
          if (t.peer >= 0) {
            EXPECT_EQ(t.peer, t.forward ? (r + 1) % p : (r + p - 1) % p);
          }
        }
      }
      EXPECT_EQ(forwards, m * v) << "p=" << p << " V=" << v << " stage " << r;
      EXPECT_EQ(backwards, m * v) << "p=" << p << " V=" << v << " stage " << r;
    }
    EXPECT_EQ(sent, received) << "p=" << p << " V=" << v << " m=" << m;
  }
}

TEST(PipelineSchedule, InterleavedRefusesShapesMegatronRefuses) {
  EXPECT_THROW(pipeline_schedule(PpSchedule::kInterleaved, 4, 0, 6, 2), ConfigError);  // m % p
  EXPECT_THROW(pipeline_schedule(PpSchedule::kInterleaved, 4, 0, 8, 1), ConfigError);  // V < 2
  EXPECT_THROW(pipeline_schedule(PpSchedule::kInterleaved, 1, 0, 8, 2), ConfigError);  // p < 2
  EXPECT_THROW(pipeline_schedule(PpSchedule::k1F1B, 4, 0, 8, 2),
               ConfigError);  // V, not interleaved
  EXPECT_EQ(schedule_problem(PpSchedule::kInterleaved, 4, 6, 2),
            "--schedule interleaved runs micro-batches in groups of --pp: --micro-batches 6 is not "
            "a multiple of --pp 4");
}

}  // namespace
}  // namespace commprof
