// SPDX-License-Identifier: MIT
// The link probe at the start of `commprof run`: a short sweep of the collectives and transfers
// that other layouts of the same job would use (all-reduce, all-gather, reduce-scatter,
// all-to-all and neighbour send/receive over the world), fitted as the link model of
// collectives/links and recorded in every rank file's configuration. `commprof project` adds its
// points to the run's own collectives, so a layout whose communication the run itself never
// issued (pipeline transfers in a data-parallel run, say) still has a fit instead of being refused.
#pragma once

#include <cstdint>
#include <optional>

#include "collectives/links/link_model.hpp"
#include "src/backend/backend.hpp"
#include "src/runtime/rank_context.hpp"

namespace commprof {

struct LinkProbe {
  LinkModel model;        ///< the same on every rank (fitted from rank 0's points on each)
  double elapsed_ms = 0;  ///< the probe's wall time on rank 0, sweep and fit
  int points = 0;
};

/// Collective over the world. nullopt on a world of one rank (no link to measure). Sizes 4 KiB,
/// 64 KiB and 1 MiB, 2 warm-up and 5 timed calls each, data not verified (the bench does that):
/// the points serve a fit, not a bandwidth claim.
std::optional<LinkProbe> probe_links(RankContext& ctx, Backend& backend);

}  // namespace commprof
