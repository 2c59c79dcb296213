// SPDX-License-Identifier: MIT
// The across-ranks table: each compared per-rank field's spread over the ranks.
// (What a field holds and who walks the tables: report_fields.hpp.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

#include "analysis/report_fields_base.hpp"

namespace commprof::report_fields {

inline double across_min(const AcrossRanks& a) { return a.stat.min; }
inline double across_mean(const AcrossRanks& a) { return a.stat.mean; }
inline double across_max(const AcrossRanks& a) { return a.stat.max; }
inline std::optional<double> across_stddev(const AcrossRanks& a) { return a.stat.stddev(); }
inline std::int64_t across_count(const AcrossRanks& a) { return a.stat.count; }
inline bool no_rank_has_it(const AcrossRanks& a) { return a.stat.count == 0; }

inline constexpr std::string_view kAcrossHelp =
    "Of each rank's mean per step: the smallest, mean, largest and standard deviation over ranks.";

/// One row per per-rank field compared_as a family (the reducer makes them from kRanks). The
/// first seven are the text report's columns, in its order.
inline constexpr Field<AcrossRanks> kAcrossFields[] = {
    field<&AcrossRanks::metric>("metric", U::kText, "metric",
                                "The per-rank field, by its key without the unit.")
        .names_row("metric"),
    field<&AcrossRanks::unit>("unit", U::kText, "unit", "The unit of its values."),
    field<&across_min>("min", U::kOfRow, "min", kAcrossHelp)
        .na_if(&no_rank_has_it)
        .prom("commprof_across_ranks", "stat", "min"),
    field<&across_mean>("mean", U::kOfRow, "mean", kAcrossHelp)
        .na_if(&no_rank_has_it)
        .prom("commprof_across_ranks", "stat", "mean"),
    field<&across_max>("max", U::kOfRow, "max", kAcrossHelp)
        .na_if(&no_rank_has_it)
        .prom("commprof_across_ranks", "stat", "max"),
    field<&AcrossRanks::worst_rank>(
        "worst_rank", U::kId, "worst rank",
        "The rank worst for the metric: the largest value, or the smallest for overlap and "
        "hidden fraction.")
        .na_if_negative()
        .prom("commprof_across_ranks_worst_rank"),
    field<&AcrossRanks::worst_host>("worst_host", U::kText, "worst host", "The worst rank's host.")
        .na_if(&no_rank_has_it),
    field<&across_stddev>("stddev", U::kOfRow, "stddev", kAcrossHelp)
        .prom("commprof_across_ranks", "stat", "stddev"),
    field<&across_count>("count", U::kCount, "ranks", "Ranks the metric is defined for.")
        .prom("commprof_across_ranks_defined"),
};
inline constexpr Table<AcrossRanks> kAcross{"across_ranks",
                                            "Across ranks (each rank's mean step)",
                                            "table-across",
                                            "commprof_across_ranks_info",
                                            "The metric's unit and worst host (value 1).",
                                            kAcrossFields,
                                            std::size(kAcrossFields)};

static_assert(well_formed(kAcross));

}  // namespace commprof::report_fields
