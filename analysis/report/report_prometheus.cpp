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
#include <ostream>

#include "analysis/report/report_writers.hpp"
#include "analysis/report_fields.hpp"
#include "src/fields/field_prometheus.hpp"

namespace commprof {
namespace {

/// The collective instances that made ranks wait longest, exported as series of their own.
constexpr std::size_t kPrometheusInstances = 10;

}  // namespace

void write_report_prometheus(std::ostream& os, const Report& r) {
  namespace rf = report_fields;
  fields::Exposition e;
  e.sample("commprof_world_size", "Ranks the run had.", {}, r.world_size);
  e.sample("commprof_ranks_read", "Rank files reduced.", {}, static_cast<double>(r.ranks.size()));
  e.sample("commprof_rank_files_unreadable", "Rank files that could not be read.", {},
           static_cast<double>(r.problems.size()));
  // A few instances and critical-path shares only: each is a series of its own.
  rf::for_each_table(
      r, [&](const auto& table, const auto& rows) { fields::add_rows(e, table, rows); },
      kPrometheusInstances);
  e.write(os);
}

}  // namespace commprof
