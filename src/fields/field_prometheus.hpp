// SPDX-License-Identifier: MIT
// Field tables as the Prometheus text exposition format (node_exporter's textfile collector):
// every number of a row a gauge sample of its field's metric, in base units (seconds for times),
// labelled with the fields that name the row; the row's other text as labels of the table's
// _info metric (value 1); n/a as no sample. `commprof report --format prometheus` and `commprof
// watch --prometheus` write through it; `promtool check metrics` passes on what it writes.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/fields/field_formats.hpp"

namespace commprof::fields {

using Labels = std::vector<std::pair<std::string, std::string>>;

/// A label's value with backslash, double quote and newline escaped.
std::string prometheus_label_value(const std::string& v);
/// The shortest text that reads back as the same double (as Go's strconv, Prometheus' parser).
std::string prometheus_number(double v);
/// A value as a label's text.
std::string prometheus_label_text(const Value& v);

/// Families in the order they first appear, each with its samples: fields of one metric (busy
/// time per category) add to one family wherever they are in their table.
class Exposition {
 public:
  void sample(const std::string& name, std::string_view help, const Labels& labels, double value);
  void write(std::ostream& os) const;

 private:
  struct Family {
    std::string name;
    std::string help;
    std::vector<std::string> samples;
  };
  std::vector<Family> families_;
  std::map<std::string, std::size_t> index_;
};

/// The fields that name the row, as labels; n/a left out (to Prometheus a label of empty value
/// is no label: a row whose placement is not known reads as before placement was a label).
template <class Row>
Labels row_labels(const Table<Row>& table, const Row& row) {
  Labels labels;
  for (const auto& f : table) {
    if (f.row_label.empty()) continue;
    const auto v = defined_value(f, row);
    if (v) labels.emplace_back(std::string(f.row_label), prometheus_label_text(*v));
  }
  return labels;
}

/// Per row: a sample of every defined number (times in seconds), and the other text as labels
/// of the table's _info metric. `extra` labels go first on every sample (e.g. the job's).
template <class Row, class Rows>
void add_rows(Exposition& e, const Table<Row>& table, const Rows& rows, const Labels& extra = {}) {
  for (const auto& r : rows) {
    const Row& row = deref(r);
    Labels labels = extra;
    for (auto& l : row_labels(table, row)) labels.push_back(std::move(l));
    Labels info = labels;
    for (const auto& f : table) {
      const auto v = defined_value(f, row);
      if (!f.row_label.empty() || !v) continue;
      if (f.unit == ReportUnit::kText) {
        info.emplace_back(std::string(f.key), prometheus_label_text(*v));
        continue;
      }
      Labels l = labels;
      if (!f.metric_label.empty()) l.emplace_back(f.metric_label, f.metric_value);
      const double x = as_number(*v);
      e.sample(metric_name(f, row), f.help, l, unit_of(f, row) == ReportUnit::kNs ? x / 1e9 : x);
    }
    if (info.size() > labels.size())
      e.sample(std::string(table.info_metric), table.info_help, info, 1);
  }
}

}  // namespace commprof::fields
