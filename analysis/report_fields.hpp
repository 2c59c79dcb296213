// SPDX-License-Identifier: MIT
// The report's fields, one table per row type, each field named once: its key (the JSON member
// and the CSV column), its value (a member or a small accessor), its unit, when it is not
// defined (n/a), and what the formats need to present it: the text and HTML header, the
// Prometheus metric or label (field_table.hpp says how each format shows a field). Every writer
// (text, JSON, CSV, the HTML tables and data block, Prometheus), the across-ranks summary and
// `commprof compare`'s reader walk these tables, and a test checks that every field reaches
// every format: a new field is one line in its table's file. The tables are in
// report_fields_<table>.hpp, each file named after the tables it holds; this header gathers them
// and hands them out in the report's order. (The report's envelope, i.e. schema, inputs,
// problems and warnings, is structure: the writers name it.)
#pragma once

#include <cstddef>

#include "analysis/report_fields_across_ranks.hpp"
#include "analysis/report_fields_baseline.hpp"
#include "analysis/report_fields_collectives.hpp"
#include "analysis/report_fields_critical_path.hpp"
#include "analysis/report_fields_findings.hpp"
#include "analysis/report_fields_groups.hpp"
#include "analysis/report_fields_instances.hpp"
#include "analysis/report_fields_ranks.hpp"
#include "analysis/report_fields_stages.hpp"
#include "analysis/report_fields_stragglers.hpp"

namespace commprof::report_fields {

/// Calls f(table) for every table.
template <class F>
void for_each_table(F&& f) {
  f(kFindings);
  f(kRanks);
  f(kAcross);
  f(kStages);
  f(kGroups);
  f(kGroupTimes);
  f(kCollectives);
  f(kStragglers);
  f(kInstances);
  f(kBaseline);
  f(kInterference);
  f(kCriticalSteps);
  f(kCriticalShares);
}

/// Calls f(table, rows) for every table with the report's rows of it, in the report's order
/// (findings first): rows is a container of rows or of pointers to them, empty where the report
/// has none (the writers choose whether to show an empty table). Of the worst instances and the
/// critical-path shares, the first `top` (kReportWorstInstances, kReportCriticalShares).
template <class F>
void for_each_table(const Report& r, F&& f, std::size_t top = kReportWorstInstances) {
  f(kFindings, r.findings);
  f(kRanks, r.ranks);
  f(kAcross, r.across);
  f(kStages, r.stages);
  f(kGroups, r.groups);
  f(kGroupTimes, r.group_times);
  f(kCollectives, r.collectives);
  f(kStragglers, r.waits);
  f(kInstances, worst_instances(r, top));
  f(kBaseline, baseline_rows(r));
  f(kInterference, interference_rows(r));
  f(kCriticalSteps, r.critical_steps);
  f(kCriticalShares, critical_shares(r, top));
}
static_assert(kReportWorstInstances == kReportCriticalShares,
              "for_each_table takes as many of each");

}  // namespace commprof::report_fields
