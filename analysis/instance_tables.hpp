// SPDX-License-Identifier: MIT
// What the report takes from the matched collective instances: the per-collective and per-group
// rows, the warnings about incomplete and inconsistent instances, the all-to-all waits per group,
// the heatmap's columns and cells, and the instances that made ranks wait longest. It is worked
// out where the instances are: in a shared reduction each process owns a share of them (by a hash
// of communicator and sequence number) and sends process 0 only integer sums, its candidates for
// the worst instances and its counts for a few questions of order (the percentiles of instance
// times, the bounds of the heatmap's columns), so that process 0 never holds every instance. The
// doubles are derived from those sums on process 0 alone; one process runs the same code through
// a SoloExchange, so one process and many give the same report byte for byte.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/collective_matching.hpp"
#include "analysis/reduce_exchange.hpp"
#include "analysis/report.hpp"

namespace commprof {

/// What finishing the report needs besides the tables tabulate_instances() fills.
struct InstanceFindings {
  std::vector<std::string> warnings;                   ///< incomplete, inconsistent instances
  std::map<std::string, std::int64_t> alltoall_waits;  ///< by group: Σ waits at all-to-all(v)
};

/// Collective over `exchange`: `owned` are this process's matched and finished instances (no
/// instance on two processes). On process 0, fills `rep`'s collectives, groups, instances (those
/// that may be among the kReportWorstInstances worst, most first), instances_total,
/// incomplete_instances, inconsistent_instances, wait_columns and wait_cells (rep.peak_busbw_gbps
/// set before), and returns the findings; the other processes leave `rep` alone.
InstanceFindings tabulate_instances(const std::vector<CollectiveInstance>& owned, Report& rep,
                                    ReduceExchange& exchange);

}  // namespace commprof
