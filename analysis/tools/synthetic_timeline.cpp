// SPDX-License-Identifier: MIT
#include "analysis/tools/synthetic_timeline.hpp"

namespace commprof {

RankTimeline make_synthetic_rank(const SyntheticSpec& spec, int rank) {
  RankTimeline t;
  t.rank = rank;
  t.world_size = spec.world_size;
  const int host = rank / spec.ranks_per_host;
  t.local_rank = rank % spec.ranks_per_host;
  t.host = "node" + std::to_string(host);
  t.device = "synthetic";
  t.backend = "synthetic";
  t.clock_offset_ns = host * spec.host_clock_step_ns;
  const std::int64_t max_skew = 6 * spec.skew_ns;
  const std::int64_t step_span = spec.layers * spec.comp_ns + max_skew + spec.comm_ns;
  const std::int64_t period = step_span + 1000;
  const std::int64_t origin = 1000000000;  // a monotonic clock never starts at 0
  const int total = spec.warmup_steps + spec.steps;
  t.steps.reserve(static_cast<std::size_t>(total));
  for (int s = 0; s < total; ++s) {
    StepRecord step;
    step.index = s;
    step.warmup = s < spec.warmup_steps;
    // Times on rank 0's clock; the rank's own clock reads clock_offset_ns less.
    const std::int64_t base = origin + s * period;
    step.start_ns = base - t.clock_offset_ns;
    step.end_ns = base + step_span - t.clock_offset_ns;
    step.ops.reserve(static_cast<std::size_t>(3 * spec.layers));
    for (int i = 0; i < spec.layers; ++i) {
      const std::int64_t comp_start = base + i * spec.comp_ns;
      OpRecord comp;
      comp.name = "fwd.l" + std::to_string(i);
      comp.category = Category::kComp;
      comp.stream = "COMP";
      comp.flops = 2.0e9;
      comp.start_ns = comp_start - t.clock_offset_ns;
      comp.end_ns = comp_start + spec.comp_ns - t.clock_offset_ns;
      step.ops.push_back(std::move(comp));

      OpRecord mem;
      mem.name = "copy.l" + std::to_string(i);
      mem.category = Category::kMem;
      mem.stream = "MEM";
      mem.bytes = spec.bytes;
      mem.start_ns = comp_start + spec.comp_ns / 4 - t.clock_offset_ns;
      mem.end_ns = mem.start_ns + spec.mem_ns;
      step.ops.push_back(std::move(mem));

      OpRecord comm;
      const bool tp = spec.tp_size > 0 && i % 2 == 1;
      comm.name = (tp ? "tp.allgather.l" : "dp.allreduce.l") + std::to_string(i);
      comm.category = Category::kComm;
      comm.stream = "COMM";
      comm.collective = tp ? "allgather" : "allreduce";
      comm.comm = tp ? "tp" + std::to_string(rank / spec.tp_size) : "world";
      comm.comm_size = tp ? spec.tp_size : spec.world_size;
      comm.seq = static_cast<std::int64_t>(s) * spec.layers + i;
      comm.bytes = spec.bytes;
      const std::int64_t ready = comp_start + spec.comp_ns;
      comm.start_ns = ready + (rank % 7) * spec.skew_ns - t.clock_offset_ns;
      comm.end_ns = ready + max_skew + spec.comm_ns - t.clock_offset_ns;
      step.ops.push_back(std::move(comm));
    }
    t.steps.push_back(std::move(step));
  }
  return t;
}

}  // namespace commprof
