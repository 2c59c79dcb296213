// SPDX-License-Identifier: MIT
// What a rank leaves in its rank file when a step fails (a timeout: a peer stopped taking part,
// or this rank's own work hung): the communication it submitted in that step and never saw
// finish, in the configuration's "unfinished" list, where the NCCL profiler plugin lists its
// unfinished operations, and the step as "failed_step". `commprof diagnose` and the report's
// hang rule read them; without them a failed step leaves no trace, since a step is written only
// once it has ended.
#pragma once

#include <string>
#include <vector>

#include "src/timeline/op_record.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {

/// Rewrites `path` (the rank file the run appended to; absent when no step was written) as
/// `header` (its configuration and identity) with the steps it holds, adding to the
/// configuration "failed_step", "error" (what ended the step) and "unfinished" (an entry per op,
/// src/timeline/unfinished_entry.hpp). Best effort: a
/// failure is warned about, never thrown (the error that ended the step is the job's to report).
void record_unfinished(const std::string& dir, const std::string& path, RankTimeline header,
                       int step, const std::vector<OpRecord>& ops, const std::string& error,
                       RankFileFormat format);

}  // namespace commprof
