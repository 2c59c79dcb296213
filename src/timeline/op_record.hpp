// SPDX-License-Identifier: MIT
// The per-rank timeline: what every executed op leaves behind, and what the reducer reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/timeline/category.hpp"
#include "src/timeline/json_object.hpp"

namespace commprof {

/// Every time of a timeline (op and step start and end, the clock offset) lies within
/// [-kMaxTimeNs, kMaxTimeNs] (2^60 ns, 36 years): a time plus an offset, the difference of two
/// such, and the sum of two such differences all fit in 64 bits. The readers refuse a file with a
/// time outside (it would otherwise overflow the interval algebra: tests/fuzz found that).
inline constexpr std::int64_t kMaxTimeNs = std::int64_t{1} << 60;

/// One op as it ran on one rank. Times are nanoseconds on the rank's host steady clock
/// (CLOCK_MONOTONIC: shared by every process of one host), so ops of ranks on one host compare
/// directly; RankTimeline::clock_offset_ns maps them onto rank 0's clock across hosts.
struct OpRecord {
  std::string name;  ///< e.g. "fwd.l3.qkv", "dp.allreduce.bucket2"
  Category category = Category::kComp;
  std::string stream;       ///< stream identity: "COMP", "COMM", "MEM" (foreign traces: any id)
  std::string collective;   ///< "allreduce", ... for COMM collectives, "send"/"recv", else ""
  std::string comm;         ///< communicator name ("world", "tp0", "dp1", ...); "" if none
  int comm_size = 0;        ///< ranks in `comm` (n of the busbw factor)
  std::int64_t seq = -1;    ///< per-communicator sequence number; (comm, seq) matches ranks
  std::uint64_t bytes = 0;  ///< S of the algbw formula for collectives; bytes moved otherwise
  double flops = 0.0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  // What the source said of a collective beyond the above (NCCL's profiler plugin; traces whose
  // events carry it). Optional in the file: the default means "not known".
  std::string dtype;            ///< element type as the source names it ("ncclBfloat16", "bf16")
  std::uint64_t count = 0;      ///< elements of the call (NCCL's count: per rank for all-gather)
  std::string algo;             ///< NCCL's algorithm ("Ring", "Tree", "NVLS", ...)
  std::string proto;            ///< NCCL's protocol ("Simple", "LL", "LL128")
  int channels = 0;             ///< channels NCCL ran it on
  std::int64_t enqueue_ns = 0;  ///< when the host enqueued it (same clock as start_ns)
  bool graph = false;           ///< launched as part of a captured CUDA graph
  /// A collective whose send and receive buffers are one (NCCL's in-place call: the same buffer,
  /// or an all-gather's send buffer at its own share of the receive buffer, a reduce-scatter's
  /// receive buffer at its own share of the send buffer): 1, out of place 0, not known -1.
  int in_place = -1;
  /// An all-to-all(v): the bytes this rank received, from every rank of the communicator (itself
  /// included: the load of its experts in an MoE dispatch); 0: not recorded.
  std::uint64_t recv_bytes = 0;
  /// An all-to-all(v): the bytes this rank sent to and received from each rank of the
  /// communicator, in the communicator's rank order (itself included): an MoE dispatch's splits.
  /// Also written for an allgatherv or reducescatterv (the data each moves to and from a peer).
  /// Optional: empty when unknown.
  std::vector<std::uint64_t> peer_send_bytes, peer_recv_bytes;
  /// This rank's index in `comm` (0 ≤ comm_rank < comm_size): which entry of peer_send_bytes is
  /// its own share, kept local. Written where the peer bytes are; -1: not known. (Not derivable
  /// from the world ranks: a communicator orders its ranks by the split's key, which the file
  /// does not record.)
  int comm_rank = -1;
  /// The ops of the same step this op's stream waited for before it (indices into the step's
  /// ops): the cross-stream waits its plan made (commprof's executor writes them). Optional in
  /// the file: imports and earlier files have none, and stream order alone then orders the op.
  std::vector<std::int32_t> after;
  /// A send or receive (P2P): the world ranks it sent to and received from, in its group's
  /// order. The k-th transfer from rank A to rank B in a step is the k-th send_to B of A and the
  /// k-th recv_from A of B (NCCL and MPI deliver a pair's messages in order), which is how the
  /// step graph matches them. Optional: empty when unknown.
  std::vector<std::int32_t> send_to, recv_from;
  std::int64_t duration_ns() const { return end_ns - start_ns; }
};

/// One training step (or one bench size) of one rank.
struct StepRecord {
  int index = 0;
  bool warmup = false;        ///< warm-up steps are recorded but left out of averages
  std::int64_t start_ns = 0;  ///< when the rank began issuing the step (host steady clock)
  std::int64_t end_ns = 0;    ///< when the last op of the step completed
  std::vector<OpRecord> ops;
};

/// Everything one rank measured; written as rank-<R>.json (schema commprof.rank).
struct RankTimeline {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string host;
  std::string device;
  std::string backend;
  std::int64_t clock_offset_ns = 0;  ///< add to this rank's times to get rank 0's clock
  JsonObject config;                 ///< the run's configuration (options, model, layout)
  std::vector<StepRecord> steps;
};

}  // namespace commprof
