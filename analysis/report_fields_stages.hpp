// SPDX-License-Identifier: MIT
// The pipeline stages table.
// (What a field holds and who walks the tables: report_fields.hpp.)
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>

#include "analysis/report_fields_base.hpp"

namespace commprof::report_fields {

inline constexpr Field<StageRow> kStageFields[] = {
    field<&StageRow::stage>("stage", U::kId, "stage", "The pipeline stage.").names_row("stage"),
    field<&StageRow::ranks>("ranks", U::kCount, "ranks",
                            "Ranks of the stage the figures are the mean of.")
        .prom("commprof_stage_ranks"),
    field<&StageRow::step_ns>("step_time_ns", U::kNs, "step",
                              "Mean step time of the stage's ranks (steps with per-op timing).")
        .prom("commprof_stage_step_time_seconds"),
    field<&StageRow::comp_ns>("comp_busy_ns", U::kNs, "COMP",
                              "Mean compute per step of the stage's ranks (|union of COMP|).")
        .prom("commprof_stage_comp_busy_seconds"),
    field<&StageRow::busy_ns>("busy_ns", U::kNs, "busy",
                              "Mean busy time per step of the stage's ranks (every op).")
        .prom("commprof_stage_busy_seconds"),
    field<&StageRow::bubble>("bubble_fraction", U::kRatio, "bubble",
                             "Mean part of the step without compute: 1 - COMP / step.")
        .prom("commprof_stage_bubble_ratio"),
};
inline constexpr Table<StageRow> kStages{"stages",
                                         "Pipeline stages (mean of the stage's ranks per step)",
                                         "table-stages",
                                         "",
                                         "",
                                         kStageFields,
                                         std::size(kStageFields)};

static_assert(well_formed(kStages));

}  // namespace commprof::report_fields
