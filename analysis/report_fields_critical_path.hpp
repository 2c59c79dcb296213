// SPDX-License-Identifier: MIT
// The critical path's tables: per step (critical_path_steps) and its shares by rank,
// category, op and communicator (critical_path).
// (What a field holds and who walks the tables: report_fields.hpp.)
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>
#include <vector>

#include "analysis/report_fields_base.hpp"

namespace commprof::report_fields {

inline constexpr std::string_view kPathHelp =
    "Time on the step's critical path (the chain of ops and host gaps its end waited for): all "
    "of it, or in COMP, COMM (a collective from its last member's arrival) or MEM ops, or in "
    "host gaps (an op ready, what it waited for ended, but not yet running).";

inline constexpr Field<CriticalStepRow> kCriticalStepFields[] = {
    field<&CriticalStepRow::step>("step", U::kId, "step", "The measured step.").names_row("step"),
    field<&CriticalStepRow::step_ns>(
        "step_time_ns", U::kNs, "step",
        "The step across ranks: the last op's end minus the earliest rank's step start.")
        .prom("commprof_critical_step_time_seconds"),
    field<&CriticalStepRow::path_ns>("path_ns", U::kNs, "path", kPathHelp)
        .prom("commprof_critical_path_seconds", "category", "all"),
    field<&CriticalStepRow::exposed_comm_ns>(
        "exposed_comm_ns", U::kNs, "exposed",
        "Mean over ranks of the step's communication no compute hides (not the path's COMM).")
        .prom("commprof_critical_step_exposed_comm_seconds"),
    field<&CriticalStepRow::comp_ns>("comp_ns", U::kNs, "COMP", kPathHelp)
        .prom("commprof_critical_path_seconds", "category", "COMP"),
    field<&CriticalStepRow::comm_ns>("comm_ns", U::kNs, "COMM", kPathHelp)
        .prom("commprof_critical_path_seconds", "category", "COMM"),
    field<&CriticalStepRow::mem_ns>("mem_ns", U::kNs, "MEM", kPathHelp)
        .prom("commprof_critical_path_seconds", "category", "MEM"),
    field<&CriticalStepRow::gap_ns>("gap_ns", U::kNs, "gap", kPathHelp)
        .prom("commprof_critical_path_seconds", "category", "gap"),
    field<&CriticalStepRow::ops>("ops", U::kCount, "ops", "Ops on the path.")
        .prom("commprof_critical_path_ops")
        .in_part(1),
    field<&CriticalStepRow::ranks>("ranks", U::kCount, "ranks", "Ranks the path runs through.")
        .prom("commprof_critical_path_ranks")
        .in_part(1),
    field<&CriticalStepRow::straggler_rank>(
        "straggler_rank", U::kId, "straggler",
        "The rank that arrived last at the path's collective or transfer that waited longest "
        "for it.")
        .na_if_negative()
        .prom("commprof_critical_straggler_rank")
        .in_part(1),
    field<&CriticalStepRow::straggler_at>(
        "straggler_at", U::kText, "at",
        "That collective (name, communicator and sequence) or transfer (op, rank and peers).")
        .na_if_empty()
        .in_part(1),
    field<&CriticalStepRow::straggler_late_ns>(
        "straggler_late_ns", U::kNs, "late",
        "How long after the collective's or transfer's other members the straggler arrived.")
        .na_if_negative()
        .prom("commprof_critical_straggler_late_seconds")
        .in_part(1),
    field<&CriticalStepRow::straggler_cause>(
        "straggler_cause", U::kText, "cause",
        "The straggler's op (or host gap) on the path before it that ran longest beyond the same "
        "op's mean on the other ranks.")
        .na_if_empty()
        .in_part(1),
    field<&CriticalStepRow::straggler_excess_ns>(
        "straggler_excess_ns", U::kNs, "beyond others",
        "The cause's time beyond the same op's mean on the other ranks.")
        .na_if_negative()
        .prom("commprof_critical_straggler_excess_seconds")
        .in_part(1),
};
inline constexpr Table<CriticalStepRow> kCriticalSteps{
    "critical_path_steps",
    "Critical path per measured step (beside exposed communication: a different number)",
    "table-critical-steps",
    "commprof_critical_step_info",
    "The straggler's collective and the op that made it late (value 1).",
    kCriticalStepFields,
    std::size(kCriticalStepFields)};

inline constexpr Field<CriticalShareRow> kCriticalShareFields[] = {
    field<&CriticalShareRow::rank>("rank", U::kId, "rank", "The rank whose time it is.")
        .names_row("rank"),
    field<&CriticalShareRow::category>("category", U::kText, "category",
                                       "COMP, COMM, MEM, or gap: the host gap before the op.")
        .names_row("category"),
    field<&CriticalShareRow::op>("op", U::kText, "op", "The op.").names_row("op"),
    field<&CriticalShareRow::comm>("comm", U::kText, "comm", "Its communicator (COMM ops).")
        .names_row("comm_name"),
    field<&CriticalShareRow::mean_ns>("mean_ns", U::kNs, "on path",
                                      "Its time on the critical path per measured step.")
        .prom("commprof_critical_share_seconds"),
    field<&CriticalShareRow::share>("share", U::kRatio, "share",
                                    "Of the critical paths' total length.")
        .prom("commprof_critical_share_ratio"),
    field<&CriticalShareRow::steps>("steps", U::kCount, "steps",
                                    "Measured steps whose critical path ran through it.")
        .prom("commprof_critical_share_steps"),
};
inline constexpr Table<CriticalShareRow> kCriticalShares{
    "critical_path",
    "Critical path by rank, category, op and communicator (most first)",
    "table-critical-path",
    "",
    "",
    kCriticalShareFields,
    std::size(kCriticalShareFields)};

/// The first `n` critical-path shares (they are kept most first).
std::vector<const CriticalShareRow*> critical_shares(const Report& r, std::size_t n);

static_assert(well_formed(kCriticalSteps) && well_formed(kCriticalShares));

}  // namespace commprof::report_fields
