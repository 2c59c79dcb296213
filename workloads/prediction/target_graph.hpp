// SPDX-License-Identifier: MIT
// The step graph of a layout nobody ran: the workload generator's plan of every target rank,
// as one StepGraph (analysis/graph): each op follows the op before it on its stream and the ops
// its plan waits for, as the executor would run it; a collective's members are matched by
// communicator and sequence number as the executor numbers them; a P2P op (up to two sends and two
// receives in one group) records its peers' world ranks as the executor does, and the step
// graph's own pairing (match_transfers) pairs each send with its receive: an op ends once every
// side of its own transfers has arrived, each transfer pairwise (no chain of grouped ops ends as
// one).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/graph/step_graph.hpp"
#include "src/collective/collective_kind.hpp"
#include "workloads/workload.hpp"

namespace commprof {

/// What decides an op's duration.
struct TargetOp {
  enum class Work { kFlops, kBytes, kFixed, kCollective };
  Work work = Work::kBytes;
  std::string cls;  ///< op_class of its name
  double flops = 0.0;
  std::uint64_t bytes = 0;     ///< moved, or a collective's S
  std::uint64_t fixed_ns = 0;  ///< Work::kFixed: calibrated compute
  /// Work::kCollective: the link model's collective kind (a transfer: kSendRecv), its
  /// communicator's kind and size, and whether its ranks span more than one node.
  CollectiveKind collective = CollectiveKind::kAllReduce;
  std::string group;
  int comm_size = 0;
  bool inter_node = false;
};

struct TargetGraph {
  StepGraph graph;
  std::vector<TargetOp> ops;  ///< by graph op
  int nodes = 1;              ///< nodes the target's ranks span
};

/// The graph of one step of `target` (its layout in target.layout, already validated) over
/// layout.world() ranks, `gpus_per_node` to a node (0: every rank on one node).
TargetGraph build_target_graph(const WorkloadConfig& target, int gpus_per_node);

}  // namespace commprof
