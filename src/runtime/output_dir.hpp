// SPDX-License-Identifier: MIT
// The --out directory of a measuring command: created before anything is measured, and never
// silently overwritten.
#pragma once

#include <string>

namespace commprof {

class RankContext;

/// Collective. Rank 0 creates `dir` if needed; if it already holds results of an earlier run
/// (rank-*.json, report.*, bench.json, bench.csv) and `force` is false, every rank throws
/// ConfigError naming the file, so a previous run's results are not overwritten by accident.
void prepare_output_directory(RankContext& ctx, const std::string& dir, bool force,
                              const std::string& command);

}  // namespace commprof
