// SPDX-License-Identifier: MIT
// `commprof bench`: a collective sweep in the manner of nccl-tests, on any backend.
//
// Per op and size: fill verifiable inputs, `warmup` untimed calls, a barrier, then `iters`
// back-to-back calls on the COMM stream between two stamps; the per-iteration time of each rank
// is (end stamp − start stamp) / iters on its own stream clock (CUDA events on GPUs). Times
// are reduced across ranks (min/avg/max); algbw and busbw come from the average time, as
// nccl-tests' default `-a 1` does, and from the max time too (in JSON). Verification runs
// after timing, on a poisoned receive buffer, and counts wrong elements over all ranks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/alltoallv_layout.hpp"
#include "collectives/routing.hpp"
#include "src/backend/work.hpp"
#include "src/collective/collective_kind.hpp"
#include "src/collective/collective_spec.hpp"
#include "src/core/dtype.hpp"

namespace commprof {

class Backend;
class RankContext;

/// How much the timed loop is instrumented. kOff keeps only the loop's two stamps; kOn stamps
/// every call (per-call min/max) with NVTX ranges as --no-nvtx says. kActivity (sampled): the
/// reported loop runs with activity recording paused, and one more loop per size, recorded
/// (CUPTI: kernel time, nothing added to the stream), gives the single-call times and what
/// recording cost; kActivityEvery records the reported loop itself. kCompare and
/// kCompareActivity time each size plain (no per-call timing, no NVTX, activity recording
/// paused) and as kOn or kActivityEvery, interleaved, to measure what that costs.
enum class Instrument { kOff, kOn, kActivity, kActivityEvery, kCompare, kCompareActivity };
Instrument parse_instrument(const std::string& text);
const char* instrument_name(Instrument i);
/// Whether the bench needs the backend's activity timing.
bool uses_activity(Instrument i);

struct BenchConfig {
  std::vector<CollectiveKind> ops = {CollectiveKind::kAllReduce};
  std::uint64_t min_bytes = 1024;
  std::uint64_t max_bytes = 16ull << 20;
  std::uint64_t step_factor = 4;
  int iters = 20;
  int warmup = 5;
  DType dtype = DType::kFloat32;
  bool check = true;
  int root = 0;
  /// Off by default: the bench's figures are nccl-tests' loop time, undisturbed.
  Instrument instrument = Instrument::kOff;
  /// Capture the `iters` calls once as a graph and time one replay of it (nccl-tests' -G 1):
  /// no host launch between calls. cuda only; per-call timing does not combine with it.
  bool graph = false;
  /// Ask the backend's cost model (NCCL's ncclGroupSimulateEnd) for each size's time before
  /// timing it, to report beside the measurement (BenchRow::estimate_us).
  bool estimate = false;
  std::string out_dir;         ///< where bench.json and bench.csv go; empty: nowhere
  int test_corrupt_rank = -1;  ///< test hook: this rank corrupts one received element
  /// alltoallv: where tokens go, and the MoE shape (the sizes are the bytes each rank sends;
  /// step 0, layer 0 of the routing).
  RoutingSpec routing;
  MoeShape moe;
};

/// Sizes of the sweep: min, min·f, min·f², … while ≤ max (nccl-tests' -b/-e/-f).
std::vector<std::uint64_t> sweep_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                       std::uint64_t step_factor);

struct BenchRow {
  CollectiveKind op = CollectiveKind::kAllReduce;
  int nranks = 1;
  double busbw_factor = 1.0;
  CollectiveSizes sizes;
  DType dtype = DType::kFloat32;
  int root = -1;                     ///< -1 when the collective has none
  std::vector<double> rank_time_us;  ///< per-iteration time of each rank (rank 0 only)
  double time_min_us = 0, time_avg_us = 0, time_max_us = 0;
  double host_time_avg_us = 0;  ///< same loop timed with the host clock, like nccl-tests
  /// Fastest / slowest single call on any rank (per-call stamps only; 0 otherwise).
  double iter_min_us = 0, iter_max_us = 0;
  /// Instrument::kCompare*: mean over ranks of the per-call time without per-call stamps and
  /// NVTX, and with them (each the fastest of three interleaved loops). kActivity: the reported
  /// loop's time and the recorded loop's that followed it.
  double plain_time_us = 0, instrumented_time_us = 0;
  double algbw_gbps = 0, busbw_gbps = 0;          ///< from the average time
  double algbw_max_gbps = 0, busbw_max_gbps = 0;  ///< from the maximum time
  std::int64_t wrong = -1;  ///< wrong elements over all ranks; -1 when not checked
  /// alltoallv: max/mean of the bytes ranks receive, and the busiest rank's bytes to or from
  /// other ranks (busbw's numerator); 0 for other collectives.
  double imbalance = 0;
  std::uint64_t busiest_bytes = 0;
  /// --estimate: rank 0's cost-model estimate of one call, µs; < 0 where the model has none.
  double estimate_us = -1;
};

struct BenchRankInfo {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  std::string device;
};

struct BenchReport {
  BenchConfig config;
  std::string backend;
  std::string cost_model;  ///< --estimate: the model that gave BenchRow::estimate_us
  std::string backend_reason;
  std::string start_time;  ///< UTC, ISO 8601
  std::string end_time;
  std::vector<BenchRankInfo> ranks;  ///< rank 0 only
  std::vector<BenchRow> rows;        ///< complete on rank 0
  std::int64_t total_wrong() const;
};

/// What the sweep tells as it goes (rank 0's report, complete so far), so that `commprof bench`
/// prints each size's row once that size is measured, as nccl-tests does: a long sweep shows how
/// far it is. In order: started; per op, measured for each size, then op_done; recorded
/// (sampled activity timing only); finished.
class BenchProgress {
 public:
  virtual ~BenchProgress() = default;
  /// Before the first size: the configuration, the backend and the ranks are known.
  virtual void started(const BenchReport& report) = 0;
  /// One size timed, verified and reduced over the ranks: `row`, the last of report.rows.
  virtual void measured(const BenchReport& report, const BenchRow& row) = 0;
  /// Every size of `op` is measured (it may have none: sizes too small to divide).
  virtual void op_done(const BenchReport& report, CollectiveKind op) = 0;
  /// Instrument::kActivity: the recorded loops have run; every row now holds its single-call
  /// times and the recorded loop's time.
  virtual void recorded(const BenchReport& report) = 0;
  /// The sweep is over (end_time set).
  virtual void finished(const BenchReport& report) = 0;
};

/// Collective over the world: runs the sweep. Rank 0 gets the full report; other ranks get
/// their rows with cross-rank fields left empty. `backend_reason` says why this backend runs it
/// (the report's). `progress`, given on rank 0, hears of each step as it happens.
BenchReport run_bench(const BenchConfig& config, Backend& backend, RankContext& ctx,
                      const std::string& backend_reason, BenchProgress* progress = nullptr);
/// The same over `comm`, a communicator of the backend's that spans the world in its rank order
/// (`commprof run`'s link probe sweeps on the run's own communicator, whose NCCL connections the
/// run's steps then reuse, rather than set up the world's as well).
BenchReport run_bench(const BenchConfig& config, Backend& backend, Communicator& comm,
                      RankContext& ctx, const std::string& backend_reason,
                      BenchProgress* progress = nullptr);

/// `rank`'s side of an alltoallv as the backends take it: its counts and displacements per peer,
/// all read from the layout that every rank computes alike.
PeerSplits peer_splits(const AllToAllvLayout& layout, int rank);

/// algbw in GB/s (1e9 B/s) for `bytes` moved in `time_us`.
double algbw_gbps(std::uint64_t bytes, double time_us);

}  // namespace commprof
