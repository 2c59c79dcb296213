// SPDX-License-Identifier: MIT
// CSV tables: one per report row type (fields from analysis/report_fields.hpp) and the problems,
// units in the column names, empty cells for n/a.
#include <cstdio>
#include <ostream>
#include <sstream>

#include "analysis/report/report_writers.hpp"
#include "analysis/report_fields.hpp"

namespace commprof {
namespace {

std::string cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}
std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string csv_value(const report_fields::Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return num(*d);
  if (const auto* s = std::get_if<const Stat*>(&v)) return num((*s)->mean);
  if (const auto* t = std::get_if<std::string_view>(&v)) return std::string(*t);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* u = std::get_if<ReportUnit>(&v)) return report_fields::unit_name(*u);
  return "";
}

class Csv {
 public:
  explicit Csv(const std::vector<std::string>& header) { row(header); }
  void row(const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out_ << (i ? "," : "") << cell(cells[i]);
    out_ << '\n';
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

// Every field in its column, n/a empty; then the min and max of the fields that ask for them.
template <class Row>
std::vector<std::string> header_of(const report_fields::Table<Row>& table) {
  std::vector<std::string> header;
  for (const auto& f : table) header.emplace_back(f.key);
  for (const auto& f : table) {
    if (!f.min_max) continue;
    for (const char* which : {"min", "max"})
      header.push_back(report_fields::min_max_column(f.key, which));
  }
  return header;
}

template <class Row>
std::vector<std::string> cells_of(const report_fields::Table<Row>& table, const Row& row) {
  std::vector<std::string> cells;
  for (const auto& f : table) {
    const auto v = report_fields::defined_value(f, row);
    cells.push_back(v ? csv_value(*v) : "");
  }
  for (const auto& f : table) {
    if (!f.min_max) continue;
    const Stat& s = *std::get<const Stat*>(f.get(row));
    cells.push_back(s.count ? num(s.min) : "");
    cells.push_back(s.count ? num(s.max) : "");
  }
  return cells;
}

template <class Row, class Rows>
CsvTable csv_table(const report_fields::Table<Row>& table, const Rows& rows) {
  Csv csv(header_of(table));
  for (const auto& row : rows) csv.row(cells_of(table, report_fields::deref(row)));
  return {std::string(table.name), csv.str()};
}

}  // namespace

std::vector<CsvTable> report_csv_tables(const Report& r) {
  std::vector<CsvTable> tables;
  report_fields::for_each_table(
      r, [&](const auto& table, const auto& rows) { tables.push_back(csv_table(table, rows)); });

  Csv problems({"file", "problem"});
  for (const FileProblem& p : r.problems) problems.row({p.file, p.message});
  for (int m : r.missing_ranks) problems.row({"", "rank " + std::to_string(m) + " is missing"});
  tables.push_back({"problems", problems.str()});
  return tables;
}

void write_report_csv(std::ostream& os, const Report& r) {
  for (const CsvTable& t : report_csv_tables(r))
    os << "# table: " << t.name << '\n' << t.text << '\n';
}

}  // namespace commprof
