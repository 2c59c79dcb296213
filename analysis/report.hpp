// SPDX-License-Identifier: MIT
// The aggregated report: what `commprof report` computes from rank files, before any format.
// Every time is in ns, every bandwidth in GB/s (10⁹ B/s), every ratio in [0, 1]; writers
// convert units for display and name them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/collective_matching.hpp"
#include "analysis/step_metrics.hpp"
#include "src/fields/field_unit.hpp"

namespace commprof {

inline constexpr const char* kReportSchema = "commprof.report";
inline constexpr int kReportSchemaVersion = 1;
/// The JSON report lists this many collective instances: those that made ranks wait longest.
inline constexpr std::size_t kReportWorstInstances = 100;
/// The HTML heatmap bins the collective instances, in first-start order, into this many columns
/// of equal counts at most.
inline constexpr std::size_t kWaitColumns = 240;
/// The JSON and CSV reports list this many critical-path shares: those with most time.
inline constexpr std::size_t kReportCriticalShares = 100;

/// A rank file that could not be read or parsed; the rest of the run is still reduced.
struct FileProblem {
  std::string file;
  std::string message;
};

/// One per-rank metric across ranks: min / mean / max of the ranks' step means, and the rank
/// that is worst for it (largest, or smallest for overlap and hidden fraction).
struct AcrossRanks {
  std::string metric;  ///< the per-rank field's key without its unit: "step_time", "overlap"
  ReportUnit unit = ReportUnit::kNs;  ///< that field's: kNs or kRatio
  Stat stat;
  int worst_rank = -1;
  std::string worst_host;
};

/// What CollectiveRow::placement says of OpRecord::in_place: "in place", "out of place", "".
inline std::string placement_name(int in_place) {
  return in_place > 0 ? "in place" : in_place == 0 ? "out of place" : "";
}

/// Collectives of one kind, communicator size, message size and placement.
struct CollectiveRow {
  std::string collective;
  int comm_size = 0;
  std::uint64_t bytes = 0;
  /// "in place" or "out of place" where the source says (NCCL's profiler plugin), else "":
  /// nccl-tests times both loops of each size apart, and they differ (an all-gather's in-place
  /// loop ran 6-8% faster on 2 H200s).
  std::string placement;
  std::int64_t count = 0;  ///< matched instances
  double p50_ns = 0.0;     ///< of instance times (nearest rank)
  double p95_ns = 0.0;
  double algbw_gbps = 0.0;  ///< bytes / p50 time
  /// algbw × factor(comm_size); < 0: unknown collective. An all-to-all(v): the mean over its
  /// instances of the busiest rank's off-rank bytes (bytes × (n-1)/n where the files do not
  /// give them) over the p50 time.
  double busbw_gbps = -1.0;
  double peak_fraction = -1.0;  ///< busbw / --peak-busbw; < 0 when not given
  /// Bus bandwidth of the calls issued back to back, as nccl-tests times its loop: bytes ×
  /// factor over the mean start-to-start period of a plugin capture's runs of these calls
  /// (src/timeline/back_to_back.hpp), over every rank; < 0 where no run was seen.
  double back_to_back_busbw_gbps = -1.0;
  /// What busbw is of: the factor applied to bytes ("2(n-1)/n"), or an all-to-all(v)'s
  /// "per-peer" off-rank bytes, or "mixed" (instances of both); "" unknown collective.
  std::string busbw_basis;
  double mean_skew_ns = 0.0;  ///< mean start skew
  std::int64_t wait_ns = 0;   ///< Σ waits of all ranks
  /// NCCL's algorithm/protocol of these calls ("RING/LL128"), as NCCL's profiler plugin recorded
  /// them; several, space-separated, if NCCL chose differently between calls; "" not known.
  std::string algo;
};

/// Communicators of one kind: "dp", "tp", "pp", "world" (the name without trailing digits).
struct GroupRow {
  std::string group;
  int communicators = 0;
  int min_size = 0;
  int max_size = 0;
  std::int64_t instances = 0;
  std::int64_t incomplete = 0;  ///< instances fewer ranks recorded than the comm has
  std::uint64_t bytes = 0;      ///< Σ instance bytes
  double time_ns = 0.0;         ///< Σ instance times
  /// Σ bytes·factor / Σ time over known collectives (an all-to-all(v) with bytes per peer:
  /// its busiest rank's off-rank bytes in place of bytes·factor)
  double busbw_gbps = -1.0;
  /// Of the group's all-to-all(v)s: "per-peer", "(n-1)/n" or "mixed"; "" when it has none.
  std::string busbw_basis;
  double mean_skew_ns = 0.0;
  std::int64_t wait_ns = 0;
};

/// One kind of communicator (as GroupRow), point-to-point included: what its ops cost the ranks
/// that use it, as means over those ranks of each rank's mean per step with per-op timing.
struct GroupTimeRow {
  std::string group;
  int ranks = 0;
  double comm_ns = 0.0;           ///< |∪ the group's COMM ops|
  double exposed_ns = 0.0;        ///< the part of it no compute hides
  double exposed_max_ns = 0.0;    ///< the worst rank's
  int exposed_worst_rank = -1;    ///< that rank
  bool exposed_unknown = false;   ///< a rank's source records no compute (NCCL's plugin)
  double alltoalls = 0.0;         ///< all-to-all(v) calls
  double recv_mean_bytes = -1.0;  ///< bytes received in them; < 0: no file records it
  double recv_max_bytes = -1.0;   ///< the busiest rank's
  double recv_imbalance = -1.0;   ///< max / mean (1: even); < 0: not known
  int recv_busiest_rank = -1;
  double alltoall_wait_ns = -1.0;  ///< waiting at them for later ranks; < 0: none matched
};

/// Durations of the ops of one (category, name), summed over ranks and measured steps.
struct OpTiming {
  std::int64_t count = 0;
  double total_ns = 0.0;
  std::int64_t overlapped_count = 0;  ///< COMP ops that ran beside COMM, COMM beside COMP
  double overlapped_total_ns = 0.0;
};

/// How much longer one category's ops take overlapped than alone (matched by op name).
struct Interference {
  std::string category;
  std::int64_t names = 0;          ///< op names found in both runs
  std::int64_t ops = 0;            ///< overlapped ops of those names in the run
  double run_mean_ns = 0.0;        ///< mean duration of those ops, overlapped
  double baseline_mean_ns = 0.0;   ///< mean duration of the same names alone, weighted alike
  std::optional<double> slowdown;  ///< run / baseline − 1
};

/// The run against a baseline with every category serialized (`run --no-overlap`).
struct BaselineComparison {
  std::string source;
  double run_step_ns = 0.0;  ///< mean over ranks of the rank's mean step time
  double baseline_step_ns = 0.0;
  std::optional<double> speedup;  ///< baseline / run
  double comm_hidden_ns = 0.0;    ///< mean |COMM ∩ COMP| per step in the run
  double run_comm_ns = 0.0;       ///< mean |COMM| per step in the run
  double baseline_comm_ns = 0.0;
  std::vector<Interference> interference;  ///< COMP, COMM
};

/// One step of one rank with what is needed to put it on rank 0's clock.
struct RankStep {
  int rank = 0;
  std::string host;
  std::int64_t clock_offset_ns = 0;
  StepRecord step;
};

/// One pipeline stage: means over its ranks of each rank's mean per timed step.
struct StageRow {
  int stage = 0;
  int ranks = 0;
  double step_ns = 0.0;  ///< step time of the steps with per-op timing
  double comp_ns = 0.0;  ///< |∪COMP|
  double busy_ns = 0.0;  ///< |∪ every op|
  double bubble = 0.0;   ///< 1 − COMP / step: the step's part without compute
};

/// One measured step's critical path (analysis/graph/critical_path.hpp): the chain of ops and
/// host gaps the step's end waited for, beside the step's exposed communication (a different
/// number: communication no compute hides on a rank, on the path or not).
struct CriticalStepRow {
  int step = 0;
  std::int64_t step_ns = 0;      ///< the last op's end − the earliest rank's step start
  std::int64_t path_ns = 0;      ///< the path's length
  std::int64_t comp_ns = 0;      ///< of the path: COMP ops
  std::int64_t comm_ns = 0;      ///< COMM ops (a collective: from its last arrival)
  std::int64_t mem_ns = 0;       ///< MEM ops
  std::int64_t gap_ns = 0;       ///< host gaps (launch delays)
  std::int64_t ops = 0;          ///< ops on the path
  std::int64_t ranks = 0;        ///< ranks the path runs through
  double exposed_comm_ns = 0.0;  ///< mean over ranks of the step's |COMM ∖ COMP|
  /// The collective or transfer (send/receive) on the path whose last member arrived latest
  /// after the others: that rank, the collective or transfer, how late, and its op (or host gap)
  /// on the path before it that ran longest beyond the same op's mean on the other ranks.
  /// -1 / "" where nothing on it waited.
  int straggler_rank = -1;
  std::string straggler_at;
  std::int64_t straggler_late_ns = -1;
  std::string straggler_cause;
  double straggler_excess_ns = -1.0;
};

/// Time on the measured steps' critical paths by rank × category × op × communicator; the
/// category "gap" is the host gaps before the op.
struct CriticalShareRow {
  int rank = 0;
  std::string category;
  std::string op;
  std::string comm;
  double mean_ns = 0.0;    ///< per measured step (the total over the steps / their number)
  double share = 0.0;      ///< of the paths' total length
  std::int64_t steps = 0;  ///< steps whose path ran through it
};

/// One stretch of a measured step's critical path, as the HTML timeline marks it: (part of) an
/// op's time, or the host gap before the op; times in ns on rank 0's clock.
struct CriticalSegment {
  int rank = 0;
  int op = 0;  ///< the op's place among the ops of the rank's step, as its file lists them
  bool gap = false;
  Category category = Category::kComp;  ///< the op's
  std::string name;                     ///< the op's
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

/// The critical path of one measured step, its segments in time order.
struct CriticalPathOfStep {
  int step = 0;
  std::vector<CriticalSegment> segments;
};

/// Collective instances [first, last] of the first-start order (first start, then reading
/// order): a column of the HTML heatmap, with the first starts of its first and last instance.
struct WaitColumn {
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t first_start_ns = 0;
  std::int64_t last_start_ns = 0;
};

/// What `rank` caused others to wait by arriving last at the instances of one WaitColumn.
struct WaitCell {
  int rank = 0;
  int column = 0;
  std::int64_t wait_caused_ns = 0;  ///< > 0
};

/// One rule's verdict on the run (analysis/findings.hpp): what it costs per step, the evidence
/// and one thing to change. A rule that needs data the files lack is listed with that as its
/// status and no cost, instead of firing.
struct Finding {
  std::string rule;             ///< "sync_wait", "exposed_comm", ... (docs/analysis.md)
  std::string status;           ///< "fired", or "not evaluated: " and what it needs
  double cost_ns = -1.0;        ///< per step; < 0: not a time (a hang, or not evaluated)
  double cost_fraction = -1.0;  ///< of the mean step; < 0 as cost_ns
  std::string ranks;            ///< the ranks it names, space-separated ("" none)
  std::string comm;             ///< the communicators or groups it names
  std::string ops;              ///< the ops or collectives it names
  std::int64_t bytes = -1;      ///< a message size it names; < 0 none
  std::string evidence;         ///< the figures behind it, with their units
  std::string action;           ///< one concrete change
  std::string shown_in;         ///< the HTML element (table or chart id) that shows it
  bool fired() const { return status == "fired"; }
};

struct Report {
  std::vector<std::string> inputs;
  /// What the rules found, fired ones by cost (most first), then those not evaluated; empty
  /// until add_findings (analysis/findings.hpp) runs.
  std::vector<Finding> findings;
  int world_size = 0;
  std::vector<FileProblem> problems;
  std::vector<int> missing_ranks;
  std::vector<std::string> warnings;
  std::vector<RankSummary> ranks;  ///< by rank
  std::vector<AcrossRanks> across;
  std::vector<GroupRow> groups;
  std::vector<GroupTimeRow> group_times;  ///< by group name
  std::vector<CollectiveRow> collectives;
  /// The matched instances: every one where one process reduced the files; where several
  /// shared the reduction, only those that may be among the kReportWorstInstances that made
  /// ranks wait longest (report_fields::worst_instances picks them from either).
  std::vector<CollectiveInstance> instances;
  std::int64_t instances_total = 0;      ///< instances matched
  std::vector<WaitColumn> wait_columns;  ///< at most kWaitColumns
  std::vector<WaitCell> wait_cells;      ///< by rank, then column
  std::vector<RankWait> waits;           ///< by rank, ranks with collectives only
  std::vector<StageRow> stages;  ///< by stage; only where rank files place ranks in a pipeline
  std::int64_t incomplete_instances = 0;
  std::int64_t inconsistent_instances = 0;
  double peak_busbw_gbps = 0.0;                                ///< 0: not given
  std::map<std::pair<int, std::string>, OpTiming> op_timings;  ///< (category index, name)
  std::optional<BaselineComparison> baseline;
  /// The critical path of each measured step with per-op timing, and its time by rank,
  /// category, op and communicator, most first; `critical_note` says what the graph held (no
  /// recorded waits: stream order and matching alone). Empty unless asked for (report, whatif).
  std::vector<CriticalStepRow> critical_steps;
  std::vector<CriticalShareRow> critical_shares;
  std::string critical_note;
  std::vector<CriticalPathOfStep> critical_paths;  ///< by step, as critical_steps
  /// The step the HTML timeline shows (-1: none) and that step of the ranks it draws, slowest
  /// first (see step_timelines.hpp); the other ranks are folded to their step time.
  int timeline_step = -1;
  std::vector<RankStep> timelines;
};

}  // namespace commprof
