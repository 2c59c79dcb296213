// SPDX-License-Identifier: MIT
// `commprof import-torch`: PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzip, one file per
// rank -> the rank timeline `commprof report` reduces.
//
// What a Kineto trace holds (PyTorch 2.x, schemaVersion 1), and what is taken from it:
// - "distributedInfo": {"rank", "world_size", "pg_config": [...]}: the rank and world size;
// - events with "ph": "X" and "ts"/"dur" in microseconds (fractions carry nanoseconds) on the
//   host's monotonic clock, so traces of one host line up as they are; PyTorch before 2.1 wrote
//   Unix-epoch microseconds instead, beyond a rank file's ±2^60 ns: such a trace is moved onto
//   its earliest event (a whole microsecond), and align_torch_origins puts the traces of one
//   import back on one clock;
// - GPU work: "cat" "kernel", "gpu_memcpy", "gpu_memset", with args "device", "stream",
//   "correlation"; NCCL kernels also carry the collective's record: "Collective name",
//   "In msg nelems", "Out msg nelems", "Group size", "dtype", "Process Group Name",
//   "Process Group Description";
// - the launching call: "cat" "cuda_runtime" (or "cuda_driver") with the same "correlation";
// - steps: "cat" "user_annotation" named "ProfilerStep#N" (torch.profiler's schedule marks each).
// Each GPU activity is classified by import-nsys's rules (analysis/nsys_rules_default.txt) from
// its kind and short name, and belongs to the step whose ProfilerStep range holds its launch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/nsys_rules.hpp"
#include "src/timeline/op_record.hpp"

namespace commprof {

struct TorchImportOptions {
  const RuleSet* rules = nullptr;  ///< nullptr: RuleSet::defaults()
  int rank = -1;                   ///< >= 0: the rank of the one trace imported (--rank)
};

struct TorchImportSummary {
  std::string file;
  int rank = 0;
  std::string rank_source;  ///< "distributedInfo", "--rank", "file order"
  std::int64_t activities = 0;
  std::int64_t outside_steps = 0;
  std::int64_t ignored = 0;
  std::int64_t ops[3] = {0, 0, 0};
  int steps = 0;
  bool whole_trace = false;  ///< no ProfilerStep range: the trace is one step
  /// Unix-epoch traces: the earliest event's time (µs) their times were moved by; 0: not moved.
  std::int64_t origin_us = 0;
};

/// The file's bytes, gunzipped when it starts with gzip's magic. Throws Error naming the file.
std::string read_maybe_gzip(const std::string& path);

/// Reduces a PyTorch collective name ("allreduce", "_allgather_base", "reduce_scatter_tensor",
/// "allgather_into_tensor_coalesced", "send", ...) to commprof's ("allreduce", "allgather",
/// "reducescatter", "send", ...); an unknown name is kept, lower-cased.
std::string torch_collective_name(const std::string& name);

/// "void at::native::(anonymous namespace)::foo_kernel<float, 4>(int, float*)" -> "foo_kernel":
/// the function's own name, as nsys's shortName gives it.
std::string short_kernel_name(const std::string& name);

/// Imports one trace, the `position`-th of the inputs (0-based). Its rank follows
/// analysis/import_rank.hpp: --rank, else the trace's distributedInfo, else `position`;
/// `fallback_world` is the world size where distributedInfo has none. Throws Error naming the
/// file and what is wrong.
RankTimeline import_torch_trace(const std::string& path, const TorchImportOptions& options,
                                int position, int fallback_world, TorchImportSummary* summary);

/// Puts traces imported together whose times were moved (TorchImportSummary::origin_us) back on
/// one clock: each is moved on by its origin's distance from the earliest one, whose time each
/// rank file's configuration records as "time_origin_us" (a time there + it = the trace's).
/// Returns that origin (µs), 0 where no trace was moved.
std::int64_t align_torch_origins(std::vector<RankTimeline>& timelines,
                                 const std::vector<TorchImportSummary>& summaries);

}  // namespace commprof
