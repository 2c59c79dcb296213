// SPDX-License-Identifier: MIT
// The formats of an output that writes its own text (project, whatif, bench, the links file):
// each walks the output's field tables, so a field declared once reaches every format.
//   text  a table: the header row is the fields' labels (which name their units: "step(ms)"),
//         a cell the field's text function, else "n/a" where not defined, else the value
//         (x text_times / text_per through text_format for a number)
//   JSON  an object per row: key: value, n/a as null
//   CSV   a column per key: n/a empty, a real as %.17g, text quoted where it must be
// A field marked in_text_only (a row's ordinal) or in_json_only (a detail the text leaves out)
// stays out of the other format.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/fields/field_table.hpp"

namespace commprof::fields {

template <class Row>
bool in_text(const Field<Row>& f) {
  return !f.json_only;
}
template <class Row>
bool in_json(const Field<Row>& f) {
  return !f.text_only;
}

/// One number through a printf format ("%.3f").
std::string printf_number(std::string_view format, double v);

/// The text cell of `f` in `row`.
template <class Row>
std::string text_cell(const Field<Row>& f, const Row& row) {
  if (f.text != nullptr) return f.text(row);
  const std::optional<Value> v = defined_value(f, row);
  if (!v) return "n/a";
  if (const auto* s = std::get_if<std::string_view>(&*v)) return std::string(*s);
  if (const auto* u = std::get_if<ReportUnit>(&*v)) return unit_name(*u);
  if (f.text_format.empty()) {
    if (const auto* i = std::get_if<std::int64_t>(&*v)) return std::to_string(*i);
    if (const auto* b = std::get_if<bool>(&*v)) return *b ? "yes" : "no";
  }
  return printf_number(f.text_format.empty() ? "%g" : f.text_format,
                       f.text_times * as_number(*v) / f.text_per);
}

/// The header row of `table`'s text: the labels of the fields text shows.
template <class Row>
std::vector<std::string> text_labels(const Table<Row>& table) {
  std::vector<std::string> out;
  for (const Field<Row>& f : table) {
    if (in_text(f)) out.emplace_back(f.label);
  }
  return out;
}

/// One row of `table`'s text.
template <class Row>
std::vector<std::string> text_cells(const Table<Row>& table, const Row& row) {
  std::vector<std::string> out;
  for (const Field<Row>& f : table) {
    if (in_text(f)) out.push_back(text_cell(f, row));
  }
  return out;
}

/// The header row, then a row per element of `rows`.
template <class Row, class Rows>
std::vector<std::vector<std::string>> text_rows(const Table<Row>& table, const Rows& rows) {
  std::vector<std::vector<std::string>> out = {text_labels(table)};
  for (const auto& row : rows) out.push_back(text_cells(table, deref(row)));
  return out;
}

/// A table of one row's figures: `header`, then a (label, cell) row per field text shows.
template <class Row>
std::vector<std::vector<std::string>> text_column(const Table<Row>& table, const Row& row,
                                                  std::vector<std::string> header) {
  std::vector<std::vector<std::string>> out = {std::move(header)};
  for (const Field<Row>& f : table) {
    if (in_text(f)) out.push_back({std::string(f.label), text_cell(f, row)});
  }
  return out;
}

/// The JSON value of `f` in `row`: null where not defined.
template <class Row>
nlohmann::ordered_json json_value(const Field<Row>& f, const Row& row) {
  const std::optional<Value> v = defined_value(f, row);
  if (!v) return nullptr;
  if (const auto* i = std::get_if<std::int64_t>(&*v)) return *i;
  if (const auto* d = std::get_if<double>(&*v)) return *d;
  if (const auto* s = std::get_if<std::string_view>(&*v)) return std::string(*s);
  if (const auto* b = std::get_if<bool>(&*v)) return *b;
  if (const auto* u = std::get_if<ReportUnit>(&*v)) return unit_name(*u);
  if (const auto* st = std::get_if<const Stat*>(&*v)) {
    return {
        {"min", (*st)->min}, {"mean", (*st)->mean}, {"max", (*st)->max}, {"count", (*st)->count}};
  }
  return nullptr;
}

/// `row` as a JSON object: every field JSON shows, in the table's order.
template <class Row>
nlohmann::ordered_json json_object(const Table<Row>& table, const Row& row) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const Field<Row>& f : table) {
    if (in_json(f)) j[std::string(f.key)] = json_value(f, row);
  }
  return j;
}

/// Text as a CSV cell: quoted where it holds a comma, a quote or a line break.
std::string csv_quoted(std::string_view text);

/// The CSV cell of `f` in `row`.
template <class Row>
std::string csv_cell(const Field<Row>& f, const Row& row) {
  const std::optional<Value> v = defined_value(f, row);
  if (!v) return "";
  if (const auto* i = std::get_if<std::int64_t>(&*v)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string_view>(&*v)) return csv_quoted(*s);
  if (const auto* b = std::get_if<bool>(&*v)) return *b ? "true" : "false";
  if (const auto* u = std::get_if<ReportUnit>(&*v)) return unit_name(*u);
  return printf_number("%.17g", as_number(*v));
}

/// `table`'s CSV header line: the keys of the fields JSON and CSV show.
template <class Row>
std::string csv_header(const Table<Row>& table) {
  std::string line;
  for (const Field<Row>& f : table) {
    if (in_json(f)) line += (line.empty() ? "" : ",") + std::string(f.key);
  }
  return line + '\n';
}

/// One row of `table` as a CSV line.
template <class Row>
std::string csv_line(const Table<Row>& table, const Row& row) {
  std::string line;
  bool first = true;
  for (const Field<Row>& f : table) {
    if (!in_json(f)) continue;
    line += (first ? "" : ",") + csv_cell(f, row);
    first = false;
  }
  return line + '\n';
}

/// `rows` as a JSON array of objects.
template <class Row, class Rows>
nlohmann::ordered_json json_array(const Table<Row>& table, const Rows& rows) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& row : rows) list.push_back(json_object(table, deref(row)));
  return list;
}

}  // namespace commprof::fields
