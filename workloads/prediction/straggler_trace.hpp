// SPDX-License-Identifier: MIT
// Reads the traces published with "Understanding Stragglers in Large Model Training Using What-if
// Analysis" (Lin et al., OSDI'25; repository ByteDance-Seed/StragglerAnalysis, Apache-2.0) and
// builds their dependency model as an IdealGraph (ideal_replay.hpp), so that `whatif --ideal`
// reproduces the paper's published slowdowns. The input is the artifact's Perfetto timeline
// (data/timeline-*.json.gz, plain or gzip): one complete event ("ph":"X") per op with name = op
// kind, pid = data-parallel rank, ts/dur in us, args {step, model_chunk, seq_id}, and thread_name
// metadata "PP rank S, TP rank T, ..." giving each thread's pipeline stage. Only TP rank 0 is used.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/prediction/ideal_replay.hpp"

namespace commprof {

/// One op of the trace (times in seconds).
struct StragglerOp {
  std::string kind;  ///< "forward-compute", "backward-send", "grads-reduce-scatter", ...
  int dp_rank = 0, stage = 0, chunk = -1, seq = 0;
  std::int64_t step = 0;
  double start = 0, end = 0;
};

/// The timeline's ops. Throws Error naming the file and what is wrong.
std::vector<StragglerOp> read_straggler_timeline(const std::string& path);

/// The artifact's dependency model over these ops (derived from data-parallel rank 0 of the
/// first step and shared by every instance): compute in stream order; each pipeline send/receive
/// paired with its peer stage's and tied to the compute it feeds or follows; data-parallel
/// all-gather / reduce-scatter in stream order, synchronised across data-parallel ranks; after the
/// last backward: gc, layer-norm and embedding all-reduce, reduce-scatter, gradient clipping (a
/// barrier across all stages and ranks), optimizer. Throws Error where the trace does not fit it.
IdealGraph straggler_graph(const std::vector<StragglerOp>& ops);

}  // namespace commprof
