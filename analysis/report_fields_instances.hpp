// SPDX-License-Identifier: MIT
// The worst instances table: the collective instances that made ranks wait longest.
// (What a field holds and who walks the tables: report_fields.hpp.)
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>
#include <vector>

#include "analysis/report_fields_base.hpp"
#include "analysis/report_fields_collectives.hpp"

namespace commprof::report_fields {

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

/// Whether `a` made ranks wait longer than `b` (a total order: equal waits by communicator, then
/// sequence number).
bool waited_longer(const CollectiveInstance& a, const CollectiveInstance& b);
/// The `n` collective instances that made ranks wait longest, most first (then by communicator
/// and sequence number).
std::vector<const CollectiveInstance*> worst_instances(const Report& r, std::size_t n);

static_assert(well_formed(kInstances));

}  // namespace commprof::report_fields
