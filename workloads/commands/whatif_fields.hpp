// SPDX-License-Identifier: MIT
// What `commprof whatif` writes, as field tables (src/fields/field_table.hpp): the figures of
// each replay (measured, replayed as measured, predicted), each declared once for text, JSON
// and CSV. Its predicted critical path is the report's table (report_fields::kCriticalShares).
#pragma once

#include <iterator>
#include <optional>

#include "src/fields/field_formats.hpp"
#include "workloads/prediction/ideal_replay.hpp"
#include "workloads/prediction/what_if.hpp"

namespace commprof {

/// One row of `whatif --ideal`'s step table: the mean over steps ("mean"), then each step.
struct IdealStepRow {
  std::string step;
  double measured_ns = 0;  ///< replayed with measured durations, no launch delay
  double ideal_ns = 0;     ///< replayed with every op at its ideal
  double slowdown = 1;     ///< measured / ideal
};

}  // namespace commprof

namespace commprof::whatif_fields {

using fields::Field;
using fields::field;
using U = ReportUnit;

inline constexpr double kNsPerUs = 1e3;

/// A step's figures; text shows times in us and the overlap in %.
inline constexpr Field<WhatIfFigures> kFigureFields[] = {
    field<&WhatIfFigures::step_ns>("step_time_ns", U::kNs, "step(us)",
                                   "The last op's end - the earliest rank's step start.")
        .shown_as("%.1f", 1, kNsPerUs),
    field<&WhatIfFigures::exposed_comm_ns>("exposed_comm_ns", U::kNs, "exposed comm(us)",
                                           "Communication no compute hid.")
        .shown_as("%.1f", 1, kNsPerUs),
    field<&WhatIfFigures::comm_ns>("comm_busy_ns", U::kNs, "COMM busy(us)",
                                   "Time with communication.")
        .shown_as("%.1f", 1, kNsPerUs),
    field<&WhatIfFigures::overlap>("overlap", U::kRatio, "overlap(%)", "|COMM ∩ COMP| / |COMM|.")
        .shown_as("%.1f", 100),
    field<&WhatIfFigures::path_ns>("critical_path_ns", U::kNs, "critical path(us)",
                                   "The step's critical path.")
        .shown_as("%.1f", 1, kNsPerUs),
    field<&WhatIfFigures::gap_ns>("critical_path_gap_ns", U::kNs, "of it host gaps(us)",
                                  "Of the critical path, host gaps.")
        .shown_as("%.1f", 1, kNsPerUs),
};
inline constexpr fields::Table<WhatIfFigures> kFigures{
    "whatif", "figures", {}, {}, {}, kFigureFields, std::size(kFigureFields)};

/// `whatif --ideal`: the straggler slowdown S by step (Lin et al., OSDI'25).
inline constexpr Field<IdealStepRow> kIdealStepFields[] = {
    field<&IdealStepRow::step>("step", U::kText, "step", "The step, or mean: over all steps.")
        .names_row("step"),
    field<&IdealStepRow::measured_ns>("measured_ns", U::kNs, "measured",
                                      "Replayed with measured durations, launch delays removed.")
        .shown_as("%.1f", 1, kNsPerUs),
    field<&IdealStepRow::ideal_ns>("ideal_ns", U::kNs, "ideal",
                                   "Replayed with every op at its ideal: the mean (compute) or "
                                   "median (communication) of the same op over ranks and steps.")
        .shown_as("%.1f", 1, kNsPerUs),
    field<&IdealStepRow::slowdown>("slowdown", U::kFactor, "S", "measured / ideal.")
        .shown_as("%.4f"),
};
inline constexpr fields::Table<IdealStepRow> kIdealSteps{
    "ideal_steps",    "Straggler slowdown by step", {}, {}, {},
    kIdealStepFields, std::size(kIdealStepFields)};

/// `whatif --ideal`: S attributed to one op kind, stage, rank: the ideal replay with only those
/// ops at their measured durations, over the ideal.
inline constexpr Field<IdealShare> kIdealShareFields[] = {
    field<&IdealShare::dimension>("dimension", U::kText, "by",
                                  "op_kind, stage (pipeline), dp_rank or rank.")
        .names_row("dimension"),
    field<&IdealShare::key>("key", U::kText, "which", "The op kind, stage or rank.")
        .names_row("key"),
    field<&IdealShare::slowdown>("slowdown", U::kFactor, "S",
                                 "Mean step with only these ops measured / mean ideal step.")
        .shown_as("%.4f"),
};
inline constexpr fields::Table<IdealShare> kIdealShares{
    "ideal_attribution",
    "Straggler slowdown attributed (largest first per dimension)",
    {},
    {},
    {},
    kIdealShareFields,
    std::size(kIdealShareFields)};

}  // namespace commprof::whatif_fields
