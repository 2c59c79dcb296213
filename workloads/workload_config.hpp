// SPDX-License-Identifier: MIT
// A workload's configuration (what `commprof run` runs: a workload kind over a parallel layout
// and a model shape) and what follows from it alone: the tokens an MoE layer routes, a stage's
// chunks and gradient lists. Below the step builder (step_builder.hpp) and the generator's
// interface (workload.hpp), which both read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/routing.hpp"
#include "workloads/compute_profile.hpp"
#include "workloads/context_parallel.hpp"
#include "workloads/dp_buckets.hpp"
#include "workloads/layout.hpp"
#include "workloads/model_shape.hpp"
#include "workloads/pipeline_schedule.hpp"
#include "workloads/stage_split.hpp"

namespace commprof {

enum class WorkloadKind { kDp, kTp, kPp, kHybrid };
WorkloadKind parse_workload(const std::string& text);
const char* workload_name(WorkloadKind k);

enum class DpMode { kDdp, kZero };
DpMode parse_dp_mode(const std::string& text);

/// How a layer's attention is computed: one fused flash-attention kernel forward and one
/// backward, causal, as frameworks run it (AttentionCall), or the two products QKᵀ and PV as
/// plain GEMMs over the whole s × s (their dgrad and wgrad backward): non-causal FLOPs at GEMM
/// speed, for backends or types without fused attention.
enum class AttentionMode { kFused, kGemm };
AttentionMode parse_attention_mode(const std::string& text);
const char* attention_mode_name(AttentionMode m);

struct WorkloadConfig {
  WorkloadKind kind = WorkloadKind::kDp;
  ModelShape shape;
  ParallelLayout layout;
  double bucket_mb = 25.0;  ///< DDP bucket cap in MiB
  DpMode dp_mode = DpMode::kDdp;
  bool sequence_parallel = false;
  PpSchedule schedule = PpSchedule::k1F1B;
  int virtual_stages = 1;  ///< model chunks per pipeline stage (interleaved 1F1B)
  StageSplitOptions split;
  bool offload = false;  ///< activations to pinned host memory after forward, back before backward
  bool no_overlap = false;  ///< every op waits for the one before: the serial baseline
  /// --slow-rank: this world rank's COMP ops do slow_factor times their work (slowed()); -1 none.
  int slow_rank = -1;
  double slow_factor = 1.0;
  AttentionMode attention = AttentionMode::kFused;
  /// How attention meets the other CP ranks where layout.cp > 1 (workloads/context_parallel.hpp).
  CpMode cp_mode = CpMode::kP2p;
  /// --compute-from: each layer's compute is one op of the traced duration per part (attention,
  /// FFN) and direction, the optimizer one op, instead of the shape's GEMMs and passes.
  std::optional<ComputeProfile> compute;
  /// With `compute`: the traced step's gaps (ComputeProfile::gap_ns) replayed as idle time
  /// before the ops of the part each preceded (--no-host-gaps: left out, kernels back to back).
  bool host_gaps = true;
  /// The MoE layers' routing (--routing): how each rank's tokens spread over the experts.
  RoutingSpec routing;
};

/// Tokens one rank routes per micro-batch in an MoE layer: its part of the sequence under
/// context parallelism, and under sequence parallelism its TP rank's part of that.
std::uint64_t moe_tokens(const WorkloadConfig& config);

/// A stage's chunks on pipeline rank `pp_rank`: its layers and where the ends lie.
std::vector<ModelChunk> chunks_of(const WorkloadConfig& c, int pp_rank);

/// Tied embeddings split over stages: the last stage keeps a copy of the embedding as its LM head
/// (Megatron's shared_embedding_or_output_weight), whose gradient the embedding group sums.
bool tied_across_stages(const WorkloadConfig& c);

/// The gradient parameters of one pipeline stage on one TP rank, in gradient-ready order: the
/// LM head's (the last stage; also where tied embeddings are split over stages, whose last stage
/// keeps a copy of the embedding), the layers' in reverse, the embedding's (the first stage).
/// The dense parameters, summed over DP × CP; MoE layers' experts are not among them.
std::vector<GradParam> stage_gradients_reversed(const WorkloadConfig& config, int pp_rank);
/// The local experts' gradient parameters of one stage's MoE layers on EP rank `ep_rank`, in
/// gradient-ready order (layers in reverse; in each, experts in reverse, down then up): summed
/// over expert DP.
std::vector<GradParam> stage_expert_gradients_reversed(const WorkloadConfig& config, int pp_rank,
                                                       int ep_rank);

}  // namespace commprof
