// SPDX-License-Identifier: MIT
#include "analysis/compare/comparison_writers.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "analysis/compare/comparison_fields.hpp"
#include "analysis/report/report_writers.hpp"
#include "analysis/report/text_table.hpp"
#include "src/core/units.hpp"

namespace commprof {
namespace {

std::string fmt(const char* format, double v) { return format_number(format, v); }

// A value in its unit as people read it: 92.80 ms, 41.2 %, 187.31 GB/s.
std::string show(MetricUnit u, double v) {
  switch (u) {
    case MetricUnit::kNanoseconds:
      return format_duration(v);
    case MetricUnit::kRatio:
      return fmt("%.1f %%", 100.0 * v);
    case MetricUnit::kGBps:
      return fmt("%.2f GB/s", v);
  }
  return "";
}

// The change: signed, in the metric's unit (ratios in percentage points).
std::string show_delta(MetricUnit u, double d) {
  switch (u) {
    case MetricUnit::kNanoseconds:
      return (d >= 0 ? "+" : "") + format_duration(d);
    case MetricUnit::kRatio:
      return fmt("%+.1f pp", 100.0 * d);
    case MetricUnit::kGBps:
      return fmt("%+.2f GB/s", d);
  }
  return "";
}

std::string show_noise(MetricUnit u, const std::optional<double>& noise) {
  if (!noise) return "n/a";
  if (u == MetricUnit::kRatio) return fmt("±%.1f pp", 100.0 * *noise);
  if (u == MetricUnit::kNanoseconds) return "±" + format_duration(*noise);
  return fmt("±%.2f GB/s", *noise);
}

// What the row means in words: better/worse, and whether noise can explain it.
std::string verdict(const MetricComparison& c) {
  if (!c.in_base) return "only in new";
  if (!c.in_new) return "only in base";
  if (c.delta == 0) return "same";
  std::string v = c.worse() ? "worse" : "better";
  if (c.noise) v += c.beyond_noise() ? ", beyond noise" : ", within noise";
  return v;
}

std::string run_line(const RunMetrics& r) {
  return r.source + " (" + std::to_string(r.ranks) + " rank(s), " + std::to_string(r.steps) +
         " measured step(s) per rank)";
}

using comparison_fields::ComparisonRow;
using comparison_fields::kComparison;

// The verdict and, after it, the thresholds crossed.
std::string verdict_text(const MetricComparison& c) {
  std::string tail = verdict(c);
  if (!c.crossed.empty()) {
    tail += "  CROSSED";
    for (const std::string& t : c.crossed) tail += " " + t;
  }
  return tail;
}

std::vector<ComparisonRow> rows_of(const Comparison& c) {
  std::vector<ComparisonRow> rows;
  for (const MetricComparison& m : c.rows)
    rows.push_back({&m, m.base_metric.key(), verdict_text(m)});
  return rows;
}

}  // namespace

void write_comparison_text(std::ostream& os, const Comparison& c) {
  os << "# commprof compare\n"
     << "# base: " << run_line(c.base) << "\n"
     << "# new:  " << run_line(c.next) << "\n"
     << "# per-rank metrics are means over ranks of each rank's mean per measured step; noise is "
        "two standard errors of the difference (step-to-step spread, Welch)\n";
  write_table(os, fields::text_rows(kComparison, rows_of(c)), /*last_left=*/true);
  for (const MetricComparison& m : c.rows) {
    if (!m.base_metric.note.empty() || !m.new_metric.note.empty()) {
      os << "# " << m.base_metric.key() << ": base " << (m.in_base ? m.base_metric.note : "-")
         << "; new " << (m.in_new ? m.new_metric.note : "-") << "\n";
    }
  }
  for (const std::string& w : c.base.warnings) os << "# warning (base): " << w << "\n";
  for (const std::string& w : c.next.warnings) os << "# warning (new): " << w << "\n";
  for (const std::string& t : c.unmatched) {
    os << "# warning: --fail-if '" << t << "' matches no metric both runs have\n";
  }
  if (c.thresholds.empty()) {
    os << "# no --fail-if thresholds given\n";
  } else if (c.crossed == 0) {
    os << "# OK: no threshold crossed (" << c.thresholds.size() << " checked)\n";
  } else {
    os << "# REGRESSION: " << c.crossed << " metric(s) crossed a threshold\n";
  }
}

void write_comparison_json(std::ostream& os, const Comparison& c) {
  using nlohmann::ordered_json;
  auto run = [&](const RunMetrics& r) {
    return ordered_json{{"source", r.source},
                        {"ranks", r.ranks},
                        {"measured_steps", r.steps},
                        {"warnings", r.warnings}};
  };
  ordered_json j;
  j["schema"] = kCompareSchema;
  j["version"] = kCompareSchemaVersion;
  j["units"] = {{"ns", "time in ns"},
                {"ratio", "fraction in [0, 1]; delta and noise as fractions too"},
                {"GB/s", "1e9 B/s"}};
  j["base"] = run(c.base);
  j["new"] = run(c.next);
  ordered_json thresholds = ordered_json::array();
  for (const Threshold& t : c.thresholds) thresholds.push_back(t.text);
  j["thresholds"] = thresholds;
  ordered_json metrics = ordered_json::array();
  for (const ComparisonRow& row : rows_of(c)) {
    ordered_json m = fields::json_object(kComparison, row);
    m["crossed"] = row.m->crossed;
    metrics.push_back(std::move(m));
  }
  j["metrics"] = metrics;
  j["unmatched_thresholds"] = c.unmatched;
  j["crossed"] = c.crossed;
  j["verdict"] = c.crossed > 0 ? "regression" : "ok";
  os << j.dump(1) << '\n';
}

void write_comparison_html(std::ostream& os, const Comparison& c) {
  os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>commprof compare</title><style>"
        "body{font:14px system-ui,sans-serif;margin:1.5em;max-width:none}"
        "table{border-collapse:collapse;width:100%}"
        "th,td{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}"
        "th:first-child,td:first-child,td:last-child{text-align:left}"
        "tr.worse td{background:#fdecea}tr.better td{background:#eaf7ea}"
        "tr.crossed td{background:#f8c7c3;font-weight:600}"
        ".verdict{font-size:1.2em;font-weight:700}.ok{color:#1b7f1b}.bad{color:#b3261e}"
        "</style></head><body>\n<h1>commprof compare</h1>\n";
  os << "<p>base: " << html_escape(run_line(c.base)) << "<br>new: " << html_escape(run_line(c.next))
     << "</p>\n";
  if (c.thresholds.empty()) {
    os << "<p class=\"verdict\">no thresholds given</p>\n";
  } else if (c.crossed == 0) {
    os << "<p class=\"verdict ok\">OK: no threshold crossed</p>\n";
  } else {
    os << "<p class=\"verdict bad\">REGRESSION: " << c.crossed
       << " metric(s) crossed a threshold</p>\n";
  }
  os << "<table id=\"comparison\"><thead><tr>";
  // Each column headed by its label, with what it is as the header's title.
  for (const auto& f : kComparison) {
    if (fields::in_text(f)) {
      os << "<th title=\"" << html_escape(std::string(f.help)) << "\">"
         << html_escape(std::string(f.label)) << "</th>";
    }
  }
  os << "</tr></thead><tbody>\n";
  for (const ComparisonRow& r : rows_of(c)) {
    const MetricComparison& m = *r.m;
    const std::vector<std::string> row = fields::text_cells(kComparison, r);
    const char* cls = !m.crossed.empty()                                            ? "crossed"
                      : (m.in_base && m.in_new && m.delta != 0 && m.worse())        ? "worse"
                      : (m.in_base && m.in_new && m.delta != 0 && m.beyond_noise()) ? "better"
                                                                                    : "";
    os << "<tr class=\"" << cls << "\">";
    for (const std::string& cell : row) os << "<td>" << html_escape(cell) << "</td>";
    os << "</tr>\n";
  }
  os << "</tbody></table>\n";
  for (const std::string& t : c.unmatched) {
    os << "<p>warning: --fail-if '" << html_escape(t) << "' matches no metric both runs have</p>\n";
  }
  os << "</body></html>\n";
}

namespace comparison_fields {

std::string_view metric_unit_name(MetricUnit u) {
  switch (u) {
    case MetricUnit::kNanoseconds:
      return "ns";
    case MetricUnit::kRatio:
      return "ratio";
    case MetricUnit::kGBps:
      return "GB/s";
  }
  return "";
}

std::string base_text(const ComparisonRow& r) {
  return r.m->in_base ? show(r.m->base_metric.unit, r.m->base_metric.value) : "-";
}
std::string new_text(const ComparisonRow& r) {
  return r.m->in_new ? show(r.m->base_metric.unit, r.m->new_metric.value) : "-";
}
std::string delta_text(const ComparisonRow& r) {
  return both(r) ? show_delta(r.m->base_metric.unit, r.m->delta) : "-";
}
std::string relative_text(const ComparisonRow& r) {
  return both(r) && r.m->relative ? fmt("%+.2f%%", 100.0 * *r.m->relative) : "n/a";
}
std::string noise_text(const ComparisonRow& r) {
  return show_noise(r.m->base_metric.unit, r.m->noise);
}

const std::string& base_note(const ComparisonRow& r) {
  static const std::string none;
  return r.m->in_base ? r.m->base_metric.note : none;
}
const std::string& new_note(const ComparisonRow& r) {
  static const std::string none;
  return r.m->in_new ? r.m->new_metric.note : none;
}

}  // namespace comparison_fields

}  // namespace commprof
