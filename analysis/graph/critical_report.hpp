// SPDX-License-Identifier: MIT
// The critical paths of a run's measured steps as the report's rows: one per step beside its
// exposed communication, and the paths' time by rank × category × op × communicator.
#pragma once

#include <string>
#include <vector>

#include "analysis/graph/graph_times.hpp"
#include "analysis/graph/step_graph.hpp"
#include "analysis/report.hpp"

namespace commprof {

/// One step's critical path as the report's rows take it: its row, its segments with each
/// segment's op's communicator, and what its graph held (for the report's note). Small beside
/// the graph: a process that built the graph sends this to the one that writes the report.
struct CriticalStepSummary {
  CriticalStepRow row;
  CriticalPathOfStep path;
  std::vector<std::string> comms;  ///< by segment of `path`
  std::int64_t waits = 0, incomplete = 0, unmatched = 0, no_peers = 0;
};

/// Its fields, for the owners of steps to send process 0 (wire_codec.hpp, reduction_wire.hpp).
template <class IO>
void transfer(IO& io, CriticalStepSummary& s) {
  io(s.row, s.path, s.comms, s.waits, s.incomplete, s.unmatched, s.no_peers);
}

/// The path of `g` under times `t` (measured, or a replay's), summed up.
CriticalStepSummary summarize_critical_step(const StepGraph& g, const GraphTimes& t);

/// Sums critical paths step by step into the report's rows.
class CriticalPathRows {
 public:
  /// Adds the path of `g` under times `t` (measured, or a replay's).
  void add(const StepGraph& g, const GraphTimes& t);
  /// Adds a step's path summed up; steps in the order their rows are to be listed.
  void add(CriticalStepSummary step);
  /// The rows, shares most first, and what the graphs held (critical_note); into `report`.
  void finish(Report& report);

 private:
  struct Share {
    CriticalShareRow row;
    int last_step = -1;
    double total_ns = 0.0;
  };
  std::vector<CriticalStepRow> steps_;
  std::vector<CriticalPathOfStep> paths_;
  std::vector<Share> shares_;
  std::vector<std::size_t> index_;  // shares_ sorted by key, for lookups
  double total_ns_ = 0.0;
  std::int64_t waits_ = 0, incomplete_ = 0, unmatched_ = 0, no_peers_ = 0;
};

/// The measured critical path of every graph into `report`.
void add_critical_paths(Report& report, const std::vector<StepGraph>& graphs);

/// The same from `builder`'s graphs, unless building them failed with `problem` (a wait naming
/// an op that is not there): then a warning of the report says so, and the report has no path.
void add_critical_paths_or_warn(Report& report, StepGraphBuilder& builder,
                                const std::string& problem);

}  // namespace commprof
