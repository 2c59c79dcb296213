// SPDX-License-Identifier: MIT
// The per-rank table: each rank's mean step, its HTA figures, and the fields `compare` and
// the across-ranks summary take from it.
// (What a field holds and who walks the tables: report_fields.hpp.)
#pragma once

#include <array>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string_view>

#include "analysis/report_fields_base.hpp"

namespace commprof::report_fields {

/// A rank's figures as HTA computes them (analysis/hta_scope.hpp).
inline std::int64_t hta_steps(const RankSummary& r) { return r.hta.steps; }
inline std::int64_t hta_span(const RankSummary& r) { return r.hta.span_ns; }
// A capture of communication alone (NCCL's plugin) knows no compute: unknown, not zero.
inline std::optional<double> hta_overlap(const RankSummary& r) {
  return compute_known(r.backend) ? r.hta.overlap() : std::nullopt;
}
inline std::optional<double> hta_idle(const RankSummary& r) {
  return compute_known(r.backend) ? r.hta.idle() : std::nullopt;
}
inline std::optional<double> hta_compute(const RankSummary& r) {
  return compute_known(r.backend) ? r.hta.compute() : std::nullopt;
}
inline std::optional<double> hta_non_compute(const RankSummary& r) {
  return compute_known(r.backend) ? r.hta.non_compute() : std::nullopt;
}

inline constexpr std::string_view kBusyHelp =
    "Mean busy time per step: the union of the category's ops (all: of every op).";

/// The first twelve are the text report's first table, in its order; the others follow.
inline constexpr Field<RankSummary> kRankFields[] = {
    field<&RankSummary::rank>("rank", U::kId, "rank", "The rank in the job.").names_row("rank"),
    field<&RankSummary::host>("host", U::kText, "host", "The host the rank ran on.")
        .names_row("node"),
    field<&RankSummary::device>("device", U::kText, "device", "The rank's device."),
    field<&RankSummary::steps>("steps", U::kCount, "steps",
                               "Measured (non-warm-up) steps of the rank.")
        .prom("commprof_measured_steps"),
    field<&RankSummary::wall_ns>(
        "step_time_ns", U::kNs, "step",
        "Mean step time of the rank over its measured steps (plain steps when sampled).")
        .prom("commprof_step_time_seconds")
        .with_min_max()
        .compared_as("step"),
    field<&RankSummary::comp_ns>("comp_busy_ns", U::kNs, "COMP", kBusyHelp)
        .prom("commprof_busy_seconds", "category", "COMP")
        .compared_as("comp"),
    field<&RankSummary::comm_ns>("comm_busy_ns", U::kNs, "COMM", kBusyHelp)
        .prom("commprof_busy_seconds", "category", "COMM")
        .compared_as("comm"),
    field<&RankSummary::mem_ns>("mem_busy_ns", U::kNs, "MEM", kBusyHelp)
        .prom("commprof_busy_seconds", "category", "MEM")
        .compared_as("mem"),
    field<&RankSummary::overlap>("overlap", U::kRatio, "overlap",
                                 "Mean |COMM and COMP| / |COMM| per step (HTA's overlap).")
        .prom("commprof_overlap_ratio")
        .compared_as("overlap", true),
    field<&RankSummary::hidden_fraction>("hidden_fraction", U::kRatio, "hidden",
                                         "Mean |COMM and COMP| / min(|COMM|, |COMP|) per step.")
        .prom("commprof_hidden_ratio")
        .compared_as("hidden", true),
    field<&RankSummary::exposed_comm_ns>("exposed_comm_ns", U::kNs, "exposed",
                                         "Mean communication per step that no compute hides.")
        .prom("commprof_exposed_comm_seconds")
        .compared_as("exposed"),
    field<&RankSummary::idle_ns>("idle_ns", U::kNs, "idle",
                                 "Mean time per step with no op running.")
        .prom("commprof_idle_seconds")
        .compared_as("idle"),
    field<&RankSummary::busy_ns>("busy_ns", U::kNs, "busy", kBusyHelp)
        .prom("commprof_busy_seconds", "category", "all")
        .compared_as("busy")
        .in_part(1),
    field<&RankSummary::comm_comp_ns>("comm_comp_overlap_ns", U::kNs, "COMM∩COMP",
                                      "Mean communication per step that compute hides.")
        .prom("commprof_hidden_comm_seconds")
        .in_part(1),
    field<&RankSummary::timed_wall_ns>("timed_step_time_ns", U::kNs, "timed step",
                                       "Mean step time of the steps that carried per-op timing.")
        .prom("commprof_timed_step_time_seconds")
        .in_part(1),
    field<&RankSummary::plain_wall_ns>(
        "plain_step_time_ns", U::kNs, "plain step",
        "Mean step time of the steps without per-op timing (sampled op timing).")
        .prom("commprof_plain_step_time_seconds")
        .in_part(1),
    field<&RankSummary::timed_steps>("timed_steps", U::kCount, "timed steps",
                                     "Measured steps that carried per-op timing.")
        .prom("commprof_timed_steps")
        .in_part(1),
    field<&RankSummary::warmup_steps>("warmup_steps", U::kCount, "warm-up",
                                      "Warm-up steps, left out of every figure.")
        .prom("commprof_warmup_steps")
        .in_part(1),
    field<&RankSummary::ops>("ops", U::kCount, "ops", "Ops in the measured steps.")
        .prom("commprof_measured_ops")
        .in_part(1),
    field<&RankSummary::clock_offset_ns>("clock_offset_ns", U::kNs, "clock offset",
                                         "What puts the rank's clock on rank 0's.")
        .prom("commprof_clock_offset_seconds")
        .in_part(2),
    field<&RankSummary::backend>("backend", U::kText, "backend", "The backend the rank ran on.")
        .in_part(2),
    field<&RankSummary::steps_from>("steps_from", U::kText, "steps from",
                                    "How a capture without steps (NCCL's profiler plugin) was "
                                    "cut into steps: a marker call, a detected period of a "
                                    "communicator's calls with its confidence, or the whole "
                                    "capture as one step.")
        .na_if_empty()
        .in_part(2),
    field<&RankSummary::plugin_calls>("plugin_calls", U::kCount, "calls",
                                      "NCCL profiler plugin: every collective and transfer NCCL "
                                      "reported to it, timed or not.")
        .na_if_negative()
        .prom("commprof_plugin_calls")
        .in_part(2),
    field<&RankSummary::plugin_timed>("plugin_timed", U::kCount, "timed calls",
                                      "NCCL profiler plugin: the calls whose kernels were timed "
                                      "(one in COMMPROF_PLUGIN_SAMPLE, the same on every rank).")
        .na_if_negative()
        .prom("commprof_plugin_timed_calls")
        .in_part(2),
    field<&RankSummary::plugin_dropped>("plugin_dropped", U::kCount, "dropped",
                                        "NCCL profiler plugin: timed calls whose records went "
                                        "beyond its memory budget (COMMPROF_PLUGIN_MEMORY_MIB), "
                                        "counted, not kept.")
        .na_if_negative()
        .prom("commprof_plugin_dropped_calls")
        .in_part(2),
    field<&RankSummary::source>("file", U::kText, "file", "The rank file it was read from.")
        .in_part(2),
    // As HTA computes them, to check against HolisticTraceAnalysis on the same trace.
    field<&hta_steps>("hta_steps", U::kCount, "HTA steps",
                      "As HTA computes it: the measured steps pooled, all but the last (all "
                      "where there is one).")
        .prom("commprof_hta_pooled_steps")
        .in_part(3),
    field<&hta_overlap>("hta_overlap", U::kRatio, "HTA overlap",
                        "As HTA computes it (get_comm_comp_overlap): |COMM and COMP| / |COMM| "
                        "of the pooled steps' ops, each rounded inward to whole us, as one "
                        "ratio.")
        .prom("commprof_hta_overlap_ratio")
        .in_part(3),
    field<&hta_idle>("hta_idle", U::kRatio, "HTA idle",
                     "As HTA computes it (get_temporal_breakdown): the part of the pooled "
                     "span (first op's start to last op's end) with no op running.")
        .prom("commprof_hta_idle_ratio")
        .in_part(3),
    field<&hta_compute>("hta_compute", U::kRatio, "HTA compute",
                        "As HTA computes it (get_temporal_breakdown): |COMP| over the pooled "
                        "span.")
        .prom("commprof_hta_compute_ratio")
        .in_part(3),
    field<&hta_non_compute>("hta_non_compute", U::kRatio, "HTA non-compute",
                            "As HTA computes it (get_temporal_breakdown): time with ops but "
                            "no COMP (communication, copies) over the pooled span.")
        .prom("commprof_hta_non_compute_ratio")
        .in_part(3),
    field<&hta_span>("hta_span_ns", U::kNs, "HTA span",
                     "As HTA computes it (its kernel time): the first pooled op's start to the "
                     "last one's end.")
        .prom("commprof_hta_span_seconds")
        .in_part(3),
    field<&RankSummary::hta_differs>("hta_differs", U::kText, "overlap vs HTA",
                                     "Why the per-step overlap and HTA's differ, where they do "
                                     "by 0.01 percentage points or more.")
        .na_if_empty()
        .in_part(3),
};
inline constexpr Table<RankSummary> kRanks{"ranks",
                                           "Per rank",
                                           "table-ranks",
                                           "commprof_rank_info",
                                           "The rank's device, backend and file (value 1).",
                                           kRankFields,
                                           std::size(kRankFields)};

/// The per-rank fields `commprof compare` sets side by side, which the reducer also summarises
/// across ranks: those compared_as a family.
inline constexpr std::size_t kComparedRankFields = [] {
  std::size_t n = 0;
  for (const Field<RankSummary>& f : kRankFields) n += f.family.empty() ? 0 : 1;
  return n;
}();

/// Those fields, in table order.
inline constexpr auto kComparedFields = [] {
  std::array<const Field<RankSummary>*, kComparedRankFields> out{};
  std::size_t k = 0;
  for (const Field<RankSummary>& f : kRankFields) {
    if (!f.family.empty()) out[k++] = &f;
  }
  return out;
}();

static_assert(well_formed(kRanks));

}  // namespace commprof::report_fields
