// SPDX-License-Identifier: MIT
// The synthetic run most report tests work their answers out on (reducer_test.cpp describes
// it): three ranks on three hosts whose clocks are 1 ms apart, two measured steps of two layers.
#pragma once

#include "analysis/reducer.hpp"
#include "analysis/tools/synthetic_timeline.hpp"

namespace commprof::testing {

inline SyntheticSpec three_ranks() {
  SyntheticSpec spec;
  spec.world_size = 3;
  spec.ranks_per_host = 1;  // three hosts, clocks 1 ms apart: offsets must be applied
  spec.steps = 2;
  spec.layers = 2;
  return spec;
}

/// Every rank of `spec` reduced in memory.
inline Report reduce(const SyntheticSpec& spec, ReduceOptions options = {}) {
  Reducer reducer(options);
  for (int r = 0; r < spec.world_size; ++r) reducer.add(make_synthetic_rank(spec, r), "mem");
  return reducer.finish();
}

}  // namespace commprof::testing
