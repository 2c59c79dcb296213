// SPDX-License-Identifier: MIT
// The report as Prometheus text exposition (format 0.0.4), for node_exporter's textfile
// collector: every metric a gauge of the finished run, with HELP and TYPE lines, base units in
// the names (seconds, ratio) except where NCCL Inspector's Prometheus output (NCCL 2.28
// plugins/profiler/inspector, NCCL_INSPECTOR_PROM_DUMP=1) already names the same quantity:
// its nccl_bus_bandwidth_gbs is commprof_bus_bandwidth_gbs here, and its label names (node,
// comm_name, nranks, collective) are used where they mean the same thing. Inspector's
// exec time is a mean in microseconds; ours is a percentile in seconds, so it has its own name.
// The metrics, their HELP and labels are the fields of analysis/report_fields.hpp: a number is a
// sample labelled with the fields that name its row, other text a label of the table's _info
// metric. `promtool check metrics` passes on what this writes (a test runs it).
#include <charconv>
#include <cmath>
#include <map>
#include <ostream>
#include <utility>
#include <vector>

#include "analysis/report/report_writers.hpp"
#include "analysis/report_fields.hpp"

namespace commprof {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

/// The collective instances that made ranks wait longest, exported as series of their own.
constexpr std::size_t kPrometheusInstances = 10;

// Label values escape backslash, double quote and newline (the exposition format's rules).
std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// The shortest text that reads back as the same double (what Go's strconv, which Prometheus
// parses with, accepts).
std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

// Families in the order they first appear, each with its samples: fields of one metric (busy
// time per category) add to one family wherever they are in their table.
class Exposition {
 public:
  void sample(const std::string& name, std::string_view help, const Labels& labels, double value) {
    auto [at, added] = index_.try_emplace(name, families_.size());
    if (added) families_.push_back({name, std::string(help), {}});
    std::string line = name;
    if (!labels.empty()) {
      line += '{';
      for (std::size_t i = 0; i < labels.size(); ++i) {
        line += (i ? "," : "") + labels[i].first + "=\"" + label_value(labels[i].second) + '"';
      }
      line += '}';
    }
    families_[at->second].samples.push_back(line + ' ' + number(value));
  }
  void write(std::ostream& os) const {
    for (const Family& f : families_) {
      os << "# HELP " << f.name << ' ' << f.help << "\n# TYPE " << f.name << " gauge\n";
      for (const std::string& s : f.samples) os << s << '\n';
    }
  }

 private:
  struct Family {
    std::string name;
    std::string help;
    std::vector<std::string> samples;
  };
  std::vector<Family> families_;
  std::map<std::string, std::size_t> index_;
};

std::string label_text(const report_fields::Value& v) {
  if (const auto* t = std::get_if<std::string_view>(&v)) return std::string(*t);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* u = std::get_if<ReportUnit>(&v)) return report_fields::unit_name(*u);
  return number(report_fields::as_number(v));
}

// A sample's value in base units: seconds for times.
double base_value(const report_fields::Value& v, ReportUnit unit) {
  const double x = report_fields::as_number(v);
  return unit == ReportUnit::kNs ? x / 1e9 : x;
}

// The fields that name the row, as labels; n/a as "".
template <class Row>
Labels row_labels(const report_fields::Table<Row>& table, const Row& row) {
  Labels labels;
  for (const auto& f : table) {
    if (f.row_label.empty()) continue;
    const auto v = report_fields::defined_value(f, row);
    labels.emplace_back(std::string(f.row_label), v ? label_text(*v) : "");
  }
  return labels;
}

// Per row: a sample of every defined number, and the other text as labels of the table's _info
// metric (value 1).
template <class Row, class Rows>
void add_rows(Exposition& e, const report_fields::Table<Row>& table, const Rows& rows) {
  for (const auto& r : rows) {
    const Row& row = report_fields::deref(r);
    const Labels labels = row_labels(table, row);
    Labels info = labels;
    for (const auto& f : table) {
      const auto v = report_fields::defined_value(f, row);
      if (!f.row_label.empty() || !v) continue;
      if (f.unit == ReportUnit::kText) {
        info.emplace_back(std::string(f.key), label_text(*v));
        continue;
      }
      Labels l = labels;
      if (!f.metric_label.empty()) l.emplace_back(f.metric_label, f.metric_value);
      e.sample(report_fields::metric_name(f, row), f.help, l,
               base_value(*v, report_fields::unit_of(f, row)));
    }
    if (info.size() > labels.size())
      e.sample(std::string(table.info_metric), table.info_help, info, 1);
  }
}

}  // namespace

void write_report_prometheus(std::ostream& os, const Report& r) {
  namespace rf = report_fields;
  Exposition e;
  e.sample("commprof_world_size", "Ranks the run had.", {}, r.world_size);
  e.sample("commprof_ranks_read", "Rank files reduced.", {}, static_cast<double>(r.ranks.size()));
  e.sample("commprof_rank_files_unreadable", "Rank files that could not be read.", {},
           static_cast<double>(r.problems.size()));
  // A few instances and critical-path shares only: each is a series of its own.
  rf::for_each_table(
      r, [&](const auto& table, const auto& rows) { add_rows(e, table, rows); },
      kPrometheusInstances);
  e.write(os);
}

}  // namespace commprof
