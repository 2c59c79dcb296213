// SPDX-License-Identifier: MIT
#include "analysis/tools/synthetic_timeline.hpp"

#include <algorithm>

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
  // A measured step's COMP op on the slow rank, and the slowest one of any rank (the pace of
  // every collective); each step as long as its slowest rank's.
  const std::int64_t slow_comp_ns =
      static_cast<std::int64_t>(static_cast<double>(spec.comp_ns) * spec.slow_factor);
  const bool slowed = spec.slow_rank >= 0 && spec.slow_rank < spec.world_size;
  const std::int64_t pace_ns = slowed ? std::max(spec.comp_ns, slow_comp_ns) : spec.comp_ns;
  const std::int64_t origin = 1000000000;  // a monotonic clock never starts at 0
  const int total = spec.warmup_steps + spec.steps;
  t.steps.reserve(static_cast<std::size_t>(total));
  std::int64_t base = origin;  // the step's start, on rank 0's clock
  for (int s = 0; s < total; ++s) {
    StepRecord step;
    step.index = s;
    step.warmup = s < spec.warmup_steps;
    const std::int64_t pace = step.warmup ? spec.comp_ns : pace_ns;
    const std::int64_t comp_ns =
        !step.warmup && rank == spec.slow_rank ? slow_comp_ns : spec.comp_ns;
    const std::int64_t step_span = spec.layers * pace + max_skew + spec.comm_ns;
    // Times on rank 0's clock; the rank's own clock reads clock_offset_ns less.
    step.start_ns = base - t.clock_offset_ns;
    step.end_ns = base + step_span - t.clock_offset_ns;
    step.ops.reserve(static_cast<std::size_t>(3 * spec.layers));
    std::int64_t prev_comm_end = 0;
    for (int i = 0; i < spec.layers; ++i) {
      const std::int64_t comp_start = base + i * comp_ns;
      OpRecord comp;
      comp.name = "fwd.l" + std::to_string(i);
      comp.category = Category::kComp;
      comp.stream = "COMP";
      comp.flops = 2.0e9;
      comp.start_ns = comp_start - t.clock_offset_ns;
      comp.end_ns = comp_start + comp_ns - t.clock_offset_ns;
      step.ops.push_back(std::move(comp));

      OpRecord mem;
      mem.name = "copy.l" + std::to_string(i);
      mem.category = Category::kMem;
      mem.stream = "MEM";
      mem.bytes = spec.bytes;
      mem.start_ns = comp_start + comp_ns / 4 - t.clock_offset_ns;
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
      const std::int64_t ready = comp_start + comp_ns;
      comm.start_ns = ready + (rank % 7) * spec.skew_ns - t.clock_offset_ns;
      // Paced by a slow rank, a collective starts once the one before it on the COMM stream
      // ended (one at a time), so what the others wait is the slow rank's lateness alone.
      if (slowed && i > 0) comm.start_ns = std::max(comm.start_ns, prev_comm_end);
      comm.end_ns = base + (i + 1) * pace + max_skew + spec.comm_ns - t.clock_offset_ns;
      prev_comm_end = comm.end_ns;
      step.ops.push_back(std::move(comm));
    }
    t.steps.push_back(std::move(step));
    base += step_span + 1000;
  }
  return t;
}

}  // namespace commprof
