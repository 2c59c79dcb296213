// SPDX-License-Identifier: MIT
// The critical path of a step: the chain of ops and host gaps that ends at the step's end and
// that each link waited for, walked back from the last op to end. At an op the chain goes to
// whatever ended last before it could start (the op before it on its stream, an op its stream
// waited for, or the rank's step start), and the time between is a host gap: the op was ready
// and not yet running (a late launch, the host busy elsewhere). At a collective it goes to the
// member that arrived last, whose arrival the others waited for. The chain's segments tile the
// time from where it begins to the step's end exactly, so its length is the step's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/graph/graph_times.hpp"
#include "analysis/graph/step_graph.hpp"

namespace commprof {

/// One stretch of a critical path: (part of) an op's time, or the host gap before an op.
struct PathSegment {
  int op = -1;       ///< the op; of a collective, the member that arrived last
  bool gap = false;  ///< the host gap before `op` (ready, not yet running), not the op
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t length_ns() const { return end_ns - start_ns; }
};

/// Why a collective or a transfer (a send or receive with partners) on the path waited: the rank
/// that arrived last, and of its stretch of the path before that arrival, the op (or host gap)
/// that took longest beyond the same op's mean on the step's other ranks.
struct StragglerCause {
  int collective = -1;       ///< StepGraph::collectives, or -1 for a transfer
  int transfer = -1;         ///< for a transfer: the op on the path that waited for its partner
  int rank = -1;             ///< the last to arrive
  std::int64_t late_ns = 0;  ///< its arrival after the member before it
  int op = -1;               ///< the cause: an op of `rank` on the path (or the gap before it)
  bool gap = false;
  std::int64_t op_ns = 0;  ///< its segment's length on the path
  double excess_ns = 0.0;  ///< op_ns − the same op's mean on the other ranks (all of op_ns if none)
};

struct CriticalPath {
  std::int64_t start_ns = 0;  ///< where the chain begins (a rank's step start, or a gap's start)
  std::int64_t end_ns = 0;    ///< the step's end: the last op's end
  std::vector<PathSegment> segments;  ///< in time order
  /// The collective or transfer on the path whose last member arrived latest after the others;
  /// none when nothing on the path waited for a member.
  std::optional<StragglerCause> straggler;
  std::int64_t length_ns() const { return end_ns - start_ns; }
};

/// The critical path of `g` under times `t` (measured_times, or a replay's).
CriticalPath critical_path(const StepGraph& g, const GraphTimes& t);

/// What a segment is attributed to: "COMP", "COMM", "MEM", or "gap" (host gap).
std::string segment_category(const StepGraph& g, const PathSegment& s);

}  // namespace commprof
