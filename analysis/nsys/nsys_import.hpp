// SPDX-License-Identifier: MIT
// `commprof import-nsys`: Nsight Systems SQLite exports in, rank-<R>.json files (schema
// commprof.rank v1) out, so that `commprof report` reduces nsys traces like its own runs.
//
// Memory: every query is streamed with sqlite3_step in time order, and each step is written to
// the rank file as soon as its last launch has passed. Held: the open NVTX ranges (nesting depth
// per thread), the step ranges, the per-stream marks, the distinct kernel names, and ONE step's
// ops. Ordering and the correlationId join run inside SQLite, which sorts and builds its automatic
// index in temporary files beyond its page cache (capped at 64 MiB here). So memory grows with
// the largest step, not with the export: docs/BENCHMARKS.md records what was measured.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/nsys/nsys_import_types.hpp"
#include "analysis/nsys_rules.hpp"
#include "src/timeline/op_record.hpp"
#include "src/timeline/rank_file.hpp"

namespace commprof {

struct NsysImportOptions {
  const RuleSet* rules = nullptr;  ///< nullptr: RuleSet::defaults()
  std::string step_range;          ///< NVTX range name prefix marking steps (foreign traces)
  int warmup_steps = 0;            ///< with step_range: the first N steps are warm-up
  int rank = -1;                   ///< >= 0: the rank of the one file imported (--rank)
  RankFileFormat format = RankFileFormat::kJson;  ///< how the rank files are written
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

/// Reads the rank, host and session start of one export. Throws Error naming the file. The rank
/// follows analysis/import_rank.hpp: `rank` if 0 or more (--rank), else the launcher's variables
/// nsys recorded, else the file name's _<rank> suffix, else `position` (the file's among the
/// inputs).
NsysFileInfo probe_nsys_file(const std::string& path, int rank = -1, int position = 0);

/// Imports one export, handing each step to `on_step` as soon as it is complete: memory holds one
/// step's ops, not the file's. `time_base_utc_ns` is subtracted from absolute (UTC) times so that
/// files of one job share a clock; `world_size` is used when the file does not tell it. Returns
/// the header. Files with commprof's NVTX are read twice: the first pass learns which streams
/// commprof's COMM/MEM/COMP ranges launched onto (stream identity classifies before names).
RankTimeline import_nsys_file(const NsysFileInfo& info, const NsysImportOptions& options,
                              std::int64_t time_base_utc_ns, int world_size,
                              NsysFileSummary* summary, const NsysStepSink& on_step);
/// The same, collecting every step (tests; small files).
RankTimeline import_nsys_file(const NsysFileInfo& info, const NsysImportOptions& options,
                              std::int64_t time_base_utc_ns, int world_size,
                              NsysFileSummary* summary = nullptr);
/// Imports one export straight into <out_dir>/rank-<R>.json (atomically), step by step.
std::string write_nsys_rank_file(const std::string& out_dir, const NsysFileInfo& info,
                                 const NsysImportOptions& options, std::int64_t time_base_utc_ns,
                                 int world_size, NsysFileSummary* summary = nullptr);

/// The whole command: probes every file, checks ranks are distinct, imports each and writes
/// <out_dir>/rank-<R>.json. Throws Error when a multi-rank set holds no COMM op at all.
std::vector<NsysFileSummary> import_nsys_files(const std::vector<std::string>& files,
                                               const std::string& out_dir,
                                               const NsysImportOptions& options);

/// The collective named by an NCCL kernel ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL" ->
/// "allreduce"); "" when the name tells none (e.g. ncclDevKernel_Generic).
std::string collective_from_nccl_kernel(const std::string& kernel);

}  // namespace commprof
