// SPDX-License-Identifier: MIT
// The JSON report, schema "commprof.report" v1. Units are in field names (_ns, _gbps, _bytes);
// ratios are fractions in [0, 1]; a value that is not defined is null, never NaN. The rows'
// fields come from analysis/report_fields.hpp.
#include <nlohmann/json.hpp>
#include <ostream>

#include "analysis/report/field_json.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/report_fields.hpp"

namespace commprof {
namespace {

using nlohmann::ordered_json;
using report_fields::Field;
using report_fields::Table;
using report_fields::Value;

ordered_json stat_json(const Stat& s) {
  if (s.count == 0) {
    return {
        {"min", nullptr}, {"mean", nullptr}, {"max", nullptr}, {"stddev", nullptr}, {"count", 0}};
  }
  const std::optional<double> sd = s.stddev();
  return {{"min", s.min},
          {"mean", s.mean},
          {"max", s.max},
          {"stddev", sd ? ordered_json(*sd) : ordered_json(nullptr)},
          {"count", s.count}};
}

// A Stat keeps its object even when it has no samples: its count says so.
ordered_json value_json(const Value& v) {
  if (const auto* s = std::get_if<const Stat*>(&v)) return stat_json(**s);
  return flat_json<ordered_json>(v);
}

template <class Row>
ordered_json row_json(const Table<Row>& table, const Row& row) {
  ordered_json out = ordered_json::object();
  for (const Field<Row>& f : table) {
    const Value v = f.get(row);
    const bool stat = std::holds_alternative<const Stat*>(v);
    out[std::string(f.key)] =
        !stat && report_fields::is_absent(f, row, v) ? ordered_json(nullptr) : value_json(v);
  }
  return out;
}

template <class Row, class Rows>
ordered_json rows_json(const Table<Row>& table, const Rows& rows) {
  ordered_json out = ordered_json::array();
  for (const auto& row : rows) out.push_back(row_json(table, report_fields::deref(row)));
  return out;
}

// Across ranks: an object whose members are the metrics.
ordered_json across_json(const Report& r) {
  ordered_json across = ordered_json::object();
  for (const AcrossRanks& a : r.across) across[a.metric] = row_json(report_fields::kAcross, a);
  return across;
}

ordered_json baseline_json(const Report& r) {
  if (!r.baseline) return nullptr;
  ordered_json b = row_json(report_fields::kBaseline, *r.baseline);
  b["interference"] = rows_json(report_fields::kInterference, r.baseline->interference);
  return b;
}

// A table's rows under its name; across ranks and the baseline (with its interference rows
// inside it) as objects.
template <class Row, class Rows>
void put_table(ordered_json& j, const Report&, const Table<Row>& table, const Rows& rows) {
  j[std::string(table.name)] = rows_json(table, rows);
}
template <class Rows>
void put_table(ordered_json& j, const Report& r, const Table<AcrossRanks>& table, const Rows&) {
  j[std::string(table.name)] = across_json(r);
}
template <class Rows>
void put_table(ordered_json& j, const Report& r, const Table<BaselineComparison>& table,
               const Rows&) {
  j[std::string(table.name)] = baseline_json(r);
}
template <class Rows>
void put_table(ordered_json&, const Report&, const Table<Interference>&, const Rows&) {}

}  // namespace

void write_report_json(std::ostream& os, const Report& r) {
  ordered_json j;
  j["schema"] = kReportSchema;
  j["version"] = kReportSchemaVersion;
  j["units"] = {{"time", "ns"},
                {"bandwidth", "GB/s (1e9 B/s)"},
                {"bytes", "B"},
                {"ratio", "fraction in [0, 1]"},
                {"per_rank", "min/mean/max/stddev over measured (non-warm-up) steps"}};
  j["inputs"] = r.inputs;
  j["world_size"] = r.world_size;
  j["ranks_read"] = r.ranks.size();
  ordered_json problems = ordered_json::array();
  for (const FileProblem& p : r.problems)
    problems.push_back({{"file", p.file}, {"message", p.message}});
  j["problems"] = problems;
  j["missing_ranks"] = r.missing_ranks;
  j["warnings"] = r.warnings;

  j["peak_busbw_gbps"] = r.peak_busbw_gbps > 0 ? ordered_json(r.peak_busbw_gbps) : nullptr;
  j["instances_total"] = r.instances_total;
  j["critical_path_note"] = r.critical_note;
  // Of the instances, only those that cost the most waiting: a run of thousands of ranks has
  // hundreds of thousands, which would swamp the report.
  report_fields::for_each_table(
      r, [&](const auto& table, const auto& rows) { put_table(j, r, table, rows); });
  os << j.dump(1) << '\n';
}

}  // namespace commprof
