// SPDX-License-Identifier: MIT
// The terminal report: fixed-width tables, units in every column header. Each row type's fields
// come from analysis/report_fields.hpp; a row type too wide for one table is split over
// several, each repeating the fields that name the row.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <ostream>

#include "analysis/report/report_writers.hpp"
#include "analysis/report/text_table.hpp"
#include "analysis/report_fields.hpp"

namespace commprof {
namespace {

using report_fields::Column;
using report_fields::Field;
using report_fields::Table;
using report_fields::Value;

/// The text report shows this many rows of the stragglers and of the worst instances.
constexpr std::size_t kTextRows = 10;

std::string fmt(const char* format, double v) { return format_number(format, v); }
std::string us(double ns) { return fmt("%.1f", ns / 1e3); }

// A unit as a column shows it: us for ns, % for ratios, else its name.
std::string shown_unit(ReportUnit u) {
  const std::string suffix = report_fields::text_unit_suffix(u);
  return suffix.empty() ? report_fields::unit_name(u) : suffix.substr(1, suffix.size() - 2);
}

std::string text_value(const Value& v, ReportUnit unit) {
  if (const auto* t = std::get_if<std::string_view>(&v)) return std::string(*t);
  if (const auto* u = std::get_if<ReportUnit>(&v)) return shown_unit(*u);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "yes" : "no";
  const double x = report_fields::as_number(v);
  switch (unit) {
    case ReportUnit::kNs:
      return us(x);
    case ReportUnit::kRatio:
      return fmt("%.1f", 100.0 * x);
    case ReportUnit::kGBps:
      return fmt("%.2f", x);
    case ReportUnit::kFactor:
      return fmt("%.3f", x);
    default:
      break;
  }
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return fmt("%.0f", x);
}

template <class Row>
std::string cell(const Field<Row>& f, const Row& row) {
  const auto v = report_fields::defined_value(f, row);
  return v ? text_value(*v, report_fields::unit_of(f, row)) : "n/a";
}

// `rows` under the table's title (and `note` after it), one table per part of the row type.
template <class Row, class Rows>
void write_rows(std::ostream& os, const Table<Row>& table, const Rows& rows,
                const std::string& note = "", bool last_left = false) {
  for (int part = 0; part < table.parts(); ++part) {
    os << "\n## " << table.title << (part > 0 ? " (continued)" : note) << '\n';
    const std::vector<Column<Row>> columns = report_fields::columns(table, part);
    std::vector<std::vector<std::string>> lines(1);
    for (const Column<Row>& c : columns) lines[0].push_back(report_fields::text_header(*c.field));
    for (const auto& r : rows) {
      const Row& row = report_fields::deref(r);
      lines.emplace_back();
      for (const Column<Row>& c : columns) {
        lines.back().push_back(report_fields::column_text(c, row, cell<Row>));
      }
    }
    write_table(os, lines, last_left);
  }
}

// Sampled op timing: which steps the per-op figures come from, and what timing them cost (the
// timed steps' mean step time against the plain ones', both measured in this run).
void write_sampling_line(std::ostream& os, const Report& r) {
  int timed = 0, steps = 0;
  double cost_sum = 0;
  int cost_ranks = 0;
  for (const RankSummary& s : r.ranks) {
    timed += s.timed_steps;
    steps += s.steps;
    if (s.timed_wall_ns.count > 0 && s.plain_wall_ns.count > 0 && s.plain_wall_ns.mean > 0) {
      cost_sum += (s.timed_wall_ns.mean - s.plain_wall_ns.mean) / s.plain_wall_ns.mean;
      ++cost_ranks;
    }
  }
  if (cost_ranks == 0) return;
  char line[256];
  std::snprintf(line, sizeof line,
                "# per-op timing on %d of %d measured steps (all ranks): busy times and overlap "
                "from those, step time from the others; timed steps took %+.2f%% (mean over "
                "%d ranks)\n",
                timed, steps, 100 * cost_sum / cost_ranks, cost_ranks);
  os << line;
}

void write_header(std::ostream& os, const Report& r) {
  os << "# commprof report: " << r.ranks.size() << " of " << r.world_size << " ranks";
  if (r.inputs.empty()) {
    // commprof run's own reduction when it wrote no rank files (no --out).
    os << " received over MPI at the end of the run\n";
  } else {
    // Offline, or at the end of a run that wrote them: the same line either way.
    os << ", from " << r.inputs.size() << " rank file(s)\n";
  }
  os << "# times in us (mean per measured step), ratios in %, bandwidth in GB/s (1e9 B/s)\n";
  for (const FileProblem& p : r.problems)
    os << "# problem: " << p.message << '\n';  // the message names the file
  if (!r.missing_ranks.empty()) {
    os << "# missing ranks:";
    for (int m : r.missing_ranks) os << ' ' << m;
    os << '\n';
  }
  for (const std::string& w : r.warnings) os << "# warning: " << w << '\n';
  write_sampling_line(os, r);
}

void write_stragglers(std::ostream& os, const Report& r) {
  std::vector<const RankWait*> waits;
  for (const RankWait& w : r.waits) waits.push_back(&w);
  std::stable_sort(waits.begin(), waits.end(), [](const RankWait* a, const RankWait* b) {
    return a->wait_caused_ns > b->wait_caused_ns;
  });
  const RankWait& top = *waits.front();
  waits.resize(std::min(waits.size(), kTextRows));
  write_rows(os, report_fields::kStragglers, waits);
  if (top.wait_caused_ns > 0) {
    os << "# straggler: rank " << top.rank << " (" << top.host << ") arrived last at "
       << top.times_last << " of " << top.collectives << " collectives; others waited "
       << us(static_cast<double>(top.wait_caused_ns)) << " us for it\n";
  }
}

void write_worst_instances(std::ostream& os, const Report& r) {
  const auto worst = report_fields::worst_instances(r, kTextRows);
  write_rows(os, report_fields::kInstances, worst,
             " (" + std::to_string(worst.size()) + " of " + std::to_string(r.instances_total) +
                 "; JSON, CSV and HTML list " + std::to_string(kReportWorstInstances) + ")");
}

void write_baseline(std::ostream& os, const Report& r) {
  const BaselineComparison& b = *r.baseline;
  write_rows(os, report_fields::kBaseline, report_fields::baseline_rows(r), " (" + b.source + ")");
  os << " step time: " << us(b.run_step_ns) << " us, baseline " << us(b.baseline_step_ns)
     << " us, speed-up " << (b.speedup ? fmt("%.3f", *b.speedup) + "x" : "n/a") << '\n';
  write_rows(os, report_fields::kInterference, b.interference);
}

// Each step's path beside its exposed communication, then where the paths' time went. A run of
// many steps shows the 10 longest paths; JSON and CSV list every step.
void write_critical_path(std::ostream& os, const Report& r) {
  std::vector<const CriticalStepRow*> steps;
  double path = 0, exposed = 0, gap = 0;
  for (const CriticalStepRow& s : r.critical_steps) {
    steps.push_back(&s);
    path += static_cast<double>(s.path_ns);
    exposed += s.exposed_comm_ns;
    gap += static_cast<double>(s.gap_ns);
  }
  const double n = static_cast<double>(steps.size());
  std::string note = r.critical_note.empty() ? "" : " (" + r.critical_note + ")";
  if (steps.size() > kTextRows) {
    std::stable_sort(steps.begin(), steps.end(),
                     [](const auto* a, const auto* b) { return a->path_ns > b->path_ns; });
    steps.resize(kTextRows);
    std::sort(steps.begin(), steps.end(),
              [](const auto* a, const auto* b) { return a->step < b->step; });
    note += " (the " + std::to_string(kTextRows) + " longest of " +
            std::to_string(r.critical_steps.size()) + " steps)";
  }
  write_rows(os, report_fields::kCriticalSteps, steps, note);
  os << "# critical path: " << us(path / n) << " us per step, of which host gaps " << us(gap / n)
     << " us; exposed communication (a different number) " << us(exposed / n) << " us\n";
  const auto shares = report_fields::critical_shares(r, kTextRows);
  write_rows(os, report_fields::kCriticalShares, shares,
             " (" + std::to_string(shares.size()) + " of " +
                 std::to_string(r.critical_shares.size()) + "; JSON, CSV and HTML list " +
                 std::to_string(kReportCriticalShares) + ")");
}

// The fired findings, at most kTextRows (JSON and CSV list every one), or a line saying there
// are none; then the rules that could not run and what they need.
void write_findings(std::ostream& os, const Report& r) {
  std::vector<const Finding*> fired;
  std::string skipped;
  for (const Finding& f : r.findings) {
    if (f.fired()) {
      fired.push_back(&f);
    } else {
      skipped += (skipped.empty() ? "" : "; ") + f.rule + " (" + f.status + ")";
    }
  }
  const std::size_t all = fired.size();
  if (fired.empty()) {
    os << "\n## " << report_fields::kFindings.title << '\n'
       << "no finding: no rule evaluated fired (docs/analysis.md lists them and their "
          "thresholds)\n";
  } else {
    fired.resize(std::min(fired.size(), kTextRows));
    write_rows(os, report_fields::kFindings, fired,
               all > fired.size() ? " (" + std::to_string(fired.size()) + " of " +
                                        std::to_string(all) + "; JSON and CSV list all)"
                                  : "",
               true);  // the evidence and the action: prose, read from the left
  }
  if (!fired.empty()) {
    const Finding& top = *fired.front();
    os << "# top finding: " << top.rule;
    if (top.cost_ns >= 0)
      os << ", " << fmt("%.3f", top.cost_ns / 1e6) << " ms per step ("
         << fmt("%.1f", 100 * top.cost_fraction) << " % of the step)";
    os << ": " << top.action << '\n';
  }
  if (!skipped.empty()) os << "# " << skipped << '\n';
}

// Each table as the text report shows it: left out where it has no rows, some with a note or
// a summary line of their own.
template <class Row, class Rows>
void write_section(std::ostream& os, const Report&, const Table<Row>& table, const Rows& rows) {
  if (!std::empty(rows)) write_rows(os, table, rows);
}
template <class Rows>
void write_section(std::ostream& os, const Report& r, const Table<Finding>&, const Rows&) {
  write_findings(os, r);
}
template <class Rows>
void write_section(std::ostream& os, const Report&, const Table<RankSummary>& table,
                   const Rows& rows) {
  write_rows(os, table, rows);  // even without ranks: its header says what would be there
}
template <class Rows>
void write_section(std::ostream& os, const Report&, const Table<AcrossRanks>& table,
                   const Rows& rows) {
  write_rows(os, table, rows);
}
template <class Rows>
void write_section(std::ostream& os, const Report& r, const Table<RankWait>&, const Rows& rows) {
  if (!std::empty(rows)) write_stragglers(os, r);
}
template <class Rows>
void write_section(std::ostream& os, const Report& r, const Table<CollectiveInstance>&,
                   const Rows&) {
  if (r.instances_total > 0) write_worst_instances(os, r);
}
template <class Rows>
void write_section(std::ostream& os, const Report& r, const Table<BaselineComparison>&,
                   const Rows&) {
  if (r.baseline) write_baseline(os, r);
}
template <class Rows>
void write_section(std::ostream&, const Report&, const Table<Interference>&, const Rows&) {
  // write_baseline writes it under the baseline
}
template <class Rows>
void write_section(std::ostream& os, const Report& r, const Table<CriticalStepRow>&,
                   const Rows& rows) {
  if (!std::empty(rows)) write_critical_path(os, r);
}
template <class Rows>
void write_section(std::ostream&, const Report&, const Table<CriticalShareRow>&, const Rows&) {
  // write_critical_path writes it after the steps
}

}  // namespace

void write_report_text(std::ostream& os, const Report& r) {
  write_header(os, r);
  report_fields::for_each_table(
      r, [&](const auto& table, const auto& rows) { write_section(os, r, table, rows); },
      kTextRows);
}

}  // namespace commprof
