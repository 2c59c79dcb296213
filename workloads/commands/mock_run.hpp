// SPDX-License-Identifier: MIT
// The mock's steps on every rank of a job: the layout's communicators split from the world, this
// rank's plan run by the executor, each step appended to its rank file. `commprof run` and
// `commprof project --validate` run the mock this way.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "src/backend/backend.hpp"
#include "src/runtime/rank_context.hpp"
#include "src/timeline/rank_file.hpp"
#include "workloads/commands/link_probe.hpp"
#include "workloads/execution/executor.hpp"
#include "workloads/op_plan.hpp"
#include "workloads/run_config_json.hpp"

namespace commprof {

struct MockRun {
  WorkloadConfig workload;  ///< its layout the job's, validated
  RunSettings settings;     ///< timing as asked (auto resolved here)
  std::string out_dir;      ///< rank files here; "" none
  RankFileFormat rank_file_format = RankFileFormat::kJson;
  int test_hang_rank = -1;
  TestFault test_fault;
  /// The run's --timeout, which also bounds the start-of-step barrier (0: unbounded).
  double step_timeout_s = 0.0;
  /// Before the first step: the link probe (link_probe.hpp) on the run's communicator that spans
  /// the world (the world's where none does), recorded in the configuration; `on_probe` hears
  /// of it (rank 0 prints its line).
  bool link_probe = false;
  std::function<void(const LinkProbe&)> on_probe;
  /// After the steps: the backend's cost model asked for the last step's collectives
  /// (MockRunResult::estimates). Collective over the world.
  bool estimate_collectives = false;
};

struct MockRunResult {
  OpPlan plan;  ///< this rank's
  RankTimeline timeline;
  OpTimingMode timing = OpTimingMode::kAuto;  ///< as resolved
  int stopped_by = 0;                         ///< the signal that stopped it, 0 none
  /// With MockRun::estimate_collectives: this rank's collectives by group as the cost model
  /// estimates them, and its name; or why the backend has none.
  std::map<std::string, GroupEstimate> estimates;
  std::string estimate_model, no_estimate_why;
};

/// Collective over the world: every rank calls it with the same run.
MockRunResult run_mock(RankContext& ctx, Backend& backend, const MockRun& run);

}  // namespace commprof
