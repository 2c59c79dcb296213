// SPDX-License-Identifier: MIT
// The measured steps' critical paths shared among processes, as the reduction is
// (distributed_reduction.hpp): a step's graph needs every rank's ops of that step, which no process
// holding its share of the files has, and which one process cannot hold for every step of a large
// run (16,384 ranks × 20,000 ops are 330 million ops). Each process reads the files it claims for
// the reduction and packs each measured step of their ranks (their ops with the stream predecessors
// and waits found on the rank, each op as its kind, sent once a round, and varints of its
// differences from the op before: about 8 B an op). Step s belongs to process s mod N; the packed
// steps go to their owners in 8 rounds (by s / N mod 8), and each owner rebuilds a graph from its
// sources merged by each rank step's place in the files (so its ops are in the files' order, as one
// process reads them), walks its path (critical_path.hpp) and reuses the graph's storage for the
// next. Process 0 gathers the steps' summed-up paths (CriticalStepSummary: a row and the path's
// segments) and adds them in step order. The graphs and paths are those one process builds from the
// same files, by the same code, so the report is the same byte for byte for any number of
// processes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/reduce_exchange.hpp"
#include "analysis/reducer.hpp"
#include "analysis/report.hpp"

namespace commprof {

/// This process's block of files packed for the critical path while the reduction reads them
/// (Reducer::also_stream_to): one read of each file serves both, where reading the block again
/// took two thirds of the critical path's time. Every file is packed, kept apart until the
/// reduction has said which files it left out.
class CriticalPathPacks final : public FileStepSink {
 public:
  CriticalPathPacks();
  ~CriticalPathPacks() override;
  CriticalPathPacks(const CriticalPathPacks&) = delete;
  CriticalPathPacks& operator=(const CriticalPathPacks&) = delete;
  void begin_file(std::uint32_t index) override;
  void header(const RankTimeline& header) override;
  void step(const StepView& step) override;
  void end() override;
  void restart() override;

  struct State;

 private:
  friend void add_critical_paths_across(Report&, const std::vector<std::string>&, ReduceExchange&,
                                        CriticalPathPacks&);
  std::unique_ptr<State> state_;
};

/// Collective over `exchange`: the critical path of every measured step of `files` into process
/// 0's `report`, whose problems name the files to leave out (unreadable, or a rank read twice);
/// the other processes' `report` is left as it is. A graph that cannot be built (a wait naming an
/// op that is not there; the first such problem in the files' order) is a warning of the report,
/// which then has no path. `packs` holds what the reduction of the same `files` packed on this
/// process (Reducer::also_stream_to): no file is read again.
void add_critical_paths_across(Report& report, const std::vector<std::string>& files,
                               ReduceExchange& exchange, CriticalPathPacks& packs);

}  // namespace commprof
