// SPDX-License-Identifier: MIT
// The findings table: the rules' verdicts, the report's first table.
// (What a field holds and who walks the tables: report_fields.hpp.)
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>

#include "analysis/report_fields_base.hpp"

namespace commprof::report_fields {

/// The rules' verdicts (analysis/findings.hpp), the report's first table.
inline constexpr Field<Finding> kFindingFields[] = {
    field<&Finding::rule>("rule", U::kText, "rule", "The rule (docs/analysis.md, Findings).")
        .names_row("rule"),
    field<&Finding::status>("status", U::kText, "status",
                            "fired, or not evaluated and what the rule needs."),
    field<&Finding::cost_ns>("cost_ns", U::kNs, "cost",
                             "What it costs per step (n/a: a hang, or not evaluated).")
        .prom("commprof_finding_cost_seconds")
        .na_if_negative(),
    field<&Finding::cost_fraction>("cost_fraction", U::kRatio, "cost", "That cost of the step.")
        .prom("commprof_finding_cost_ratio")
        .na_if_negative(),
    field<&Finding::ranks>("ranks", U::kText, "ranks", "The ranks it names.").na_if_empty(),
    field<&Finding::comm>("comm", U::kText, "comm", "The communicators or groups it names.")
        .na_if_empty(),
    field<&Finding::ops>("ops", U::kText, "ops", "The ops or collectives it names.")
        .na_if_empty()
        .in_part(1),
    field<&Finding::bytes>("bytes", U::kBytes, "bytes", "A message size it names.")
        .prom("commprof_finding_bytes")
        .na_if_negative(),
    field<&Finding::evidence>("evidence", U::kText, "evidence",
                              "The figures behind it, with their units.")
        .na_if_empty()
        .in_part(2),
    field<&Finding::action>("action", U::kText, "action", "One change to make.")
        .na_if_empty()
        .in_part(3),
    field<&Finding::shown_in>("shown_in", U::kText, "shown in",
                              "The HTML report's table or chart that shows it.")
        .na_if_empty(),
};
inline constexpr Table<Finding> kFindings{"findings",
                                          "Findings (ranked by what they cost per step)",
                                          "table-findings",
                                          "commprof_finding_info",
                                          "A finding's status, evidence and action (value 1).",
                                          kFindingFields,
                                          std::size(kFindingFields)};

static_assert(well_formed(kFindings));

}  // namespace commprof::report_fields
