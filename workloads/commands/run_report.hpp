// SPDX-License-Identifier: MIT
// What `commprof run` prints and writes once its steps are measured: rank 0's summary of every
// rank's steps, and the report across ranks (report.txt, report.json), reduced as `commprof
// report` does under mpirun, so that both are the same bytes.
#pragma once

#include <string>

#include "analysis/commands/finding_gates.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/timeline/rank_file.hpp"
#include "workloads/compute_profile.hpp"
#include "workloads/execution/executor.hpp"
#include "workloads/op_plan.hpp"
#include "workloads/workload.hpp"

namespace commprof {

/// The header lines of calibrated compute (--compute-from): what was learned, and what of the
/// trace the run leaves out or adds.
std::string compute_line(const ComputeProfile& p, const WorkloadConfig& w);

/// What the summary says of the run besides its timelines.
struct RunSummaryHeader {
  const WorkloadConfig* workload = nullptr;
  int steps = 0;
  int warmup_steps = 0;
  OpTimingMode timing = OpTimingMode::kAuto;
  int sample_every = 4;
  std::string attention_note;  ///< why --attention auto chose GEMMs, or ""
};

/// Rank 0 prints the summary over every rank's measured steps: step time and, per category,
/// busy time (min, mean, max over ranks). Collective: every rank calls it.
void print_run_summary(RankContext& ctx, const RunSummaryHeader& h, const RankTimeline& mine,
                       const OpPlan& plan);

/// The report across ranks from every rank's own timeline (no file read back), the critical
/// path where `out_dir` holds the rank files; rank 0 prints it and writes report.txt and
/// report.json into `out_dir` (when not empty). Collective. Returns, on every rank, 3 when a
/// --fail-if gate's finding fired (rank 0 says which), else 0.
int report_across_ranks(RankContext& ctx, const RankTimeline& mine, const std::string& out_dir,
                        RankFileFormat format, const FindingGates& gates);

}  // namespace commprof
