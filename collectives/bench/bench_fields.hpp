// SPDX-License-Identifier: MIT
// The columns of `commprof bench`'s rows, each declared once (src/fields/field_table.hpp): its
// CSV column (the key), its text header (label and unit line, nccl-tests' fixed widths) and its
// value, with how each format shows it. bench.csv walks every column, the text table those with a
// width (factor and imbal for alltoallv only). (bench.json keeps its own nesting: time_us
// {min, avg, max}, and members that depend on the run's options.)
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "collectives/bench/bench.hpp"
#include "src/fields/field_formats.hpp"

namespace commprof::bench_fields {

using fields::Field;
using fields::field;
using U = ReportUnit;

/// One column of the bench rows.
struct Column {
  Field<BenchRow> field;        ///< key: CSV column; label: text header; text: text cell
  std::string_view csv_format;  ///< a real's printf format in CSV
  std::string_view unit_line;   ///< the text header's second line: "(us)"
  int width = 0;                ///< text column width; 0: CSV only
  bool routed_only = false;     ///< text shows it for alltoallv only
};

inline bool routed(const BenchRow& row) { return row.op == CollectiveKind::kAllToAllV; }
inline bool not_routed(const BenchRow& row) { return !routed(row); }

inline std::string_view op_name(const BenchRow& r) { return collective_spec(r.op).name; }
inline std::uint64_t size_bytes(const BenchRow& r) { return r.sizes.bytes; }
inline std::uint64_t count(const BenchRow& r) { return r.sizes.count; }
inline std::string_view dtype(const BenchRow& r) { return dtype_name(r.dtype); }
inline std::string_view redop(const BenchRow& r) {
  return collective_spec(r.op).reduces ? "sum" : "none";
}
/// Like nccl-tests: a time with fewer decimals as it grows, so columns keep their width.
std::string adaptive_time(double us);
inline std::string root_text(const BenchRow& r) {
  return r.root < 0 ? "-" : std::to_string(r.root);
}
inline std::string time_min_text(const BenchRow& r) { return adaptive_time(r.time_min_us); }
inline std::string time_avg_text(const BenchRow& r) { return adaptive_time(r.time_avg_us); }
inline std::string time_max_text(const BenchRow& r) { return adaptive_time(r.time_max_us); }
inline std::string wrong_text(const BenchRow& r) {
  return r.wrong < 0 ? "N/A" : std::to_string(r.wrong);
}

inline constexpr Column kColumns[] = {
    {field<&op_name>("op", U::kText, "op", "The collective."), {}, {}, 0},
    {field<&BenchRow::nranks>("nranks", U::kRanks, "nranks", "Ranks in the communicator."),
     {},
     {},
     0},
    {field<&size_bytes>("size_bytes", U::kBytes, "size", "S, nccl-tests' size."), {}, "(B)", 12},
    {field<&count>("count", U::kCount, "count", "The count argument."), {}, "(elements)", 13},
    {field<&dtype>("dtype", U::kText, "type", "The element type."), {}, {}, 10},
    {field<&redop>("redop", U::kText, "redop", "The reduction."), {}, {}, 7},
    {field<&BenchRow::root>("root", U::kId, "root", "The root rank, -1 none.").text_by(&root_text),
     {},
     {},
     6},
    {field<&BenchRow::time_min_us>("time_min_us", U::kUs, "time min", "Min over ranks.")
         .text_by(&time_min_text),
     "%.3f", "(us)", 11},
    {field<&BenchRow::time_avg_us>("time_avg_us", U::kUs, "time avg", "Mean over ranks.")
         .text_by(&time_avg_text),
     "%.3f", "(us)", 11},
    {field<&BenchRow::time_max_us>("time_max_us", U::kUs, "time max", "Max over ranks.")
         .text_by(&time_max_text),
     "%.3f", "(us)", 11},
    {field<&BenchRow::host_time_avg_us>("host_clock_time_avg_us", U::kUs, "host time avg",
                                        "The loop on the host clock."),
     "%.3f",
     {},
     0},
    {field<&BenchRow::algbw_gbps>("algbw_gbps", U::kGBps, "algbw", "size / avg time.")
         .shown_as("%.2f"),
     "%.4f", "(GB/s)", 9},
    {field<&BenchRow::busbw_gbps>("busbw_gbps", U::kGBps, "busbw", "algbw x factor.")
         .shown_as("%.2f"),
     "%.4f", "(GB/s)", 9},
    {field<&BenchRow::algbw_max_gbps>("algbw_gbps_from_max", U::kGBps, "algbw from max",
                                      "size / max time."),
     "%.4f",
     {},
     0},
    {field<&BenchRow::busbw_max_gbps>("busbw_gbps_from_max", U::kGBps, "busbw from max",
                                      "algbw from max x factor."),
     "%.4f",
     {},
     0},
    {field<&BenchRow::busbw_factor>("busbw_factor", U::kFactor, "factor", "The busbw factor.")
         .shown_as("%.4f"),
     "%.6f",
     {},
     8,
     true},
    {field<&BenchRow::imbalance>("imbalance", U::kFactor, "imbal",
                                 "Max / mean bytes a rank receives (alltoallv).")
         .shown_as("%.3f")
         .na_if(&not_routed),
     "%.6f",
     {},
     7,
     true},
    {field<&BenchRow::wrong>("wrong", U::kCount, "#wrong", "Wrong elements over all ranks.")
         .text_by(&wrong_text)
         .na_if_negative(),
     {},
     {},
     8},
};

/// Whether the text table of `row`'s op shows column `c`.
inline bool in_text(const Column& c, const BenchRow& row) {
  return c.width > 0 && (!c.routed_only || routed(row));
}

/// The CSV cell of column `c` in `row`: empty where not defined, a real through csv_format.
std::string csv_cell(const Column& c, const BenchRow& row);

}  // namespace commprof::bench_fields
