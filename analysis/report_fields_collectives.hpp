// SPDX-License-Identifier: MIT
// The collectives table: per collective, communicator kind and message size.
// (What a field holds and who walks the tables: report_fields.hpp.)
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>

#include "analysis/report_fields_base.hpp"

namespace commprof::report_fields {

/// How busbw was worked out (docs/analysis.md, "Bus bandwidth").
inline constexpr std::string_view kBusbwBasisHelp =
    "What busbw is of: the bus factor applied to bytes (2(n-1)/n, (n-1)/n, 1), or per-peer: an "
    "all-to-all(v)'s busiest rank's bytes to or from the other ranks (the files' bytes per peer) "
    "over time; mixed: instances of both.";

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
    field<&CollectiveRow::back_to_back_busbw_gbps>(
        "back_to_back_busbw_gbps", U::kGBps, "b2b busbw",
        "Bus bandwidth in GB/s (1e9 B/s) of these calls issued back to back, as nccl-tests times "
        "its loop (kernel, launch and the gap to the next call): over the mean start-to-start "
        "period of a plugin capture's timed calls with only like calls between them.")
        .na_if_negative()
        .prom("commprof_back_to_back_bus_bandwidth_gbs"),
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
    // Last: only NCCL's profiler plugin says it, and rows read as before up to here.
    field<&CollectiveRow::placement>(
        "placement", U::kText, "placement",
        "in place (one buffer, as NCCL and nccl-tests' in-place loop define it) or out of place, "
        "where the source says (NCCL's profiler plugin); n/a otherwise.")
        .na_if_empty()
        .names_row("placement"),
};
inline constexpr Table<CollectiveRow> kCollectives{
    "collectives",
    "Collectives by message size (time: shortest rank's duration per call)",
    "table-collectives",
    "commprof_collective_info",
    "NCCL's algorithm/protocol of the calls and what their busbw is of (value 1).",
    kCollectiveFields,
    std::size(kCollectiveFields)};

static_assert(well_formed(kCollectives));

}  // namespace commprof::report_fields
