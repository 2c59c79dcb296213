// SPDX-License-Identifier: MIT
// The communicator groups' tables: their collectives (groups) and their time (group_times).
// (What a field holds and who walks the tables: report_fields.hpp.)
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>

#include "analysis/report_fields_base.hpp"

namespace commprof::report_fields {

inline constexpr std::string_view kGroupSizeHelp =
    "Ranks per communicator of the group: the smallest and the largest.";

inline constexpr std::string_view kGroupBusbwBasisHelp =
    "What busbw is of for the group's all-to-all(v)s: per-peer (the busiest rank's bytes to or "
    "from the other ranks, from the files' bytes per peer), (n-1)/n of bytes (files without "
    "them), or mixed.";
// Exposed time where a rank's source records no compute: unknown, not all of COMM.
inline bool exposed_unknown(const GroupTimeRow& r) { return r.exposed_unknown; }
inline bool exposed_unknown_or_none(const GroupTimeRow& r) {
  return r.exposed_unknown || r.exposed_worst_rank < 0;
}

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

static_assert(well_formed(kGroups) && well_formed(kGroupTimes));

}  // namespace commprof::report_fields
