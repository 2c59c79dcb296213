// SPDX-License-Identifier: MIT
// The collectives commprof measures, by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace commprof {

enum class CollectiveKind : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,  ///< ring neighbour exchange: send to rank+1, receive from rank-1 (nccl-tests)
  /// All-to-all with a different count per pair of ranks (MoE token dispatch): the counts come
  /// with the call (CollectiveCall::splits), not from `count`.
  kAllToAllV,
  /// All-gather with a different count per rank (the MoE dispatcher's gather over expert TP of
  /// the rows each rank received): the counts come with the call (CollectiveCall::splits).
  kAllGatherV,
  /// Reduce-scatter with a different count per rank (its mirror, before the combine).
  kReduceScatterV,
};

/// Every kind of fixed size, in the order `--ops all` runs them: all but alltoallv, whose counts
/// come from a routing that `all` would have to invent (name it in --ops), and allgatherv and
/// reducescatterv, which only MoE workloads run.
const std::vector<CollectiveKind>& all_collective_kinds();

/// "allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "sendrecv",
/// "alltoallv", "allgatherv", "reducescatterv".
const char* collective_name(CollectiveKind kind);

/// Parses one name (also accepts nccl-tests' spellings such as all_reduce); throws ConfigError.
CollectiveKind parse_collective(const std::string& text);

/// Parses a comma-separated list or "all"; duplicates are dropped, order kept.
std::vector<CollectiveKind> parse_collective_list(const std::string& text);

}  // namespace commprof
