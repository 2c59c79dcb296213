// SPDX-License-Identifier: MIT
// What `commprof run` runs: a workload kind over a parallel layout and a model shape, and the
// generator that turns it into one rank's op plan.
#pragma once

#include <optional>
#include <string>

#include "collectives/routing.hpp"
#include "workloads/compute_profile.hpp"
#include "workloads/context_parallel.hpp"
#include "workloads/dp_buckets.hpp"
#include "workloads/layout.hpp"
#include "workloads/model_shape.hpp"
#include "workloads/op_plan.hpp"
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

/// Checks what the layout alone does not: the pipeline schedule against the micro-batches, the
/// layers' split over the stages, and context parallelism against the sequence and heads (and
/// the attention it needs: fused, not --attention gemm or --compute-from); throws ConfigError
/// naming the numbers.
void validate_workload(const WorkloadConfig& config);
/// Why --cp > 1 refuses GEMM attention (also where --attention auto would fall back to it).
std::string cp_needs_fused_attention();

/// One rank's plan of training step `step` (counted from the first warm-up step): the steps of a
/// run differ only where MoE layers route (each step's routing its own: the all-to-alls' splits
/// and the experts' rows move between steps). Reads only the layout position, so it runs without
/// MPI (tests, --dry-run).
OpPlan build_plan(const WorkloadConfig& config, const RankPlace& place, std::uint64_t step = 0);
/// Whether the plans of a run's steps may differ (build_plan's `step` matters): a model with MoE
/// layers (some routings are the same every step: uniform, or fixed-size under a capacity
/// factor; their plans are then rebuilt alike).
bool plan_moves_between_steps(const WorkloadConfig& config);

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
