// SPDX-License-Identifier: MIT
// The per-stage order of forward and backward micro-batches and the point-to-point transfers
// between them, as data (Megatron-LM's schedules, docs/workloads.md, "Pipeline parallelism").
#pragma once

#include <string>
#include <vector>

namespace commprof {

enum class PpSchedule { kGpipe, k1F1B };
PpSchedule parse_schedule(const std::string& text);
const char* schedule_name(PpSchedule s);

/// One item of a stage's schedule: a forward or backward pass of a micro-batch, or a transfer.
/// A transfer sends to `send_peer` and/or receives from `recv_peer` (stage indices, -1 none),
/// fused into one group when both are set, as Megatron's send_forward_recv_backward does.
struct PipeItem {
  enum class Kind { kForward, kBackward, kTransfer };
  Kind kind = Kind::kForward;
  int micro_batch = 0;  ///< forward/backward; for a transfer, the micro-batch sent (or received)
  int send_peer = -1;
  int recv_peer = -1;
  bool send_is_forward = true;  ///< transfer: what is sent is an activation (true) or a gradient
  bool recv_is_forward = true;  ///< transfer: what is received is an activation or a gradient
};

/// Stage `stage` of `stages` over `micro_batches` micro-batches. With one stage: F0 B0 F1 B1 …
/// (gradient accumulation). GPipe: all forwards, then all backwards. 1F1B: min(p−r−1, m)
/// warm-up forwards, then one forward and one backward alternately, then the remaining
/// backwards, with Megatron's fused transfers in the steady state.
std::vector<PipeItem> pipeline_schedule(PpSchedule schedule, int stages, int stage,
                                        int micro_batches);

/// "F0 F1 B0 ..." without transfers, for messages and tests.
std::string compute_order(const std::vector<PipeItem>& items);

}  // namespace commprof
