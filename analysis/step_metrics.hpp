// SPDX-License-Identifier: MIT
// Per-rank, per-step metrics: busy time per category, overlap of COMM with COMP, exposed
// communication, idle time; and their min / mean / max over a rank's measured steps.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/group_time.hpp"
#include "analysis/hta_scope.hpp"
#include "analysis/interval_set.hpp"
#include "src/fields/stat.hpp"
#include "src/timeline/back_to_back.hpp"
#include "src/timeline/op_record.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {

/// What one step of one rank did. Times in ns. The step's window is [start, end) of the step,
/// widened to cover any op that began before or ended after it, so idle time is never negative.
struct StepMetrics {
  int index = 0;
  bool warmup = false;
  std::int64_t wall_ns = 0;       ///< length of the step's window
  std::int64_t comp_ns = 0;       ///< |∪COMP|: several COMP streams count once where they overlap
  std::int64_t comm_ns = 0;       ///< |∪COMM|
  std::int64_t mem_ns = 0;        ///< |∪MEM|
  std::int64_t busy_ns = 0;       ///< |∪ all ops|
  std::int64_t comm_comp_ns = 0;  ///< |∪COMM ∩ ∪COMP|: communication hidden behind compute
  std::int64_t exposed_comm_ns = 0;  ///< |∪COMM \ ∪COMP|
  std::int64_t idle_ns = 0;          ///< wall − busy
  /// |COMM∩COMP| / |COMM| (HTA's "trace overlap"); empty when the step has no COMM time.
  std::optional<double> overlap;
  /// |COMM∩COMP| / min(|COMM|, |COMP|); empty when either is zero.
  std::optional<double> hidden_fraction;
};

/// The unions of one step's ops per category, for callers that look at single ops afterwards.
struct StepIntervals {
  IntervalSet comp, comm, mem;
};

/// Metrics of one step; fills `intervals` with the unions it built when given.
StepMetrics compute_step_metrics(const StepRecord& step, StepIntervals* intervals = nullptr);

/// Buffers for compute_step_metrics over a StepView, reused from step to step. Afterwards
/// comp, comm and mem hold the step's unions per category in canonical form.
struct StepScratch {
  std::vector<Interval> comp, comm, mem, busy;
};

/// The same metrics from a step as read (no allocation once the buffers have grown).
StepMetrics compute_step_metrics(const StepView& step, StepScratch& scratch);

/// An op as the metrics need it: its category and its times (a replay's, say).
struct OpSpan {
  Category category = Category::kComp;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

/// The same metrics from bare spans, in the window [start_ns, end_ns) (widened to the ops).
StepMetrics compute_step_metrics(std::int64_t start_ns, std::int64_t end_ns,
                                 const std::vector<OpSpan>& ops, StepScratch& scratch);

/// One step of one rank as the per-step trend and the timeline's choice of step need it.
struct StepPoint {
  int index = 0;
  bool warmup = false;
  std::int32_t ops = 0;
  std::int64_t start_ns = 0;  ///< on rank 0's clock (the rank's clock offset applied)
  std::int64_t wall_ns = 0;
  float overlap = -1.0f;  ///< < 0: undefined (the step has no COMM time)
};

/// One rank, summarised over its steps after warm-up (mean, min and max per step).
struct RankSummary {
  int rank = 0;
  int world_size = 1;
  std::string host;
  std::string device;
  std::string backend;
  std::string source;  ///< the file it came from
  /// How a capture without steps of its own was cut into steps ("detected: 12 calls of dp0 per
  /// step, confidence 0.97, 10 steps"; step_detection.hpp); "" for files that have steps.
  std::string steps_from;
  /// A plugin capture's calls over its communicators: every call NCCL reported, those timed
  /// (COMMPROF_PLUGIN_SAMPLE's one in K) and the timed ones dropped beyond the memory budget;
  /// -1 for other files.
  std::int64_t plugin_calls = -1, plugin_timed = -1, plugin_dropped = -1;
  /// A plugin capture's runs of back-to-back calls (src/timeline/back_to_back.hpp): what the
  /// report's back-to-back busbw is of.
  std::vector<BackToBackSums> back_to_back;
  std::int64_t clock_offset_ns = 0;
  /// The rank's pipeline stage where its file says (commprof run's configuration: pp > 1, and
  /// Megatron's rank order, pp slowest); -1 otherwise.
  int pp_stage = -1;
  int steps = 0;        ///< steps measured (not warm-up)
  int timed_steps = 0;  ///< of those, the steps that carry ops (per-op timing)
  int warmup_steps = 0;
  std::int64_t ops = 0;  ///< ops in measured steps
  /// The step time: of the steps without ops where there are any (sampled op timing's
  /// uninstrumented steps, or --op-timing step), else of every measured step; of every
  /// measured step in a plugin capture (timing a call slows no step there). The per-op
  /// quantities come from the steps with ops only.
  Stat wall_ns, comp_ns, comm_ns, mem_ns, busy_ns, comm_comp_ns, exposed_comm_ns, idle_ns;
  Stat timed_wall_ns, plain_wall_ns;   ///< step time of the steps with ops, and without
  Stat overlap, hidden_fraction;       ///< ratios in [0, 1], over the steps where they are defined
  std::vector<StepPoint> step_points;  ///< every step, warm-up included, in file order
  /// Per kind of communicator, over the steps with per-op timing (`timed_steps` of them).
  std::vector<GroupTime> group_times;
  /// Overlap and temporal breakdown as HTA computes them (analysis/hta_scope.hpp).
  HtaFigures hta;
  /// Why `overlap` (per step) and HTA's differ, where they do by 0.01 percentage points or
  /// more; the report fills it once the ranks are gathered.
  std::string hta_differs;
};

/// Whether a rank's source records its compute: not a capture of communication alone (NCCL's
/// profiler plugin), whose COMP, MEM, busy, overlap, exposed and idle times are unknown, not zero.
bool compute_known(const std::string& backend);
/// The configuration's "step_cut" description ("" where the file had steps of its own).
std::string steps_from(const JsonObject& config);
/// Sets `s`'s plugin_calls, plugin_timed and plugin_dropped from a plugin capture's
/// "communicators" (left -1 where the configuration has none), and its back-to-back runs.
void plugin_counts(const JsonObject& config, RankSummary& s);
/// The point of one step with its metrics, for RankSummary::step_points.
StepPoint step_point(int index, bool warmup, std::size_t ops, std::int64_t start_ns,
                     std::int64_t clock_offset_ns, const StepMetrics& m);

/// Adds one measured step's metrics to `summary` (what summarise_rank does per step). A step
/// without ops adds its step time only.
void add_step(RankSummary& summary, const StepMetrics& m, std::int64_t ops);
/// After the last add_step: the step time from the plain steps if any, else from all.
void finish_summary(RankSummary& summary);

/// Sees each measured step with its metrics and unions (the reducer's per-op pass).
using StepVisitor =
    std::function<void(const StepRecord&, const StepMetrics&, const StepIntervals&)>;

/// The pipeline stage of `rank` by the run's configuration (its "tp", "dp" and "pp"); -1 where
/// the configuration has no pipeline of two or more stages (or none at all: imports, plugin).
int pipeline_stage(int rank, const JsonObject& config);

/// Summarises the measured (non-warm-up) steps of one rank file.
RankSummary summarise_rank(const RankTimeline& timeline, const std::string& source,
                           const StepVisitor& visit = {});

}  // namespace commprof
