// SPDX-License-Identifier: MIT
// A sweep's rows as the link model's points: `bench --fit-links` and `run`'s link probe both fit
// the model (collectives/links) to them.
#pragma once

#include <vector>

#include "collectives/bench/bench.hpp"
#include "collectives/links/link_model.hpp"

namespace commprof {

/// Each timed row of two ranks or more as one point: its collective by the model's name (send and
/// receive as "p2p"), its ranks and size, its average time; the link class `intra_node` when every
/// rank of the report ran on one host, else `inter_node`. Rank 0's report (the others hold no
/// reduced times).
std::vector<LinkSample> link_samples(const BenchReport& report);

}  // namespace commprof
