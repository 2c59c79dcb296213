// SPDX-License-Identifier: MIT
// `commprof import-nsys`: Nsight Systems SQLite exports in, rank-<R>.json files (schema
// commprof.rank v1) out, so that `commprof report` reduces nsys traces like its own runs.
//
// Memory: every query is streamed with sqlite3_step in time order; only open NVTX ranges
// (nesting depth per thread), the step ranges, the per-stream marks, the interned kernel names and
// the imported ops of one file (the rank file being written, ~100 B + name per op) are held.
// Ordering and the correlationId join run inside SQLite, which sorts and indexes in temporary
// files beyond its page cache (capped at 64 MiB per file here), so a 1 GB export does not need
// 1 GB of memory for its kernels' raw rows. docs/BENCHMARKS.md records what was measured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/nsys_rules.hpp"
#include "src/timeline/op_record.hpp"

namespace commprof {

struct NsysImportOptions {
  const RuleSet* rules = nullptr;  ///< nullptr: RuleSet::defaults()
  std::string step_range;          ///< NVTX range name prefix marking steps (foreign traces)
  int warmup_steps = 0;            ///< with step_range: the first N steps are warm-up
};

/// What one file's import found, for the command's summary and the tests.
struct NsysFileSummary {
  std::string file;
  int rank = 0;
  std::string rank_source;  ///< "OMPI_COMM_WORLD_RANK", "file name", ...
  std::string host;
  bool commprof_nvtx = false;      ///< the file holds commprof's NVTX domain
  std::int64_t activities = 0;     ///< kernels + memcpys + memsets read
  std::int64_t kernels = 0;
  std::int64_t outside_steps = 0;  ///< activities launched outside every step (left out)
  std::int64_t ignored = 0;        ///< activities classified IGNORE (left out)
  std::int64_t ops[3] = {0, 0, 0};  ///< imported ops per category (index_of)
  int steps = 0;
  double seconds = 0.0;  ///< wall time of the import
};

/// Per-file facts read before the main pass (small tables only).
struct NsysFileInfo {
  std::string file;
  int rank = -1;
  std::string rank_source;
  int local_rank = 0;
  int world_size = 0;  ///< 0: unknown
  std::string host;
  std::int64_t session_start_utc_ns = 0;  ///< TARGET_INFO_SESSION_START_TIME, 0 if absent
};

/// Reads the rank, host and session start of one export. Throws Error naming the file.
NsysFileInfo probe_nsys_file(const std::string& path);

/// Imports one export. `time_base_utc_ns` is subtracted from absolute (UTC) times so that files
/// of one job share a clock; `world_size` is used when the file does not tell it.
RankTimeline import_nsys_file(const NsysFileInfo& info, const NsysImportOptions& options,
                              std::int64_t time_base_utc_ns, int world_size,
                              NsysFileSummary* summary = nullptr);

/// The whole command: probes every file, checks ranks are distinct, imports each and writes
/// <out_dir>/rank-<R>.json. Throws Error when a multi-rank set holds no COMM op at all.
std::vector<NsysFileSummary> import_nsys_files(const std::vector<std::string>& files,
                                               const std::string& out_dir,
                                               const NsysImportOptions& options);

/// The collective named by an NCCL kernel ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL" ->
/// "allreduce"); "" when the name tells none (e.g. ncclDevKernel_Generic).
std::string collective_from_nccl_kernel(const std::string& kernel);

}  // namespace commprof
