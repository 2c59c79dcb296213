// SPDX-License-Identifier: MIT
#include "workloads/workload.hpp"

#include "src/core/errors.hpp"
#include "src/core/log.hpp"
#include "src/core/name_table.hpp"
#include "workloads/dp_buckets.hpp"
#include "workloads/moe.hpp"
#include "workloads/step_builder.hpp"

namespace commprof {

void validate_workload(const WorkloadConfig& c) {
  const std::string problem =
      schedule_problem(c.schedule, c.layout.pp, c.shape.micro_batches, c.virtual_stages);
  if (!problem.empty()) throw ConfigError(problem);
  if (c.shape.moe()) {
    const ParallelLayout& l = c.layout;
    if (c.shape.experts % l.ep != 0) {
      throw ConfigError(log::cat("--ep ", l.ep, " does not divide --experts ", c.shape.experts));
    }
    if (c.shape.moe_ffn % l.expert_tp() != 0) {  // expert TP splits each expert's FFN columns
      throw ConfigError(log::cat("--moe-ffn ", c.shape.moe_ffn,
                                 " is not divisible by the experts' --etp ", l.expert_tp(),
                                 " (0 means --tp)"));
    }
    if (l.tp > 1 && !c.sequence_parallel) {  // as Megatron-Core asserts
      throw ConfigError(
          "MoE layers with --tp > 1 need --sequence-parallel (Megatron-Core "
          "requires it: each TP rank routes its part of the sequence)");
    }
  }
  virtual_stage_layers(c.shape.layers, c.layout.pp, c.virtual_stages, c.split);
  validate_context_parallel(c.shape, c.layout, c.cp_mode);
  if (c.layout.cp > 1 && c.attention == AttentionMode::kGemm) {
    throw ConfigError(cp_needs_fused_attention());
  }
}

std::string cp_needs_fused_attention() {
  return "--cp > 1 needs fused attention (--attention fused): the CP schedules run attention "
         "kernels on blocks of the sequence, which --attention gemm does not model";
}

OpPlan build_plan(const WorkloadConfig& config, const RankPlace& place, std::uint64_t step) {
  return StepBuilder(config, place, step).build();
}

bool plan_moves_between_steps(const WorkloadConfig& config) { return config.shape.moe(); }

}  // namespace commprof
