// SPDX-License-Identifier: MIT
#include "analysis/report/report_html_tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <ostream>
#include <type_traits>

#include "analysis/report/field_json.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/report_fields.hpp"
#include "src/core/units.hpp"

namespace commprof {
namespace {

using nlohmann::json;
using report_fields::Column;
using report_fields::Field;
using report_fields::Table;
using report_fields::Value;

std::string printed(const char* format, double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string shown(const Value& v, ReportUnit unit) {
  if (const auto* t = std::get_if<std::string_view>(&v)) return std::string(*t);
  if (const auto* u = std::get_if<ReportUnit>(&v)) return report_fields::unit_name(*u);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "yes" : "no";
  return html_number(report_fields::as_number(v), unit);
}

template <class Row>
std::string cell_text(const Field<Row>& f, const Row& row) {
  const auto v = report_fields::defined_value(f, row);
  return v ? shown(*v, report_fields::unit_of(f, row)) : "n/a";
}

// The text, and the number to sort by (of a range: its end).
template <class Row>
void write_cell(std::ostream& os, const Column<Row>& c, const Row& row) {
  const Field<Row>& sort_by = c.range_end != nullptr ? *c.range_end : *c.field;
  const auto v = report_fields::defined_value(sort_by, row);
  os << "<td";
  if (v && report_fields::is_number(*v)) {
    os << " data-v='" << printed("%.17g", report_fields::as_number(*v)) << "'";
  }
  os << '>' << html_escape(report_fields::column_text(c, row, cell_text<Row>)) << "</td>";
}

// The text report's header, less the unit where the cells name one that fits them (a time, a
// byte size).
template <class Row>
std::string header(const Field<Row>& f) {
  const bool own_unit = f.unit == ReportUnit::kNs || f.unit == ReportUnit::kBytes;
  return own_unit ? std::string(f.label) : report_fields::text_header(f);
}

struct Section {
  std::string heading;
  const char* hint = nullptr;
};

template <class Row, class Rows>
void write_html_table(std::ostream& os, const Section& s, const Table<Row>& table,
                      const Rows& rows) {
  os << "<h3>" << html_escape(s.heading) << "</h3>\n";
  if (s.hint != nullptr) os << "<p class='hint'>" << s.hint << "</p>\n";
  const std::vector<Column<Row>> columns = report_fields::columns(table, -1);
  // A long table's first page is written here, the rest drawn by the page's script from the
  // data block page by page: 16,384 ranks' rows as HTML would be most of the page's bytes, and
  // laying them all out most of its drawing time.
  const std::size_t n = std::size(rows);
  const bool paged = n > kHtmlPageRows;
  os << "<div class='scroll'><table class='sortable' id='" << table.html_id << "'";
  if (paged) os << " data-table='" << table.name << "' data-rows='" << n << "'";
  os << "><thead><tr>";
  for (const Column<Row>& c : columns) {
    os << "<th title='" << html_escape(std::string(c.field->help)) << "'>"
       << html_escape(header(*c.field)) << "</th>";
  }
  os << "</tr></thead><tbody>\n";
  std::size_t written = 0;
  for (const auto& r : rows) {
    if (written++ == kHtmlPageRows) break;
    os << "<tr>";
    for (const Column<Row>& c : columns) write_cell(os, c, report_fields::deref(r));
    os << "</tr>\n";
  }
  os << "</tbody></table></div>\n";
}

// Each table's heading and hint, its rows as the page shows them, and whether it is shown.
template <class Row>
Section section_of(const Report&, const Table<Row>& table) {
  return {std::string(table.title)};
}
Section section_of(const Report& r, const Table<RankSummary>& table) {
  return {std::string(table.title),
          r.ranks.size() > kHtmlPageRows ? "slowest ranks (mean step) first." : nullptr};
}
Section section_of(const Report&, const Table<GroupTimeRow>& table) {
  return {std::string(table.title),
          "exposed: the group's communication no compute hid (a context-parallel ring's "
          "exposed time); recv: what each rank received in all-to-all(v)s (an expert-parallel "
          "dispatch's load); a2a wait: time at them waiting for the last rank."};
}
Section section_of(const Report&, const Table<CollectiveRow>&) {
  return {"Collectives by message size",
          "time: the shortest rank's duration per call (the transfer without waiting); busbw "
          "= bytes / p50 × the collective's bus factor, or, for an all-to-all(v) whose files "
          "give bytes per peer, the busiest rank's bytes to or from the others / p50 (busbw "
          "of: per-peer)."};
}
Section section_of(const Report&, const Table<RankWait>&) {
  return {"Stragglers (ranks the others waited for most first)"};
}
Section section_of(const Report&, const Table<StageRow>& table) {
  return {std::string(table.title),
          "bubble: the part of a step without compute, 1 − COMP / step; the pipeline's fill "
          "and drain, and the waits for the neighbouring stages."};
}
Section section_of(const Report& r, const Table<BaselineComparison>& table) {
  return {std::string(table.title) + " (" + r.baseline->source + ")"};
}
Section section_of(const Report&, const Table<CriticalStepRow>& table) {
  return {std::string(table.title),
          "path: the chain of ops and host gaps each step's end waited for (marked on the "
          "timeline); exposed: communication no compute hides, on the path or not."};
}

// Paged, the ranks' table opens on the slowest ranks (by mean step), not on ranks 0 to 99;
// the stragglers' on those that caused most waiting.
template <class Rows>
const Rows& shown_rows(const Rows& rows) {
  return rows;
}
std::vector<const RankSummary*> shown_rows(const std::vector<RankSummary>& rows) {
  std::vector<const RankSummary*> ranks;
  for (const RankSummary& s : rows) ranks.push_back(&s);
  if (ranks.size() > kHtmlPageRows) {
    std::stable_sort(ranks.begin(), ranks.end(), [](const RankSummary* a, const RankSummary* b) {
      return a->wall_ns.mean > b->wall_ns.mean;
    });
  }
  return ranks;
}
std::vector<const RankWait*> shown_rows(const std::vector<RankWait>& rows) {
  std::vector<const RankWait*> waits;
  for (const RankWait& w : rows) waits.push_back(&w);
  std::stable_sort(waits.begin(), waits.end(), [](const RankWait* a, const RankWait* b) {
    return a->wait_caused_ns > b->wait_caused_ns;
  });
  return waits;
}

// The tables every report has, and the others where it has rows: findings, stages, the
// baseline's and the critical path's.
template <class Row>
bool shown(const Report& r, const Table<Row>& table) {
  if constexpr (std::is_same_v<Row, Finding>) return !r.findings.empty();
  if constexpr (std::is_same_v<Row, StageRow>) return !r.stages.empty();
  if constexpr (std::is_same_v<Row, BaselineComparison> || std::is_same_v<Row, Interference>)
    return r.baseline.has_value();
  if constexpr (std::is_same_v<Row, CriticalStepRow> || std::is_same_v<Row, CriticalShareRow>)
    return !r.critical_steps.empty();
  (void)table;
  return true;
}

// Every table's section and rows, for the tables and the data block alike.
template <class F>
void for_each_shown_table(const Report& r, F&& f) {
  report_fields::for_each_table(r, [&](const auto& table, const auto& rows) {
    if (shown(r, table)) f(section_of(r, table), table, shown_rows(rows));
  });
}

// How the script shows each HTML column: [field index, index of the range's end field or -1,
// unit name ("unit": the row's own, of its "unit" field)], as write_cell does.
template <class Row>
json column_formats(const Table<Row>& table) {
  json out = json::array();
  for (const Column<Row>& c : report_fields::columns(table, -1)) {
    const auto index = [&](const Field<Row>* f) { return f == nullptr ? -1 : f - table.begin(); };
    out.push_back({index(c.field), index(c.range_end), report_fields::unit_name(c.field->unit)});
  }
  return out;
}

template <class Row, class Rows>
json table_data(const Table<Row>& table, const Rows& rows) {
  json keys = json::array();
  for (const Field<Row>& f : table) keys.push_back(std::string(f.key));
  json out = json::array();
  for (const auto& r : rows) {
    const Row& row = report_fields::deref(r);
    json values = json::array();
    for (const Field<Row>& f : table) {
      const auto v = report_fields::defined_value(f, row);
      values.push_back(v ? compact_number(flat_json<json>(*v)) : json(nullptr));
    }
    out.push_back(std::move(values));
  }
  return {{"id", table.html_id},
          {"keys", std::move(keys)},
          {"cols", column_formats(table)},
          {"rows", std::move(out)}};
}

}  // namespace

json compact_number(json v) {
  // 2^53: every integer up to it is exact as a double, and as the script's numbers.
  constexpr double kExact = 9007199254740992.0;
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) <= kExact)
      return static_cast<std::int64_t>(d);
  }
  return v;
}

std::string html_number(double v, ReportUnit unit) {
  switch (unit) {
    case ReportUnit::kNs:
      return format_duration(v);
    case ReportUnit::kRatio:
      return printed("%.1f %%", 100.0 * v);
    case ReportUnit::kGBps:
      return printed("%.2f GB/s", v);
    case ReportUnit::kBytes:
      return format_bytes(static_cast<std::uint64_t>(v));
    case ReportUnit::kFactor:
      return printed("%.3fx", v);
    default:
      return printed("%.0f", v);
  }
}

void write_html_tables(std::ostream& os, const Report& r) {
  os << "<section id='tables'><h2>Tables</h2><p class='hint'>Click a column header to sort. "
        "Per-rank values are means per measured step.</p>\n";
  for_each_shown_table(r, [&](const Section& s, const auto& table, const auto& rows) {
    write_html_table(os, s, table, rows);
  });
  os << "</section>\n";
}

json html_tables_data(const Report& r) {
  json data = json::object();
  for_each_shown_table(r, [&](const Section&, const auto& table, const auto& rows) {
    data[std::string(table.name)] = table_data(table, rows);
  });
  return data;
}

}  // namespace commprof
