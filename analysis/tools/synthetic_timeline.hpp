// SPDX-License-Identifier: MIT
// Synthetic rank timelines with known answers, for tests and the reducer benchmark.
//
// Each step has `layers` layers on one rank: a COMP op (fwd.l<i>) back to back on "COMP"; after
// it a collective on "COMM" that overlaps the next layer's COMP; a MEM op (copy.l<i>) on "MEM"
// inside the COMP op. Even layers all-reduce on "world"; odd layers all-gather on "tp<g>" (groups
// of tp_size consecutive ranks) when tp_size > 0, else also on "world". Rank r arrives at every
// collective (r % 7) × skew_ns late, and every rank's copy ends at the same time, so the last
// arriver of a collective is its lowest rank with the largest r % 7. Host h = r / ranks_per_host;
// its clock reads h × host_clock_step_ns behind rank 0's, recorded as clock_offset_ns.
// A slow rank (slow_rank ≥ 0) takes slow_factor × comp_ns for each COMP op of its measured
// steps; every collective then ends that much later on every rank (each waits for its last
// arriver), so the others wait for it at each collective: a straggler, not a hang.
#pragma once

#include <cstdint>

#include "src/timeline/op_record.hpp"

namespace commprof {

struct SyntheticSpec {
  int world_size = 4;
  int steps = 3;         ///< measured steps
  int warmup_steps = 1;  ///< before them
  int layers = 4;
  int tp_size = 0;
  int ranks_per_host = 8;
  std::int64_t comp_ns = 10000;
  std::int64_t comm_ns = 6000;  ///< transfer time, after the last arrival
  std::int64_t mem_ns = 2000;
  std::int64_t skew_ns = 100;
  std::int64_t host_clock_step_ns = 1000000;
  std::uint64_t bytes = 1 << 20;
  int slow_rank = -1;
  double slow_factor = 1.0;

  /// The defaults with this many steps, warm-up steps and layers: what most tests vary.
  static SyntheticSpec sized(int steps, int warmup_steps, int layers) {
    SyntheticSpec spec;
    spec.steps = steps;
    spec.warmup_steps = warmup_steps;
    spec.layers = layers;
    return spec;
  }
};

/// Rank `rank` of the run `spec` describes.
RankTimeline make_synthetic_rank(const SyntheticSpec& spec, int rank);

}  // namespace commprof
