// SPDX-License-Identifier: MIT
// The generator that turns a workload (workload_config.hpp) into one rank's op plan, and the
// checks of a workload the layout alone does not make.
#pragma once

#include <cstdint>
#include <string>

#include "workloads/layout.hpp"
#include "workloads/op_plan.hpp"
#include "workloads/workload_config.hpp"

namespace commprof {

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

}  // namespace commprof
