// SPDX-License-Identifier: MIT
// What `commprof whatif` writes, as field tables (src/fields/field_table.hpp): the figures of
// each replay (measured, replayed as measured, predicted), each declared once for text, JSON
// and CSV. Its predicted critical path is the report's table (report_fields::kCriticalShares).
#pragma once

#include <iterator>
#include <optional>

#include "analysis/graph/what_if.hpp"
#include "src/fields/field_formats.hpp"

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

}  // namespace commprof::whatif_fields
