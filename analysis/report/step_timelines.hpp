// SPDX-License-Identifier: MIT
// Which step the HTML report's timeline shows, and of which ranks: the reducer keeps only each
// step's length (StepPoint), so the ops of the chosen step are read again afterwards, from the
// few rank files drawn. A thousand ranks cannot all be drawn legibly, nor carried in one page:
// the slowest and fastest ranks at that step are, and the rest are folded to their step time.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "analysis/report.hpp"

namespace commprof {

struct TimelineOptions {
  int step = -1;        ///< the step index to show; -1: the slowest measured step with ops
  int always_rank = 0;  ///< drawn whatever its speed (when read)
  int ranks = 16;       ///< how many ranks to draw at most
};

/// The step index to show: `requested` when some rank measured it with ops (else Error naming
/// the steps there are), or the measured step with ops whose slowest rank took longest; -1
/// when no rank has a measured step with ops.
int choose_timeline_step(const Report& report, int requested);

/// The ranks to draw at `step`: `always_rank`, then the slowest and the fastest in turn until
/// `count`; ordered slowest first. Ranks without that step are left out.
std::vector<int> choose_timeline_ranks(const Report& report, int step, int always_rank, int count);

/// Chooses the step and ranks and fills report.timeline_step and report.timelines, reading the
/// step of each chosen rank through `read_step` (rank → that step's ops, or nothing).
void load_step_timelines(
    Report& report, const TimelineOptions& options,
    const std::function<std::optional<StepRecord>(const RankSummary&, int step)>& read_step);

/// The same, reading each chosen rank's file again (RankSummary::source) for the one step.
/// A file that cannot be read now is left out of the timeline with a warning in the report.
void load_step_timelines_from_files(Report& report, const TimelineOptions& options);

}  // namespace commprof
