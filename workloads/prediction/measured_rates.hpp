// SPDX-License-Identifier: MIT
// What a measured run tells about the hardware it ran on, in the units a projection needs:
// compute per op class (FLOP per ns for ops that count FLOPs: GEMMs and attention; bytes per ns
// for memory-bound ops and copies), the host gap before an op on each stream, and its
// collectives as link-model points (time from the last member's arrival, per communicator kind).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/graph/step_graph.hpp"
#include "collectives/links/link_model.hpp"
#include "src/timeline/op_record.hpp"

namespace commprof {

/// An op's class: its name without the layer, micro-batch, step and chunk indexes
/// ("l3.qkv.mb0.dgrad" → "qkv.dgrad"), so the same GEMM of every layer shares one rate.
std::string op_class(const std::string& name);

/// Work done and the time it took, summed over ops.
struct Throughput {
  double work = 0.0;  ///< FLOPs or bytes
  double ns = 0.0;
  std::int64_t ops = 0;
  double per_ns() const { return ns > 0 ? work / ns : 0.0; }
};

struct MeasuredRates {
  /// By op_class + "/flop" or "/byte".
  std::map<std::string, Throughput> by_class;
  Throughput gemm_flops;       ///< every COMP op with FLOPs but attention
  Throughput attention_flops;  ///< COMP ops named "attention"
  Throughput pass_bytes;       ///< COMP ops without FLOPs (memory-bound passes, the optimizer)
  Throughput copy_bytes;       ///< MEM ops
  /// The mean host gap before an op (start − ready, the replay's gap) per category, ns.
  std::int64_t gap_ns[3] = {0, 0, 0};
  std::vector<LinkSample> collectives;  ///< link-model points, group = communicator kind
  int ranks = 0;
  int hosts = 0;
  int ranks_per_host = 0;  ///< the most ranks any host ran
  std::int64_t steps = 0;  ///< measured steps with per-op timing
  /// Each rank's mean measured step, ns (by rank), and their spread: max / min − 1.
  std::vector<double> rank_step_ns;
  double step_spread = 0.0;
  /// Each rank's compute speed (by rank, in the order of the timelines sorted by rank): the time
  /// its COMP ops took over the time its class rates (every rank's) give them; 1 where it did
  /// no such op. The spread of the same work across ranks, apart from what each rank ran.
  std::vector<double> rank_compute;
  /// Each measured step's compute speed on each rank over that rank's own (rank_compute): its
  /// COMP ops' time in the step over the time its rank's speed and the class rates give them,
  /// pooled over ranks and steps. 1 everywhere where a rank computes at one speed; on a shared
  /// CPU a rank's step may take twice its usual compute (a core taken from it for a while),
  /// and a collective that waits for the slowest rank waits for whichever rank was slow then.
  std::vector<double> compute_jitter;
};

/// Learns the rates from every rank's timeline and the step graphs built from them. Throws
/// ConfigError when no measured step carries per-op timing.
MeasuredRates learn_rates(const std::vector<RankTimeline>& ranks,
                          const std::vector<StepGraph>& graphs);

}  // namespace commprof
