// SPDX-License-Identifier: MIT
// One spec per collective: what `count` means, how many bytes a call moves in nccl-tests'
// accounting, the bus-bandwidth factor for a communicator of n ranks, and the verifiable data
// that makes its result exactly checkable. Shared by the MPI and NCCL paths and by analysis/.
//
// Source of the rules: nccl-tests doc/PERFORMANCE.md and src/<coll>.cu (v2.19), summarised in
// docs/collectives.md.
#pragma once

#include <cstdint>

#include "src/collective/collective_kind.hpp"
#include "src/collective/pattern.hpp"
#include "src/core/dtype.hpp"

namespace commprof {

/// Element counts and bytes of one call.
struct CollectiveSizes {
  std::uint64_t count = 0;       ///< the count argument passed to NCCL (and to MPI)
  std::uint64_t send_count = 0;  ///< elements read from the send buffer
  std::uint64_t recv_count = 0;  ///< elements written to the receive buffer
  std::uint64_t bytes = 0;       ///< S in algbw = S / t: nccl-tests' "size" column
};

struct CollectiveSpec {
  CollectiveKind kind;
  const char* name;            ///< "allreduce"
  const char* factor_formula;  ///< "2(n-1)/n"
  bool reduces;                ///< takes a reduction operator (sum)
  bool rooted;                 ///< takes a root (broadcast, reduce)

  /// busbw = algbw × factor; n is the communicator size (never the world size).
  double busbw_factor(int n) const;

  /// Sizes for a requested size in bytes. Divided collectives (allgather, reducescatter,
  /// alltoall) round the per-rank chunk down to 16 bytes as nccl-tests does, so byte totals match
  /// its tables; a count of 0 means the size is too small for n ranks.
  CollectiveSizes sizes(std::uint64_t requested_bytes, DType dtype, int n) const;

  /// Sizes of a call whose NCCL `count` argument is known (workloads plan counts directly).
  CollectiveSizes sizes_for_count(std::uint64_t count, DType dtype, int n) const;

  /// The pattern a rank writes into its send buffer before the call.
  FillPattern input(int rank, int n, DType dtype, std::uint64_t seed) const;

  /// The pattern the receive buffer of `rank` must hold after the call.
  ExpectPattern expected(int rank, int n, int root, DType dtype, std::uint64_t seed,
                         const CollectiveSizes& sizes) const;

  /// Whether `rank`'s receive buffer is defined after the call (reduce: only at the root).
  bool output_defined(int rank, int root) const;
};

const CollectiveSpec& collective_spec(CollectiveKind kind);

/// Stride of contributing ranks for n ranks: 1 unless n·1 already passes the exact-integer limit
/// of `dtype` (bfloat16 beyond 256 ranks); then ceil(n / limit), so at most `limit` ranks add.
std::uint64_t reduce_stride(DType dtype, int n);
/// Modulus m of reduction inputs for n ranks: c·(m−1) stays exact in `dtype`, c = the number of
/// contributing ranks (ceil(n / reduce_stride)); 2 ≤ m ≤ 7.
std::uint64_t reduce_modulus(DType dtype, int n);
/// Modulus (a prime) of data inputs: every value below it is exact in `dtype`. In bfloat16 the
/// data of ranks r and r + 251 coincide, so a swap of their blocks would go unseen there.
std::uint64_t data_modulus(DType dtype);

}  // namespace commprof
