// SPDX-License-Identifier: MIT
// The columns of `commprof bench`'s rows, each declared once (src/fields/field_table.hpp): its
// CSV column (the key), its text header (label and unit line, nccl-tests' fixed widths), its
// member of each result in bench.json, and its value, with how each format shows it. bench.csv
// walks every column but those marked in_json_only (lists, and details that depend on the run's
// options), the text table those with a width (factor and imbal for alltoallv only), and
// bench.json every column, section by section (JsonSection), where its run and row carry it.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "collectives/bench/bench.hpp"
#include "src/fields/field_formats.hpp"

namespace commprof::bench_fields {

using fields::Field;
using fields::field;
using U = ReportUnit;

/// Where a result of bench.json puts a column: its members come section by section (what was
/// called, its size, its times, what the run's options add, bandwidths and the verdict), each
/// section's in the table's order, as bench.json version 1 has always ordered them.
enum class JsonSection { kCall, kSize, kTime, kDetail, kResult };
inline constexpr JsonSection kJsonSections[] = {JsonSection::kCall, JsonSection::kSize,
                                                JsonSection::kTime, JsonSection::kDetail,
                                                JsonSection::kResult};

/// Whether a result of bench.json has a column's member: yes, no (the run's options or the
/// collective do not give it), or null (its object is null: single-call times without per-call
/// stamps).
enum class InJson { kYes, kNo, kNull };

/// One column of the bench rows.
struct Column {
  Field<BenchRow> field;          ///< key: CSV column; label: text header; text: text cell
  std::string_view csv_format{};  ///< a real's printf format in CSV
  std::string_view unit_line{};   ///< the text header's second line: "(us)"
  int width = 0;                  ///< text column width; 0: not in text
  bool routed_only = false;       ///< text shows it for alltoallv only
  JsonSection section = JsonSection::kCall;
  std::string_view json_key{};     ///< its member in bench.json where that is not the CSV key
  std::string_view json_object{};  ///< the object it is a member of ("time_us": {min, avg, max})
  InJson (*json_if)(const BenchConfig&, const BenchRow&) = nullptr;  ///< nullptr: always
  /// Its JSON value where the field's value cannot say it (a list); nullptr: the field's.
  nlohmann::ordered_json (*json)(const BenchRow&) = nullptr;

  /// In bench.json's `section`, as `key` of `object` where given.
  constexpr Column in_json(JsonSection s, std::string_view key = {},
                           std::string_view object = {}) const {
    Column c = *this;
    c.section = s;
    c.json_key = key;
    c.json_object = object;
    return c;
  }
  /// In bench.json only where `when` says so.
  constexpr Column json_when(InJson (*when)(const BenchConfig&, const BenchRow&)) const {
    Column c = *this;
    c.json_if = when;
    return c;
  }
  constexpr Column json_as(nlohmann::ordered_json (*value)(const BenchRow&)) const {
    Column c = *this;
    c.json = value;
    return c;
  }
};

inline bool routed(const BenchRow& row) { return row.op == CollectiveKind::kAllToAllV; }
inline bool not_routed(const BenchRow& row) { return !routed(row); }

inline std::string_view op_name(const BenchRow& r) { return collective_spec(r.op).name; }
inline std::string_view factor_formula(const BenchRow& r) {
  return collective_spec(r.op).factor_formula;
}
inline std::uint64_t size_bytes(const BenchRow& r) { return r.sizes.bytes; }
inline std::uint64_t count(const BenchRow& r) { return r.sizes.count; }
inline std::uint64_t send_count(const BenchRow& r) { return r.sizes.send_count; }
inline std::uint64_t recv_count(const BenchRow& r) { return r.sizes.recv_count; }
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
inline double instrumented_ratio(const BenchRow& r) {
  return r.plain_time_us > 0 ? r.instrumented_time_us / r.plain_time_us : 0.0;
}
/// Each rank's time: a list, which only bench.json shows (field value: none).
inline fields::Value no_scalar(const BenchRow&) { return {}; }
inline nlohmann::ordered_json rank_times(const BenchRow& r) { return r.rank_time_us; }
constexpr Field<BenchRow> list_field(std::string_view key, U unit, std::string_view label,
                                     std::string_view help) {
  Field<BenchRow> f;
  f.key = key;
  f.get = &no_scalar;
  f.unit = unit;
  f.label = label;
  f.help = help;
  return f;
}

// Which results carry a member, by the run's options (--instrument, --estimate) and the op.
inline InJson if_per_call(const BenchConfig& c, const BenchRow&) {
  const bool stamped = c.instrument == Instrument::kOn || c.instrument == Instrument::kActivity ||
                       c.instrument == Instrument::kActivityEvery;
  return stamped ? InJson::kYes : InJson::kNull;
}
inline InJson if_compared(const BenchConfig& c, const BenchRow&) {
  const bool compared = c.instrument == Instrument::kCompare ||
                        c.instrument == Instrument::kCompareActivity ||
                        c.instrument == Instrument::kActivity;
  return compared ? InJson::kYes : InJson::kNo;
}
inline InJson if_routed(const BenchConfig&, const BenchRow& r) {
  return routed(r) ? InJson::kYes : InJson::kNo;
}
inline InJson if_estimated(const BenchConfig& c, const BenchRow&) {
  return c.estimate ? InJson::kYes : InJson::kNo;
}

using S = JsonSection;
// The CSV's and the text's columns are in their order; those bench.json alone shows
// (in_json_only) sit next to their kin. bench.json orders its members by section.
inline constexpr Column kColumns[] = {
    Column{field<&op_name>("op", U::kText, "op", "The collective."), {}, {}, 0}.in_json(S::kCall),
    Column{field<&BenchRow::nranks>("nranks", U::kRanks, "nranks", "Ranks in the communicator."),
           {},
           {},
           0}
        .in_json(S::kCall),
    Column{
        field<&size_bytes>("size_bytes", U::kBytes, "size", "S, nccl-tests' size."), {}, "(B)", 12}
        .in_json(S::kSize),
    Column{field<&count>("count", U::kCount, "count", "The count argument."), {}, "(elements)", 13}
        .in_json(S::kSize),
    Column{field<&send_count>("send_count", U::kCount, "send count",
                              "Elements read from the send buffer.")
               .in_json_only()}
        .in_json(S::kSize),
    Column{field<&recv_count>("recv_count", U::kCount, "recv count",
                              "Elements written to the receive buffer.")
               .in_json_only()}
        .in_json(S::kSize),
    Column{field<&dtype>("dtype", U::kText, "type", "The element type."), {}, {}, 10}.in_json(
        S::kSize),
    Column{field<&redop>("redop", U::kText, "redop", "The reduction."), {}, {}, 7}.in_json(
        S::kSize),
    Column{field<&BenchRow::root>("root", U::kId, "root", "The root rank, -1 none.")
               .text_by(&root_text),
           {},
           {},
           6}
        .in_json(S::kSize),
    Column{field<&BenchRow::time_min_us>("time_min_us", U::kUs, "time min", "Min over ranks.")
               .text_by(&time_min_text),
           "%.3f", "(us)", 11}
        .in_json(S::kTime, "min", "time_us"),
    Column{field<&BenchRow::time_avg_us>("time_avg_us", U::kUs, "time avg", "Mean over ranks.")
               .text_by(&time_avg_text),
           "%.3f", "(us)", 11}
        .in_json(S::kTime, "avg", "time_us"),
    Column{field<&BenchRow::time_max_us>("time_max_us", U::kUs, "time max", "Max over ranks.")
               .text_by(&time_max_text),
           "%.3f", "(us)", 11}
        .in_json(S::kTime, "max", "time_us"),
    Column{list_field("rank_time_us", U::kUs, "rank times", "Each rank's per-call time.")
               .in_json_only()}
        .in_json(S::kTime)
        .json_as(&rank_times),
    Column{field<&BenchRow::host_time_avg_us>("host_clock_time_avg_us", U::kUs, "host time avg",
                                              "The loop on the host clock."),
           "%.3f",
           {},
           0}
        .in_json(S::kTime, "host_clock_time_us_avg"),
    Column{field<&BenchRow::iter_min_us>("single_call_min_us", U::kUs, "single call min",
                                         "The fastest call on any rank (per-call stamps).")
               .in_json_only()}
        .in_json(S::kTime, "min", "single_call_us")
        .json_when(&if_per_call),
    Column{field<&BenchRow::iter_max_us>("single_call_max_us", U::kUs, "single call max",
                                         "The slowest call on any rank (per-call stamps).")
               .in_json_only()}
        .in_json(S::kTime, "max", "single_call_us")
        .json_when(&if_per_call),
    Column{field<&BenchRow::algbw_gbps>("algbw_gbps", U::kGBps, "algbw", "size / avg time.")
               .shown_as("%.2f"),
           "%.4f", "(GB/s)", 9}
        .in_json(S::kResult),
    Column{field<&BenchRow::busbw_gbps>("busbw_gbps", U::kGBps, "busbw", "algbw x factor.")
               .shown_as("%.2f"),
           "%.4f", "(GB/s)", 9}
        .in_json(S::kResult),
    Column{field<&BenchRow::algbw_max_gbps>("algbw_gbps_from_max", U::kGBps, "algbw from max",
                                            "size / max time."),
           "%.4f",
           {},
           0}
        .in_json(S::kResult),
    Column{field<&BenchRow::busbw_max_gbps>("busbw_gbps_from_max", U::kGBps, "busbw from max",
                                            "algbw from max x factor."),
           "%.4f",
           {},
           0}
        .in_json(S::kResult),
    Column{field<&BenchRow::busbw_factor>("busbw_factor", U::kFactor, "factor", "The busbw factor.")
               .shown_as("%.4f"),
           "%.6f",
           {},
           8,
           true}
        .in_json(S::kCall),
    Column{field<&factor_formula>("busbw_factor_formula", U::kText, "factor formula",
                                  "The busbw factor's formula in n.")
               .in_json_only()}
        .in_json(S::kCall),
    Column{field<&BenchRow::plain_time_us>("plain_time_us", U::kUs, "plain",
                                           "Per-call time without per-call timing.")
               .in_json_only()}
        .in_json(S::kDetail, {}, "instrumentation")
        .json_when(&if_compared),
    Column{field<&BenchRow::instrumented_time_us>("instrumented_time_us", U::kUs, "instrumented",
                                                  "Per-call time with per-call timing.")
               .in_json_only()}
        .in_json(S::kDetail, {}, "instrumentation")
        .json_when(&if_compared),
    Column{field<&instrumented_ratio>("instrumented_ratio", U::kFactor, "ratio",
                                      "Instrumented over plain time.")
               .in_json_only()}
        .in_json(S::kDetail, "ratio", "instrumentation")
        .json_when(&if_compared),
    Column{field<&BenchRow::busiest_bytes>("busiest_offrank_bytes", U::kBytes, "busiest bytes",
                                           "The most bytes a rank sends to or receives from "
                                           "other ranks (alltoallv).")
               .in_json_only()}
        .in_json(S::kDetail)
        .json_when(&if_routed),
    Column{field<&BenchRow::imbalance>("imbalance", U::kFactor, "imbal",
                                       "Max / mean bytes a rank receives (alltoallv).")
               .shown_as("%.3f")
               .na_if(&not_routed),
           "%.6f",
           {},
           7,
           true}
        .in_json(S::kDetail, "imbalance_max_over_mean")
        .json_when(&if_routed),
    Column{field<&BenchRow::estimate_us>("estimate_us", U::kUs, "estimate",
                                         "The library's estimate of one call (--estimate).")
               .na_if_negative()
               .in_json_only()}
        .in_json(S::kDetail)
        .json_when(&if_estimated),
    Column{field<&BenchRow::wrong>("wrong", U::kCount, "#wrong", "Wrong elements over all ranks.")
               .text_by(&wrong_text)
               .na_if_negative(),
           {},
           {},
           8}
        .in_json(S::kResult),
};

/// Whether bench.csv shows column `c`.
inline bool in_csv(const Column& c) { return !c.field.json_only; }
/// Column `c`'s member in its object of bench.json.
inline std::string_view json_name(const Column& c) {
  return c.json_key.empty() ? c.field.key : c.json_key;
}
/// Whether `row`'s result in bench.json of a run of `config` has column `c`.
inline InJson in_json(const Column& c, const BenchConfig& config, const BenchRow& row) {
  return c.json_if == nullptr ? InJson::kYes : c.json_if(config, row);
}

/// Whether the text table of `row`'s op shows column `c`.
inline bool in_text(const Column& c, const BenchRow& row) {
  return c.width > 0 && (!c.routed_only || routed(row));
}

/// The CSV cell of column `c` in `row`: empty where not defined, a real through csv_format.
std::string csv_cell(const Column& c, const BenchRow& row);
/// `row`'s result in bench.json of a run of `config`: every column it has, section by section.
nlohmann::ordered_json json_result(const BenchConfig& config, const BenchRow& row);

}  // namespace commprof::bench_fields
