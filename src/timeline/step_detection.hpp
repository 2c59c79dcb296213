// SPDX-License-Identifier: MIT
// Training steps found in a capture that has none: NCCL's profiler plugin sees every collective of
// a job but not where its steps begin, so it writes the whole capture as one step. A training job
// issues the same calls on each communicator every step (DDP's buckets, FSDP's gathers, TP's
// per-layer all-reduces, PP's transfers), so each communicator's sequence of (collective, bytes)
// repeats once per step: its period is the step. Pure functions over the calls, no I/O; the rank
// file reader applies them to the plugin's files (docs/analysis.md, "Steps of a plugin capture").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/timeline/op_record.hpp"

namespace commprof {

/// The variable that names the call ending each step: `<communicator>:<collective>`, the
/// communicator as the rank file names it (its commName, or `comm-<hash>`; the bare hash also
/// matches) and the collective as commprof or NCCL names it (`allreduce`, `AllReduce`). Read where
/// the capture is written (the plugin records it in the file) and where it is read (it wins).
inline constexpr const char* kStepMarkerVariable = "COMMPROF_PLUGIN_STEP_MARKER";

struct StepMarker {
  std::string comm;
  std::string collective;  ///< lower case, no underscores: "allreduce"
};
/// Parses `<communicator>:<collective>`, or `none` (the whole capture as one step: an empty
/// marker); ConfigError naming the variable and the value otherwise.
StepMarker parse_step_marker(std::string_view text);

/// Where a sequence of call ids becomes periodic: from `offset` on, every call equals the one
/// `period` calls later, over at least two whole periods. period 0: no such suffix.
struct PeriodFit {
  std::size_t period = 0;
  std::size_t offset = 0;
};
/// The periodic suffix that starts earliest (then the shortest period), or period 0 when none
/// covers half the sequence with two whole periods (a sequence without a period). O(n).
PeriodFit find_period(const std::vector<std::uint32_t>& ids);

/// One call of a communicator, in the order the rank started them. The names are views of the
/// caller's strings (a capture's records and listing), which outlive find_steps.
struct CommCall {
  std::string_view comm;
  std::string_view collective;
  std::uint64_t bytes = 0;
  std::int64_t start_ns = 0;
  /// Where the call ended; -1 where it was not timed (a sampled capture's untimed calls). A
  /// collective ends at about the same time on every rank of its communicator, where its start
  /// is each rank's arrival: the step's phase is chosen by the ends where they are known.
  std::int64_t end_ns = -1;
};

enum class StepMethod { kMarker, kDetected, kWholeCapture };

/// How a capture is cut. Step k holds the ops that start in [bounds[k], bounds[k+1]); the ops
/// before bounds[0] are one warm-up step (the irregular first steps), those from the last bound
/// on a trailing partial step, left out of the figures as warm-up is. No bounds: one step.
struct StepCut {
  StepMethod method = StepMethod::kWholeCapture;
  std::string comm;         ///< the communicator whose calls set the bounds
  std::string collective;   ///< the marker's collective (marker)
  std::size_t period = 0;   ///< its calls per step (detected)
  double confidence = 0.0;  ///< [0, 1] (detected; 1 for a marker)
  std::string note;         ///< why, in words (the whole capture: why no steps were found)
  std::vector<std::int64_t> bounds;
  std::size_t steps() const { return bounds.empty() ? 1 : bounds.size() - 1; }
};

/// Cuts a rank's calls (in start order): by the marker's calls where one is given, else by the
/// period of the communicator whose period lasts longest (a shorter period of another one, TP's
/// per-layer all-reduce, is a part of the step), else the whole capture.
StepCut find_steps(const std::vector<CommCall>& calls, const std::optional<StepMarker>& marker);

/// "detected: 12 calls of dp0 per step, confidence 0.97" and the like.
std::string describe(const StepCut& cut);

/// The ops (in start order) as steps, as `cut` says; indices from 0.
std::vector<StepRecord> cut_steps(std::vector<OpRecord> ops, const StepCut& cut);

/// A plugin capture written as one step (backend "nccl-profiler") cut into its steps, with the
/// cut described in its configuration ("step_cut"); any other timeline is left as it is. The
/// marker is the variable's where set, else the one the plugin recorded ("step_marker").
void cut_plugin_capture(RankTimeline& timeline);

}  // namespace commprof
