// SPDX-License-Identifier: MIT
// How much longer ops take when compute and communication run at once, measured on a run and
// applied to a projection. An op's overlap φ is the share of its time that ran beside the other
// kind of work on its rank: a COMP op beside COMM, a COMM op (its time from the collective's last
// arrival, or from a transfer's last side) beside COMP. Ops are grouped by what they are: COMP
// by op class (its FLOPs or bytes), COMM by collective, communicator kind and size class (a power
// of two of bytes). Each group's time is modelled as
//   t = reference × alone × (1 + slowdown × φ)
// where the reference is, for COMP, the op's work over its class's rate when alone, and for COMM
// the link model's time; `alone` (COMM only) is how far the group's un-overlapped ops sit from the
// link model (1 for COMP, by definition of the alone rate), and `slowdown` the extra time per unit
// of overlap. A baseline run (the same source under --no-overlap) adds its ops, all alone.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/graph/graph_times.hpp"
#include "analysis/graph/step_graph.hpp"
#include "collectives/links/link_model.hpp"
#include "workloads/prediction/replay.hpp"

namespace commprof {

/// Below this overlap an op counts as alone.
inline constexpr double kAloneOverlap = 0.05;
/// A COMP class's own slowdown is applied from this many overlapped ops on; below, its kind's
/// pooled one (a few ops' noise, a preempted thread, is not a class's slowdown).
inline constexpr std::int64_t kMinClassOps = 100;

/// By op: the share of its window that ran beside the other kind of work on its rank (COMP
/// beside COMM, COMM beside COMP; MEM ops 0). An op's window is [end − own_ns, end]: own_ns its
/// time from the last arrival for a collective or transfer, its duration otherwise.
std::vector<double> overlap_fractions(const StepGraph& g, const GraphTimes& t,
                                      const std::vector<std::int64_t>& own_ns);

/// One measured op, as the slowdown measurement needs it.
struct OpObservation {
  bool comm = false;
  std::string cls;                                         ///< COMP: op_class + "/flop" or "/byte"
  double work = 0.0;                                       ///< COMP: FLOPs or bytes
  CollectiveKind collective = CollectiveKind::kAllReduce;  ///< COMM: the link model's kind
  std::string group;                                       ///< COMM: communicator kind
  std::uint64_t bytes = 0;
  int comm_size = 0;
  bool inter_node = false;
  double ns = 0.0;       ///< COMP its duration; COMM its time from the last arrival
  double overlap = 0.0;  ///< φ
};

/// Every COMP op with work and every matched COMM op of `g` (measured times) whose collective
/// the link model knows; `host_of` by rank decides a communicator's link class.
std::vector<OpObservation> observe_ops(const StepGraph& g,
                                       const std::map<int, std::string>& host_of);

/// "[1 MiB, 2 MiB)": the size class of `bytes` (a power of two), as printed.
int size_class(std::uint64_t bytes);
std::string size_class_name(int cls);

struct SlowdownFactor {
  double alone = 1.0;     ///< un-overlapped time over the reference (COMM; 1 for COMP)
  double slowdown = 0.0;  ///< extra time per unit of overlap, a ratio (0.3: +30% fully overlapped)
  std::int64_t alone_ops = 0, overlapped_ops = 0;
  double mean_overlap = 0.0;       ///< of its overlapped ops
  bool measured_slowdown = false;  ///< from overlapped ops against an alone reference
  double factor(double overlap) const { return alone * (1.0 + slowdown * overlap); }
};

struct CommKey {
  CollectiveKind collective = CollectiveKind::kAllReduce;
  std::string group;
  int size_class = 0;
  bool inter_node = false;
  bool operator<(const CommKey& o) const {
    return std::tie(collective, group, size_class, inter_node) <
           std::tie(o.collective, o.group, o.size_class, o.inter_node);
  }
};

struct OverlapSlowdown {
  /// COMP by class: its rate when alone (work per ns) and its slowdown as measured. A class with
  /// no alone op has no slowdown of its own; its alone rate is its measured rate with its kind's
  /// pooled slowdown taken out.
  std::map<std::string, double> alone_rate;
  std::map<std::string, SlowdownFactor> comp;
  /// By kind ("flop", "byte": the class's suffix), over every class with alone and overlapped ops.
  std::map<std::string, SlowdownFactor> comp_pooled;
  std::map<CommKey, SlowdownFactor> comm;
  std::int64_t comm_without_fit = 0;  ///< COMM ops no link fit covers (left out)
  /// The factor for a COMM op: its group's, else its collective and communicator kind's over
  /// every size, else its collective's over every kind; nullptr where none was measured.
  const SlowdownFactor* comm_factor(const CommKey& k) const;
  std::map<std::pair<CollectiveKind, std::string>, SlowdownFactor> comm_by_kind;
  std::map<CollectiveKind, SlowdownFactor> comm_by_collective;
  /// The COMP factor applied to a class: its own from kMinClassOps overlapped ops on, else its
  /// kind's pooled one (no slowdown where its kind measured none).
  const SlowdownFactor& comp_factor(const std::string& cls) const;
  /// "flop" or "byte", the kind of a class "name/flop".
  static std::string comp_kind(const std::string& cls);
};

/// A graph replayed with the slowdown: each op takes base × (1 + slope × φ), φ its overlap in the
/// replay itself (a collective's members all take their longest member's time: it ends with its
/// slowest). The overlap moves with the times it decides, so the replay is repeated from every op
/// alone until the step moves by no more than 0.1%, at most `max_replays` times; from the second
/// replay on, each op is given the mean of its last two overlaps (damped, so that it settles).
struct SlowdownReplay {
  ReplayModel model;  ///< the last durations
  GraphTimes times;
  std::vector<double> overlap;     ///< by op, the φ the last durations were given
  std::int64_t step_alone_ns = 0;  ///< the step with every op at its base time
  int replays = 0;                 ///< with the slowdown
  bool settled = true;
};
/// `gaps` by op; `base` and `slope` by op. Throws as replay() does.
SlowdownReplay replay_with_slowdown(const StepGraph& g, std::vector<std::int64_t> gaps,
                                    const std::vector<double>& base,
                                    const std::vector<double>& slope, int max_replays = 16);

/// Measures the factors from `ops` (the run's, and a baseline's), COMM against `links`.
OverlapSlowdown measure_slowdown(const std::vector<OpObservation>& ops, const LinkModel& links);

}  // namespace commprof
