// SPDX-License-Identifier: MIT
// The inputs of `commprof diagnose`, told apart by their content: commprof rank files (JSON or
// zstd), PyTorch Flight Recorder dumps (pickle, or its JSON form) and NCCL RAS status (JSON).
#pragma once

#include <string>
#include <vector>

#include "analysis/diagnosis.hpp"

namespace commprof::diagnosis {

enum class InputKind { kRankFile, kFlightRecorder, kRasStatus };

/// What `path` holds, from its first bytes (a rank file where nothing else fits: its reader
/// then names what is wrong).
InputKind input_kind(const std::string& path);

/// The rank a Flight Recorder dump belongs to: PyTorch names each
/// `$TORCH_FR_DUMP_TEMP_FILE<rank>` (the digits at the end of the name, before .pkl or .json).
/// Throws Error when the name ends in none.
int flight_recorder_rank(const std::string& path);

/// Throws Error naming both files when two Flight Recorder dumps of `paths` are of one rank
/// (a job's dumps are one per rank; two of a rank are of two jobs, or two moments).
void check_one_dump_per_rank(const std::vector<std::string>& paths);

/// Adds the input to `part`, as its kind says.
void add_input(const std::string& path, Part& part);

}  // namespace commprof::diagnosis
