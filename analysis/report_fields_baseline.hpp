// SPDX-License-Identifier: MIT
// The tables against the serialized baseline (run --no-overlap): the comparison and the
// interference of overlapped ops.
// (What a field holds and who walks the tables: report_fields.hpp.)
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>
#include <vector>

#include "analysis/report_fields_base.hpp"

namespace commprof::report_fields {

inline constexpr Field<BaselineComparison> kBaselineFields[] = {
    field<&BaselineComparison::source>("source", U::kText, "source",
                                       "The baseline: a run with every category serialized."),
    field<&BaselineComparison::run_step_ns>(
        "run_step_time_ns", U::kNs, "step",
        "Mean over ranks of the rank's mean step time in this run.")
        .prom("commprof_baseline_run_step_time_seconds"),
    field<&BaselineComparison::baseline_step_ns>("baseline_step_time_ns", U::kNs, "baseline step",
                                                 "The same in the baseline.")
        .prom("commprof_baseline_step_time_seconds"),
    field<&BaselineComparison::speedup>("speedup", U::kFactor, "speed-up",
                                        "The baseline's step time / this run's.")
        .prom("commprof_baseline_speedup_ratio"),
    field<&BaselineComparison::comm_hidden_ns>("comm_hidden_ns", U::kNs, "COMM hidden",
                                               "Mean |COMM and COMP| per step in this run.")
        .prom("commprof_baseline_comm_hidden_seconds"),
    field<&BaselineComparison::run_comm_ns>("run_comm_busy_ns", U::kNs, "COMM",
                                            "Mean COMM busy time per step in this run.")
        .prom("commprof_baseline_run_comm_busy_seconds"),
    field<&BaselineComparison::baseline_comm_ns>("baseline_comm_busy_ns", U::kNs, "baseline COMM",
                                                 "The same in the baseline.")
        .prom("commprof_baseline_comm_busy_seconds"),
};
inline constexpr Table<BaselineComparison> kBaseline{"baseline",
                                                     "Against the serialized baseline",
                                                     "table-baseline",
                                                     "commprof_baseline_info",
                                                     "The baseline's source (value 1).",
                                                     kBaselineFields,
                                                     std::size(kBaselineFields)};

inline constexpr Field<Interference> kInterferenceFields[] = {
    field<&Interference::category>("category", U::kText, "category",
                                   "The category of the overlapped ops.")
        .names_row("category"),
    field<&Interference::names>("names", U::kCount, "names", "Op names found in both runs.")
        .prom("commprof_interference_op_names"),
    field<&Interference::ops>("ops", U::kCount, "ops", "Overlapped ops of those names in this run.")
        .prom("commprof_interference_ops"),
    field<&Interference::run_mean_ns>("run_mean_ns", U::kNs, "overlapped",
                                      "Mean duration of those ops, overlapped.")
        .prom("commprof_interference_overlapped_seconds"),
    field<&Interference::baseline_mean_ns>(
        "baseline_mean_ns", U::kNs, "alone",
        "Mean duration of the same names in the baseline, weighted alike.")
        .prom("commprof_interference_alone_seconds"),
    field<&Interference::slowdown>("slowdown", U::kRatio, "slowdown", "Overlapped / alone − 1.")
        .prom("commprof_interference_slowdown_ratio"),
};
inline constexpr Table<Interference> kInterference{
    "interference",
    "Interference (ops that overlapped the other category against their names alone)",
    "table-interference",
    "",
    "",
    kInterferenceFields,
    std::size(kInterferenceFields)};

/// The baseline comparison as rows: one, or none without --baseline.
std::vector<const BaselineComparison*> baseline_rows(const Report& r);
std::vector<const Interference*> interference_rows(const Report& r);

static_assert(well_formed(kBaseline) && well_formed(kInterference));

}  // namespace commprof::report_fields
