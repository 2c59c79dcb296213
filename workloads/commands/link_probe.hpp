// SPDX-License-Identifier: MIT
// The link probe at the start of `commprof run`: a short sweep of the collectives and transfers
// that other layouts of the same job would use (all-reduce, all-gather, reduce-scatter,
// all-to-all and neighbour send/receive over the world), fitted as the link model of
// collectives/links and recorded in every rank file's configuration. `commprof project` adds its
// points to the run's own collectives, so a layout whose communication the run itself never
// issued (pipeline transfers in a data-parallel run, say) still has a fit instead of being refused.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collectives/links/link_model.hpp"
#include "src/backend/backend.hpp"
#include "src/collective/collective_kind.hpp"
#include "src/runtime/rank_context.hpp"

namespace commprof {

struct LinkProbe {
  LinkModel model;        ///< the same on every rank (fitted from rank 0's points on each)
  double elapsed_ms = 0;  ///< the probe's wall time on rank 0, sweep and fit
  int points = 0;
  int ranks = 0;  ///< the world's size
  /// Rank 0's wall time of each kind's sweep, warm-up calls included: where the probe's time
  /// goes (on NCCL, the first call of a kind sets up its connections).
  std::vector<std::pair<CollectiveKind, double>> kind_ms;
  std::string communicator;  ///< the name of the communicator swept ("world", or the run's "dp0")
};

/// Collective over the world. nullopt on a world of one rank (no link to measure). Sizes 4 KiB,
/// 64 KiB and 1 MiB, 2 warm-up and 5 timed calls each, data not verified (the bench does that):
/// the points serve a fit, not a bandwidth claim. `over` is the communicator swept: the world's,
/// or one of the run's that spans the world in its rank order (whose connections the run reuses).
std::optional<LinkProbe> probe_links(RankContext& ctx, Backend& backend, Communicator& over);

/// The probe's line for rank 0 to print: points, kinds, time and where it went.
std::string link_probe_line(const LinkProbe& probe);

}  // namespace commprof
