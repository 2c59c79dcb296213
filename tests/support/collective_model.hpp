// SPDX-License-Identifier: MIT
// A reference model of every collective on host vectors, written from the MPI/NCCL semantics
// and independent of src/collective/pattern.hpp: the oracle that verification patterns and
// backends are checked against.
#pragma once

#include <cstdint>
#include <vector>

#include "src/collective/collective_kind.hpp"
#include "src/collective/collective_spec.hpp"

namespace commprof::testing {

/// Every element type a collective runs on.
inline constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64,  DType::kInt32,
                                       DType::kInt64,   DType::kBFloat16, DType::kFloat16};

/// Value left in receive buffers that a collective does not define (reduce, non-root ranks).
inline constexpr double kUndefined = -1.0;

using RankBuffers = std::vector<std::vector<double>>;  ///< [rank][element]

/// Runs `kind` over n = sends.size() ranks with NCCL's argument semantics: sends[r] holds
/// rank r's send buffer (sizes.send_count elements); returns every rank's receive buffer
/// (sizes.recv_count elements). Sums are exact in double for the small integers used here.
RankBuffers simulate_collective(CollectiveKind kind, const CollectiveSizes& sizes, int root,
                                const RankBuffers& sends);

/// MPI_Alltoallv with packed blocks: counts[q][p] elements go from rank q to rank p; each send
/// buffer holds its blocks in peer order, and so does each receive buffer (from rank 0 first).
/// (simulate_collective leaves alltoallv's receive buffers undefined: it has no counts.)
RankBuffers simulate_alltoallv(const std::vector<std::vector<std::size_t>>& counts,
                               const RankBuffers& sends);

/// MPI_Allgatherv: rank q contributes counts[q] elements (the first of its send buffer); every
/// receive buffer holds them in rank order, packed.
RankBuffers simulate_allgatherv(const std::vector<std::size_t>& counts, const RankBuffers& sends);

/// MPI_Reduce_scatter: every send buffer holds n blocks back to back, block r counts[r]
/// elements; rank r receives the element-wise sum of every rank's block r.
RankBuffers simulate_reduce_scatterv(const std::vector<std::size_t>& counts,
                                     const RankBuffers& sends);

/// The send buffers a bench run writes: spec.input(r, n, dtype, seed) for every rank.
RankBuffers make_inputs(const CollectiveSpec& spec, int n, DType dtype, std::uint64_t seed,
                        const CollectiveSizes& sizes);

/// Rounds x to a binary floating-point number with `bits` significant bits, ties to even (8 for
/// bfloat16, 11 for half, 24 for float): to replay reductions in a narrow type.
double round_to_bits(double x, int bits);

/// Significant bits of a floating-point dtype (integers: 64).
int significand_bits(DType dtype);

}  // namespace commprof::testing
