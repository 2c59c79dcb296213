// SPDX-License-Identifier: MIT
// What `commprof watch` writes at each refresh, as a field table (src/fields/field_table.hpp):
// one row per communicator, collective and size bucket of the window, declared once for text,
// JSON and Prometheus.
#pragma once

#include <iterator>

#include "analysis/watch_window.hpp"
#include "src/fields/field_formats.hpp"

namespace commprof::watch_fields {

using fields::Field;
using fields::field;
using U = ReportUnit;

inline constexpr double kNsPerUs = 1e3;

inline bool no_slowest(const WatchRow& r) { return r.slowest_rank < 0; }

inline constexpr Field<WatchRow> kRowFields[] = {
    field<&WatchRow::comm>("comm", U::kText, "comm", "The communicator.").names_row("comm_name"),
    field<&WatchRow::collective>("collective", U::kText, "collective",
                                 "The collective or transfer, as the source names it.")
        .names_row("collective"),
    field<&WatchRow::bucket_bytes>("size_bucket_bytes", U::kBytes, "size(B)",
                                   "The calls' S lies in [this, 2 x this).")
        .names_row("size_bucket_bytes"),
    field<&WatchRow::calls>("calls", U::kCount, "calls", "Calls completed in the window.")
        .prom("commprof_window_calls"),
    field<&WatchRow::bytes>("bytes", U::kBytes, "bytes(B)", "Their S summed.")
        .prom("commprof_window_bytes"),
    field<&WatchRow::p50_ns>("p50_ns", U::kNs, "p50(us)",
                             "Percentiles of the window's call durations (2%-wide bins).")
        .prom("commprof_window_time_seconds", "percentile", "50")
        .shown_as("%.1f", 1, kNsPerUs),
    field<&WatchRow::p95_ns>("p95_ns", U::kNs, "p95(us)",
                             "Percentiles of the window's call durations (2%-wide bins).")
        .prom("commprof_window_time_seconds", "percentile", "95")
        .shown_as("%.1f", 1, kNsPerUs),
    field<&WatchRow::p99_ns>("p99_ns", U::kNs, "p99(us)",
                             "Percentiles of the window's call durations (2%-wide bins).")
        .prom("commprof_window_time_seconds", "percentile", "99")
        .shown_as("%.1f", 1, kNsPerUs),
    field<&WatchRow::busbw_gbps>("busbw_p50_gbps", U::kGBps, "busbw p50(GB/s)",
                                 "The mean S moved in the median time, times the bus factor.")
        .na_if_negative()
        .prom("commprof_window_bus_bandwidth_gbs")
        .shown_as("%.2f"),
    field<&WatchRow::slowest_rank>("slowest_rank", U::kId, "slowest rank",
                                   "The rank most often last to start an instance seen on 2+ "
                                   "ranks.")
        .na_if(no_slowest)
        .prom("commprof_window_slowest_rank"),
    field<&WatchRow::times_last>("times_last", U::kCount, "last(#)",
                                 "Instances the slowest rank started last.")
        .prom("commprof_window_slowest_rank_last"),
};
inline constexpr fields::Table<WatchRow> kRows{
    "collectives", "window", {}, {}, {}, kRowFields, std::size(kRowFields)};
static_assert(fields::well_formed(kRows));

}  // namespace commprof::watch_fields
