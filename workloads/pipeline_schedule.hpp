// SPDX-License-Identifier: MIT
// The per-stage order of forward and backward micro-batches and the point-to-point transfers
// between them, as data (Megatron-LM's schedules, docs/workloads.md, "Pipeline parallelism").
#pragma once

#include <array>
#include <string>
#include <vector>

#include "src/collective/p2p_transfer.hpp"

namespace commprof {

/// gpipe: all forwards, then all backwards. 1f1b: Megatron's one-forward-one-backward.
/// interleaved: Megatron's interleaved 1F1B over virtual stages (each rank holds several model
/// chunks, round-robin).
enum class PpSchedule { kGpipe, k1F1B, kInterleaved };
PpSchedule parse_schedule(const std::string& text);
const char* schedule_name(PpSchedule s);

/// One item of a stage's schedule: a forward or backward pass of a micro-batch through one of
/// the stage's model chunks, or a transfer. A transfer is one group of up to two sends and two
/// receives (peers are stage indices); `forward` marks activations, else their gradients. 1F1B
/// fuses a send with a receive as Megatron's send_forward_recv_backward does; interleaved 1F1B
/// sends and receives both kinds at once (send_forward_backward_recv_forward_backward).
struct PipeItem {
  enum class Kind { kForward, kBackward, kTransfer };
  Kind kind = Kind::kForward;
  int micro_batch = 0;  ///< forward/backward; for a transfer, that of its first part
  int chunk = 0;        ///< the model chunk (0 without interleaving)
  std::array<P2PTransfer, 2> sends{};
  std::array<P2PTransfer, 2> recvs{};
  /// A transfer's parts: for each send and receive, the micro-batch and chunk whose activation
  /// or gradient it carries (names and tests).
  std::array<int, 2> send_mb{{-1, -1}}, recv_mb{{-1, -1}};
  std::array<int, 2> send_chunk{{0, 0}}, recv_chunk{{0, 0}};
};

/// Stage `stage` of `stages` over `micro_batches` micro-batches. With one stage: F0 B0 F1 B1 …
/// (gradient accumulation). GPipe: all forwards, then all backwards. 1F1B: min(p−r−1, m)
/// warm-up forwards, then one forward and one backward alternately, then the remaining
/// backwards, with Megatron's fused transfers in the steady state. Interleaved (`chunks` > 1
/// model chunks per stage, micro_batches a multiple of stages): Megatron-Core's
/// forward_backward_pipelining_with_interleaving without p2p overlap.
std::vector<PipeItem> pipeline_schedule(PpSchedule schedule, int stages, int stage,
                                        int micro_batches, int chunks = 1);

/// Why `schedule` cannot run `micro_batches` over `stages` with `chunks` chunks ("" when it can).
std::string schedule_problem(PpSchedule schedule, int stages, int micro_batches, int chunks);

/// "F0 F1 B0 ..." without transfers, for messages and tests; with `chunks`, each pass names its
/// chunk too ("F0c1").
std::string compute_order(const std::vector<PipeItem>& items, bool chunks = false);

}  // namespace commprof
