// SPDX-License-Identifier: MIT
// The idealised replay of "Understanding Stragglers in Large Model Training Using What-if Analysis"
// (Lin et al., OSDI'25; its artifact ByteDance-Seed/StragglerAnalysis): one dependency graph shared
// by every (step, data-parallel rank) instance, replayed twice - with the measured durations and
// no launch delays (step_t_nodelay), then with each compute op's duration replaced by the mean of
// its op kind and each communication op's by the median (step_t_noblk). The straggler slowdown is
// S = mean(nodelay) / mean(noblk); S attributed to a set X of ops is the idealised replay with
// only X kept at its measured duration, over the same ideal.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace commprof {

/// One op of the shared graph (the same in every instance).
struct IdealNode {
  std::string name;       ///< unique in the graph, e.g. "forward-compute_3_1"
  std::string kind;       ///< what idealisation averages over (the op kind)
  std::string label;      ///< what attribution groups by (send and receive of a direction merged)
  int stage = 0;          ///< pipeline stage (where IdealGraph::has_stages)
  int rank = -1;          ///< its rank where the graph holds every rank's ops (rank files), else -1
  bool comm = false;      ///< idealised with the median (communication) rather than the mean
  int group = -1;         ///< index into IdealGraph::groups: ends when all members have started
  std::vector<int> deps;  ///< nodes that must end before this one starts (same instance)
};

/// Ops that run together: each ends at the latest start of the members plus its own transfer.
struct IdealGroup {
  std::vector<int> members;
  bool across_dp = false;  ///< also waits for the same members on every data-parallel rank
};

/// The graph and its measurements: instance i = step_index * dp + dp_rank.
struct IdealGraph {
  std::vector<IdealNode> nodes;
  std::vector<IdealGroup> groups;
  int dp = 1;
  bool has_stages = false;  ///< nodes' stages are pipeline stages (else not attributed by stage)
  std::vector<std::int64_t> steps;  ///< the step numbers, in instance order
  /// [node][instance], seconds. duration drives ops outside groups; transfer (end - the group's
  /// latest start, measured) drives group members.
  std::vector<std::vector<double>> duration, transfer;
  std::size_t instances() const { return steps.size() * static_cast<std::size_t>(dp); }
};

/// Fills transfer from measured starts and ends ([node][instance], seconds): a member's end minus
/// the latest start in its group (across data-parallel ranks where the group says so); below
/// -10 ms, where clocks disagree, it is taken as 0 as the artifact does.
void set_transfers(IdealGraph& g, const std::vector<std::vector<double>>& start,
                   const std::vector<std::vector<double>>& end);

/// Each step's time when every first op starts at 0 (seconds, in step order).
std::vector<double> replay_steps(const IdealGraph& g,
                                 const std::vector<std::vector<double>>& duration,
                                 const std::vector<std::vector<double>>& transfer);

/// A slowdown attributed to one value of one dimension.
struct IdealShare {
  std::string dimension;  ///< "op_kind", "stage", "dp_rank" (instances), "rank" (nodes)
  std::string key;
  double slowdown = 1;
  std::map<std::int64_t, double> per_step;  ///< step -> that step's ratio
};

struct IdealResult {
  double nodelay_s = 0;  ///< mean step time, measured durations, no launch delay
  double ideal_s = 0;    ///< mean step time, idealised durations
  double slowdown = 1;   ///< S = nodelay_s / ideal_s
  std::vector<std::int64_t> steps;
  std::vector<double> step_nodelay_s, step_ideal_s;
  std::vector<IdealShare> shares;  ///< per dimension, largest first
};

/// S, by step, and attributed by op kind, pipeline stage and data-parallel rank.
IdealResult ideal_analysis(const IdealGraph& g);

}  // namespace commprof
