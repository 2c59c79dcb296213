// SPDX-License-Identifier: MIT
// The report's fields, one table per row type, each field named once: its key (the JSON member
// and the CSV column), its value (a member or a small accessor), its unit, when it is not
// defined (n/a), and what the formats need to present it: the text and HTML header, the
// Prometheus metric or label (field_table.hpp says how each format shows a field). Every writer
// (text, JSON, CSV, the HTML tables and data block, Prometheus), the across-ranks summary and
// `commprof compare`'s reader walk these tables, and a test checks that every field reaches
// every format: a new field is one line here. (The report's envelope, i.e. schema, inputs,
// problems and warnings, is structure: the writers name it.)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

#include "analysis/report.hpp"
#include "src/fields/field_table.hpp"

namespace commprof::report_fields {

// The generic table (Field, Table, field<>, the readers), as report_fields:: names it.
using namespace fields;

// ------------------------------------------------------------------ accessors the tables use
inline double across_min(const AcrossRanks& a) { return a.stat.min; }
inline double across_mean(const AcrossRanks& a) { return a.stat.mean; }
inline double across_max(const AcrossRanks& a) { return a.stat.max; }
inline std::optional<double> across_stddev(const AcrossRanks& a) { return a.stat.stddev(); }
inline std::int64_t across_count(const AcrossRanks& a) { return a.stat.count; }
inline bool no_rank_has_it(const AcrossRanks& a) { return a.stat.count == 0; }
/// The share of its collectives at which the rank arrived last.
inline double arrived_last_fraction(const RankWait& w) {
  return w.collectives > 0 ? static_cast<double>(w.times_last) / static_cast<double>(w.collectives)
                           : 0.0;
}

/// A rank's figures as HTA computes them (analysis/hta_scope.hpp).
inline std::int64_t hta_steps(const RankSummary& r) { return r.hta.steps; }
inline std::int64_t hta_span(const RankSummary& r) { return r.hta.span_ns; }
// Exposed time where a rank's source records no compute: unknown, not all of COMM.
inline bool exposed_unknown(const GroupTimeRow& r) { return r.exposed_unknown; }
inline bool exposed_unknown_or_none(const GroupTimeRow& r) {
  return r.exposed_unknown || r.exposed_worst_rank < 0;
}
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

using U = ReportUnit;  // short, for the tables below

// ------------------------------------------------------------------ findings
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

// ------------------------------------------------------------------ per rank
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

// ------------------------------------------------------------------ across ranks
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

// ------------------------------------------------------------------ communicator groups
inline constexpr std::string_view kGroupSizeHelp =
    "Ranks per communicator of the group: the smallest and the largest.";

/// How busbw was worked out (docs/analysis.md, "Bus bandwidth").
inline constexpr std::string_view kBusbwBasisHelp =
    "What busbw is of: the bus factor applied to bytes (2(n-1)/n, (n-1)/n, 1), or per-peer: an "
    "all-to-all(v)'s busiest rank's bytes to or from the other ranks (the files' bytes per peer) "
    "over time; mixed: instances of both.";
inline constexpr std::string_view kGroupBusbwBasisHelp =
    "What busbw is of for the group's all-to-all(v)s: per-peer (the busiest rank's bytes to or "
    "from the other ranks, from the files' bytes per peer), (n-1)/n of bytes (files without "
    "them), or mixed.";
inline constexpr Field<GroupRow> kGroupFields[] = {
    field<&GroupRow::group>("group", U::kText, "group",
                            "The communicators' kind: the name without trailing digits.")
        .names_row("comm_name"),
    field<&GroupRow::communicators>("communicators", U::kCount, "comms",
                                    "Communicators of the group.")
        .prom("commprof_group_communicators"),
    field<&GroupRow::min_size>("min_size", U::kRanks, "size", kGroupSizeHelp)
        .prom("commprof_group_size_ranks", "bound", "min"),
    field<&GroupRow::max_size>("max_size", U::kRanks, "size", kGroupSizeHelp)
        .prom("commprof_group_size_ranks", "bound", "max")
        .range_end(),
    field<&GroupRow::instances>("collectives", U::kCount, "collectives",
                                "Collectives matched on the group's communicators.")
        .prom("commprof_group_collectives"),
    field<&GroupRow::bytes>("bytes", U::kBytes, "bytes",
                            "Bytes of the group's collectives, summed.")
        .prom("commprof_group_bytes"),
    field<&GroupRow::time_ns>(
        "time_ns", U::kNs, "time",
        "Time of the group's collectives, each the shortest rank's duration, summed.")
        .prom("commprof_group_collective_time_seconds"),
    field<&GroupRow::busbw_gbps>("busbw_gbps", U::kGBps, "busbw",
                                 "Bus bandwidth of every collective of the communicator group, "
                                 "GB/s.")
        .na_if_negative()
        .prom("commprof_group_bus_bandwidth_gbs"),
    field<&GroupRow::mean_skew_ns>("mean_start_skew_ns", U::kNs, "skew",
                                   "Mean over the group's collectives of last start minus first "
                                   "start.")
        .prom("commprof_group_start_skew_seconds"),
    field<&GroupRow::wait_ns>("wait_ns", U::kNs, "wait",
                              "Waiting at the group's collectives, summed over ranks and the run.")
        .prom("commprof_group_wait_caused_seconds"),
    field<&GroupRow::incomplete>(
        "incomplete", U::kCount, "incomplete",
        "Instances fewer ranks recorded than the communicator has (a hang or a lost rank).")
        .prom("commprof_group_incomplete_collectives"),
    field<&GroupRow::busbw_basis>("busbw_basis", U::kText, "a2a busbw of", kGroupBusbwBasisHelp)
        .na_if_empty(),
};
inline constexpr Table<GroupRow> kGroups{"groups",
                                         "Communicator groups",
                                         "table-groups",
                                         "commprof_group_info",
                                         "What the group's all-to-all(v) busbw is of (value 1).",
                                         kGroupFields,
                                         std::size(kGroupFields)};

// ------------------------------------------------------------------ time per group
inline constexpr std::string_view kGroupRecvHelp =
    "Bytes a rank received per step in the group's all-to-all(v)s, itself included (an MoE "
    "dispatch: its experts' load).";
inline constexpr Field<GroupTimeRow> kGroupTimeFields[] = {
    field<&GroupTimeRow::group>("group", U::kText, "group",
                                "The kind of communicator: its name without trailing digits.")
        .names_row("group"),
    field<&GroupTimeRow::ranks>("ranks", U::kCount, "ranks",
                                "Ranks with ops on the group's communicators.")
        .prom("commprof_group_time_ranks"),
    field<&GroupTimeRow::comm_ns>("comm_busy_ns", U::kNs, "COMM",
                                  "Mean time per step the group's ops (collectives and "
                                  "point-to-point) ran: the union of their spans.")
        .prom("commprof_group_comm_busy_seconds"),
    field<&GroupTimeRow::exposed_ns>("exposed_comm_ns", U::kNs, "exposed",
                                     "Mean time per step of the group's ops that no compute hid.")
        .na_if(&exposed_unknown)
        .prom("commprof_group_exposed_comm_seconds"),
    field<&GroupTimeRow::exposed_max_ns>("exposed_comm_max_ns", U::kNs, "max exposed",
                                         "The worst rank's exposed time per step.")
        .na_if(&exposed_unknown)
        .prom("commprof_group_exposed_comm_max_seconds"),
    field<&GroupTimeRow::exposed_worst_rank>("exposed_worst_rank", U::kId, "worst rank",
                                             "The rank with the most exposed time of the group.")
        .na_if(&exposed_unknown_or_none)
        .prom("commprof_group_exposed_comm_worst_rank"),
    field<&GroupTimeRow::alltoalls>("alltoalls", U::kCount, "a2a",
                                    "All-to-all(v) calls per step and rank.")
        .prom("commprof_group_alltoalls"),
    field<&GroupTimeRow::recv_mean_bytes>("recv_mean_bytes", U::kBytes, "recv mean", kGroupRecvHelp)
        .na_if_negative()
        .prom("commprof_group_alltoall_recv_bytes", "stat", "mean"),
    field<&GroupTimeRow::recv_max_bytes>("recv_max_bytes", U::kBytes, "recv max", kGroupRecvHelp)
        .na_if_negative()
        .prom("commprof_group_alltoall_recv_bytes", "stat", "max"),
    field<&GroupTimeRow::recv_imbalance>("recv_imbalance", U::kFactor, "max/mean",
                                         "The busiest rank's received bytes over the mean: 1 is "
                                         "an even all-to-all.")
        .na_if_negative()
        .prom("commprof_group_alltoall_imbalance"),
    field<&GroupTimeRow::recv_busiest_rank>("recv_busiest_rank", U::kId, "busiest",
                                            "The rank that received the most.")
        .na_if_negative()
        .prom("commprof_group_alltoall_busiest_rank"),
    field<&GroupTimeRow::alltoall_wait_ns>(
        "alltoall_wait_ns", U::kNs, "a2a wait",
        "Mean time per step and rank spent waiting at the group's all-to-all(v)s for the last "
        "rank to arrive.")
        .na_if_negative()
        .prom("commprof_group_alltoall_wait_seconds"),
};
inline constexpr Table<GroupTimeRow> kGroupTimes{"group_times",
                                                 "Time per communicator group (mean of its "
                                                 "ranks per step)",
                                                 "table-group-times",
                                                 "",
                                                 "",
                                                 kGroupTimeFields,
                                                 std::size(kGroupTimeFields)};

// ------------------------------------------------------------------ collectives by size
inline constexpr std::string_view kCollectiveTimeHelp =
    "Instance time (the shortest rank's duration), 50th and 95th percentile.";
inline constexpr std::string_view kNcclAlgoHelp =
    "NCCL's algorithm/protocol, as its profiler plugin recorded them.";

inline constexpr Field<CollectiveRow> kCollectiveFields[] = {
    field<&CollectiveRow::collective>("collective", U::kText, "collective", "The collective.")
        .names_row("collective"),
    field<&CollectiveRow::comm_size>("comm_size", U::kRanks, "n", "Ranks of the communicator.")
        .names_row("nranks"),
    field<&CollectiveRow::bytes>("bytes", U::kBytes, "bytes", "Message size.")
        .names_row("message_bytes"),
    field<&CollectiveRow::count>("count", U::kCount, "count", "Instances matched across ranks.")
        .prom("commprof_collective_instances"),
    field<&CollectiveRow::p50_ns>("p50_time_ns", U::kNs, "p50", kCollectiveTimeHelp)
        .prom("commprof_collective_time_seconds", "stat", "p50"),
    field<&CollectiveRow::p95_ns>("p95_time_ns", U::kNs, "p95", kCollectiveTimeHelp)
        .prom("commprof_collective_time_seconds", "stat", "p95"),
    field<&CollectiveRow::algbw_gbps>("algbw_gbps", U::kGBps, "algbw",
                                      "Bytes / p50 instance time, GB/s (1e9 B/s).")
        .prom("commprof_alg_bandwidth_gbs"),
    field<&CollectiveRow::busbw_gbps>(
        "busbw_gbps", U::kGBps, "busbw",
        "Bus bandwidth in GB/s (1e9 B/s) of the p50 instance time, as nccl-tests.")
        .na_if_negative()
        .prom("commprof_bus_bandwidth_gbs"),
    field<&CollectiveRow::peak_fraction>("peak_busbw_fraction", U::kRatio, "peak",
                                         "busbw / --peak-busbw.")
        .na_if_negative()
        .prom("commprof_peak_busbw_ratio"),
    field<&CollectiveRow::mean_skew_ns>("mean_start_skew_ns", U::kNs, "skew",
                                        "Mean over instances of last start minus first start.")
        .prom("commprof_collective_start_skew_seconds"),
    field<&CollectiveRow::wait_ns>("wait_ns", U::kNs, "wait",
                                   "Waiting at these collectives, summed over ranks and the run.")
        .prom("commprof_collective_wait_caused_seconds"),
    field<&CollectiveRow::algo>("nccl_algo", U::kText, "nccl algo/proto", kNcclAlgoHelp)
        .na_if_empty(),
    field<&CollectiveRow::busbw_basis>("busbw_basis", U::kText, "busbw of", kBusbwBasisHelp)
        .na_if_empty(),
};
inline constexpr Table<CollectiveRow> kCollectives{
    "collectives",
    "Collectives by message size (time: shortest rank's duration per call)",
    "table-collectives",
    "commprof_collective_info",
    "NCCL's algorithm/protocol of the calls and what their busbw is of (value 1).",
    kCollectiveFields,
    std::size(kCollectiveFields)};

// ------------------------------------------------------------------ stragglers
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

// ------------------------------------------------------------------ pipeline stages
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

// ------------------------------------------------------------------ worst instances
inline constexpr Field<CollectiveInstance> kInstanceFields[] = {
    field<&CollectiveInstance::comm>("comm", U::kText, "comm", "The communicator.")
        .names_row("comm_name"),
    field<&CollectiveInstance::seq>("seq", U::kId, "seq",
                                    "The instance's sequence number on its communicator.")
        .names_row("seq"),
    field<&CollectiveInstance::collective>("collective", U::kText, "collective", "The collective."),
    field<&CollectiveInstance::comm_size>("comm_size", U::kRanks, "n", "Ranks of the communicator.")
        .prom("commprof_instance_comm_size_ranks"),
    field<&CollectiveInstance::bytes>("bytes", U::kBytes, "bytes", "Message size.")
        .prom("commprof_instance_bytes"),
    field<&CollectiveInstance::ranks_seen>("ranks_seen", U::kRanks, "seen",
                                           "Ranks that recorded it (fewer than n: incomplete).")
        .prom("commprof_instance_ranks_seen"),
    field<&CollectiveInstance::consistent>(
        "consistent", U::kFlag, "consistent",
        "1 when its ranks agreed on the collective, the bytes and the communicator size.")
        .prom("commprof_instance_consistent"),
    field<&CollectiveInstance::time_ns>("time_ns", U::kNs, "time",
                                        "The instance's time: the shortest rank's duration.")
        .prom("commprof_instance_time_seconds"),
    field<&CollectiveInstance::max_duration_ns>("max_duration_ns", U::kNs, "max duration",
                                                "The longest rank's duration.")
        .prom("commprof_instance_max_duration_seconds")
        .in_part(1),
    field<&CollectiveInstance::mean_duration_ns>("mean_duration_ns", U::kNs, "mean duration",
                                                 "The ranks' mean duration.")
        .prom("commprof_instance_mean_duration_seconds")
        .in_part(1),
    field<&CollectiveInstance::start_skew_ns>("start_skew_ns", U::kNs, "start skew",
                                              "Last start minus first start.")
        .prom("commprof_instance_start_skew_seconds")
        .in_part(1),
    field<&CollectiveInstance::end_skew_ns>("end_skew_ns", U::kNs, "end skew",
                                            "Last end minus first end.")
        .prom("commprof_instance_end_skew_seconds")
        .in_part(1),
    field<&CollectiveInstance::first_rank>("first_rank", U::kId, "first rank",
                                           "The earliest arrival.")
        .prom("commprof_instance_first_rank"),
    field<&CollectiveInstance::last_rank>("last_rank", U::kId, "last rank",
                                          "The latest arrival, whom the others waited for.")
        .prom("commprof_instance_last_rank"),
    field<&CollectiveInstance::wait_caused_ns>(
        "wait_ns", U::kNs, "wait",
        "Waiting at the instance, summed over its ranks: what its last rank caused.")
        .prom("commprof_instance_wait_caused_seconds"),
    field<&CollectiveInstance::algbw_gbps>("algbw_gbps", U::kGBps, "algbw",
                                           "Bytes / the instance's time, GB/s (1e9 B/s).")
        .prom("commprof_instance_alg_bandwidth_gbs")
        .in_part(1),
    field<&CollectiveInstance::busbw_gbps>(
        "busbw_gbps", U::kGBps, "busbw",
        "algbw × the collective's bus factor (an all-to-all(v) with bytes per peer: the busiest "
        "rank's off-rank bytes / the instance's time).")
        .na_if_negative()
        .prom("commprof_instance_bus_bandwidth_gbs")
        .in_part(1),
    field<&CollectiveInstance::busbw_basis>("busbw_basis", U::kText, "busbw of", kBusbwBasisHelp)
        .na_if_empty()
        .in_part(1),
    field<&CollectiveInstance::algo>("nccl_algo", U::kText, "nccl algo/proto", kNcclAlgoHelp)
        .na_if_empty()
        .in_part(1),
};
inline constexpr Table<CollectiveInstance> kInstances{
    "worst_instances",
    "Collective instances that made ranks wait longest",
    "table-instances",
    "commprof_instance_info",
    "The instance's collective, NCCL's algorithm/protocol and what its busbw is of (value 1).",
    kInstanceFields,
    std::size(kInstanceFields)};

// ------------------------------------------------------------------ the serialized baseline
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

// ------------------------------------------------------------------ critical path
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

static_assert(well_formed(kFindings) && well_formed(kRanks) && well_formed(kAcross) &&
              well_formed(kGroups) && well_formed(kGroupTimes) && well_formed(kCollectives) &&
              well_formed(kStragglers) && well_formed(kInstances) && well_formed(kBaseline) &&
              well_formed(kInterference) && well_formed(kCriticalSteps) &&
              well_formed(kCriticalShares));

/// Calls f(table) for every table.
template <class F>
void for_each_table(F&& f) {
  f(kFindings);
  f(kRanks);
  f(kAcross);
  f(kStages);
  f(kGroups);
  f(kGroupTimes);
  f(kCollectives);
  f(kStragglers);
  f(kInstances);
  f(kBaseline);
  f(kInterference);
  f(kCriticalSteps);
  f(kCriticalShares);
}

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

/// Whether `a` made ranks wait longer than `b` (a total order: equal waits by communicator, then
/// sequence number).
bool waited_longer(const CollectiveInstance& a, const CollectiveInstance& b);
/// The `n` collective instances that made ranks wait longest, most first (then by communicator
/// and sequence number).
std::vector<const CollectiveInstance*> worst_instances(const Report& r, std::size_t n);
/// The baseline comparison as rows: one, or none without --baseline.
std::vector<const BaselineComparison*> baseline_rows(const Report& r);
std::vector<const Interference*> interference_rows(const Report& r);
/// The first `n` critical-path shares (they are kept most first).
std::vector<const CriticalShareRow*> critical_shares(const Report& r, std::size_t n);

/// Calls f(table, rows) for every table with the report's rows of it, in the report's order
/// (findings first): rows is a container of rows or of pointers to them, empty where the report
/// has none (the writers choose whether to show an empty table). Of the worst instances and the
/// critical-path shares, the first `top` (kReportWorstInstances, kReportCriticalShares).
template <class F>
void for_each_table(const Report& r, F&& f, std::size_t top = kReportWorstInstances) {
  f(kFindings, r.findings);
  f(kRanks, r.ranks);
  f(kAcross, r.across);
  f(kStages, r.stages);
  f(kGroups, r.groups);
  f(kGroupTimes, r.group_times);
  f(kCollectives, r.collectives);
  f(kStragglers, r.waits);
  f(kInstances, worst_instances(r, top));
  f(kBaseline, baseline_rows(r));
  f(kInterference, interference_rows(r));
  f(kCriticalSteps, r.critical_steps);
  f(kCriticalShares, critical_shares(r, top));
}
static_assert(kReportWorstInstances == kReportCriticalShares,
              "for_each_table takes as many of each");

}  // namespace commprof::report_fields
