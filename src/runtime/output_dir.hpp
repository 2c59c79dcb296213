// SPDX-License-Identifier: MIT
// The --out directory of a measuring command: created before anything is measured, and never
// silently overwritten.
#pragma once

#include <string>

namespace commprof {

class RankContext;

/// Collective. Every rank creates `dir` if needed and proves it can create a file there; if one
/// cannot, or `dir` already holds results of an earlier run (rank-*.json, report.*, bench.json,
/// bench.csv; checked by rank 0) and `force` is false, every rank throws ConfigError naming the
/// directory or file, so nothing is measured that could not be written, and a previous run's
/// results are not overwritten by accident.
void prepare_output_directory(RankContext& ctx, const std::string& dir, bool force);

}  // namespace commprof
