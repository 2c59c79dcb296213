// SPDX-License-Identifier: MIT
// The stragglers table: per rank, the waiting it caused and how often it arrived last.
// (What a field holds and who walks the tables: report_fields.hpp.)
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>

#include "analysis/report_fields_base.hpp"

namespace commprof::report_fields {

/// The share of its collectives at which the rank arrived last.
inline double arrived_last_fraction(const RankWait& w) {
  return w.collectives > 0 ? static_cast<double>(w.times_last) / static_cast<double>(w.collectives)
                           : 0.0;
}

/// In the text report's order (the ranks that caused most waiting first).
inline constexpr Field<RankWait> kStragglerFields[] = {
    field<&RankWait::rank>("rank", U::kId, "rank", "The rank.").names_row("rank"),
    field<&RankWait::host>("host", U::kText, "host", "The rank's host.").names_row("node"),
    field<&RankWait::times_last>("times_last", U::kCount, "last",
                                 "Collectives at which this rank arrived last.")
        .prom("commprof_arrived_last_collectives"),
    field<&arrived_last_fraction>("last_fraction", U::kRatio, "last",
                                  "The share of its collectives at which this rank arrived last.")
        .prom("commprof_arrived_last_ratio"),
    field<&RankWait::wait_caused_ns>(
        "wait_caused_ns", U::kNs, "caused wait",
        "Time other ranks waited for this rank (it arrived last), summed over the run.")
        .prom("commprof_wait_caused_seconds"),
    field<&RankWait::wait_ns>(
        "wait_ns", U::kNs, "own wait",
        "Time the rank waited for later ranks at collectives, summed over the run.")
        .prom("commprof_collective_wait_seconds"),
    field<&RankWait::collectives>("collectives", U::kCount, "collectives",
                                  "Collectives the rank took part in.")
        .prom("commprof_rank_collectives"),
    field<&RankWait::times_first>("times_first", U::kCount, "first",
                                  "Collectives at which this rank arrived first.")
        .prom("commprof_arrived_first_collectives"),
};
inline constexpr Table<RankWait> kStragglers{"stragglers",
                                             "Stragglers (ranks the others waited for most)",
                                             "table-stragglers",
                                             "",
                                             "",
                                             kStragglerFields,
                                             std::size(kStragglerFields)};

static_assert(well_formed(kStragglers));

}  // namespace commprof::report_fields
